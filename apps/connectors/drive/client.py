"""Building the Drive service and running its requests with retries and source-level errors.

Every Drive call goes through ``execute``: rate limits and server errors are retried with
exponential backoff and jitter (honoring Retry-After), and what is left is turned into the
``SourceError`` family so callers never see ``HttpError``. Tokens are never logged.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import google.auth.exceptions
import google_auth_httplib2
import httplib2
from django.utils.translation import gettext_noop
from google.auth.credentials import AnonymousCredentials
from google.auth.credentials import Credentials as BaseCredentials
from google.oauth2 import service_account
from google.oauth2.credentials import Credentials as OAuthCredentials
from googleapiclient import discovery_cache
from googleapiclient.discovery import build, build_from_document
from googleapiclient.errors import HttpError

from apps.core.stored_messages import StoredMessage
from apps.library.sources import SourceAuthError, SourceError, SourceNotFoundError, SourceTransientError

logger = logging.getLogger(__name__)

# Full Drive scope: organize moves files, so read-only scopes are not enough.
DRIVE_SCOPES = ("https://www.googleapis.com/auth/drive",)
GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token"  # noqa: S105 (a public URL, not a secret)
# A Drive that is not Google's (DRIVE_API_ENDPOINT: emulators/drive in tests and demos) serves
# the OAuth consent page and the token endpoint at these paths on its own origin.
OAUTH_AUTHORIZE_PATH = "/o/oauth2/auth"
OAUTH_REFRESH_PATH = "/token"

_RETRYABLE_STATUSES = frozenset({429, 500, 502, 503, 504})
_RATE_LIMIT_REASONS = frozenset({"userRateLimitExceeded", "rateLimitExceeded", "backendError"})
_AUTH_REASONS = frozenset(
    {
        "insufficientPermissions",
        "insufficientFilePermissions",
        "appNotAuthorizedToFile",
        "authError",
        "domainPolicy",
    }
)


class CursorExpiredError(SourceError):
    """The changes page token is no longer valid: fall back to a full listing diff."""


class DriveRequestError(SourceError):
    """Drive refused a request for a reason that is neither auth, absence nor load."""

    def __init__(self, message: str, *, status: int, reason: str) -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason


@dataclass(frozen=True)
class RetryPolicy:
    """Backoff for one request: ``base_delay * 2**attempt``, capped, with jitter.

    A Retry-After longer than ``max_delay`` is not waited out: the error surfaces as transient
    so the task queue, not a blocked worker, does the waiting.
    """

    max_retries: int = 5
    base_delay: float = 1.0
    max_delay: float = 32.0
    sleep: Callable[[float], None] = field(default=time.sleep)
    random: Callable[[], float] = field(default=random.random)

    def delay(self, attempt: int, retry_after: float | None) -> float:
        backoff = min(self.max_delay, self.base_delay * 2**attempt)
        # Equal jitter: never less than half the backoff, so a herd of workers still spreads out.
        delay = backoff / 2 + backoff / 2 * self.random()
        return max(delay, retry_after or 0.0)


def oauth_credentials(
    *,
    access_token: str | None,
    refresh_token: str | None,
    client_id: str,
    client_secret: str,
    expiry: dt.datetime | None = None,
    scopes: Sequence[str] = DRIVE_SCOPES,
    token_uri: str = GOOGLE_TOKEN_URI,
) -> OAuthCredentials:
    """A user's OAuth credentials; after a call, persist ``.token`` and ``.expiry`` if they changed."""
    if expiry is not None and expiry.tzinfo is not None:
        # google-auth compares expiry with a naive UTC "now".
        expiry = expiry.astimezone(dt.UTC).replace(tzinfo=None)
    return OAuthCredentials(
        token=access_token,
        refresh_token=refresh_token,
        client_id=client_id,
        client_secret=client_secret,
        token_uri=token_uri,
        scopes=list(scopes),
        expiry=expiry,
    )


def service_account_credentials(*, path: str, scopes: Sequence[str] = DRIVE_SCOPES) -> BaseCredentials:
    """A service account's credentials: it sees folders shared with its e-mail address."""
    credentials: BaseCredentials = service_account.Credentials.from_service_account_file(
        path,
        scopes=list(scopes),
    )
    return credentials


def drive_api_endpoint(endpoint: str) -> str:
    """The client's api_endpoint replaces rootUrl + servicePath, so a bare origin gets ``/drive/v3/``."""
    if urlsplit(endpoint).path in ("", "/"):
        return endpoint.rstrip("/") + "/drive/v3/"
    return endpoint if endpoint.endswith("/") else endpoint + "/"


def build_drive_service(
    *,
    credentials: BaseCredentials,
    api_endpoint: str | None = None,
    timeout: float = 60.0,
    http: httplib2.Http | None = None,
) -> Any:
    """A Drive v3 service from the discovery document shipped with the client (no network).

    Not thread-safe (httplib2): build one per task or thread. ``http`` replaces the transport
    (e.g. one that counts calls); ``timeout`` then is its own.
    """
    authorized = google_auth_httplib2.AuthorizedHttp(
        credentials,
        http=http or httplib2.Http(timeout=timeout),
        # Anonymous credentials (the emulator) cannot refresh; a 401 must surface, not crash.
        refresh_status_codes=() if isinstance(credentials, AnonymousCredentials) else (401,),
    )
    if not api_endpoint:
        return build("drive", "v3", http=authorized, static_discovery=True, cache_discovery=False)
    endpoint = drive_api_endpoint(api_endpoint)
    # The client moves only the host of media upload URLs to api_endpoint, keeping https; the
    # document's rootUrl set to the endpoint's origin sends uploads there, in its own scheme.
    document = json.loads(discovery_cache.get_static_doc("drive", "v3") or "{}")
    parts = urlsplit(endpoint)
    document["rootUrl"] = f"{parts.scheme}://{parts.netloc}/"
    return build_from_document(document, http=authorized, client_options={"api_endpoint": endpoint})


def execute(request: Any, *, retry: RetryPolicy, not_found: str = gettext_noop("file not found")) -> Any:
    """Run a ``googleapiclient`` request; ``not_found`` is the message for a 404."""
    method = getattr(request, "methodId", "request")
    attempt = 0
    while True:
        try:
            return request.execute()
        except HttpError as error:
            status, reason, message = _describe(error)
            if not _is_retryable(status, reason):
                raise _source_error(status, reason, message, not_found=not_found) from error
            retry_after = _retry_after(error)
            problem = f"{status} {reason or message}".strip()
        except google.auth.exceptions.RefreshError as error:
            if not error.retryable:
                raise SourceAuthError(
                    gettext_noop("Google Drive access was revoked or has expired; reconnect Google Drive.")
                ) from error
            retry_after, problem = None, "token refresh failed"
        except (OSError, httplib2.HttpLib2Error, google.auth.exceptions.TransportError) as error:
            retry_after, problem = None, f"network error ({type(error).__name__})"
        if attempt >= retry.max_retries or (retry_after or 0) > retry.max_delay:
            raise SourceTransientError(
                gettext_noop(
                    "Google Drive is unavailable or rate limiting (%(problem)s); gave up after %(count)s retries."
                ),
                problem=problem,
                count=attempt,
            )
        delay = retry.delay(attempt, retry_after)
        logger.warning(
            "Drive %s failed (%s); retry %d/%d in %.1fs",
            method,
            problem,
            attempt + 1,
            retry.max_retries,
            delay,
        )
        retry.sleep(delay)
        attempt += 1


def _describe(error: HttpError) -> tuple[int, str, str]:
    """(status, first error reason, message) from Google's JSON error body."""
    status = int(error.resp.status)
    try:
        body = json.loads(error.content)["error"]
        return status, str(body["errors"][0]["reason"]), str(body.get("message", ""))
    except (ValueError, KeyError, IndexError, TypeError):
        return status, "", str(error.reason)


def _is_retryable(status: int, reason: str) -> bool:
    return status in _RETRYABLE_STATUSES or (status == 403 and reason in _RATE_LIMIT_REASONS)


def _retry_after(error: HttpError) -> float | None:
    try:
        return float(error.resp.get("retry-after", ""))
    except ValueError:
        return None


def _source_error(status: int, reason: str, message: str, *, not_found: str) -> SourceError:
    if status == 401 or (status == 403 and reason in _AUTH_REASONS):
        return SourceAuthError(
            gettext_noop("Google Drive access was revoked or lacks permission for this folder; reconnect Google Drive.")
        )
    if status == 404:
        return SourceNotFoundError(not_found)
    if status == 410:
        return CursorExpiredError("The Drive changes cursor expired; a full listing is needed.")
    return DriveRequestError(
        StoredMessage(gettext_noop("Google Drive refused the request: %(detail)s"), detail=message or reason),
        status=status,
        reason=reason,
    )
