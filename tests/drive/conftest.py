"""Drive folders synced from the emulator through the real client, the real database and indexing.

Index tasks run inline (their ``apply_async`` calls ``files_index`` in this process) so a sync and
the indexing it queues can be checked in one test; the retry policy records its delays instead
of sleeping them.
"""

from __future__ import annotations

import functools

import pytest
from pytest_django.fixtures import Settings

from apps.connectors.drive.client import RetryPolicy
from apps.library.indexing import files_index, folder_index
from apps.library.models import Folder
from emulators.drive.server import DriveEmulator
from emulators.drive.state import DriveState
from tests.support.drive_tree import Tree, long_text, run_sync


@pytest.fixture
def drive_settings(settings: Settings, emulator: DriveEmulator) -> Settings:
    settings.DRIVE_API_ENDPOINT = emulator.url
    settings.GOOGLE_SERVICE_ACCOUNT_FILE = ""
    settings.GOOGLE_OAUTH_CLIENT_ID = "client-id.apps.googleusercontent.com"
    settings.GOOGLE_OAUTH_CLIENT_SECRET = "client-secret-value"
    settings.GOOGLE_OAUTH_REDIRECT_URI = "http://testserver/api/drive/callback"
    settings.DRIVE_MAX_RETRIES = 2
    settings.FOLDER_FULL_PRUNE_INTERVAL_SECONDS = 86400
    return settings


@pytest.fixture
def web_client(client, user):
    """A browser's session: Google's consent page sends the browser, not an API client, to the callback."""
    client.force_login(user)
    return client


@pytest.fixture
def other_web_client(other_user):
    from django.test import Client

    client = Client()
    client.force_login(other_user)
    return client


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Delays the Drive retry policy asked for (recorded, not slept)."""
    recorded: list[float] = []
    policy = functools.partial(RetryPolicy, sleep=recorded.append, random=lambda: 0.5)
    monkeypatch.setattr("apps.connectors.drive.factory.RetryPolicy", policy)
    return recorded


@pytest.fixture
def inline_indexing(monkeypatch: pytest.MonkeyPatch) -> None:
    def run(file_ids: list[int], task_id: str, **options: object) -> None:
        files_index(file_ids=file_ids, task_id=task_id)

    monkeypatch.setattr("apps.library.enqueue.index_files", run)


@pytest.fixture
def tree(state: DriveState) -> Tree:
    root = state.add_folder("Lease")
    a = state.add_folder("a", parent_id=root)
    b = state.add_folder("b", parent_id=root)
    return Tree(
        root=root,
        lease=state.add_file("lease.txt", long_text("Lease"), parent_id=root),
        notes=state.add_file("notes.txt", long_text("Notes"), parent_id=root),
        a=a,
        deep=state.add_file("deep.txt", long_text("Deep"), parent_id=a),
        b=b,
        doc=state.add_google_file(
            "doc",
            parent_id=root,
            exports={"text/markdown": b"# Plan\n\n" + long_text("Doc"), "text/plain": long_text("Doc")},
        ),
        elsewhere=state.add_folder("Elsewhere"),
    )


@pytest.fixture
def folder(db, user, drive_settings: Settings, tree: Tree) -> Folder:
    return Folder.objects.create(owner=user, source="drive", external_id=tree.root, name="Lease")


@pytest.fixture
def capture(django_capture_on_commit_callbacks):
    return django_capture_on_commit_callbacks


@pytest.fixture
def synced(folder: Folder, sleeps: list[float], inline_indexing: None, capture) -> Folder:
    """Indexed from the emulator, then synced once: a changes cursor is stored."""
    folder_index(folder_id=folder.pk, inline=True)
    log = run_sync(folder, capture)
    assert log is not None and log.mode == "full" and not log.error
    folder.refresh_from_db()
    assert folder.sync_cursor
    return folder
