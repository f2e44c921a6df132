"""Per-user quotas: folder creation refused past the folder limit; files past the file, byte or
chunk limits skipped with the reason and indexed by a later sync once there is room."""

from __future__ import annotations

import pytest

from apps.library.indexing import folder_index
from apps.library.models import File, Folder, FolderMembership, UserQuota
from tests.support.files import write

pytestmark = pytest.mark.django_db


def statuses(folder: Folder) -> dict[str, tuple[str, str]]:
    return {
        path: (status, error)
        for path, status, error in File.objects.filter(folder=folder).values_list("path", "status", "error")
    }


@pytest.fixture
def five_notes(root):
    for n in range(1, 6):
        write(root, f"note{n}.txt", f"Note number {n} about invoice INV-{n:05d}.")
    return root


def test_folder_creation_past_the_limit_is_refused_and_creates_nothing(auth_client, user, tmp_path, settings):
    settings.LOCAL_FOLDER_ROOTS = [str(tmp_path)]
    settings.QUOTA_FOLDERS_PER_USER = 1
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    first = auth_client.post("/api/folders", {"source": "local", "path": str(tmp_path / "a")}, format="json")
    assert first.status_code == 201, first.content
    second = auth_client.post("/api/folders", {"source": "local", "path": str(tmp_path / "b")}, format="json")
    assert second.status_code == 400
    assert "You have reached your limit of 1 folder." in second.content.decode()
    assert list(Folder.objects.filter(owner=user).values_list("name", flat=True)) == ["a"]


def test_files_past_the_quota_are_skipped_then_indexed_once_it_is_raised(five_notes, folder, user, settings):
    settings.QUOTA_FILES_PER_USER = 3
    folder_index(folder_id=folder.pk, inline=True)
    # New files take the room in path order.
    assert statuses(folder) == {
        "note1.txt": ("indexed", ""),
        "note2.txt": ("indexed", ""),
        "note3.txt": ("indexed", ""),
        "note4.txt": ("skipped", "quota reached: 3 files"),
        "note5.txt": ("skipped", "quota reached: 3 files"),
    }
    # An unchanged next sync keeps the indexed ones and still skips the rest.
    folder_index(folder_id=folder.pk, inline=True)
    assert [s for s, _ in statuses(folder).values()].count("indexed") == 3
    # The admin's override beats the setting; the next sync indexes what was skipped.
    UserQuota.objects.create(user=user, files=10)
    folder_index(folder_id=folder.pk, inline=True)
    assert {status for status, _ in statuses(folder).values()} == {"indexed"}


def test_a_shared_folder_counts_for_its_owner_not_the_member(five_notes, folder, user, other_user, settings):
    FolderMembership.objects.create(folder=folder, user=other_user, role="viewer")
    UserQuota.objects.create(user=other_user, files=1)
    UserQuota.objects.create(user=user, files=2)
    folder_index(folder_id=folder.pk, inline=True)
    assert [s for s, _ in statuses(folder).values()].count("indexed") == 2


def test_the_bytes_quota_skips_what_does_not_fit(root, folder, user, settings):
    write(root, "a.txt", "The lease of the flat on Elm Street renews each year in May, rent 1200 a month.")
    write(root, "b.txt", "The invoice INV-20931 from Dana Whitfield is due at the end of the quarter now.")
    write(root, "c.txt", "Call Dana.")
    settings.QUOTA_BYTES_PER_USER = 110
    folder_index(folder_id=folder.pk, inline=True)
    # b.txt would pass the limit; c.txt, later in path order, still fits.
    assert statuses(folder) == {
        "a.txt": ("indexed", ""),
        "b.txt": ("skipped", "quota reached: 110 bytes"),
        "c.txt": ("indexed", ""),
    }


def test_the_chunks_quota_skips_a_file_whose_chunks_would_pass_it(root, folder, user, settings):
    write(root, "a.txt", "One short note about rent.")
    write(root, "b.txt", " ".join(f"Paragraph {n} of a long report on quarterly revenue." for n in range(400)))
    settings.QUOTA_CHUNKS_PER_USER = 2
    folder_index(folder_id=folder.pk, inline=True)
    assert statuses(folder)["a.txt"] == ("indexed", "")
    assert statuses(folder)["b.txt"] == ("skipped", "quota reached: 2 chunks")
    UserQuota.objects.create(user=user, chunks=1000)
    folder_index(folder_id=folder.pk, inline=True)
    assert statuses(folder)["b.txt"][0] == "indexed"


def test_the_quota_api_gives_the_callers_limits_and_use(auth_client, user, folder, settings):
    settings.QUOTA_FOLDERS_PER_USER = 5
    UserQuota.objects.create(user=user, bytes=1000)
    body = auth_client.get("/api/quota").json()
    assert body["limits"] == {"folders": 5, "files": None, "bytes": 1000, "chunks": None}
    assert body["used"] == {"folders": 1, "files": 0, "bytes": 0, "chunks": 0}
