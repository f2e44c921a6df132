"""Errors the Drive emulator answers with, in Google's JSON error format, and injectable faults."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass

_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    410: "FAILED_PRECONDITION",
    416: "OUT_OF_RANGE",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


class ApiError(Exception):
    """An error response: ``error.errors[0].reason`` is what clients branch on."""

    def __init__(
        self,
        status: int,
        reason: str,
        message: str,
        *,
        domain: str = "global",
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason
        self.message = message
        self.domain = domain
        self.retry_after = retry_after

    def body(self) -> bytes:
        error = {
            "code": self.status,
            "message": self.message,
            "errors": [{"domain": self.domain, "reason": self.reason, "message": self.message}],
            "status": _STATUS_NAMES.get(self.status, "UNKNOWN"),
        }
        return json.dumps({"error": error}).encode()


def not_found(file_id: str) -> ApiError:
    return ApiError(404, "notFound", f"File not found: {file_id}.", domain="global")


def bad_request(message: str, *, reason: str = "badRequest") -> ApiError:
    return ApiError(400, reason, message)


class FaultKind(enum.Enum):
    """Failures Drive really returns; value is (status, reason, domain, message)."""

    RATE_LIMITED = (429, "rateLimitExceeded", "usageLimits", "Rate Limit Exceeded")
    USER_RATE_LIMIT = (403, "userRateLimitExceeded", "usageLimits", "User Rate Limit Exceeded")
    INSUFFICIENT_PERMISSIONS = (
        403,
        "insufficientPermissions",
        "global",
        "Insufficient Permission: Request had insufficient authentication scopes.",
    )
    REVOKED = (401, "authError", "global", "Invalid Credentials")
    NOT_FOUND = (404, "notFound", "global", "File not found.")
    PAGE_TOKEN_EXPIRED = (410, "invalidPageToken", "global", "The page token is no longer valid.")
    INTERNAL_ERROR = (500, "internalError", "global", "Internal Error")
    UNAVAILABLE = (503, "backendError", "global", "The service is currently unavailable.")


@dataclass
class Fault:
    """A failure answered instead of the next matching request(s).

    ``endpoint`` is a name such as ``files.list`` (see ``DriveState.calls``); ``file_id`` matches
    the id in the path or any ``'<id>' in parents`` term of ``q``. ``None`` matches anything.
    """

    kind: FaultKind
    endpoint: str | None = None
    file_id: str | None = None
    times: int = 1
    retry_after: float | None = None

    def matches(self, endpoint: str, file_ids: set[str]) -> bool:
        return (self.endpoint in (None, endpoint)) and (self.file_id is None or self.file_id in file_ids)

    def error(self) -> ApiError:
        status, reason, domain, message = self.kind.value
        return ApiError(status, reason, message, domain=domain, retry_after=self.retry_after)
