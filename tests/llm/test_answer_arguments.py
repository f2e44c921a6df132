"""An answer argument streams out of tool-call argument fragments, however the JSON is cut."""

from __future__ import annotations

import json

import pytest

from apps.llm.base import AnswerArguments
from apps.llm.types import TextDelta, ToolSpec

TOOLS = (
    ToolSpec(name="respond_to_user", description="", parameters={}, answer_argument="message"),
    ToolSpec(name="search", description="", parameters={}),
)
MESSAGE = 'Wages: "$84,500" [1] — it\u2019s here.\nNext line \\ done \U0001f4c4'


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 1000])
def test_the_message_streams_exactly_whatever_the_fragment_size(size):
    for encoded in (
        json.dumps({"files": [1], "message": MESSAGE}),
        json.dumps({"message": MESSAGE}, ensure_ascii=False),
    ):
        shown: list[TextDelta] = []
        answers = AnswerArguments(tools=TOOLS, on_text=shown.append)
        for start in range(0, len(encoded), size):
            answers.feed(index=0, call_id="call_1", name="respond_to_user", fragment=encoded[start : start + size])
        assert "".join(delta.text for delta in shown) == MESSAGE
        assert {delta.call_id for delta in shown} == {"call_1"}
        if size < 5:
            assert len(shown) > 10  # piece by piece, not at the end


def test_other_tools_and_other_arguments_stream_nothing():
    shown: list[TextDelta] = []
    answers = AnswerArguments(tools=TOOLS, on_text=shown.append)
    answers.feed(index=0, call_id="call_1", name="search", fragment='{"message": "not an answer"}')
    answers.feed(index=1, call_id="call_2", name="respond_to_user", fragment='{"files": ["a.pdf"], "note": "x"}')
    answers.feed(index=2, call_id="call_3", name="respond_to_user", fragment='{"message": 12}')
    assert shown == []
