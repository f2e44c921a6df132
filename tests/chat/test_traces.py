"""OpenTelemetry: one trace from the chat request through the Celery run task to the model's HTTP call."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from celery.app.trace import build_tracer
from django.db import connection
from opentelemetry.trace import SpanKind

from apps.chat.models import AgentRun
from config.settings import BASE_DIR
from tests.support.questions import W2_QUESTION
from tests.support.tracing import otlp_collector, parent_id, span_named, traces  # noqa: F401  (fixtures)
from workers.agent import execute_run

# Builds the web application as uvicorn does and reports what tracing it installed.
ENTRY_POINT_PROBE = """
import json
from opentelemetry import trace
from opentelemetry.instrumentation.django import DjangoInstrumentor
from config.asgi import application
provider = trace.get_tracer_provider()
resource = getattr(provider, "resource", None)
print(json.dumps({
    "provider": type(provider).__name__,
    "service": resource.attributes.get("service.name") if resource else None,
    "django": DjangoInstrumentor().is_instrumented_by_opentelemetry,
}))
"""


def _entry_point(**env: str) -> dict[str, object]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    result = subprocess.run(
        [sys.executable, "-c", ENTRY_POINT_PROBE],
        cwd=BASE_DIR,
        env={**clean, "DJANGO_SETTINGS_MODULE": "config.test_settings", **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_tracing_is_off_without_an_endpoint_and_on_with_one():
    assert _entry_point() == {"provider": "ProxyTracerProvider", "service": None, "django": False}
    # Nothing listens there: with no span ended, the exporter sends nothing.
    endpoint = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}
    assert _entry_point(**endpoint) == {"provider": "TracerProvider", "service": "folder-chat-web", "django": True}
    named = _entry_point(**endpoint, OTEL_SERVICE_NAME="chat-edge")
    assert named["service"] == "chat-edge"


@pytest.mark.django_db
def test_chat_request_task_and_model_call_share_one_trace(
    traces,  # noqa: F811  (first: the Django instrumentation edits MIDDLEWARE before `settings` overrides)
    library,
    sdk,
    wire_stub,
    auth_client,
    django_capture_on_commit_callbacks,
):
    wire_stub.reply_text("Federal tax withheld was 12,300 dollars [1].", model="stub-model")

    # execute=True runs the enqueue when the block ends: after the request and its span are over.
    with django_capture_on_commit_callbacks(execute=True):
        response = auth_client.post(f"/api/folders/{library.folder.pk}/chat", {"message": W2_QUESTION}, format="json")

    assert response.status_code == 202, response.json()
    # Take the message off the real broker and run it as a worker does: its headers are the task's request.
    with execute_run.app.connection_for_read() as broker, broker.SimpleQueue("agent") as queue:
        message = queue.get(timeout=5)
        message.ack()
    args, kwargs, _ = message.decode()
    build_tracer(execute_run.name, execute_run, app=execute_run.app)(
        message.headers["id"], args, kwargs, message.headers
    )
    run_id = response.json()["run_id"]
    assert AgentRun.objects.get(pk=run_id).status == "completed"

    spans = traces.get_finished_spans()
    (request,) = [span for span in spans if span.kind is SpanKind.SERVER]
    publish = span_named(spans, f"apply_async/{execute_run.name}")
    task = span_named(spans, f"run/{execute_run.name}")
    model_call = span_named(spans, "llm.call")
    (http,) = [span for span in spans if span.kind is SpanKind.CLIENT and "http.url" in (span.attributes or {})]
    assert request.attributes is not None and request.attributes["http.route"] == "api/folders/<int:folder_id>/chat"
    assert {span.context.trace_id for span in (request, publish, task, model_call, http)} == {request.context.trace_id}
    assert parent_id(request) is None
    assert parent_id(publish) == request.context.span_id
    assert parent_id(task) == publish.context.span_id
    assert parent_id(model_call) == task.context.span_id
    assert parent_id(http) == model_call.context.span_id
    assert str((http.attributes or {})["http.url"]).startswith(wire_stub.base_url)
    (sent,) = wire_stub.requests
    assert dict(model_call.attributes or {}) == {"gen_ai.system": sdk, "gen_ai.request.model": sent.body["model"]}
    # Span attributes carry names, never the prompt or the key.
    recorded = json.dumps([dict(span.attributes or {}) for span in spans], default=str)
    assert W2_QUESTION not in recorded and "test-key" not in recorded


@pytest.mark.django_db(transaction=True)
def test_database_queries_of_a_request_are_its_child_spans(traces, library, auth_client):  # noqa: F811
    # Connections opened from now on are traced (the test's own was opened before tracing was on).
    connection.close()

    response = auth_client.get(f"/api/folders/{library.folder.pk}")

    assert response.status_code == 200, response.json()
    spans = traces.get_finished_spans()
    (request,) = [span for span in spans if span.kind is SpanKind.SERVER]
    queries = [span for span in spans if (span.attributes or {}).get("db.system") == "postgresql"]
    assert queries
    assert {parent_id(span) for span in queries} == {request.context.span_id}
    assert {span.context.trace_id for span in queries} == {request.context.trace_id}
    # Statements are recorded with their placeholders; the values stay bound parameters.
    assert all("%s" in str(span.attributes["db.statement"]) for span in queries if "WHERE" in span.name)


@pytest.mark.django_db(transaction=True)
def test_a_worker_process_continues_the_request_trace_and_exports_over_otlp(
    traces,  # noqa: F811
    worker_model,
    otlp_collector,  # noqa: F811  (before the worker: it starts with the collector's endpoint)
    library,
    auth_client,
    celery_worker_process,
):
    worker_model.reply_text("Federal tax withheld was 12,300 dollars [1].", model="stub-model")

    response = auth_client.post(f"/api/folders/{library.folder.pk}/chat", {"message": W2_QUESTION}, format="json")

    assert response.status_code == 202, response.json()
    spans = traces.get_finished_spans()
    (request,) = [span for span in spans if span.kind is SpanKind.SERVER]
    publish = span_named(spans, f"apply_async/{execute_run.name}")
    message_id = (publish.attributes or {})["messaging.message.id"]
    task = otlp_collector.wait_for(
        lambda span: (
            span.name == f"run/{execute_run.name}" and span.attributes.get("messaging.message.id") == message_id
        )
    )
    model_call = otlp_collector.wait_for(lambda span: span.name == "llm.call" and span.trace_id == task.trace_id)
    http = otlp_collector.wait_for(lambda span: span.parent_id == model_call.span_id)
    assert {task.service, model_call.service, http.service} == {"folder-chat-worker"}
    assert {task.trace_id, model_call.trace_id, http.trace_id} == {request.context.trace_id}
    assert task.parent_id == publish.context.span_id
    assert model_call.parent_id == task.span_id
    assert model_call.attributes == {
        "gen_ai.system": "openai",
        "gen_ai.request.model": worker_model.requests[0].body["model"],
    }
