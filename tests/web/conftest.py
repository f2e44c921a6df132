"""Browser tests: Debian's chromium, driven by Playwright, against uvicorn on the test database.

Tests using these fixtures must be transactional: the server and the worker see committed rows only.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import Browser, Page, expect, sync_playwright

from apps.core.queues import ALL_QUEUES
from apps.library.indexing import folder_index
from apps.library.models import File, Folder
from emulators.drive.server import DriveEmulator
from tests.support.chat_library import add_file as add_chat_file
from tests.support.fixtures import worker_model  # noqa: F401  (a fixture)
from tests.support.servers import (
    BASE_DIR,
    RunningServer,
    database_url_of_current_connection,
    free_port,
    start_celery_worker,
    start_uvicorn,
    test_database_env,
)
from tests.support.waiting import database_sessions_settled

CHROMIUM = Path("/usr/bin/chromium")
# Without the background-networking flags chromium keeps calling Google services, which on a
# closed network means a stream of failing connections during every test.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# What the test folder holds: each question below is answered by exactly one file.
LIBRARY = {
    "taxes/2024/W2_Acme_2024.pdf": [
        (
            "Form W-2 Wage and Tax Statement 2024. Employer: Acme Corporation. "
            "Box 1 wages, tips and other compensation: 84,500 dollars.",
            {"page": 1},
        ),
        ("Box 2 federal income tax withheld on the 2024 W-2: 12,300 dollars.", {"page": 1}),
    ],
    "insurance/home-policy.pdf": [
        (
            "The homeowner's policy with Northwind Mutual renews on June 1. The annual premium is 1,284 dollars.",
            {"page": 3},
        ),
        ("Water damage from burst pipes is covered up to 25,000 dollars; flood damage is excluded.", {"page": 7}),
    ],
    "recipes/pancakes.md": [
        ("Pancakes need two cups of flour, two eggs and one and a half cups of milk.", {"heading": "Ingredients"}),
    ],
    "travel/passport.txt": [
        ("The passport renewal appointment is booked at the consulate on March 3 at 10:30.", {}),
    ],
}


@pytest.fixture(scope="session")
def web_server(django_db_setup, django_db_blocker) -> Iterator[RunningServer]:
    """The app as `make run` serves it (uvicorn, ASGI), on the test database and Redis."""
    env = test_database_env(
        EMBEDDING_PROVIDER="hash",
        LLM_PROVIDER="extractive",
        THROTTLE_CHAT="1000/min",
        SSE_HEARTBEAT_SECONDS="1",
    )
    with start_uvicorn(env=env, log_path=BASE_DIR / "var" / f"test-web-{os.getpid()}.log") as server:
        yield server


@pytest.fixture(scope="module")
def drive_emulator() -> Iterator[DriveEmulator]:
    """Google Drive and its consent page at the wire, for a module's server and worker."""
    with DriveEmulator() as running:
        yield running


@pytest.fixture(scope="module")
def drive_env(drive_emulator: DriveEmulator, django_db_setup, django_db_blocker) -> dict[str, str]:
    """The server's and the worker's settings for Drive through the emulator and the OAuth web flow."""
    port = free_port()
    return test_database_env(
        EMBEDDING_PROVIDER="hash",
        LLM_PROVIDER="extractive",
        SSE_HEARTBEAT_SECONDS="1",
        DRIVE_API_ENDPOINT=drive_emulator.url,
        DRIVE_MAX_RETRIES="1",
        GOOGLE_OAUTH_CLIENT_ID="client-id.apps.googleusercontent.com",
        GOOGLE_OAUTH_CLIENT_SECRET="client-secret-value",
        GOOGLE_OAUTH_REDIRECT_URI=f"http://127.0.0.1:{port}/api/drive/callback",
        GOOGLE_SERVICE_ACCOUNT_FILE="",
        # requests-oauthlib refuses a token endpoint without TLS; the emulator is plain HTTP on loopback.
        OAUTHLIB_INSECURE_TRANSPORT="1",
        WEB_PORT=str(port),
    )


@pytest.fixture(scope="module")
def drive_server(drive_env: dict[str, str]) -> Iterator[RunningServer]:
    log_path = BASE_DIR / "var" / f"test-web-drive-{os.getpid()}.log"
    with start_uvicorn(env=drive_env, port=int(drive_env["WEB_PORT"]), log_path=log_path) as server:
        yield server


@pytest.fixture
def drive_worker(drive_env: dict[str, str], transactional_db) -> Iterator[None]:
    log_path = BASE_DIR / "var" / f"test-worker-drive-{os.getpid()}.log"
    with start_celery_worker(env=drive_env, queues=ALL_QUEUES, log_path=log_path, name="drive"):
        yield


@pytest.fixture
def drive_page(browser: Browser, drive_server: RunningServer) -> Iterator[Page]:
    with new_page(browser, drive_server, height=900) as page:
        yield page


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One chromium per test module, each launch with a fresh temporary profile.

    Playwright's sync API leaves its event loop marked as running on this thread while it is open,
    and Django refuses ORM calls (fixtures, assertions, the flush after each test) beside a running
    loop. Nothing async touches the database here, so the check is lifted exactly that long; and
    module scope, not session, keeps later non-browser tests out of it.
    """
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make browser` (installs Debian's chromium package)")
    with pytest.MonkeyPatch.context() as patch, sync_playwright() as playwright:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Browser, web_server: RunningServer) -> Iterator[Page]:
    with new_page(browser, web_server, height=860) as page:
        yield page


@contextmanager
def new_page(browser: Browser, server: RunningServer, *, height: int, locale: str = "en-US") -> Iterator[Page]:
    """A page in a fresh context (no cookies) on the server; actions and expectations wait up to 15 s.

    The browser asks for English (its Accept-Language and navigator.language) unless told otherwise:
    the suite reads English words, whatever the machine's own locale.
    """
    context = browser.new_context(base_url=server.url, viewport={"width": 1280, "height": height}, locale=locale)
    context.set_default_timeout(15_000)
    expect.set_options(timeout=15_000)
    try:
        yield context.new_page()
    finally:
        context.close()
        database_sessions_settled(database_url_of_current_connection())


def add_file(*, folder: Folder, path: str, chunks: list[tuple[str, dict]]) -> File:
    """The chat suite's fixture file, dated: the folder page shows when files changed."""
    file = add_chat_file(folder=folder, path=path, chunks=chunks)
    File.objects.filter(pk=file.pk).update(modified_time=timezone.now(), indexed_at=timezone.now())
    return file


@pytest.fixture
def folder(user) -> Folder:
    folder = Folder.objects.create(
        owner=user,
        source="local",
        external_id=f"/srv/documents/household-{user.pk}",
        name="Household documents",
        status="ready",
        files_total=len(LIBRARY),
        files_indexed=len(LIBRARY),
        last_synced_at=timezone.now(),
        # No sync from chat start: these files exist only as rows, not on disk.
        sync_interval_seconds=86_400,
    )
    for path, chunks in LIBRARY.items():
        add_file(folder=folder, path=path, chunks=chunks)
    return folder


@pytest.fixture
def home_notes(user, monkeypatch) -> Iterator[Folder]:
    """A local folder on disk (under var/folders, one of LOCAL_FOLDER_ROOTS) of two notes, indexed."""
    path = BASE_DIR / "var" / "folders" / f"web-notes-{uuid.uuid4().hex[:8]}"
    path.mkdir(parents=True)
    (path / "boiler.md").write_text("# Boiler\n\nThe boiler was serviced in October by Heatwise.\n")
    (path / "car.txt").write_text("Renew the car insurance before the end of May.\n")
    folder = Folder.objects.create(owner=user, source="local", external_id=str(path), name="Home notes")
    monkeypatch.setattr("apps.organize.enqueue.suggest_organization", lambda *args: None)
    folder_index(folder_id=folder.pk, inline=True)
    yield folder
    shutil.rmtree(path, ignore_errors=True)
