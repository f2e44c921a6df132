"""Issue 44: `make run` serves a copy of the sample folder, so the demo never writes into the checkout.

The demo's inbox flow (upload, suggestion, accept, undo) runs here through the commands `make run`
uses (`demo_folder`, `folder_add`, `folder_index --inline`) and the inbox API, against a demo copy
in a temporary directory: the copy changes, the checkout does not (`git status --porcelain`).
"""

from __future__ import annotations

import shutil
import subprocess
from io import StringIO
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from apps.library.indexing import files_index
from apps.organize.models import OrganizationSuggestion
from tests.support.sample_folder import SAMPLE
from tests.support.servers import BASE_DIR
from workers.organize import suggest_organization

pytestmark = pytest.mark.django_db

FORM_1099 = (
    b"Form 1099-INT Interest Income 2024\n\nPayer: Harbor Savings Bank\nRecipient: Alex Morgan\n"
    b"Box 1 Interest income: 412.10\nBox 4 Federal income tax withheld: 0.00\n"
    b"Keep this form with your tax return.\n"
)


def command(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue().strip()


def checkout_status() -> str:
    if shutil.which("git") is None or not (BASE_DIR / ".git").exists():
        pytest.skip("not a git checkout")
    return subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all", "--", "sample_folder"],
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


@pytest.fixture
def demo_settings(tmp_path: Path, settings):
    settings.DEMO_FOLDER = tmp_path / "demo" / "sample_folder"
    settings.LOCAL_FOLDER_ROOTS = [str(tmp_path / "demo")]
    return settings


def test_the_demo_folder_is_a_copy_made_once_and_refreshed_on_request(demo_settings):
    copy = Path(command("demo_folder"))

    assert (
        copy == demo_settings.DEMO_FOLDER
        and (copy / "guideline.md").read_bytes() == (SAMPLE / "guideline.md").read_bytes()
    )
    (copy / "inbox" / "mine.txt").write_text("the demo's own file")
    assert Path(command("demo_folder")) == copy and (copy / "inbox" / "mine.txt").exists()  # kept

    assert Path(command("demo_folder", "--refresh")) == copy
    assert not (copy / "inbox" / "mine.txt").exists() and (copy / "guideline.md").exists()
    assert not list(copy.parent.glob(".*partial"))


def test_the_demos_inbox_flow_changes_the_copy_and_never_the_checkout(
    demo_settings, user, auth_client, queued_suggestions, django_capture_on_commit_callbacks
):
    before = checkout_status()
    copy = Path(command("demo_folder"))
    folder_id = int(command("folder_add", "--local", str(copy), "--owner", user.username))
    command("folder_index", str(folder_id), "--inline")

    with django_capture_on_commit_callbacks(execute=True):
        uploaded = auth_client.post(
            "/api/inbox/files",
            {"folder_id": folder_id, "file": SimpleUploadedFile("1099-INT_2024.txt", FORM_1099)},
            format="multipart",
        )
    assert uploaded.status_code == 201, uploaded.json()
    files_index(file_ids=[uploaded.json()["file_id"]])
    suggest_organization(uploaded.json()["file_id"])
    suggestion = OrganizationSuggestion.objects.get(file_id=uploaded.json()["file_id"])
    accepted = auth_client.post(f"/api/inbox/suggestions/{suggestion.pk}/respond", {"action": "accept"}, format="json")
    assert accepted.status_code == 200, accepted.json()
    assert (copy / suggestion.target_folder / "1099-INT_2024.txt").read_bytes() == FORM_1099
    undone = auth_client.post(f"/api/inbox/moves/{accepted.json()['move']['id']}/undo")
    assert undone.status_code == 200, undone.json()

    assert (copy / "inbox" / "1099-INT_2024.txt").read_bytes() == FORM_1099
    assert not (SAMPLE / "inbox" / "1099-INT_2024.txt").exists()
    assert checkout_status() == before
