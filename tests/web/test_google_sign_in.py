"""Sign in with Google through the emulated consent page and its ID tokens: a first sign-in
creates the account, an invitation link survives the trip, and a token the library must refuse
(another audience, expired, another issuer) signs nobody in."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest
from allauth.socialaccount.models import SocialAccount
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect

from apps.connectors.drive.emulator import DriveEmulator
from apps.library.members import invitation_create
from apps.library.models import Folder, FolderMembership

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def google_account(drive_emulator: DriveEmulator) -> Iterator[DriveEmulator]:
    drive_emulator.state.id_token_overrides.clear()
    yield drive_emulator
    drive_emulator.state.id_token_overrides.clear()


def sign_in_with_google(page: Page) -> None:
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
    page.get_by_role("button", name="Sign in with Google").click()


def test_a_first_google_sign_in_creates_the_account(drive_page: Page, google_account) -> None:
    drive_page.goto("/login/")
    sign_in_with_google(drive_page)

    expect(drive_page.get_by_role("heading", name="Your folders")).to_be_visible()
    account = SocialAccount.objects.get(provider="google")
    assert account.uid == "emu-google-user-1"
    assert account.user.email == "bob@example.com"

    # Signing in again is the same person, not a second account.
    drive_page.get_by_role("button", name="Log out").click()
    drive_page.goto("/login/")
    sign_in_with_google(drive_page)
    expect(drive_page.get_by_role("heading", name="Your folders")).to_be_visible()
    assert get_user_model().objects.filter(email="bob@example.com").count() == 1


def test_an_invitation_link_joins_after_signing_in_with_google(drive_page: Page, user, google_account) -> None:
    folder = Folder.objects.create(owner=user, source="local", external_id="/srv/team", name="Team notes")
    _, token = invitation_create(folder=folder, actor=user, role="viewer")

    drive_page.goto(f"/invite/{token}/")
    expect(drive_page).to_have_url(re.compile(r"/login/\?next=/invite/"))
    sign_in_with_google(drive_page)
    expect(drive_page.get_by_text("alice invites you to Team notes as a viewer.")).to_be_visible()
    drive_page.get_by_role("button", name="Join Team notes").click()

    expect(drive_page.get_by_role("heading", level=1, name="Team notes")).to_be_visible()
    bob = SocialAccount.objects.get(provider="google").user
    assert FolderMembership.objects.filter(folder=folder, user=bob, role="viewer").exists()


@pytest.mark.parametrize(
    "forged",
    [
        {"aud": "another-client.apps.googleusercontent.com"},
        {"exp": int(time.time()) - 60},
        {"iss": "https://accounts.example.net"},
    ],
    ids=["audience", "expired", "issuer"],
)
def test_an_id_token_the_library_must_refuse_signs_nobody_in(drive_page: Page, google_account, forged) -> None:
    google_account.state.id_token_overrides.update(forged)
    drive_page.goto("/login/")
    sign_in_with_google(drive_page)

    expect(
        drive_page.get_by_role("heading", name=re.compile("Third-Party Login Failure|Login Failure"))
    ).to_be_visible()
    assert not SocialAccount.objects.exists()
    drive_page.goto("/")
    expect(drive_page).to_have_url(re.compile(r"/login/\?next=/$"))
