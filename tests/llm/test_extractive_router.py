from __future__ import annotations

import pytest

from apps.llm.extractive_router import Intent, classify_intent


@pytest.mark.parametrize(
    ("message", "pending", "intent"),
    [
        ("yes", True, Intent.CONFIRM),
        ("Sounds good!", True, Intent.CONFIRM),
        ("ok, do it", True, Intent.CONFIRM),
        ("no, keep it here thanks", True, Intent.REJECT),
        ("thanks", True, Intent.CHAT),
        ("go ahead please", True, Intent.CONFIRM),
        ("no", True, Intent.REJECT),
        ("Keep it here.", True, Intent.REJECT),
        ("cancel", True, Intent.REJECT),
        ("yes", False, Intent.CHAT),
        ("no", False, Intent.CHAT),
        ("hello", False, Intent.CHAT),
        ("Thanks!", True, Intent.CHAT),
        ("find my ID photo", False, Intent.QUERY),
        ("what's in that PDF?", False, Intent.QUERY),
        ("How many photos do I have", False, Intent.QUERY),
        ("no, where is my 2023 tax return?", True, Intent.QUERY),
        ("put this in my work folder", False, Intent.ORGANIZE),
        ("Organize my inbox", False, Intent.ORGANIZE),
        ("can you move the W2 into taxes?", False, Intent.ORGANIZE),
        ("https://example.com/article", False, Intent.SAVE),
        (
            "Meeting notes: " + "we agreed the launch moves to March and budget stays flat. " * 5,
            False,
            Intent.SAVE,
        ),
        ("quarterly revenue numbers 2024", False, Intent.QUERY),
        ("hmm", False, Intent.CHAT),
        ("   ", False, Intent.CHAT),
    ],
)
def test_intents(message: str, pending: bool, intent: Intent):
    assert classify_intent(message, has_pending_suggestion=pending).intent is intent


def test_confirmations_are_confident_and_vague_messages_are_not():
    assert classify_intent("yes", has_pending_suggestion=True).confidence >= 0.9
    assert classify_intent("hmm", has_pending_suggestion=False).confidence < 0.6
    assert classify_intent("quarterly revenue numbers 2024", has_pending_suggestion=False).confidence < 0.8


def test_query_params_carry_the_search_query_without_the_command():
    result = classify_intent("Please find the lease for the flat?", has_pending_suggestion=False)

    assert result.params == {"search_query": "the lease for the flat"}


def test_organize_params_carry_the_target_hint():
    result = classify_intent("put this in my work folder", has_pending_suggestion=False)

    assert result.params == {"target_hint": "work"}


def test_save_params_carry_the_url():
    intent, confidence, params = classify_intent("https://example.com/a", has_pending_suggestion=False)

    assert (intent, params) == (Intent.SAVE, {"url": "https://example.com/a"})
    assert confidence >= 0.9
