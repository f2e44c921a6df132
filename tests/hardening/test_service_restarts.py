"""Redis or PostgreSQL restarted under a running web server and worker.

Each test runs its own server of the service it restarts (a private valkey-server, a private
PostgreSQL data directory), so other test sessions on this machine are never disturbed.
"""

from __future__ import annotations

import httpx
import psycopg
import pytest
import redis
from django.conf import settings

from apps.chat.models import AgentRun, RunStatus
from apps.core.events import events_after, run_channel
from apps.library.models import Folder
from emulators.drive.server import DriveEmulator
from tests.support.faults import (
    HeldDriveCall,
    SseListener,
    private_postgres,
    private_redis,
    unacked_messages,
)
from tests.support.llm_wire_stub import LLMWireStub, StubToolCall
from tests.support.servers import (
    database_url_of_current_connection,
    start_celery_worker,
    start_uvicorn,
    test_database_env,
)
from tests.support.tokens import api_token
from tests.support.waiting import wait_for
from workers.sync import sync_folder

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# Long enough for Redis to go down and come back while the worker waits for this answer.
ANSWER_DELAY = 8


def test_redis_restart_mid_run_the_stream_says_so_resumes_without_loss_and_the_worker_goes_on(user, tmp_path):
    folder = Folder.objects.create(owner=user, source="local", external_id=str(tmp_path), name="empty")
    headers = {"Authorization": f"Token {api_token(user)}"}
    with private_redis() as server, LLMWireStub() as model:
        model.reply_tool_calls(StubToolCall(id="call_1", name="search_folder", arguments={"query": "rent"}))
        model.reply_text("Rent is due on day 1.", delay=ANSWER_DELAY)
        model.reply_text("The deposit is one month of rent.")
        llm = {name: str(value) for name, value in model.settings_for("openai").items()}
        env = test_database_env(EMBEDDING_PROVIDER="hash", REDIS_URL=server.url, **llm)
        # The database index the test settings put every process on, on this server.
        broker_url = f"{server.url.rsplit('/', 1)[0]}/{settings.REDIS_URL.rsplit('/', 1)[1]}"
        events_client = redis.Redis.from_url(broker_url, decode_responses=True)

        def ask(web_url: str, question: str) -> tuple[str, str]:
            response = httpx.post(
                f"{web_url}/api/folders/{folder.pk}/chat",
                json={"message": question, "agent_mode": True},
                headers=headers,
                timeout=30,
            )
            assert response.status_code == 202, response.text
            return response.json()["run_id"], f"{web_url}{response.json()['events_url']}"

        with (
            start_uvicorn(env=env, log_path=tmp_path / "web.log") as web,
            start_celery_worker(env=env, queues=["agent"], log_path=tmp_path / "worker.log", name="redis-restart"),
        ):
            run_id, events_url = ask(web.url, "When is rent due?")
            first = SseListener(events_url, headers=headers)
            wait_for(lambda: len(model.requests) == 2 and first.saw("tool_result"), what="the run mid-answer")

            server.restart()

            assert AgentRun.objects.get(pk=run_id).status == RunStatus.RUNNING  # still waiting for its answer
            first.wait_ended()
            assert first.types()[-1] == "error" and first.received[-1].id is None  # no id: resume from the last
            assert "reconnect" in first.received[-1].data["message"]
            resumed = SseListener(events_url, headers={**headers, "Last-Event-ID": first.last_id() or "0"})
            resumed.wait_ended(timeout=ANSWER_DELAY + 60)
            assert resumed.types()[-1] == "done"

            # A run started after the restart: the web process and the worker both reconnected.
            later_id, later_url = ask(web.url, "How much is the deposit?")
            later = SseListener(later_url, headers=headers)
            later.wait_ended()
            assert later.types()[-2:] == ["message", "done"]

        logged = [event.id for event in events_after(channel=run_channel(run_id), client=events_client)]
        seen = [item.id for item in first.received + resumed.received if item.id]
        assert seen == logged  # every event once, in order, across the restart
        assert unacked_messages(broker_url) == []  # both runs acked: nothing comes back in an hour
    assert AgentRun.objects.get(pk=run_id).status == RunStatus.COMPLETED
    assert AgentRun.objects.get(pk=later_id).status == RunStatus.COMPLETED


def test_postgres_restart_web_answers_503_then_recovers_and_a_sync_caught_mid_task_retries_to_completion(
    user, tmp_path
):
    headers = {"Authorization": f"Token {api_token(user)}"}
    with DriveEmulator() as drive, private_postgres() as postgres:
        root = drive.state.add_folder("Notes")
        drive.state.add_file("rent.txt", b"The rent is due on the first day of each month.", parent_id=root)
        folder = Folder.objects.create(owner=user, source="drive", external_id=root, name="Notes")
        # The test database as it stands (schema, this user, token and folder), on a server of our own.
        database_url = postgres.copy_database(source_url=database_url_of_current_connection(), name="folderchat")
        env = test_database_env(EMBEDDING_PROVIDER="hash", DATABASE_URL=database_url, DRIVE_API_ENDPOINT=drive.url)
        with (
            start_uvicorn(env=env, log_path=tmp_path / "web.log") as web,
            start_celery_worker(
                env=env, queues=["sync", "indexing", "indexing_small"], log_path=tmp_path / "worker.log", name="pg"
            ),
            HeldDriveCall(drive.state, "files.list") as listing,
        ):
            folders_url = f"{web.url}/api/folders"
            assert httpx.get(folders_url, headers=headers, timeout=10).json()["results"][0]["id"] == folder.pk
            result = sync_folder.delay(folder.pk)
            listing.wait_arrived()  # the folder is claimed; the worker waits for Drive

            postgres.stop()

            health = httpx.get(f"{web.url}/readyz", timeout=10)
            assert health.status_code == 503 and health.json()["failed"] == ["database"]
            down = httpx.get(folders_url, headers=headers, timeout=10)
            assert down.status_code == 503 and "unavailable" in down.json()["detail"]
            listing.release()  # the sync goes on, and cannot write what it listed
            wait_for(lambda: result.state == "RETRY", what="the sync to fail on the outage and be retried")

            postgres.start()

            wait_for(lambda: httpx.get(f"{web.url}/readyz", timeout=10).status_code == 200, what="readyz")
            result.get(timeout=60)
            detail_url = f"{folders_url}/{folder.pk}"
            # The retry takes back the claim its first attempt could not release while the database was down.
            wait_for(
                lambda: httpx.get(detail_url, headers=headers, timeout=10).json()["files_indexed"] == 1,
                what="the file the retried sync queued to be indexed",
            )
            synced = httpx.get(detail_url, headers=headers, timeout=10).json()
        with psycopg.connect(database_url) as connection:
            claim, job_status, attempts = connection.execute(
                "SELECT f.sync_started_at, j.status, j.attempts FROM library_folder f "
                "JOIN library_indexingjob j ON j.folder_id = f.id AND j.kind = 'sync' WHERE f.id = %s",
                [folder.pk],
            ).fetchone() or (None, None, None)
    assert synced["status"] == "ready" and synced["files_total"] == 1 and synced["last_synced_at"]
    assert claim is None and job_status == "succeeded" and attempts >= 2
