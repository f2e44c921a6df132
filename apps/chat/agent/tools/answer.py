"""generate_answer (seed 001 §7.3): the model ends its research by handing over the answer.

With `answer` the call carries the answer itself: its text streams as the model writes it
(`answer_argument`) and the loop ends with it. Called as the seed's schema has it, with no
arguments, the answer is written from everything gathered, as when the loop forces one, without
the forced answer's note. `citations` names passages the answer rests on beyond those its text
marks with [n]. The loop does the ending (`loop._answer_call`); this tool only accepts the call.
"""

from __future__ import annotations

from django.utils.translation import gettext
from pydantic import Field

from apps.chat.agent.registry import Tool, ToolContext, ToolInput, ToolOutput, pydantic_tool

MAX_CITATIONS = 50


class GenerateAnswerInput(ToolInput):
    answer: str = Field(
        default="",
        description=(
            "Your final answer to the user, citing the passages it uses as [n]. Leave it out to have the "
            "answer written from everything gathered."
        ),
    )
    citations: list[int] = Field(
        default_factory=list,
        max_length=MAX_CITATIONS,
        description="Numbers n of the passages the answer rests on, if its text does not mark them all.",
    )


def generate_answer(arguments: GenerateAnswerInput, context: ToolContext) -> ToolOutput:
    summary = gettext("answer written") if arguments.answer else gettext("answer to be written from what was gathered")
    return ToolOutput(data={"answered": True}, summary=summary)


ANSWER_TOOLS: tuple[Tool, ...] = (
    pydantic_tool(
        name="generate_answer",
        description=(
            "End the research and give the final answer. Call it once, when you can answer; no tool runs after it."
        ),
        input_model=GenerateAnswerInput,
        run=generate_answer,
        phase="generating",
        answer_argument="answer",
        citations_argument="citations",
    ),
)
