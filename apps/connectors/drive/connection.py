"""A folder's DriveSource on its owner's stored credentials, with an HTTP call count.

Build one per task (httplib2 is not thread-safe). google-auth refreshes an expired access token
inside whichever call meets it, so the transport saves a refreshed token after each request:
the next task then starts with a valid token instead of refreshing again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httplib2
from google.auth.credentials import Credentials as BaseCredentials
from google.oauth2.credentials import Credentials as OAuthCredentials

from apps.connectors.drive.browse import DriveBrowser
from apps.connectors.drive.factory import drive_browser, drive_credentials, drive_source
from apps.connectors.drive.source import DriveSource
from apps.connectors.models import DriveCredential
from apps.connectors.selectors import drive_credential_get
from apps.connectors.services import drive_tokens_save
from apps.library.models import Folder

_HTTP_TIMEOUT_SECONDS = 60.0


class CountingHttp(httplib2.Http):
    """Counts HTTP round trips (retries and token refreshes included) and runs a hook after each."""

    def __init__(self, *, timeout: float, after_request: Callable[[], None] | None = None) -> None:
        super().__init__(timeout=timeout)
        self.calls = 0
        self._after_request = after_request

    def request(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        try:
            return super().request(*args, **kwargs)
        finally:
            if self._after_request is not None:
                self._after_request()


@dataclass
class FolderDrive:
    source: DriveSource
    http: CountingHttp

    @property
    def api_calls(self) -> int:
        return self.http.calls


def folder_drive(*, folder: Folder) -> FolderDrive:
    """The folder's Drive: its owner's OAuth tokens, else the service account (or the emulator)."""
    credentials, http = _owner_credentials(owner_id=folder.owner_id)
    return FolderDrive(source=drive_source(folder_id=folder.external_id, credentials=credentials, http=http), http=http)


def owner_drive_browser(*, owner_id: int) -> DriveBrowser:
    """Read-only browsing of the user's Drive (the folder picker), on the same credentials as syncs."""
    credentials, http = _owner_credentials(owner_id=owner_id)
    return drive_browser(credentials=credentials, http=http)


def drive_folder_root_name(folder: Folder) -> str:
    """The Drive name of a folder about to be connected (registered as the ``drive`` root check)."""
    return owner_drive_browser(owner_id=folder.owner_id).folder(folder.external_id).name


def _owner_credentials(*, owner_id: int) -> tuple[BaseCredentials, CountingHttp]:
    credential = drive_credential_get(owner_id=owner_id)
    if credential is None:
        credentials = drive_credentials()
        http = CountingHttp(timeout=_HTTP_TIMEOUT_SECONDS)
    else:
        credentials = drive_credentials(
            access_token=credential.access_token,
            refresh_token=credential.refresh_token,
            expiry=credential.token_expiry,
        )
        http = CountingHttp(timeout=_HTTP_TIMEOUT_SECONDS, after_request=_token_saver(credential, credentials))
    return credentials, http


def drive_folder_readers(folder: Folder) -> Callable[[str], bool]:
    """Which Google accounts may open the folder in Drive, asked once with the owner's
    credentials (registered as the ``drive`` reader check)."""
    return folder_drive(folder=folder).source.readers()


def folder_drive_source(folder: Folder) -> DriveSource:
    """What indexing reads a Drive file's content through (registered as the ``drive`` source)."""
    return folder_drive(folder=folder).source


def _token_saver(credential: DriveCredential, credentials: BaseCredentials) -> Callable[[], None]:
    saved = (credential.access_token, credential.refresh_token)

    def save() -> None:
        nonlocal saved
        if not isinstance(credentials, OAuthCredentials) or not credentials.token:
            return
        current = (credentials.token, credentials.refresh_token)
        if current != saved:
            drive_tokens_save(
                credential_id=credential.pk,
                access_token=credentials.token,
                refresh_token=credentials.refresh_token,
                expiry=credentials.expiry,
            )
            saved = current

    return save
