"""The stale-run sweeper (beat) and the wording of throttled answers."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone
from rest_framework.test import APIClient
from rest_framework.throttling import ScopedRateThrottle

from apps.chat.models import AgentRun, RunStatus
from apps.core.beat import BEAT_SCHEDULE
from apps.core.events import events_after, run_channel
from workers.agent import fail_stale_runs

pytestmark = pytest.mark.django_db


def _running(owned, *, started_ago: dt.timedelta) -> AgentRun:
    return AgentRun.objects.create(
        owner=owned.conversation.owner,
        conversation=owned.conversation,
        status=RunStatus.RUNNING,
        started_at=timezone.now() - started_ago,
    )


def test_runs_stuck_in_running_are_failed_and_their_listeners_told(owned):
    stale = _running(owned, started_ago=dt.timedelta(minutes=30))
    fresh = _running(owned, started_ago=dt.timedelta(seconds=5))

    assert fail_stale_runs() == 1
    assert fail_stale_runs() == 0  # idempotent

    stale.refresh_from_db()
    fresh.refresh_from_db()
    assert stale.status == RunStatus.ERROR and stale.finished_at is not None and "stale" in stale.error
    assert fresh.status == RunStatus.RUNNING
    events = events_after(channel=run_channel(stale.pk))
    assert [e.type for e in events] == ["error"]
    assert events[0].data["message"] == "The run was interrupted. Please ask again."
    assert events_after(channel=run_channel(fresh.pk)) == []
    # Finished runs are never touched.
    assert AgentRun.objects.get(pk=owned.run.pk).status == RunStatus.COMPLETED


def test_the_sweeper_is_on_the_beat_schedule():
    assert any(entry.task == "workers.agent.fail_stale_runs" for entry in BEAT_SCHEDULE)


@pytest.mark.parametrize(
    ("scope", "path", "body"), [("search", "search", {"query": "x"}), ("chat", "chat", {"message": "hi"})]
)
def test_a_throttled_request_gets_a_429_that_says_when_to_retry(scope, path, body, owned, user, monkeypatch):
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"search": "1/min", "chat": "1/min"})
    client = APIClient()
    client.force_authenticate(user=user)
    url = f"/api/folders/{owned.folder.pk}/{path}"

    first = client.post(url, body, format="json")
    second = client.post(url, body, format="json")

    assert first.status_code < 400
    assert second.status_code == 429
    assert int(second["Retry-After"]) > 0
    assert "throttled" in second.json()["detail"].lower()
