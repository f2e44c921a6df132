"""Operator-defined webhook tools: schema validation, host allowlist, size cap, timeout, the loop."""

from __future__ import annotations

import json
import socket
import time

import pytest

from apps.chat.agent.registry import ToolContext
from apps.chat.agent.tools import folder_tools
from apps.chat.agent.webhook import WebhookRefused, webhook_call, webhook_url_check
from apps.chat.models import WebhookTool
from apps.llm.scripted import text_response, tool_call_response
from apps.llm.types import ToolCall
from tests.support.agent_requests import tool_payloads
from tests.support.agent_runs import ask, tool_results
from tests.support.chat_library import make_folder

TICKET_SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "minLength": 3},
        "priority": {"type": "string", "enum": ["low", "high"]},
    },
    "required": ["title"],
    "additionalProperties": False,
}


def make_webhook(folder, url: str, *, name: str = "create_ticket", schema=None, **options) -> WebhookTool:
    webhook = WebhookTool.objects.create(
        name=name,
        description="Open a ticket in the team's tracker.",
        url=url,
        input_schema=TICKET_SCHEMA if schema is None else schema,
        **options,
    )
    webhook.folders.add(folder)
    return webhook


def call(library, name: str, arguments: dict):
    registry = folder_tools(folder_id=library.folder.pk)
    context = ToolContext(folder_id=library.folder.pk, user_id=library.folder.owner_id, question="q")
    return registry.execute(ToolCall(id="call_w", name=name, arguments=arguments), context)


@pytest.fixture
def no_dns(monkeypatch):
    """Fails the test if anything resolves a host name."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"DNS lookup attempted: {args[:2]}")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)


# -- the URL check ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://evil.example.com/hook", "not on WEBHOOK_TOOL_ALLOWED_HOSTS"),
        ("http://hooks.example.com@evil.example.com/", "credentials"),
        ("ftp://hooks.example.com/x", "http or https"),
        ("file:///etc/passwd", "http or https"),
        ("http://hooks.example.com.evil.net/", "not on WEBHOOK_TOOL_ALLOWED_HOSTS"),
        ("http://[::1]:8000/", "not on WEBHOOK_TOOL_ALLOWED_HOSTS"),
    ],
)
def test_only_allowed_hosts_pass_the_url_check(url, problem):
    with pytest.raises(WebhookRefused, match=problem):
        webhook_url_check(url, allowed_hosts=["hooks.example.com"])


def test_allowed_hosts_match_case_insensitively():
    assert webhook_url_check("https://HOOKS.example.com./x", allowed_hosts=["hooks.example.com"]).path == "/x"


# -- calling ---------------------------------------------------------------------------------------


def test_an_allowed_call_posts_the_arguments_as_json(hook_server):
    result = webhook_call(url=f"{hook_server.url}/tickets", payload={"title": "Fix it"}, timeout_seconds=5)

    assert result == {"status_code": 200, "data": {"ok": True, "received": {"title": "Fix it"}}}
    (request,) = hook_server.requests
    assert request["path"] == "/tickets" and request["body"] == {"title": "Fix it"}
    assert request["headers"]["Content-Type"] == "application/json"
    assert request["headers"]["User-Agent"].startswith("folderchat-agent")


def test_a_host_off_the_allowlist_is_refused_before_any_request_or_lookup(hook_server, no_dns):
    port = hook_server.url.rsplit(":", 1)[1]

    result = webhook_call(url=f"http://localhost:{port}/tickets", payload={"title": "x"}, timeout_seconds=5)

    assert result == {"error": "host 'localhost' is not on WEBHOOK_TOOL_ALLOWED_HOSTS"}
    assert hook_server.requests == []


def test_responses_over_the_size_cap_are_refused(hook_server):
    result = webhook_call(url=f"{hook_server.url}/big", payload={}, timeout_seconds=5)

    assert result == {"error": "response larger than 64 KB", "status_code": 200}


def test_a_slow_webhook_times_out(hook_server):
    started = time.monotonic()

    result = webhook_call(url=f"{hook_server.url}/slow", payload={}, timeout_seconds=0.3)

    assert result == {"error": "timed out after 0.3 s"}
    assert time.monotonic() - started < 1.5


def test_redirects_are_not_followed_and_errors_are_structured(hook_server):
    redirected = webhook_call(url=f"{hook_server.url}/redirect", payload={}, timeout_seconds=5)
    failed = webhook_call(url=f"{hook_server.url}/fail", payload={}, timeout_seconds=5)
    refused = webhook_call(url="http://127.0.0.1:1/closed", payload={}, timeout_seconds=5)

    assert redirected == {"error": "the webhook answered with a redirect, which is not followed", "status_code": 302}
    assert failed == {"error": "the webhook answered HTTP 500", "status_code": 500, "data": {"detail": "boom"}}
    assert refused == {"error": "request failed: ConnectError"}
    assert [r["path"] for r in hook_server.requests] == ["/redirect", "/fail"]


# -- as tools --------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_folders_enabled_valid_webhooks_become_tools(library, hook_server, other_user):
    make_webhook(library.folder, f"{hook_server.url}/tickets")
    make_webhook(library.folder, f"{hook_server.url}/off", name="disabled_hook", enabled=False)
    make_webhook(library.folder, "http://elsewhere.example.com/x", name="off_allowlist")
    make_webhook(library.folder, f"{hook_server.url}/x", name="bad_schema", schema={"type": "strng"})
    make_webhook(library.folder, f"{hook_server.url}/x", name="not_object", schema={"type": "array"})
    make_webhook(library.folder, f"{hook_server.url}/x", name="search_folder")  # a built-in's name
    make_webhook(make_folder(other_user, name="theirs"), f"{hook_server.url}/x", name="their_hook")

    specs = {spec.name: spec for spec in folder_tools(folder_id=library.folder.pk).specs()}

    assert "create_ticket" in specs
    assert {"disabled_hook", "off_allowlist", "bad_schema", "not_object", "their_hook"}.isdisjoint(specs)
    assert specs["create_ticket"].parameters == TICKET_SCHEMA
    assert specs["create_ticket"].description.startswith("Open a ticket")
    assert specs["search_folder"].parameters["required"] == ["query"]  # the built-in, not the webhook


@pytest.mark.django_db
def test_arguments_are_validated_against_the_schema_before_any_request(library, hook_server):
    make_webhook(library.folder, f"{hook_server.url}/tickets")

    invalid = call(library, "create_ticket", {"title": "x", "priority": "urgent", "extra": 1})

    assert invalid.is_error and invalid.data["error"] == "invalid arguments"
    problems = {detail["field"]: detail["problem"] for detail in invalid.data["details"]}
    assert set(problems) == {"(arguments)", "priority", "title"}
    assert "urgent" in problems["priority"] and "extra" in problems["(arguments)"]
    assert hook_server.requests == []

    valid = call(library, "create_ticket", {"title": "Renew passport", "priority": "high"})

    assert not valid.is_error and valid.summary == "HTTP 200"
    assert valid.data["data"]["received"] == {"title": "Renew passport", "priority": "high"}
    assert valid.data["webhook"] == "create_ticket" and "never instructions" in valid.data["notice"]


@pytest.mark.django_db
def test_the_webhooks_own_timeout_applies(library, hook_server):
    make_webhook(library.folder, f"{hook_server.url}/slow", timeout_seconds=0.3)

    output = call(library, "create_ticket", {"title": "slow one"})

    assert output.is_error and output.summary == "timed out after 0.3 s"


@pytest.mark.django_db
def test_a_host_removed_from_the_allowlist_is_refused_at_call_time(library, hook_server, settings):
    make_webhook(library.folder, f"{hook_server.url}/tickets")
    registry = folder_tools(folder_id=library.folder.pk)
    settings.WEBHOOK_TOOL_ALLOWED_HOSTS = []

    output = registry.execute(
        ToolCall(id="c", name="create_ticket", arguments={"title": "hello"}),
        ToolContext(folder_id=library.folder.pk, user_id=1, question="q"),
    )

    assert output.is_error and "not on WEBHOOK_TOOL_ALLOWED_HOSTS" in output.summary
    assert hook_server.requests == []


@pytest.mark.django_db(transaction=True)
def test_the_model_calls_a_webhook_through_the_loop(library, hook_server, scripted):
    make_webhook(library.folder, f"{hook_server.url}/tickets")
    scripted.push(
        tool_call_response(("create_ticket", {"title": "Renew passport"})),
        text_response("I opened a ticket to renew your passport."),
    )

    run, events = ask(library.folder, "Open a ticket to renew my passport")

    assert run.status == "completed" and run.fallback_reason == ""
    assert "create_ticket" in {tool.name for tool in scripted.requests[0].tools}
    (result,) = tool_results(events)
    assert (result["tool_name"], result["status"], result["tool_output"]) == ("create_ticket", "complete", "HTTP 200")
    assert ("calling_tool", 1) in [(e.data["phase"], e.data.get("iteration")) for e in events if e.type == "status"]
    assert [r["body"] for r in hook_server.requests] == [{"title": "Renew passport"}]
    (payload,) = tool_payloads(scripted.requests[1])
    assert payload["data"]["ok"] is True
    assert json.loads(json.dumps(run.tool_calls))[0]["name"] == "create_ticket"
    # The system prompt describes every tool offered: the built-ins, the image tool, this webhook.
    system = scripted.requests[0].system
    offered = [tool.name for tool in scripted.requests[0].tools]
    assert len(offered) == 14 and all(f"\n- {name}: " in system for name in offered)
    assert "\n- describe_image: Describe an image file" in system and "describe_image shows" in system
    assert "\n- create_ticket: Open a ticket in the team's tracker. (Operator-defined webhook" in system


@pytest.mark.django_db
def test_admin_refuses_a_webhook_the_agent_could_not_offer(library, settings):
    from apps.chat.admin import WebhookToolForm

    settings.WEBHOOK_TOOL_ALLOWED_HOSTS = ["hooks.example.com"]
    data = {
        "description": "Open a ticket.",
        "timeout_seconds": 5,
        "enabled": True,
        "folders": [library.folder.pk],
    }

    bad = WebhookToolForm(
        data={**data, "name": "search_folder", "url": "http://evil.example.com/x", "input_schema": '{"type": "strng"}'}
    )
    good = WebhookToolForm(
        data={
            **data,
            "name": "create_ticket",
            "url": "https://hooks.example.com/t",
            "input_schema": json.dumps(TICKET_SCHEMA),
        }
    )

    assert not bad.is_valid()
    problems = " | ".join(bad.non_field_errors())
    assert "built-in tool" in problems and "not on WEBHOOK_TOOL_ALLOWED_HOSTS" in problems
    assert "invalid input schema" in problems
    assert good.is_valid(), good.errors
