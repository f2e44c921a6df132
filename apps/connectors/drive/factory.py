"""DriveSource from Django settings: the one module of this package that reads settings."""

from __future__ import annotations

import datetime as dt
from urllib.parse import urlsplit

import httplib2
from django.conf import settings
from django.utils.translation import gettext_noop
from google.auth.credentials import AnonymousCredentials
from google.auth.credentials import Credentials as BaseCredentials

from apps.connectors.drive.browse import DriveBrowser
from apps.connectors.drive.client import (
    GOOGLE_TOKEN_URI,
    OAUTH_AUTHORIZE_PATH,
    OAUTH_REFRESH_PATH,
    RetryPolicy,
    build_drive_service,
    oauth_credentials,
    service_account_credentials,
)
from apps.connectors.drive.source import DriveSource
from apps.library.sources import SourceAuthError

GOOGLE_AUTH_URI = "https://accounts.google.com/o/oauth2/auth"


def drive_credentials(
    *,
    access_token: str | None = None,
    refresh_token: str | None = None,
    expiry: dt.datetime | None = None,
) -> BaseCredentials:
    """User OAuth tokens if given, else the service account, else (emulator only) anonymous.

    With ``DRIVE_API_ENDPOINT`` set, OAuth refreshes go to the emulator too: nothing reaches Google.
    Keep the returned object: after Drive calls, persist ``.token``/``.expiry`` if they changed.
    """
    endpoint = settings.DRIVE_API_ENDPOINT
    if access_token or refresh_token:
        origin = urlsplit(endpoint)
        token_uri = f"{origin.scheme}://{origin.netloc}{OAUTH_REFRESH_PATH}" if endpoint else GOOGLE_TOKEN_URI
        return oauth_credentials(
            access_token=access_token,
            refresh_token=refresh_token,
            client_id=settings.GOOGLE_OAUTH_CLIENT_ID,
            client_secret=settings.GOOGLE_OAUTH_CLIENT_SECRET,
            expiry=expiry,
            token_uri=token_uri,
        )
    if settings.GOOGLE_SERVICE_ACCOUNT_FILE:
        return service_account_credentials(path=settings.GOOGLE_SERVICE_ACCOUNT_FILE)
    if endpoint:
        return AnonymousCredentials()
    raise SourceAuthError(gettext_noop("Google Drive is not connected; connect it or configure a service account."))


def drive_source(*, folder_id: str, credentials: BaseCredentials, http: httplib2.Http | None = None) -> DriveSource:
    service = build_drive_service(
        credentials=credentials,
        api_endpoint=settings.DRIVE_API_ENDPOINT or None,
        http=http,
    )
    return DriveSource(service, folder_id, retry=RetryPolicy(max_retries=settings.DRIVE_MAX_RETRIES))


def drive_browser(*, credentials: BaseCredentials, http: httplib2.Http | None = None) -> DriveBrowser:
    service = build_drive_service(credentials=credentials, api_endpoint=settings.DRIVE_API_ENDPOINT or None, http=http)
    return DriveBrowser(service, retry=RetryPolicy(max_retries=settings.DRIVE_MAX_RETRIES))


def drive_access() -> str:
    """How this server reaches Drive without a user's consent: ``service_account``, ``emulator`` or ``""``.

    A service account (or the emulator in a demo) needs no "Connect Google Drive" step.
    """
    if settings.GOOGLE_SERVICE_ACCOUNT_FILE:
        return "service_account"
    if settings.DRIVE_API_ENDPOINT and not settings.GOOGLE_OAUTH_CLIENT_ID:
        return "emulator"
    return ""


def drive_oauth_endpoints() -> tuple[str, str]:
    """(consent page, token endpoint) of the OAuth web flow: Google's, or the emulator's."""
    endpoint = settings.DRIVE_API_ENDPOINT
    if not endpoint:
        return GOOGLE_AUTH_URI, GOOGLE_TOKEN_URI
    origin = urlsplit(endpoint)
    return (
        f"{origin.scheme}://{origin.netloc}{OAUTH_AUTHORIZE_PATH}",
        f"{origin.scheme}://{origin.netloc}{OAUTH_REFRESH_PATH}",
    )
