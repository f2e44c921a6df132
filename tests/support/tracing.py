"""Spans of this process, kept in memory: tracing on for one test, instrumentations removed after."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from apps.core.tracing import tracing_configure
from tests.support.waiting import wait_for


@pytest.fixture
def traces() -> Iterator[InMemorySpanExporter]:
    """Request it before `settings`-changing fixtures: the Django instrumentation edits MIDDLEWARE."""
    from opentelemetry.instrumentation.celery import CeleryInstrumentor
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor

    exporter = InMemorySpanExporter()
    tracing_configure(service_name="folder-chat-test", exporter=exporter)
    yield exporter
    for instrumentor in (DjangoInstrumentor(), CeleryInstrumentor(), PsycopgInstrumentor(), HTTPXClientInstrumentor()):
        instrumentor.uninstrument()
    # The provider stays installed for the process; a stopped exporter keeps nothing more.
    exporter.shutdown()


def span_named(spans: tuple[ReadableSpan, ...], name: str) -> ReadableSpan:
    (span,) = [span for span in spans if span.name == name]
    return span


def parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


@dataclass(frozen=True)
class ExportedSpan:
    """A span as another process sent it over OTLP/HTTP."""

    service: str
    name: str
    trace_id: int
    span_id: int
    parent_id: int | None
    attributes: dict[str, str]


class OTLPCollector:
    """An OTLP/HTTP trace receiver on loopback (`OTEL_EXPORTER_OTLP_ENDPOINT=collector.endpoint`)."""

    def __init__(self) -> None:
        self.spans: list[ExportedSpan] = []
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.path == "/v1/traces":
                    collector._receive(ExportTraceServiceRequest.FromString(body))
                self.send_response(200 if self.path == "/v1/traces" else 404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                """Quiet."""

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self._http.server_address[1]}"
        threading.Thread(target=self._http.serve_forever, daemon=True).start()

    def _receive(self, request: ExportTraceServiceRequest) -> None:
        for resource_spans in request.resource_spans:
            resource = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    self.spans.append(
                        ExportedSpan(
                            service=resource.get("service.name", ""),
                            name=span.name,
                            trace_id=int.from_bytes(span.trace_id, "big"),
                            span_id=int.from_bytes(span.span_id, "big"),
                            parent_id=int.from_bytes(span.parent_span_id, "big") if span.parent_span_id else None,
                            attributes={a.key: a.value.string_value for a in span.attributes},
                        )
                    )

    def wait_for(self, matches: Callable[[ExportedSpan], bool], *, timeout: float = 60.0) -> ExportedSpan:
        try:
            found = wait_for(
                lambda: [span for span in self.spans if matches(span)], what="the span", timeout=timeout, interval=0.1
            )
        except AssertionError:
            raise AssertionError(f"no such span exported; got {[span.name for span in self.spans]}") from None
        return found[0]

    def close(self) -> None:
        self._http.shutdown()
        self._http.server_close()


@pytest.fixture
def otlp_collector(monkeypatch) -> Iterator[OTLPCollector]:
    """Processes started from now on (a Celery worker) export their spans here, within 0.1 s."""
    collector = OTLPCollector()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint)
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
    yield collector
    collector.close()
