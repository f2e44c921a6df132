"""Retries and error mapping: faults injected at the wire, seen through the real client."""

from __future__ import annotations

from typing import Any

import pytest
from google.auth.credentials import AnonymousCredentials
from google.oauth2.credentials import Credentials as OAuthCredentials

from apps.connectors.drive.client import (
    RetryPolicy,
    build_drive_service,
    drive_api_endpoint,
    oauth_credentials,
)
from apps.connectors.drive.source import DriveSource
from apps.library.sources import SourceAuthError, SourceNotFoundError, SourceTransientError
from emulators.drive.errors import FaultKind
from emulators.drive.server import DriveEmulator
from emulators.drive.state import DriveState
from tests.support.drive_connector_tree import TREE_PATHS, Tree


def _paths(source: DriveSource) -> set[str]:
    return {entry.path for entry in source.list_entries()}


def test_429_waits_for_retry_after_then_succeeds(
    source: DriveSource,
    state: DriveState,
    sleeps: list[float],
) -> None:
    state.inject(FaultKind.RATE_LIMITED, endpoint="files.list", retry_after=2)

    assert _paths(source) == TREE_PATHS
    assert sleeps == [2.0]  # Retry-After beats the 0.075 s backoff


def test_403_user_rate_limit_is_retried_with_backoff(
    source: DriveSource,
    state: DriveState,
    sleeps: list[float],
) -> None:
    state.inject(FaultKind.USER_RATE_LIMIT, endpoint="files.get", times=2)

    assert _paths(source) == TREE_PATHS
    # base 0.1 s doubling, equal jitter at random() == 0.5: 0.75 of each backoff.
    assert sleeps == pytest.approx([0.075, 0.15])


@pytest.mark.parametrize("kind", [FaultKind.INTERNAL_ERROR, FaultKind.UNAVAILABLE])
def test_server_errors_are_retried(source: DriveSource, state: DriveState, kind: FaultKind) -> None:
    state.inject(kind, endpoint="files.list", times=3)

    assert _paths(source) == TREE_PATHS


@pytest.mark.parametrize("kind", [FaultKind.INTERNAL_ERROR, FaultKind.UNAVAILABLE, FaultKind.RATE_LIMITED])
def test_retries_run_out(
    source: DriveSource,
    state: DriveState,
    sleeps: list[float],
    kind: FaultKind,
) -> None:
    state.inject(kind, endpoint="changes.list", times=10)

    with pytest.raises(SourceTransientError, match="gave up after 3 retries"):
        source.changes_since(source.start_cursor())
    assert state.calls["changes.list"] == 4
    assert sleeps == pytest.approx([0.075, 0.15, 0.3])


def test_retry_after_beyond_max_delay_is_left_to_the_task_queue(
    source: DriveSource,
    state: DriveState,
    sleeps: list[float],
) -> None:
    state.inject(FaultKind.RATE_LIMITED, endpoint="files.get", retry_after=3600)

    with pytest.raises(SourceTransientError):
        list(source.list_entries())
    assert sleeps == []


@pytest.mark.parametrize("kind", [FaultKind.INSUFFICIENT_PERMISSIONS, FaultKind.REVOKED])
def test_revoked_or_insufficient_access_needs_reauth(
    source: DriveSource,
    state: DriveState,
    sleeps: list[float],
    kind: FaultKind,
) -> None:
    state.inject(kind, endpoint="files.list")

    with pytest.raises(SourceAuthError, match="reconnect Google Drive"):
        list(source.list_entries())
    assert (state.calls["files.list"], sleeps) == (1, [])


def test_root_gone_mid_listing_is_folder_not_found(
    source: DriveSource,
    state: DriveState,
    tree: Tree,
) -> None:
    state.inject(FaultKind.NOT_FOUND, file_id=tree.root, endpoint="files.list")

    with pytest.raises(SourceNotFoundError, match="folder not found"):
        list(source.list_entries())


def test_unreachable_drive_is_transient(tree: Tree, retry: RetryPolicy, sleeps: list[float]) -> None:
    with DriveEmulator() as stopped:
        endpoint = stopped.api_endpoint
    service = build_drive_service(credentials=AnonymousCredentials(), api_endpoint=endpoint, timeout=2)

    with pytest.raises(SourceTransientError, match="network error"):
        list(DriveSource(service, tree.root, retry=retry).list_entries())
    assert len(sleeps) == 3


def _oauth_service(emulator: DriveEmulator, refresh_token: str) -> tuple[Any, OAuthCredentials]:
    credentials = oauth_credentials(
        access_token="stale-access",
        refresh_token=refresh_token,
        client_id="client",
        client_secret="secret",
        token_uri=emulator.token_uri,
    )
    return build_drive_service(credentials=credentials, api_endpoint=emulator.api_endpoint), credentials


def test_expired_access_token_is_refreshed(emulator: DriveEmulator, tree: Tree, retry: RetryPolicy) -> None:
    service, credentials = _oauth_service(emulator, "good-refresh")
    emulator.state.inject(FaultKind.REVOKED, endpoint="files.get")

    assert _paths(DriveSource(service, tree.root, retry=retry)) == TREE_PATHS
    assert emulator.state.calls["oauth.token"] == 1
    assert str(credentials.token).startswith("emu-access-")  # the refreshed token, for the caller to save


def test_revoked_refresh_token_needs_reauth(emulator: DriveEmulator, tree: Tree, retry: RetryPolicy) -> None:
    service, _ = _oauth_service(emulator, "revoked-refresh")
    emulator.state.revoked_refresh_tokens.add("revoked-refresh")
    emulator.state.inject(FaultKind.REVOKED, endpoint="files.get")

    with pytest.raises(SourceAuthError, match="revoked"):
        list(DriveSource(service, tree.root, retry=retry).list_entries())


def test_token_endpoint_outage_is_transient_not_reauth(
    emulator: DriveEmulator,
    tree: Tree,
    retry: RetryPolicy,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # google-auth retries refreshes itself, sleeping seconds between attempts (via time.sleep).
    monkeypatch.setattr("google.auth._exponential_backoff.time.sleep", lambda seconds: None)
    service, _ = _oauth_service(emulator, "good-refresh")
    emulator.state.inject(FaultKind.REVOKED, endpoint="files.get", times=100)
    emulator.state.inject(FaultKind.UNAVAILABLE, endpoint="oauth.token", times=100)

    with pytest.raises(SourceTransientError, match="token refresh failed"):
        list(DriveSource(service, tree.root, retry=retry).list_entries())


def test_bare_origin_endpoint_gets_the_drive_path(
    emulator: DriveEmulator,
    tree: Tree,
    retry: RetryPolicy,
) -> None:
    service = build_drive_service(credentials=AnonymousCredentials(), api_endpoint=emulator.url)

    assert _paths(DriveSource(service, tree.root, retry=retry)) == TREE_PATHS
    assert drive_api_endpoint("https://www.googleapis.com") == "https://www.googleapis.com/drive/v3/"
    assert drive_api_endpoint("http://h:1/drive/v3") == "http://h:1/drive/v3/"


@pytest.mark.parametrize(("draw", "expected"), [(0.0, 0.5), (1.0, 1.0)])
def test_backoff_jitter_stays_between_half_and_full(draw: float, expected: float) -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=4.0, random=lambda: draw)

    assert policy.delay(0, None) == expected
    assert policy.delay(10, None) == 4.0 * expected  # capped at max_delay
    assert policy.delay(0, 3.0) == 3.0
