"""A per-process circuit breaker for each model service, so a dead API does not cost every user a timeout.

After `LLM_BREAKER_FAILURES` consecutive outage failures (each one a call that failed after its
retries) the service is skipped for `LLM_BREAKER_COOLDOWN_SECONDS`: calls raise
`LLMCircuitOpenError` at once, and callers answer offline. After the cool-down one call is let
through; its success closes the breaker, its failure opens it for another cool-down, and any
other exception (a cancelled run, a time limit) ends it without counting. Kept in
memory, per process: each worker learns of an outage by itself, which costs it N failures.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from apps.core.metrics import breaker_state_set
from apps.llm.base import LLMCircuitOpenError, LLMError
from apps.llm.failures import is_outage


class CircuitBreaker:
    def __init__(
        self, *, name: str, failures: int, cooldown_seconds: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.name = name
        self.failures = max(1, failures)
        self.cooldown_seconds = cooldown_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._consecutive = 0
        self._open_until = 0.0
        self._probing = False

    def before_call(self) -> bool:
        """Raise `LLMCircuitOpenError` while open; past the cool-down, let one probe through.
        True when this call is that probe: its caller must end it with `probe_end`."""
        with self._lock:
            if self._consecutive < self.failures:
                return False
            if self._clock() < self._open_until or self._probing:
                raise LLMCircuitOpenError(f"{self.name}: skipped after {self._consecutive} consecutive failures")
            self._probing = True
            return True

    def probe_end(self) -> None:
        """End the probe, counting nothing: a probe stopped by something other than the service
        (the user's Stop, a time limit, Redis) says nothing about it, and a probe left running
        would refuse every later call in this process."""
        with self._lock:
            self._probing = False

    def record_success(self) -> None:
        with self._lock:
            tripped = self._consecutive >= self.failures
            self._consecutive, self._probing = 0, False
        if tripped:
            breaker_state_set(service=self.name, tripped=False)

    def record_failure(self, error: LLMError) -> None:
        if not is_outage(error):
            self.record_success()  # the service answered: it is up, whatever it thought of the request
            return
        with self._lock:
            self._consecutive += 1
            self._probing = False
            tripped = self._consecutive >= self.failures
            if tripped:
                self._open_until = self._clock() + self.cooldown_seconds
        if tripped:
            breaker_state_set(service=self.name, tripped=True)

    @property
    def is_open(self) -> bool:
        with self._lock:
            return self._consecutive >= self.failures and self._clock() < self._open_until


_breakers: dict[str, CircuitBreaker] = {}
_registry_lock = threading.Lock()


def breaker_for(*, service: str, failures: int, cooldown_seconds: float) -> CircuitBreaker:
    """The one breaker of a service (provider and base URL) in this process."""
    with _registry_lock:
        breaker = _breakers.get(service)
        if breaker is None or (breaker.failures, breaker.cooldown_seconds) != (max(1, failures), cooldown_seconds):
            breaker = _breakers[service] = CircuitBreaker(
                name=service, failures=failures, cooldown_seconds=cooldown_seconds
            )
        return breaker


def breakers_reset() -> None:
    """Forget every service's failures (tests; an operator's fix is otherwise seen after the cool-down)."""
    with _registry_lock:
        _breakers.clear()
