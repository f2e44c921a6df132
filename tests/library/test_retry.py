"""Retrying failed and skipped files: owner only, in the schema, and indexed again by the next run."""

from __future__ import annotations

import pytest

from apps.core.events import events_after, folder_channel
from apps.library.indexing import files_index, folder_index
from apps.library.models import File
from tests.support.files import write

pytestmark = pytest.mark.django_db


@pytest.fixture
def with_a_failed_file(folder, root, settings):
    write(root, "good.md", "# Garden\n\nThe roses need pruning in March.")
    write(root, "big.txt", "Too large to index today. " * 40)
    settings.INDEX_MAX_FILE_BYTES = 500
    folder_index(folder_id=folder.pk, inline=True)
    # A failure as a crashed parser leaves it: a reason, and the file not settled.
    File.objects.filter(folder=folder, path="good.md").update(status="failed", error="RuntimeError: parser crashed")
    return folder


def test_retrying_one_file_queues_it_and_the_next_run_indexes_it(
    auth_client, with_a_failed_file, django_capture_on_commit_callbacks
):
    failed = File.objects.get(path="good.md")
    with django_capture_on_commit_callbacks() as callbacks:
        response = auth_client.post(f"/api/files/{failed.pk}/retry")
    assert response.status_code == 202, response.json()
    assert (response.json()["status"], response.json()["error"]) == ("pending", "")
    assert len(callbacks) == 1  # its index task, sent on commit

    files_index(file_ids=[failed.pk])

    failed.refresh_from_db()
    assert failed.status == "indexed" and failed.chunk_count > 0
    types = [event.type for event in events_after(channel=folder_channel(with_a_failed_file.pk))]
    assert types[-3:] == ["indexing", "file_started", "file"]


def test_retry_all_failed_takes_failed_files_only_and_says_when_there_are_none(
    auth_client, with_a_failed_file, django_capture_on_commit_callbacks
):
    url = f"/api/folders/{with_a_failed_file.pk}/files/retry"
    with django_capture_on_commit_callbacks():
        response = auth_client.post(url, {}, format="json")
    assert response.status_code == 202
    assert response.json()["retried"] == [File.objects.get(path="good.md").pk]
    assert response.json()["folder"]["status"] == "indexing"
    assert File.objects.get(path="big.txt").status == "skipped"  # skipped files only when named

    again = auth_client.post(url, {}, format="json")
    assert again.status_code == 400
    assert again.json()["detail"] == "There is no failed or skipped file to retry."


def test_a_skipped_file_is_retried_when_named_and_an_indexed_one_is_refused(
    auth_client, with_a_failed_file, django_capture_on_commit_callbacks
):
    skipped = File.objects.get(path="big.txt")
    with django_capture_on_commit_callbacks():
        named = auth_client.post(
            f"/api/folders/{with_a_failed_file.pk}/files/retry", {"file_ids": [skipped.pk]}, format="json"
        )
    assert named.json()["retried"] == [skipped.pk]
    File.objects.filter(pk=skipped.pk).update(status="indexed")
    refused = auth_client.post(f"/api/files/{skipped.pk}/retry")
    assert refused.status_code == 400 and "only failed or skipped files" in refused.json()["detail"]


def test_another_users_files_and_folder_are_404(other_client, with_a_failed_file):
    failed = File.objects.get(path="good.md")
    assert other_client.post(f"/api/files/{failed.pk}/retry").status_code == 404
    assert other_client.post(f"/api/folders/{with_a_failed_file.pk}/files/retry", {}, format="json").status_code == 404
    assert File.objects.get(pk=failed.pk).status == "failed"
