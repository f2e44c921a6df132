"""`manage.py ask`: the answer streams to stdout, its sources follow."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from apps.chat.models import AgentRun

pytestmark = pytest.mark.django_db


def ask(*args: object) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("ask", *[str(arg) for arg in args], stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_ask_prints_an_extractive_answer_and_its_sources(library, settings):
    settings.LLM_PROVIDER = "extractive"

    out, err = ask(library.folder.pk, "How much federal income tax was withheld on the W-2?")

    answer, _, sources = out.partition("\nSources:\n")
    assert "12,300" in answer
    assert "finance/W2_2024.pdf (page 2)" in sources
    assert "[searching]" in err and "completed" in err


def test_ask_continues_a_conversation(library, settings):
    settings.LLM_PROVIDER = "extractive"
    ask(library.folder.pk, "W-2 wages?")
    conversation_id = AgentRun.objects.get().conversation_id

    ask(library.folder.pk, "And the tax withheld?", "--conversation", conversation_id)

    assert list(AgentRun.objects.values_list("conversation_id", flat=True)) == [conversation_id] * 2


def test_ask_refuses_unknown_folder_conversation_and_empty_question(library, other_user):
    with pytest.raises(CommandError, match="No folder"):
        ask(999_999, "hi")
    with pytest.raises(CommandError, match="No conversation"):
        ask(library.folder.pk, "hi", "--conversation", 999_999)
    with pytest.raises(CommandError, match="1 to 8000"):
        ask(library.folder.pk, "   ")
