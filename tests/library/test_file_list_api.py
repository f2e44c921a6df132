"""The files page's API: `GET /api/folders/{id}/files` filtered by type and name, sorted, paged
with a capped count; and a folder's sync interval through `PATCH /api/folders/{id}`."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from apps.chat.models import Conversation
from apps.library.models import File, Folder, FolderMembership

pytestmark = pytest.mark.django_db

NOW = timezone.now()
FILES = [
    # path, mime type, size, days since modified (None: unknown), status, chunks
    ("taxes/W2_2024.pdf", "application/pdf", 120_000, 30, "indexed", 4),
    ("taxes/Receipt-Boiler.PDF", "application/pdf", 2_000, 2, "failed", 0),
    ("notes/boiler.md", "text/markdown", 900, 1, "indexed", 1),
    ("photos/boiler-room.png", "image/png", 4_000_000, None, "skipped", 0),
    ("notes/zebra.txt", "text/plain", 50, 400, "indexed", 2),
]


@pytest.fixture
def folder(user) -> Folder:
    folder = Folder.objects.create(owner=user, source="local", external_id="/srv/library", name="Library")
    for path, mime, size, days, status, chunks in FILES:
        File.objects.create(
            folder=folder,
            external_id=path,
            path=path,
            name=path.rsplit("/", 1)[-1],
            mime_type=mime,
            size=size,
            modified_time=None if days is None else NOW - dt.timedelta(days=days),
            status=status,
            error="ValueError: bad xref table" if status == "failed" else "",
            chunk_count=chunks,
        )
    return folder


def paths(auth_client, folder: Folder, **params) -> list[str]:
    response = auth_client.get(f"/api/folders/{folder.pk}/files", params)
    assert response.status_code == 200, response.json()
    return [file["path"] for file in response.json()["results"]]


def test_the_default_order_is_by_path_and_the_old_filters_still_work(auth_client, folder):
    assert paths(auth_client, folder) == sorted(path for path, *_ in FILES)
    assert paths(auth_client, folder, status="failed") == ["taxes/Receipt-Boiler.PDF"]
    assert paths(auth_client, folder, path_prefix="notes/") == ["notes/boiler.md", "notes/zebra.txt"]


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("pdf", ["taxes/Receipt-Boiler.PDF", "taxes/W2_2024.pdf"]),  # an extension, any case
        (".md", ["notes/boiler.md"]),
        ("image/", ["photos/boiler-room.png"]),  # a MIME prefix
        ("text/plain", ["notes/zebra.txt"]),  # a MIME type
    ],
)
def test_type_filters_by_extension_or_mime_type(auth_client, folder, kind, expected):
    assert paths(auth_client, folder, type=kind) == expected


def test_name_filter_matches_part_of_the_name_in_any_case(auth_client, folder):
    assert paths(auth_client, folder, name="BOILER") == [
        "notes/boiler.md",
        "photos/boiler-room.png",
        "taxes/Receipt-Boiler.PDF",
    ]
    # The name, not the directories: "notes" is in two paths but no file name.
    assert paths(auth_client, folder, name="notes") == []
    assert paths(auth_client, folder, name="boiler", type="pdf", status="failed") == ["taxes/Receipt-Boiler.PDF"]


@pytest.mark.parametrize(
    ("ordering", "expected"),
    [
        ("-size", ["boiler-room.png", "W2_2024.pdf", "Receipt-Boiler.PDF", "boiler.md", "zebra.txt"]),
        ("size", ["zebra.txt", "boiler.md", "Receipt-Boiler.PDF", "W2_2024.pdf", "boiler-room.png"]),
        # Newest first either way round, the file without a modification time last.
        ("-modified", ["boiler.md", "Receipt-Boiler.PDF", "W2_2024.pdf", "zebra.txt", "boiler-room.png"]),
        ("modified", ["zebra.txt", "W2_2024.pdf", "Receipt-Boiler.PDF", "boiler.md", "boiler-room.png"]),
        # Names in any case: "boiler" before "Receipt" before "W2" before "zebra".
        ("name", ["boiler-room.png", "boiler.md", "Receipt-Boiler.PDF", "W2_2024.pdf", "zebra.txt"]),
        # Equal chunk counts fall back to the path.
        ("-chunks", ["W2_2024.pdf", "zebra.txt", "boiler.md", "Receipt-Boiler.PDF", "boiler-room.png"]),
        ("chunks", ["boiler-room.png", "Receipt-Boiler.PDF", "boiler.md", "zebra.txt", "W2_2024.pdf"]),
    ],
)
def test_ordering(auth_client, folder, ordering, expected):
    names = [path.rsplit("/", 1)[-1] for path in paths(auth_client, folder, ordering=ordering)]
    assert names == expected


@pytest.mark.parametrize(
    ("params", "field"),
    [({"ordering": "embedding"}, "ordering"), ({"status": "gone"}, "status"), ({"name": "x" * 300}, "name")],
)
def test_bad_filters_are_a_400_naming_the_field(auth_client, folder, params, field):
    response = auth_client.get(f"/api/folders/{folder.pk}/files", params)
    assert response.status_code == 400
    assert field in response.json()["errors"]


def test_the_count_is_exact_below_the_cap(auth_client, folder):
    body = auth_client.get(f"/api/folders/{folder.pk}/files", {"limit": 2}).json()
    assert (body["count"], body["count_exact"], len(body["results"])) == (5, True, 2)
    assert body["next"] is not None


def test_beyond_the_cap_the_count_is_a_lower_bound_and_every_page_is_reachable(auth_client, folder, monkeypatch):
    monkeypatch.setattr("apps.library.paging.COUNT_CAP", 2)
    body = auth_client.get(f"/api/folders/{folder.pk}/files", {"limit": 1}).json()
    assert (body["count"], body["count_exact"]) == (3, False)  # "more than 2"
    seen = [result["path"] for result in body["results"]]
    while body["next"]:
        body = auth_client.get(body["next"]).json()
        seen += [result["path"] for result in body["results"]]
    assert seen == sorted(path for path, *_ in FILES)
    assert body["count_exact"] is True  # the last page counted everything up to its end


def test_another_users_files_are_a_404(other_client, folder):
    assert other_client.get(f"/api/folders/{folder.pk}/files", {"name": "boiler"}).status_code == 404


# -- sync interval ----------------------------------------------------------------------------


def test_the_sync_interval_is_set_within_bounds(auth_client, folder):
    response = auth_client.patch(f"/api/folders/{folder.pk}", {"sync_interval_seconds": 900}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["sync_interval_seconds"] == 900
    folder.refresh_from_db()
    assert folder.sync_interval_seconds == 900


@pytest.mark.parametrize("seconds", [0, 59, 7 * 86_400 + 1, "hourly"])
def test_a_sync_interval_out_of_bounds_is_a_400_and_nothing_changes(auth_client, folder, seconds):
    response = auth_client.patch(f"/api/folders/{folder.pk}", {"sync_interval_seconds": seconds}, format="json")
    assert response.status_code == 400
    assert "sync_interval_seconds" in response.json()["errors"]
    folder.refresh_from_db()
    assert folder.sync_interval_seconds == 3600


def test_an_editor_sets_the_interval_a_viewer_may_not(folder, django_user_model):
    from rest_framework.test import APIClient

    roles = {}
    for role in ("editor", "viewer"):
        member = django_user_model.objects.create_user(username=role)
        FolderMembership.objects.create(folder=folder, user=member, role=role)
        roles[role] = APIClient()
        roles[role].force_authenticate(member)
    url = f"/api/folders/{folder.pk}"
    assert roles["editor"].patch(url, {"sync_interval_seconds": 600}, format="json").status_code == 200
    refused = roles["viewer"].patch(url, {"sync_interval_seconds": 60}, format="json")
    assert refused.status_code == 403 and "editor" in refused.json()["detail"]
    # Renaming stays the owner's, even with an interval beside it.
    both = roles["editor"].patch(url, {"name": "Mine", "sync_interval_seconds": 60}, format="json")
    assert both.status_code == 403
    folder.refresh_from_db()
    assert (folder.name, folder.sync_interval_seconds) == ("Library", 600)


# -- removing a folder with conversations -------------------------------------------------------


def test_removing_a_folder_keeps_its_owners_conversations_to_read_and_the_history_still_lists(
    auth_client, folder, user
):
    other = Folder.objects.create(owner=user, source="local", external_id="/srv/other", name="Other")
    removed = Conversation.objects.create(owner=user, folder=folder, title="About the boiler")
    kept = Conversation.objects.create(owner=user, folder=other, title="About the car")
    assert auth_client.delete(f"/api/folders/{folder.pk}").status_code == 204
    listed = auth_client.get("/api/conversations")
    assert listed.status_code == 200
    by_id = {item["id"]: item for item in listed.json()["results"]}
    assert set(by_id) == {kept.pk, removed.pk}
    assert (by_id[removed.pk]["folder_removed"], by_id[kept.pk]["folder_removed"]) == (True, False)
    opened = auth_client.get(f"/api/conversations/{removed.pk}")
    assert opened.status_code == 200 and opened.json()["folder_name"] == folder.name
    assert not File.objects.filter(folder_id=folder.pk).exists()
