"""Sharing a folder in the browser: alice invites bob as a viewer, bob joins through the link, asks
and opens a citation, is not offered a sync; as an editor he files an inbox suggestion; once
revoked (alice confirms), the folder is gone for him."""

from __future__ import annotations

import re
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from apps.library.indexing import folder_index
from apps.library.models import File, Folder, FolderMembership
from apps.organize.services import suggestion_create
from tests.support.browser import SCREENSHOTS, log_in
from tests.support.servers import BASE_DIR
from tests.web.conftest import new_page

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]


@pytest.fixture
def household(user, monkeypatch) -> Iterator[tuple[Folder, Path]]:
    root = BASE_DIR / "var" / "folders" / f"web-share-{uuid.uuid4().hex[:8]}"
    (root / "inbox").mkdir(parents=True)
    (root / "housing").mkdir()
    (root / "inbox" / "lease-renewal.txt").write_text("The lease of the flat renews on June 1; rent rises to 1,450.\n")
    folder = Folder.objects.create(owner=user, source="local", external_id=str(root), name="Household")
    monkeypatch.setattr("apps.organize.enqueue.suggest_organization", lambda *args: None)
    folder_index(folder_id=folder.pk, inline=True)
    yield folder, root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def bob(django_user_model):
    return django_user_model.objects.create_user(username="bob", password="bob-password")


def share_dialog(page: Page, folder_name: str):
    card = page.locator(".folder-card").filter(has=page.get_by_role("link", name=folder_name, exact=True))
    card.get_by_role("button", name="Share").click()
    return page.get_by_role("dialog", name=re.compile(f"^Share {folder_name}"))


def test_invite_join_ask_refused_promoted_and_revoked(
    page: Page, browser: Browser, web_server, household, bob, celery_worker_process
) -> None:
    folder, root = household
    log_in(page)
    dialog = share_dialog(page, "Household")
    # A panel at the page's right edge, its close button beside the title.
    box, viewport = dialog.bounding_box(), page.viewport_size
    assert box and viewport and abs(box["x"] + box["width"] - viewport["width"]) <= 1
    title_box = dialog.get_by_role("heading", name=re.compile("^Share Household")).bounding_box()
    close_box = dialog.get_by_role("button", name="Close sharing").bounding_box()
    assert title_box and close_box and abs(close_box["y"] - title_box["y"]) < title_box["height"]
    # The link is for bob alone: who it admits is chosen, never assumed.
    expect(dialog.get_by_label("Their email or username")).to_be_hidden()
    dialog.get_by_label("Only this person").check()
    dialog.get_by_label("Their email or username").fill("bob")
    dialog.get_by_label("Role").last.select_option("viewer")
    dialog.get_by_role("button", name="Create link").click()
    link = dialog.get_by_label("Send this link")
    expect(link).to_have_value(re.compile(r"/invite/[\w-]+/$"))
    invite_url = link.input_value()

    with new_page(browser, web_server, height=860) as bob_page:
        bob_page.goto(invite_url)
        expect(bob_page).to_have_url(re.compile(r"/login/\?next=/invite/"))
        expect(bob_page.locator("#invitation-notice")).to_contain_text("You opened an invitation to a shared folder")
        bob_page.get_by_label("Username").fill("bob")
        bob_page.get_by_label("Password").fill("bob-password")
        bob_page.get_by_role("button", name="Log in").click()
        expect(bob_page.get_by_text("alice invites you to Household as a viewer.")).to_be_visible()
        bob_page.get_by_role("button", name="Join Household").click()

        # The folder's chat page: bob asks, and the citation opens its passage.
        expect(bob_page.get_by_role("heading", level=1, name="Household")).to_be_visible()
        # Reached through a form's redirect, not goto: the page's script may not be running yet.
        bob_page.wait_for_load_state()
        bob_page.get_by_label("Your question").fill("When does the lease of the flat renew?")
        bob_page.get_by_label("Your question").press("Enter")
        expect(bob_page.locator("#run-status")).to_have_text("Answer ready.")
        bob_page.get_by_role("link", name=re.compile(r"^Source \d+: lease-renewal\.txt")).first.click()
        expect(bob_page).to_have_url(re.compile(r"/files/\d+\?chunk=\d+(&quote=\S+)?$"))
        expect(bob_page.locator(".chunk.cited mark")).to_contain_text("renews on June 1")

        bob_page.goto("/")
        shared = bob_page.get_by_role("region", name="Shared with me")
        card = shared.locator(".folder-card").filter(has_text="Household")
        expect(card).to_contain_text("Shared by alice · you are a viewer")
        expect(card.get_by_role("button", name="Share")).to_be_hidden()
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        bob_page.screenshot(path=SCREENSHOTS / "shared-with-me.png")
        # A viewer is not offered a sync the server would refuse.
        expect(card.get_by_role("button", name="Sync now: Household")).to_be_hidden()
        expect(card.get_by_role("link", name=re.compile("^Chat"))).to_be_visible()

        # alice makes bob an editor: bob files an inbox suggestion.
        dialog.get_by_role("button", name="Close sharing").click()
        dialog = share_dialog(page, "Household")
        member = dialog.locator(".member").filter(has_text="bob")
        member.get_by_label("Role of bob").select_option("editor")
        expect(member.get_by_label("Role of bob")).to_have_value("editor")
        expect(dialog.get_by_role("status")).to_have_text("bob is now an editor.")
        page.screenshot(path=SCREENSHOTS / "share-dialog.png")
        assert FolderMembership.objects.get(folder=folder, user=bob).role == "editor"
        lease = File.objects.get(folder=folder, path="inbox/lease-renewal.txt")
        suggestion_create(file=lease, target="housing/", reasoning="A lease goes with housing.", confidence=0.9)
        bob_page.goto("/inbox/")
        suggestion = bob_page.locator(".file-card").filter(has_text="lease-renewal.txt")
        suggestion.get_by_role("button", name="Move to housing/").first.click()
        expect(suggestion.get_by_role("status")).to_have_text("Moved to housing/.")
        assert (root / "housing" / "lease-renewal.txt").exists()

        # alice revokes: the folder is gone for bob.
        asked = []
        page.once("dialog", lambda confirm: (asked.append(confirm.message), confirm.dismiss()))
        member.get_by_role("button", name="Remove bob").click()
        expect(member).to_be_visible()
        assert asked == ["Remove bob from Household? They lose access at once."]
        assert FolderMembership.objects.filter(folder=folder, user=bob).exists()
        page.once("dialog", lambda confirm: confirm.accept())
        member.get_by_role("button", name="Remove bob").click()
        expect(dialog.get_by_text("Nobody else yet.")).to_be_visible()
        expect(dialog.get_by_role("status")).to_have_text("bob no longer has access.")
        status = bob_page.evaluate(f"fetch('/api/folders/{folder.pk}').then((response) => response.status)")
        assert status == 404
        bob_page.goto("/")
        expect(bob_page.get_by_role("region", name="Shared with me")).to_be_hidden()
