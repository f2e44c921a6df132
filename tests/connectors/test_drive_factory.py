"""Building DriveSource from settings: which credentials, and that nothing points at Google."""

from __future__ import annotations

import pytest
from google.auth.credentials import AnonymousCredentials
from google.oauth2.credentials import Credentials as OAuthCredentials
from pytest_django.fixtures import Settings

from apps.connectors.drive.factory import drive_credentials, drive_source
from apps.library.sources import SourceAuthError, SourceTransientError
from emulators.drive.errors import FaultKind
from emulators.drive.server import DriveEmulator
from tests.support.drive_connector_tree import TREE_PATHS, Tree


@pytest.fixture
def drive_settings(settings: Settings, emulator: DriveEmulator) -> Settings:
    settings.DRIVE_API_ENDPOINT = emulator.url
    settings.DRIVE_MAX_RETRIES = 1
    settings.GOOGLE_SERVICE_ACCOUNT_FILE = ""
    settings.GOOGLE_OAUTH_CLIENT_ID = "client"
    settings.GOOGLE_OAUTH_CLIENT_SECRET = "secret"
    return settings


def test_emulator_without_tokens_is_anonymous(drive_settings: Settings, tree: Tree) -> None:
    credentials = drive_credentials()
    source = drive_source(folder_id=tree.root, credentials=credentials)

    assert isinstance(credentials, AnonymousCredentials)
    assert {entry.path for entry in source.list_entries()} == TREE_PATHS


def test_oauth_tokens_refresh_against_the_emulator(
    drive_settings: Settings,
    emulator: DriveEmulator,
    tree: Tree,
) -> None:
    credentials = drive_credentials(access_token="old", refresh_token="refresh")
    emulator.state.inject(FaultKind.REVOKED, endpoint="files.get")

    assert isinstance(credentials, OAuthCredentials)
    assert credentials.token_uri == emulator.token_uri
    source = drive_source(folder_id=tree.root, credentials=credentials)
    assert {entry.path for entry in source.list_entries()} == TREE_PATHS
    assert emulator.state.calls["oauth.token"] == 1


def test_max_retries_comes_from_settings(
    drive_settings: Settings,
    emulator: DriveEmulator,
    tree: Tree,
) -> None:
    emulator.state.inject(FaultKind.UNAVAILABLE, endpoint="files.get", times=5)
    source = drive_source(folder_id=tree.root, credentials=drive_credentials())

    with pytest.raises(SourceTransientError, match="gave up after 1 retries"):
        list(source.list_entries())
    assert emulator.state.calls["files.get"] == 2


def test_no_tokens_and_no_emulator_is_not_connected(settings: Settings) -> None:
    settings.DRIVE_API_ENDPOINT = ""
    settings.GOOGLE_SERVICE_ACCOUNT_FILE = ""

    with pytest.raises(SourceAuthError, match="not connected"):
        drive_credentials()
