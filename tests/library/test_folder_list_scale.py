"""The folders list carries each folder's newest sync, in statements that do not grow with the
number of folders (issue 40 item 4; bench/ops/folders_page.py measures it at 200 folders)."""

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.library.models import Folder, FolderMembership, SyncLog

pytestmark = pytest.mark.django_db


def _folders(owner, other_user, *, first, count):
    made = []
    for n in range(first, first + count):
        folder = Folder.objects.create(owner=owner if n % 2 else other_user, source="local", external_id=f"/f/{n}")
        if folder.owner_id != owner.pk:
            FolderMembership.objects.create(folder=folder, user=owner, role="viewer")
        # Two syncs each; the newest is written first, so order by time, not by id, is what counts.
        newest = SyncLog.objects.create(folder=folder, mode="full", added=n, error="" if n % 3 else "Drive said no")
        older = SyncLog.objects.create(folder=folder, mode="full", added=999)
        SyncLog.objects.filter(pk=older.pk).update(created_at=timezone.now() - dt.timedelta(hours=1))
        made.append((folder, newest))
    return made


def _list(client):
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/api/folders", {"limit": 200})
    assert response.status_code == 200
    return response.json()["results"], len(queries)


def test_the_list_gives_each_folder_its_newest_sync_in_as_many_statements_for_3_as_for_12(
    auth_client, user, other_user
):
    made = _folders(user, other_user, first=0, count=3)
    never = Folder.objects.create(owner=user, source="local", external_id="/f/never")
    few, few_statements = _list(auth_client)
    made += _folders(user, other_user, first=3, count=9)
    many, many_statements = _list(auth_client)
    assert len(few) == 4 and len(many) == 13
    assert many_statements == few_statements
    by_id = {folder["id"]: folder for folder in many}
    assert by_id[never.pk]["last_sync"] is None
    for folder, newest in made:
        last = by_id[folder.pk]["last_sync"]
        assert (last["id"], last["added"], last["error"]) == (newest.pk, newest.added, newest.error)


def test_one_folder_carries_its_newest_sync_too(auth_client, user, other_user):
    [(folder, newest)] = _folders(user, other_user, first=1, count=1)
    response = auth_client.get(f"/api/folders/{folder.pk}")
    assert response.status_code == 200 and response.json()["last_sync"]["id"] == newest.pk
