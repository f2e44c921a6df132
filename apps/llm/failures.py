"""What kind of failure a provider error is, and the fixed sentence a user is shown for it.

The exception's own text may hold a key, an internal URL or a server's stack trace: it goes to the
logs (redacted) and never to an event, an API body or a page. Users read only these sentences.
"""

from __future__ import annotations

from enum import StrEnum

from django.utils.translation import gettext_lazy

from apps.llm.base import (
    LLMBudgetExceededError,
    LLMCircuitOpenError,
    LLMError,
    LLMRateLimitError,
    LLMTimeoutError,
    LLMUnavailableError,
)


class FailureKind(StrEnum):
    UNREACHABLE = "unreachable"  # connection refused, DNS, TLS: no answer at all
    TIMEOUT = "timeout"
    SERVER_ERROR = "server_error"  # 5xx, 529 overloaded, an error inside a stream
    AUTH = "auth"  # 401 / 403: the key is wrong, revoked or not allowed
    RATE_LIMITED = "rate_limited"  # 429 past the retry budget
    PAUSED = "paused"  # the circuit breaker skipped a provider that kept failing
    REJECTED = "rejected"  # any other 4xx, or an answer that could not be used
    BUDGET = "budget"  # not sent: the user's model usage budget is used up (apps.llm.budgets)


# In the language active when they are read (a run's is its owner's): lazy, made text on use.
UNAVAILABLE_NOTICE = gettext_lazy("The model is unavailable; these are the most relevant passages.")

REASONS = {
    FailureKind.UNREACHABLE: gettext_lazy("The model service could not be reached."),
    FailureKind.TIMEOUT: gettext_lazy("The model service took too long to respond."),
    FailureKind.SERVER_ERROR: gettext_lazy("The model service reported an error on its side."),
    FailureKind.AUTH: gettext_lazy("The model service refused this server's credentials."),
    FailureKind.RATE_LIMITED: gettext_lazy("The model service is receiving too many requests."),
    FailureKind.PAUSED: gettext_lazy("The model service kept failing, so it is paused for a short while."),
    FailureKind.REJECTED: gettext_lazy("The model service could not handle this request."),
    FailureKind.BUDGET: gettext_lazy("Your model usage budget is used up."),
}


def failure_kind(error: LLMError) -> FailureKind:
    if isinstance(error, LLMBudgetExceededError):
        return FailureKind.BUDGET
    if isinstance(error, LLMCircuitOpenError):
        return FailureKind.PAUSED
    if isinstance(error, LLMRateLimitError):
        return FailureKind.RATE_LIMITED
    if isinstance(error, LLMTimeoutError):
        return FailureKind.TIMEOUT
    if error.status_code in (401, 403):
        return FailureKind.AUTH
    if isinstance(error, LLMUnavailableError):
        return FailureKind.UNREACHABLE if error.status_code is None else FailureKind.SERVER_ERROR
    return FailureKind.REJECTED


def is_outage(error: LLMError) -> bool:
    """Whether the service, not this request, is at fault: what the circuit breaker counts."""
    return failure_kind(error) not in (FailureKind.REJECTED, FailureKind.PAUSED, FailureKind.BUDGET)


def failure_reason(error: LLMError) -> str:
    return str(REASONS[failure_kind(error)])


def error_notice(error: LLMError) -> str:
    """The line shown above the offline answer that replaced a failed call: a budget refusal
    already says which budget and when it resets."""
    return str(error) if isinstance(error, LLMBudgetExceededError) else str(UNAVAILABLE_NOTICE)


def failure_notice(kind: FailureKind) -> str:
    """The same line when only the kind is known (the agent's model failed earlier in the run):
    a used-up budget's is looked up again."""
    if kind is FailureKind.BUDGET:
        from apps.llm.budgets import budget_notice  # its models load once the app registry is ready

        return budget_notice()
    return str(UNAVAILABLE_NOTICE)
