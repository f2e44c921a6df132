"""The circuit breaker and the failure kinds: what counts as an outage, when a service is skipped,
and how it comes back."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from redis.exceptions import ConnectionError as RedisConnectionError

from apps.chat.cancel import RunCancelled
from apps.llm.base import (
    LLMBadResponseError,
    LLMCircuitOpenError,
    LLMError,
    LLMRateLimitError,
    LLMTimeoutError,
    LLMUnavailableError,
    RetryPolicy,
    call_with_retry,
    error_from_status,
    stream_text,
)
from apps.llm.breaker import CircuitBreaker
from apps.llm.failures import FailureKind, failure_kind, failure_reason, is_outage
from apps.llm.types import TextDelta


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (LLMUnavailableError("OpenAI unreachable: Connection refused"), FailureKind.UNREACHABLE),
        (LLMTimeoutError("timed out"), FailureKind.TIMEOUT),
        (error_from_status(status_code=408, message="upstream-detail"), FailureKind.TIMEOUT),
        (error_from_status(status_code=503, message="upstream-detail"), FailureKind.SERVER_ERROR),
        (error_from_status(status_code=529, message="upstream-detail"), FailureKind.SERVER_ERROR),
        (error_from_status(status_code=401, message="upstream-detail"), FailureKind.AUTH),
        (error_from_status(status_code=403, message="upstream-detail"), FailureKind.AUTH),
        (error_from_status(status_code=429, message="upstream-detail"), FailureKind.RATE_LIMITED),
        (LLMCircuitOpenError("skipped"), FailureKind.PAUSED),
        (error_from_status(status_code=400, message="upstream-detail"), FailureKind.REJECTED),
        (LLMBadResponseError("no choices"), FailureKind.REJECTED),
    ],
)
def test_each_error_has_one_kind_and_a_plain_sentence(error, kind):
    assert failure_kind(error) is kind
    assert failure_reason(error).endswith(".") and "upstream-detail" not in failure_reason(error)
    assert is_outage(error) is (kind not in (FailureKind.REJECTED, FailureKind.PAUSED))


def breaker(clock: Clock, failures: int = 3) -> CircuitBreaker:
    return CircuitBreaker(name="openai default", failures=failures, cooldown_seconds=30, clock=clock)


def test_it_opens_after_n_consecutive_outages_and_probes_once_after_the_cool_down():
    clock = Clock()
    guard = breaker(clock)
    down = LLMUnavailableError("down")
    for _ in range(2):
        guard.before_call()
        guard.record_failure(down)
    guard.before_call()  # two failures: still closed
    guard.record_failure(down)

    with pytest.raises(LLMCircuitOpenError):
        guard.before_call()
    clock.now += 29
    with pytest.raises(LLMCircuitOpenError):
        guard.before_call()

    clock.now += 2
    guard.before_call()  # the probe
    with pytest.raises(LLMCircuitOpenError):
        guard.before_call()  # one probe at a time
    guard.record_failure(down)
    with pytest.raises(LLMCircuitOpenError):
        guard.before_call()  # open for another cool-down

    clock.now += 31
    guard.before_call()
    guard.record_success()
    assert not guard.is_open
    guard.before_call()


def test_a_success_or_a_rejected_request_resets_the_count():
    clock = Clock()
    guard = breaker(clock, failures=2)
    guard.record_failure(LLMTimeoutError("slow"))
    guard.record_failure(error_from_status(status_code=400, message="bad request"))  # the service answered
    guard.record_failure(LLMTimeoutError("slow"))
    guard.before_call()
    guard.record_success()
    guard.record_failure(LLMTimeoutError("slow"))
    guard.before_call()


def test_call_with_retry_counts_a_call_once_after_its_retries_and_skips_while_open():
    clock = Clock()
    guard = breaker(clock, failures=2)
    calls: list[int] = []

    def failing() -> str:
        calls.append(1)
        raise LLMRateLimitError("slow down", retry_after=0)

    policy = RetryPolicy(max_attempts=3, base_delay=0)
    for _ in range(2):
        with pytest.raises(LLMRateLimitError):
            call_with_retry(failing, policy=policy, sleep=lambda _: None, breaker=guard)
    assert len(calls) == 6  # two calls of three attempts each, counted as two failures

    with pytest.raises(LLMCircuitOpenError) as skipped:
        call_with_retry(failing, policy=policy, sleep=lambda _: None, breaker=guard)
    assert len(calls) == 6 and isinstance(skipped.value, LLMError)

    clock.now += 31
    assert call_with_retry(lambda: "ok", policy=policy, breaker=guard) == "ok"
    assert not guard.is_open


def _raise_from_the_stream(exc: BaseException) -> Callable[[], str]:
    """A call whose streaming callback raises `exc`, as the Stop does with `RunCancelled`."""

    def on_text(delta: TextDelta) -> None:
        raise exc

    def call() -> str:
        stream_text("the probe's answer", on_text)
        return "unreachable"

    return call


@pytest.mark.parametrize(
    "exc",
    [
        RunCancelled(),
        SoftTimeLimitExceeded(),
        RedisConnectionError("valkey went away"),
    ],
    ids=["run-cancelled", "soft-time-limit", "redis-error"],
)
def test_any_other_exception_in_the_probe_ends_it_without_counting(exc: BaseException):
    clock = Clock()
    guard = breaker(clock, failures=1)
    guard.before_call()
    guard.record_failure(LLMUnavailableError("down"))
    clock.now += 31  # half-open: the next call is the probe

    with pytest.raises(type(exc)):
        call_with_retry(_raise_from_the_stream(exc), policy=RetryPolicy(max_attempts=1), breaker=guard)

    # Not a failure (no new cool-down), not a success (still half-open: one probe at a time).
    assert guard.before_call() is True
    with pytest.raises(LLMCircuitOpenError):
        guard.before_call()
    guard.record_success()
    assert not guard.is_open
