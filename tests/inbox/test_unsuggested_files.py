"""Inbox files left without a suggestion: announced with the reason, listed with it, and a
suggestion on demand takes them off the list."""

from __future__ import annotations

import pytest

from apps.core.events import events_after, inbox_channel
from apps.organize.models import OrganizationSettings
from apps.organize.services import file_suggest_auto
from tests.support.inbox_runs import LEASE, W2

pytestmark = pytest.mark.django_db


def test_an_unsuggested_inbox_file_is_announced_listed_and_suggested_on_demand(
    sample, user, auth_client, other_client
) -> None:
    OrganizationSettings.objects.create(owner=user, auto_suggest=False)
    w2 = sample.file(W2)
    before = events_after(channel=inbox_channel(user.pk))

    outcome = file_suggest_auto(file_id=w2.pk)

    assert outcome.suggestion is None and outcome.skipped == "automatic suggestions are off"
    (event,) = events_after(channel=inbox_channel(user.pk))[len(before) :]
    assert event.type == "inbox_file"
    assert event.data == {
        "folder_id": sample.folder.pk,
        "file_id": w2.pk,
        "path": W2,
        "reason": "automatic suggestions are off",
    }
    listed = {item["path"]: item for item in auth_client.get("/api/inbox/files/waiting").json()}
    assert {W2, LEASE} <= set(listed)
    assert listed[W2]["reason"] == "Automatic suggestions are off."
    assert listed[W2]["folder_id"] == sample.folder.pk and listed[W2]["name"] == "W2_2024.pdf"
    assert other_client.get("/api/inbox/files/waiting").json() == []

    response = auth_client.post("/api/inbox/organize", {"folder_id": sample.folder.pk, "paths": [W2]}, format="json")

    assert response.status_code == 200 and response.json()["suggestions"][0]["target_folder"] == "taxes/"
    assert W2 not in {item["path"] for item in auth_client.get("/api/inbox/files/waiting").json()}
