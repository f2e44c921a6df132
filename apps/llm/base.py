"""The provider protocol, its typed errors, and the one retry loop every network provider uses."""

from __future__ import annotations

import logging
import random
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Any, Protocol, TypeVar

import jiter

from apps.llm.types import LLMResponse, Message, TextCallback, TextDelta, ToolSpec

logger = logging.getLogger(__name__)

T = TypeVar("T")


class LLMProvider(Protocol):
    model: str

    def complete(
        self,
        *,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        system: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        on_text: TextCallback | None = None,
        json_schema: Mapping[str, Any] | None = None,
    ) -> LLMResponse:
        """One model turn. With `on_text` the provider streams and calls it for each text delta.

        `json_schema`: the answer is one JSON object (as the response's text) matching this schema,
        through the provider's JSON mode or structured output where it has one; a caller still
        validates it, since a compatible server may ignore the request.
        """
        ...


class LLMError(Exception):
    """Any provider failure. `retryable` says whether the same request may succeed later."""

    retryable = False

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class LLMRateLimitError(LLMError):
    retryable = True

    def __init__(self, message: str, *, status_code: int | None = 429, retry_after: float | None = None) -> None:
        super().__init__(message, status_code=status_code)
        self.retry_after = retry_after


class LLMUnavailableError(LLMError):
    """5xx, 529 overloaded, or no connection: the service, not the request, is at fault."""

    retryable = True


class LLMTimeoutError(LLMError):
    """Not retried: every call already waited its full timeout, and the agent has a total budget."""


class LLMBadResponseError(LLMError):
    """The service answered, but with something we cannot use (malformed tool arguments, no content)."""


class LLMCircuitOpenError(LLMUnavailableError):
    """Not sent: the service failed too often lately (`apps.llm.breaker`); retrying now would only wait."""

    retryable = False


class LLMBudgetExceededError(LLMError):
    """Not sent: the caller's model usage budget is used up (`apps.llm.budgets`) until `resets_at`."""

    def __init__(self, message: str, *, resets_at: datetime) -> None:
        super().__init__(message)
        self.resets_at = resets_at


class Breaker(Protocol):
    """What `call_with_retry` tells a circuit breaker (`apps.llm.breaker.CircuitBreaker`)."""

    def before_call(self) -> bool: ...
    def probe_end(self) -> None: ...
    def record_success(self) -> None: ...
    def record_failure(self, error: LLMError) -> None: ...


def error_from_status(*, status_code: int, message: str, headers: Mapping[str, str] | None = None) -> LLMError:
    if status_code == 429:
        return LLMRateLimitError(message, retry_after=parse_retry_after(headers or {}))
    if status_code == 408:
        return LLMTimeoutError(message, status_code=status_code)
    if status_code >= 500:
        return LLMUnavailableError(message, status_code=status_code)
    return LLMError(message, status_code=status_code)


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from `retry-after-ms` (OpenAI) or `retry-after` (seconds or HTTP date)."""
    lowered = {key.lower(): value for key, value in headers.items()}
    if re.fullmatch(r"\d+(\.\d+)?", lowered.get("retry-after-ms", "")):
        return float(lowered["retry-after-ms"]) / 1000
    raw = lowered.get("retry-after", "").strip()
    if not raw:
        return None
    if re.fullmatch(r"\d+(\.\d+)?", raw):
        return float(raw)
    try:
        return max(0.0, parsedate_to_datetime(raw).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 5
    base_delay: float = 0.5
    max_delay: float = 30.0

    def delay(self, *, attempt: int, error: LLMError, rand: Callable[[], float]) -> float:
        """Full jitter over an exponential ceiling, so parallel workers do not retry in lockstep.

        A server-sent retry-after is a floor: retrying earlier is certain to be refused again.
        """
        ceiling = min(self.max_delay, self.base_delay * 2**attempt)
        jittered = ceiling * (0.5 + rand() / 2)
        if isinstance(error, LLMRateLimitError) and error.retry_after is not None:
            return min(self.max_delay, max(jittered, error.retry_after))
        return jittered


def call_with_retry(
    call: Callable[[], T],
    *,
    policy: RetryPolicy,
    sleep: Callable[[float], None] = time.sleep,
    rand: Callable[[], float] = random.random,
    breaker: Breaker | None = None,
) -> T:
    """Run `call`, retrying retryable `LLMError`s up to `policy.max_attempts` attempts in total.

    With a `breaker`, an open one refuses before anything is sent, and the call's final outcome
    (after its retries) is what it counts: an outage of the service, not a request it rejected.
    Anything else raised (the Stop's `RunCancelled`, a time limit) counts nothing, but a half-open
    probe is ended whatever happens, or the breaker would refuse every later call in this process.
    """
    probe = breaker.before_call() if breaker is not None else False
    attempt = 0
    try:
        while True:
            try:
                result = call()
            except LLMError as error:
                attempt += 1
                if not error.retryable or attempt >= policy.max_attempts:
                    if breaker is not None:
                        breaker.record_failure(error)
                    raise
                wait = policy.delay(attempt=attempt - 1, error=error, rand=rand)
                logger.warning("LLM call failed (%s), retry %d in %.2fs", error, attempt, wait)
                sleep(wait)
            else:
                if breaker is not None:
                    breaker.record_success()
                return result
    finally:
        if probe and breaker is not None:
            breaker.probe_end()


class StreamGuard:
    """Wraps `on_text` to remember whether any delta reached the caller.

    Once text has been shown, a retry would show it twice, so a mid-stream failure must surface.
    """

    def __init__(self, on_text: TextCallback | None) -> None:
        self._on_text = on_text
        self.emitted = False

    def __call__(self, delta: TextDelta) -> None:
        if self._on_text is not None and delta.text:
            self.emitted = True
            self._on_text(delta)

    def seal(self, error: LLMError) -> LLMError:
        if self.emitted:
            error.retryable = False
        return error


def stream_text(text: str, on_text: TextCallback) -> None:
    """Feed a ready answer to `on_text` word by word, as a network stream would arrive."""
    for piece in re.findall(r"\s*\S+", text):
        on_text(TextDelta(text=piece))
    trailing = text[len(text.rstrip()) :]
    if trailing:
        on_text(TextDelta(text=trailing))


class AnswerArguments:
    """Forwards the answer argument of tool calls (`ToolSpec.answer_argument`) as it is written.

    Tool-call arguments arrive as fragments of one JSON object; after each, jiter's partial mode
    (which keeps a string still being written) reads the argument so far, and the text added since
    the last fragment goes to `on_text`, marked with the call's id. A value that stops extending
    what was sent (it cannot, for well-formed JSON) sends nothing more; the loop compares the text
    it showed with the parsed call and corrects it.
    """

    def __init__(self, *, tools: Sequence[ToolSpec] | None, on_text: TextCallback) -> None:
        self._arguments = {tool.name: tool.answer_argument for tool in tools or () if tool.answer_argument}
        self._on_text = on_text
        self._raw: dict[int, str] = {}
        self._sent: dict[int, str] = {}

    def feed(self, *, index: int, call_id: str, name: str, fragment: str) -> None:
        """One fragment of the arguments of the turn's `index`-th call (named `name`, once known)."""
        argument = self._arguments.get(name)
        if argument is None or not fragment:
            return
        raw = self._raw[index] = self._raw.get(index, "") + fragment
        try:
            parsed = jiter.from_json(raw.encode(), partial_mode="trailing-strings")
        except ValueError:
            return
        value = parsed.get(argument) if isinstance(parsed, dict) else None
        sent = self._sent.get(index, "")
        if isinstance(value, str) and len(value) > len(sent) and value.startswith(sent):
            self._sent[index] = value
            self._on_text(TextDelta(text=value[len(sent) :], call_id=call_id))
