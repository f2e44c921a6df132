"""The thin backfill task, called in-process (routing and retries are declared, not coded)."""

import pytest

from workers.backfill import backfill_search_vectors

pytestmark = pytest.mark.django_db


def test_backfill_task_queues_itself_again_while_rows_remain(monkeypatch):
    from apps.library.backfill import BackfillResult

    queued = []
    results = iter([BackfillResult(rows=5, remaining=True), BackfillResult(rows=2)])
    monkeypatch.setattr("apps.library.backfill.search_vectors_backfill", lambda **kwargs: next(results))
    monkeypatch.setattr("workers.backfill.backfill_search_vectors.delay", lambda: queued.append(1))
    assert backfill_search_vectors() == 5 and queued == [1]
    assert backfill_search_vectors() == 2 and queued == [1]
