"""The API tokens page makes a token (its secret shown once), lists it without the secret and revokes it."""

from __future__ import annotations

import hashlib
import re

import pytest
from playwright.sync_api import Page, expect

from apps.core.models import PersonalToken
from apps.library.models import Folder
from tests.support.browser import log_in

pytestmark = pytest.mark.django_db(transaction=True)  # the server sees committed rows only

SECRET_SHAPE = re.compile(r"^fc_\S{40,}$")


def test_a_token_is_made_shown_once_and_revoked(page: Page, folder: Folder) -> None:
    log_in(page)
    page.get_by_role("link", name="alice: language and API tokens").click()
    expect(page.get_by_role("heading", name="API tokens")).to_be_visible()
    expect(page.get_by_text("No tokens yet.")).to_be_visible()

    page.get_by_label("Name").fill("nightly backup")
    page.locator('input[name="scopes"][value="search"]').check()
    page.get_by_label("Only these folders").select_option(label=folder.name)
    page.get_by_label("Expires after this many days").fill("30")
    page.get_by_role("button", name="Make token").click()

    secret_box = page.get_by_test_id("token-secret")
    expect(secret_box).to_have_text(SECRET_SHAPE)
    expect(page.get_by_text("it is shown this once")).to_be_visible()
    secret = secret_box.text_content() or ""
    token = PersonalToken.objects.get()
    assert token.digest == hashlib.sha256(secret.encode()).hexdigest()
    assert (token.name, token.scopes, token.folder_ids) == ("nightly backup", ["read", "search"], [folder.pk])
    assert SECRET_SHAPE.match(secret)

    row = page.locator(f'tr[data-token-id="{token.pk}"]')
    expect(row).to_contain_text("nightly backup")
    expect(row).to_contain_text(f"{token.prefix}…")
    expect(row).to_contain_text("read, search")
    expect(row).to_contain_text(folder.name)
    page.reload()  # shown once: gone after a reload, and the list never holds the secret
    expect(page.get_by_test_id("token-secret")).to_be_hidden()
    assert secret not in page.content()

    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Revoke nightly backup").click()
    expect(page.get_by_text("No tokens yet.")).to_be_visible()
    token.refresh_from_db()
    assert token.revoked_at is not None
