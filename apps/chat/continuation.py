"""Continuing an answer the model cut at its token limit (`metadata.truncated`).

`answer_continue_start` queues a run whose question is the truncated answer itself; that run
(`chat_run_continue`) searches as the original question did, shows the model the text so far,
asks it to go on from there, streams only the new text, and completes the same message in place
(`services.answer_continued`). Continued again while still cut short, it goes on again.
"""

from __future__ import annotations

import time

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils.translation import gettext as _

from apps.chat.events import RunEvents
from apps.chat.image_reading import question_images_read
from apps.chat.models import AgentRun, ConversationStatus, Message, MessageRole, RunStatus
from apps.chat.prompts import STANDARD_SYSTEM_PROMPT, answer_citations
from apps.chat.standard import standard_prompt
from apps.chat.types import RunResult
from apps.core.api import ApplicationError, ConflictError
from apps.llm.factory import get_llm
from apps.llm.types import Message as LLMMessage
from apps.llm.types import StopReason

CONTINUE_PROMPT = (
    "Your answer above was cut off at the length limit. Continue it exactly where it stopped, without "
    "repeating anything already written and without any preamble, citing sources as before."
)


@transaction.atomic
def answer_continue_start(*, user: AbstractBaseUser, message: Message) -> AgentRun:
    """Queue the continuation of `message` (the caller has checked it is `user`'s)."""
    if message.role != MessageRole.AGENT or not message.metadata.get("truncated"):
        raise ApplicationError(_("Only an answer that was cut short can be continued."))
    if message.conversation.status == ConversationStatus.ARCHIVED:
        raise ConflictError(_("This conversation is archived; start a new one."))
    if AgentRun.objects.filter(question=message, status__in=[RunStatus.QUEUED, RunStatus.RUNNING]).exists():
        raise ConflictError(_("This answer is already being continued."))
    original = AgentRun.objects.filter(pk=message.metadata.get("run_id")).first()
    if original is None:
        raise ApplicationError(_("This answer cannot be continued; ask again."))
    return AgentRun.objects.create(
        owner_id=user.pk,
        conversation_id=message.conversation_id,
        question=message,
        mode=original.mode,
        model=original.model,
        language=original.language,  # goes on in the language it was begun in
    )


def is_continuation(run: AgentRun) -> bool:
    """A continuation's run has the answer it continues as its question."""
    return run.question is not None and run.question.role == MessageRole.AGENT


def chat_run_continue(*, run: AgentRun, events: RunEvents) -> RunResult:
    answer = run.question
    if answer is None:
        raise ValueError(f"run {run.pk} has no answer to continue")
    original = AgentRun.objects.select_related("question").get(pk=answer.metadata["run_id"])
    if original.question is None:
        raise ApplicationError(_("The question of this answer is gone; ask it again."))
    question = str(original.question.content.get("text", ""))
    so_far = str(answer.content.get("text", ""))

    events.status("searching")
    started = time.perf_counter()
    images = question_images_read(question=original.question)  # read by the answer's run: numbered alike
    prompt = standard_prompt(
        conversation=run.conversation,
        question=question,
        before_message_id=original.question.pk,
        gathered=images.sources,
    )
    sources = prompt.sources
    messages = [
        *prompt.messages,
        LLMMessage.assistant(so_far),
        LLMMessage.user(CONTINUE_PROMPT),
    ]
    searched = time.perf_counter()
    events.status("generating", sources=len(sources), continuing=True)
    llm = get_llm("answer")
    # Model failures end this run with its plain sentence; the answer stays as it was, continuable.
    response = llm.complete(messages=messages, system=STANDARD_SYSTEM_PROMPT, on_text=events.text)
    events.flush_text()
    text = so_far + response.text
    return RunResult(
        text=text,
        citations=answer_citations(answer=text, sources=sources),
        model=response.model or llm.model,
        usage=response.usage,
        metrics={
            "searches": 1,
            "llm_calls": 1,
            "sources": len(sources),
            "continued_chars": len(so_far),
            "search_ms": round((searched - started) * 1000),
            "generation_ms": round((time.perf_counter() - searched) * 1000),
        },
        truncated=response.stop_reason is StopReason.MAX_TOKENS,
        continues_message_id=answer.pk,
    )
