"""`agent_loop_run` with another agent's tools and prompt: what the inbox agents build on."""

from __future__ import annotations

import uuid

import pytest
from pydantic import Field

from apps.chat.agent.context import Passage
from apps.chat.agent.loop import AgentFallbackError, AgentLimits, Finish, agent_loop_run
from apps.chat.agent.registry import ToolContext, ToolInput, ToolOutput, ToolRegistry, pydantic_tool
from apps.chat.events import RunEvents
from apps.chat.prompts import HistoryTurn
from apps.llm.base import LLMRateLimitError
from apps.llm.scripted import ScriptedProvider, text_response, tool_call_response
from apps.llm.types import Role

ORGANIZE_PROMPT = "You suggest where a new file belongs. Use the tools, then answer with a folder path."


class FolderTreeInput(ToolInput):
    depth: int = Field(default=1, ge=1, le=3)


class GuidelineInput(ToolInput):
    pass


def folder_tree(arguments: FolderTreeInput, context: ToolContext) -> ToolOutput:
    return ToolOutput(data={"folders": ["taxes/", "work/"], "depth": arguments.depth}, summary="2 folders")


def guideline(arguments: GuidelineInput, context: ToolContext) -> ToolOutput:
    rule = Passage(
        file_id=7, file_name="guideline.md", path="guideline.md", chunk_id=70, text="W-2 forms go in taxes/."
    )
    return ToolOutput(data={"blocks": [rule]}, summary="read guideline.md")


ORGANIZE_TOOLS = ToolRegistry(
    tools=(
        pydantic_tool(name="folder_tree", description="The folder tree.", input_model=FolderTreeInput, run=folder_tree),
        pydantic_tool(
            name="read_guideline",
            description="The folder's guideline.md.",
            input_model=GuidelineInput,
            run=guideline,
            phase="reading_file",
        ),
    )
)


def run_loop(llm, **options):
    events: list = []
    outcome = agent_loop_run(
        question="Where should inbox/W2_2024.pdf go?",
        history=[HistoryTurn(role=Role.USER, text="hi"), HistoryTurn(role=Role.ASSISTANT, text="Hello!")],
        tools=ORGANIZE_TOOLS,
        tool_context=ToolContext(folder_id=1, user_id=1, question="Where should inbox/W2_2024.pdf go?"),
        events=RunEvents(run_id=uuid.uuid4(), on_event=events.append),
        system_prompt=ORGANIZE_PROMPT,
        limits=options.pop("limits", AgentLimits(max_iterations=3, total_timeout_seconds=10, tool_timeout_seconds=2)),
        llm=llm,
        **options,
    )
    return outcome, events


def test_another_agent_runs_with_its_own_tools_prompt_and_limits():
    llm = ScriptedProvider(
        [
            tool_call_response(("folder_tree", {"depth": 2}), ("read_guideline", {})),
            text_response("Move it to taxes/, as the guideline says [1]."),
        ]
    )

    outcome, events = run_loop(llm)

    assert outcome.finish is Finish.ANSWERED and outcome.text.startswith("Move it to taxes/")
    assert [(c.n, c.path, c.chunk_id) for c in outcome.citations] == [(1, "guideline.md", 70)]
    first = llm.requests[0]
    assert first.system.startswith(ORGANIZE_PROMPT) and "at most 3 rounds" in first.system
    assert [tool.name for tool in first.tools] == ["folder_tree", "read_guideline"]
    assert [(m.role, m.content) for m in first.messages[:2]] == [(Role.USER, "hi"), (Role.ASSISTANT, "Hello!")]
    assert [e.data.get("phase") for e in events if e.type == "status"] == [
        "planning",
        "working",
        "reading_file",
        "generating",
    ]
    assert outcome.progress.metrics["calls"] == 2 and outcome.progress.iterations == 2


def test_limits_come_from_the_caller():
    llm = ScriptedProvider(
        [tool_call_response(("folder_tree", {})), text_response("taxes/ [1]")],
    )

    outcome, _ = run_loop(llm, limits=AgentLimits(max_iterations=1, total_timeout_seconds=10, tool_timeout_seconds=2))

    assert outcome.finish is Finish.ITERATION_LIMIT and "research step limit (1)" in outcome.text
    assert llm.requests[-1].tools == ()


def test_a_provider_error_is_a_fallback_signal_carrying_the_progress():
    llm = ScriptedProvider([tool_call_response(("folder_tree", {})), LLMRateLimitError("slow down")])

    with pytest.raises(AgentFallbackError) as caught:
        run_loop(llm)

    assert caught.value.reason == "The model service is receiving too many requests."
    assert caught.value.model_failure == "rate_limited"
    progress = caught.value.progress
    assert progress.iterations == 2 and [c["name"] for c in progress.tool_calls] == ["folder_tree"]
    assert progress.metrics["fallback_used"] is True and progress.metrics["finish"] == "fallback"
