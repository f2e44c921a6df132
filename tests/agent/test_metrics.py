"""Agent metrics across runs: `GET /api/metrics/agent` (the owner's runs only) and the admin page.
Runs are real runs through `run_execute` with the scripted provider; a failed run keeps its metrics."""

from __future__ import annotations

import datetime as dt

import pytest

from apps.chat.metrics import fallback_reason_kind
from apps.chat.models import AgentRun
from apps.llm.base import LLMUnavailableError, RetryPolicy
from apps.llm.factory import use_provider_for_tests
from apps.llm.openai_provider import OpenAIProvider
from apps.llm.scripted import ScriptedProvider, text_response, tool_call_response
from apps.llm.types import LLMResponse, Usage
from tests.support.agent_runs import QUESTION, ask
from tests.support.chat_library import make_folder
from tests.support.llm_wire_stub import StubToolCall

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def runs(library, scripted, wire_stub, settings, monkeypatch):
    """Four runs of the library's owner: standard, agent with a rewrite, agent that fell back, and
    agent whose answer broke mid-stream and whose fallback failed too."""
    settings.AGENT_MAX_ITERATIONS = 4  # the rewrite run's three tool rounds, then its answer
    scripted.push(LLMResponse(text="Standard [1].", usage=Usage(input_tokens=100, output_tokens=10)))
    ask(library.folder, QUESTION, agent_mode=False)

    router = ScriptedProvider([text_response("federal income tax withheld")])
    scripted.push(
        tool_call_response(("search_folder", {"query": "money kept back", "mode": "keyword"})),
        tool_call_response(("rewrite_query", {"original_query": "money kept back", "feedback": "empty"})),
        tool_call_response(("search_folder", {"query": "federal income tax withheld"})),
        LLMResponse(text="It was 12,300 dollars [1].", usage=Usage(input_tokens=300, output_tokens=20)),
    )
    with use_provider_for_tests(router, role="router"):
        ask(library.folder, QUESTION)

    scripted.push(
        tool_call_response(("search_folder", {"query": "tax withheld"})),
        LLMUnavailableError("upstream 503"),
    )
    ask(library.folder, QUESTION)

    # Through the real SDK: the answer starts streaming, then the stream breaks; the offline
    # fallback's search fails as well.
    def index_down(**kwargs):
        raise RuntimeError("index unavailable")

    monkeypatch.setattr("apps.chat.standard.chunk_search", index_down)
    wire_stub.reply_tool_calls(StubToolCall("call_1", "search_folder", {"query": "tax withheld"}))
    wire_stub.cut_stream("Federal", " income")
    sdk = OpenAIProvider(
        model="stub-model", api_key="test-key", base_url=wire_stub.openai_base_url, retry_policy=RetryPolicy(1)
    )
    with use_provider_for_tests(sdk):
        failed, _ = ask(library.folder, QUESTION)
    return failed


def test_a_run_that_fails_mid_answer_keeps_its_metrics(runs):
    failed = AgentRun.objects.get(pk=runs.pk)
    assert failed.status == "error" and "index unavailable" in failed.error
    assert failed.iterations == 2 and [call["name"] for call in failed.tool_calls] == ["search_folder"]
    assert failed.metrics["searches"] == 1 and failed.metrics["finish"] == "fallback"
    assert isinstance(failed.metrics["total_ms"], int)


def test_the_metrics_endpoint_aggregates_the_owners_runs(runs, library, api_client, other_user):
    other_folder = make_folder(other_user, name="other")
    api_client.force_authenticate(other_user)
    assert api_client.get("/api/metrics/agent").json()["runs"] == 0  # nobody else's runs
    assert api_client.get(f"/api/metrics/agent?folder_id={library.folder.pk}").status_code == 404

    api_client.force_authenticate(library.folder.owner)
    body = api_client.get(f"/api/metrics/agent?folder_id={library.folder.pk}").json()

    assert body["runs"] == 4 and body["failed_runs"] == 1
    assert body["runs_by_mode"] == {"standard": 1, "agent": 3}
    assert body["latency_ms"]["standard"]["count"] == 1 and body["latency_ms"]["agent"]["count"] == 3
    assert body["latency_ms"]["agent"]["p50"] <= body["latency_ms"]["agent"]["p95"]
    assert body["average_iterations"] == round((4 + 2 + 2) / 3, 2)
    assert body["tool_usage"] == {"search_folder": 4, "rewrite_query": 1}
    assert body["rewrites"] == {"count": 1, "succeeded": 1, "success_rate": 1.0}
    reasons = {"The model service could not be reached.": 1}
    assert body["fallback"] == {"count": 1, "rate": round(1 / 3, 3), "reasons": reasons}
    assert body["tokens"]["input"] >= 400 and body["tokens"]["output"] >= 30

    tomorrow = (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).isoformat()
    assert api_client.get("/api/metrics/agent", {"since": tomorrow}).json()["runs"] == 0
    assert api_client.get("/api/metrics/agent?since=yesterday").status_code == 400
    assert api_client.get(f"/api/metrics/agent?folder_id={other_folder.pk}").status_code == 404


def test_the_metrics_endpoint_is_in_the_openapi_schema(api_client, user):
    api_client.force_authenticate(user)
    schema = api_client.get("/api/schema", {"format": "json"}).json()
    operation = schema["paths"]["/api/metrics/agent"]["get"]
    assert {parameter["name"] for parameter in operation["parameters"]} >= {"folder_id", "since"}
    output = schema["components"]["schemas"]["AgentMetricsOutput"]["properties"]
    assert {"latency_ms", "average_iterations", "tool_usage", "rewrites", "fallback", "tokens"} <= output.keys()
    events = schema["paths"]["/api/runs/{run_id}/events"]["get"]["description"]
    assert "`timestamp`" in events and "`message`" in events and "text_reset" in events


def test_the_admin_page_shows_every_users_metrics(runs, client, django_user_model):
    admin = django_user_model.objects.create_superuser(username="root", password="root-password")
    client.force_login(admin)

    page = client.get("/admin/chat/agentrun/metrics/")

    assert page.status_code == 200
    html = page.content.decode()
    assert "Agent metrics" in html and "standard: 1" in html and "agent: 3" in html
    assert "The model service could not be reached.: 1" in html and "search_folder: 4" in html
    assert client.get("/admin/chat/agentrun/").content.decode().count("/admin/chat/agentrun/metrics/") == 1


def test_fallback_reasons_are_grouped_by_kind():
    assert fallback_reason_kind("model error: upstream 503") == "model error"
    assert fallback_reason_kind("total timeout of 60 s reached") == "total timeout reached"
    assert fallback_reason_kind("agent loop failed: RuntimeError: x") == "agent loop failed"
