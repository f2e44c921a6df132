"""Tasks sent by name (apps/core/enqueue.py and each app's enqueue module) land on the queue their
task is routed to, with the priority, id and publish time given; read back from the broker's lists."""

from __future__ import annotations

import base64
import json
from typing import Any, NamedTuple

import pytest

from apps.chat import enqueue as chat_enqueue
from apps.core.enqueue import task_send
from apps.core.queues import ALL_QUEUES, SENT_AT_HEADER, run_queue
from apps.library import enqueue as library_enqueue
from apps.library.models import Folder
from apps.library.services import folder_sync_enqueue
from apps.organize import enqueue as organize_enqueue
from config.celery import app


class Waiting(NamedTuple):
    queue: str
    task: str
    priority: int
    args: list[object]


def waiting() -> list[Waiting]:
    """Every message waiting in the broker: kombu keeps a queue as one Redis list per priority step."""
    found = []
    with app.connection_for_read() as connection:
        channel: Any = connection.default_channel  # kombu's Redis channel: its lists and their keys
        for queue in ALL_QUEUES:
            for step in channel.priority_steps:
                key = f"{queue}{channel.sep}{step}" if step else queue
                for raw in channel.client.lrange(key, 0, -1):
                    message = json.loads(raw)
                    assert message["headers"][SENT_AT_HEADER] > 0  # before_task_publish ran for send_task too
                    # Celery's message protocol 2: the body is [args, kwargs, embed], base64 on this transport.
                    args = json.loads(base64.b64decode(message["body"]))[0]
                    found.append(Waiting(queue, message["headers"]["task"], step, args))
    return found


@pytest.fixture
def empty_queues():
    app.control.purge()
    yield
    app.control.purge()


def test_each_enqueue_lands_on_the_queue_its_task_object_would_be_routed_to(empty_queues) -> None:
    library_enqueue.index_folder(7)
    library_enqueue.index_files([1, 2], task_id="group-a", queue=run_queue(1), priority=0)
    library_enqueue.index_files([3], task_id="group-b", queue=run_queue(5), priority=3)
    library_enqueue.sync_folder(7)
    library_enqueue.reindex_folder_keywords(7)
    library_enqueue.backfill_search_vectors()
    chat_enqueue.execute_run("run-1")
    organize_enqueue.suggest_organization(9)

    assert sorted(waiting()) == sorted(
        [
            Waiting("indexing_small", "workers.indexing.index_folder", 0, [7]),
            Waiting("indexing_small", "workers.indexing.index_files", 0, [[1, 2]]),
            Waiting("indexing", "workers.indexing.index_files", 3, [[3]]),
            Waiting("sync", "workers.sync.sync_folder", 0, [7]),
            Waiting("backfill", "workers.backfill.reindex_folder_keywords", 0, [7]),
            Waiting("backfill", "workers.backfill.backfill_search_vectors", 0, []),
            Waiting("agent", "workers.agent.execute_run", 0, ["run-1"]),
            Waiting("organize", "workers.organize.suggest_organization", 0, [9]),
        ]
    )
    # The same queues the task objects' own apply_async would choose (their routes, their options).
    app.loader.import_default_modules()
    for queue, name, _, _ in waiting():
        if name != "workers.indexing.index_files":  # its queue is chosen per run, above
            route = app.amqp.router.route({}, name, task_type=app.tasks[name])  # type: ignore[arg-type]
            assert route["queue"].name == queue, name


@pytest.mark.django_db
def test_a_service_sends_only_once_its_transaction_commits(empty_queues, user, django_capture_on_commit_callbacks):
    folder = Folder.objects.create(owner=user, source="local", external_id="/nowhere", name="Notes")

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        folder_sync_enqueue(folder=folder)
    assert waiting() == [] and len(callbacks) == 1

    callbacks[0]()
    assert waiting() == [Waiting("sync", "workers.sync.sync_folder", 0, [folder.pk])]


@pytest.mark.django_db
def test_with_always_eager_the_task_runs_here_and_nothing_is_sent(empty_queues, monkeypatch) -> None:
    monkeypatch.setitem(app.conf, "CELERY_TASK_ALWAYS_EAGER", True)  # the settings' name (namespace CELERY)

    result = task_send("workers.maintenance.ping", args=["here"])

    assert waiting() == []
    assert result.get(timeout=5) == "pong:here"
