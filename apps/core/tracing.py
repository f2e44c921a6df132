"""OpenTelemetry traces: off unless `OTEL_EXPORTER_OTLP_ENDPOINT` is set (README, "Traces").

One trace runs from a chat request through the Celery run task to the model's HTTP call: the
Django, Celery, psycopg and httpx instrumentations make the spans, Celery carries the context in
the task's headers, and `tracing_bind` carries it past `on_commit` and into threads.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.conf import settings
from opentelemetry import context, trace
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter

_tracer = trace.get_tracer("folderchat")
_provider: TracerProvider | None = None


def tracing_configure(*, service_name: str, exporter: SpanExporter | None = None) -> TracerProvider | None:
    """Install the tracer provider and the instrumentations; None (tracing off) without an endpoint.

    `exporter` replaces the OTLP one and exports each span as it ends (tests pass an in-memory one).
    The provider is process-wide and can be set only once, so a second call adds its exporter to it.
    """
    global _provider
    if exporter is None and not settings.OTEL_EXPORTER_OTLP_ENDPOINT:
        return None
    if _provider is None:
        name = os.environ.get("OTEL_SERVICE_NAME") or service_name
        _provider = TracerProvider(resource=Resource.create({SERVICE_NAME: name}))
        trace.set_tracer_provider(_provider)
    if exporter is None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        # The exporter reads the endpoint, headers and timeout from the standard OTEL_* variables.
        _provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    else:
        _provider.add_span_processor(SimpleSpanProcessor(exporter))
    _instrument(_provider)
    return _provider


def _instrument(provider: TracerProvider) -> None:
    from opentelemetry.instrumentation.celery import CeleryInstrumentor
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor

    # Each is a no-op when already instrumented; Django's adds its middleware to settings.MIDDLEWARE,
    # so the web process configures tracing before it builds its handler.
    for instrumentor in (DjangoInstrumentor(), CeleryInstrumentor(), PsycopgInstrumentor(), HTTPXClientInstrumentor()):
        if not instrumentor.is_instrumented_by_opentelemetry:
            instrumentor.instrument(tracer_provider=provider)


def tracing_bind(callback: Callable[[], None]) -> Callable[[], None]:
    """`callback` run in the trace context current now: `on_commit` may run it after the request
    span has ended, and a new thread starts with an empty context."""
    captured = context.get_current()

    def bound() -> None:
        token = context.attach(captured)
        try:
            callback()
        finally:
            context.detach(token)

    return bound


@contextmanager
def tracing_span(name: str, *, attributes: dict[str, str]) -> Iterator[None]:
    """A span of our own (a no-op with tracing off). Attributes name things, never carry content or keys."""
    with _tracer.start_as_current_span(name, attributes=attributes):
        yield
