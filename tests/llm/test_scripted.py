from __future__ import annotations

import pytest

from apps.llm.base import LLMError, LLMRateLimitError
from apps.llm.scripted import ScriptedProvider, ScriptExhaustedError, text_response, tool_call_response
from apps.llm.types import LLMRequest, LLMResponse, Message, StopReason, TextDelta, ToolSpec

SEARCH = ToolSpec(name="search_folder", description="search", parameters={"type": "object"})


def test_replays_in_order_and_records_requests():
    provider = ScriptedProvider(
        [tool_call_response(("search_folder", {"query": "w2"})), text_response("Found it [1].")]
    )

    first = provider.complete(messages=[Message.user("where is my w2")], tools=[SEARCH], system="sys")
    second = provider.complete(messages=[Message.user("where is my w2"), first.as_message()], max_tokens=50)

    assert first.stop_reason is StopReason.TOOL_USE
    assert first.tool_calls[0].name == "search_folder"
    assert second.text == "Found it [1]."
    assert second.model == "scripted"
    assert provider.requests[0] == LLMRequest(messages=(Message.user("where is my w2"),), tools=(SEARCH,), system="sys")
    assert provider.requests[1].max_tokens == 50
    assert provider.requests[1].messages[1].tool_calls == first.tool_calls
    assert provider.remaining == 0


def test_tool_call_ids_never_repeat():
    a = tool_call_response(("search_folder", {}), ("search_folder", {}))
    b = tool_call_response(("search_folder", {}))

    ids = [call.id for call in a.tool_calls + b.tool_calls]
    assert len(set(ids)) == 3


def test_raises_scripted_exceptions():
    provider = ScriptedProvider([LLMRateLimitError("slow down"), text_response("ok")])

    with pytest.raises(LLMRateLimitError):
        provider.complete(messages=[Message.user("hi")])
    assert provider.complete(messages=[Message.user("hi")]).text == "ok"
    assert len(provider.requests) == 2


def test_callable_steps_see_the_request():
    def echo(request: LLMRequest) -> LLMResponse:
        return text_response(f"{len(request.tools)} tools, last said {request.messages[-1].content!r}")

    provider = ScriptedProvider([echo])

    assert provider.complete(messages=[Message.user("hey")], tools=[SEARCH]).text == "1 tools, last said 'hey'"


def test_streams_text_when_asked():
    provider = ScriptedProvider([text_response("one two three")])
    deltas: list[TextDelta] = []

    provider.complete(messages=[Message.user("hi")], on_text=deltas.append)

    assert [delta.text for delta in deltas] == ["one", " two", " three"]
    assert provider.requests[0].stream is True


def test_running_out_of_script_is_a_test_failure_not_an_llm_error():
    provider = ScriptedProvider()
    provider.push(text_response("only one"))
    provider.complete(messages=[Message.user("1")])

    with pytest.raises(ScriptExhaustedError) as raised:
        provider.complete(messages=[Message.user("2")])

    assert isinstance(raised.value, AssertionError)
    assert not isinstance(raised.value, LLMError)
