from __future__ import annotations

import time
from email.utils import formatdate

import pytest

from apps.llm.base import (
    LLMError,
    LLMRateLimitError,
    LLMTimeoutError,
    LLMUnavailableError,
    RetryPolicy,
    StreamGuard,
    call_with_retry,
    error_from_status,
    parse_retry_after,
    stream_text,
)
from apps.llm.types import Message, Role, TextDelta


class FlakyCall:
    def __init__(self, *errors: LLMError) -> None:
        self.errors = list(errors)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


def test_backoff_grows_exponentially_up_to_the_cap():
    sleeps: list[float] = []
    call = FlakyCall(*[LLMUnavailableError("down")] * 5)

    result = call_with_retry(
        call,
        policy=RetryPolicy(max_attempts=6, base_delay=1, max_delay=5),
        sleep=sleeps.append,
        rand=lambda: 1.0,
    )

    assert result == "ok"
    assert sleeps == [1, 2, 4, 5, 5]


def test_jitter_stays_within_half_to_full_ceiling():
    sleeps: list[float] = []

    call_with_retry(
        FlakyCall(LLMUnavailableError("down")),
        policy=RetryPolicy(base_delay=2),
        sleep=sleeps.append,
        rand=lambda: 0.0,
    )

    assert sleeps == [1.0]


def test_retry_after_is_a_floor_but_capped():
    sleeps: list[float] = []
    call = FlakyCall(LLMRateLimitError("slow down", retry_after=3), LLMRateLimitError("again", retry_after=99))

    call_with_retry(call, policy=RetryPolicy(base_delay=0.1, max_delay=10), sleep=sleeps.append, rand=lambda: 1.0)

    assert sleeps == [3, 10]


def test_gives_up_after_max_attempts_with_the_last_error():
    call = FlakyCall(*[LLMUnavailableError(f"down {n}") for n in range(5)])

    with pytest.raises(LLMUnavailableError, match="down 2"):
        call_with_retry(call, policy=RetryPolicy(max_attempts=3), sleep=lambda _: None)
    assert call.calls == 3


@pytest.mark.parametrize("error", [LLMTimeoutError("slow"), LLMError("bad request", status_code=400)])
def test_non_retryable_errors_surface_at_once(error: LLMError):
    call = FlakyCall(error)

    with pytest.raises(type(error)):
        call_with_retry(call, policy=RetryPolicy(), sleep=lambda _: pytest.fail("must not sleep"))
    assert call.calls == 1


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (429, LLMRateLimitError),
        (500, LLMUnavailableError),
        (529, LLMUnavailableError),
        (408, LLMTimeoutError),
    ],
)
def test_error_from_status_types(status: int, expected: type[LLMError]):
    error = error_from_status(status_code=status, message="x", headers={"retry-after": "2"})

    assert type(error) is expected
    assert error.retryable is (expected is not LLMTimeoutError)


def test_error_from_status_other_client_error_is_plain():
    error = error_from_status(status_code=401, message="bad key")

    assert type(error) is LLMError
    assert error.status_code == 401


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "7"}, 7.0),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_parse_retry_after(headers: dict[str, str], expected: float | None):
    assert parse_retry_after(headers) == expected


def test_parse_retry_after_http_date():
    seconds = parse_retry_after({"retry-after": formatdate(time.time() + 30, usegmt=True)})

    assert seconds is not None
    assert 28 <= seconds <= 31


def test_stream_guard_seals_retryable_errors_once_text_was_shown():
    shown: list[str] = []
    guard = StreamGuard(lambda delta: shown.append(delta.text))

    assert guard.seal(LLMUnavailableError("before")).retryable
    guard(TextDelta(text="partial"))

    assert not guard.seal(LLMUnavailableError("after")).retryable
    assert shown == ["partial"]


def test_stream_text_reassembles_exactly():
    text = "  Two  spaces, a\nnewline and trailing space "
    deltas: list[str] = []

    stream_text(text, lambda delta: deltas.append(delta.text))

    assert "".join(deltas) == text
    assert len(deltas) > 3


def test_message_shapes_are_validated():
    with pytest.raises(ValueError, match="tool_call_id"):
        Message(role=Role.TOOL, content="result")
    with pytest.raises(ValueError, match="tool calls"):
        Message(role=Role.USER, content="hi", tool_calls=(object(),))  # type: ignore[arg-type]
    assert Message.tool_result(tool_call_id="c1", content="{}").role is Role.TOOL
