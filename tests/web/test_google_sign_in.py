"""Sign in with Google through the emulated consent page and its ID tokens: a first sign-in
creates the account when its verified address is at an allowed domain (example.com here) or the
visitor holds a valid invitation, anyone else is told whom to ask, an existing account signs in
whatever its domain, an invitation link survives the trip, and a token the library must refuse
(another audience, expired, another issuer) signs nobody in."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest
from allauth.account.models import EmailAddress
from allauth.socialaccount.models import SocialAccount
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect

from apps.library.members import invitation_create
from apps.library.models import Folder, FolderMembership
from emulators.drive.server import DriveEmulator

pytestmark = pytest.mark.django_db(transaction=True)

ELSEWHERE = {"sub": "emu-google-eve", "email": "eve@elsewhere.org", "name": "Eve Elsewhere"}


@pytest.fixture(scope="module")
def drive_env(drive_env: dict[str, str]) -> dict[str, str]:
    return {**drive_env, "SIGNUP_ALLOWED_DOMAINS": "example.com"}


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
    # Google said email_verified: the address is proven, so shares by email reach this account.
    assert EmailAddress.objects.filter(user=account.user, email="bob@example.com", verified=True).exists()

    # Signing in again is the same person, not a second account.
    drive_page.get_by_role("button", name="Log out").click()
    drive_page.goto("/login/")
    sign_in_with_google(drive_page)
    expect(drive_page.get_by_role("heading", name="Your folders")).to_be_visible()
    assert get_user_model().objects.filter(email="bob@example.com").count() == 1


def join_after_signing_in(page: Page, token: str) -> None:
    """A logged-out visitor opens the invitation, signs in with Google, and joins "Team notes"."""
    page.goto(f"/invite/{token}/")
    expect(page).to_have_url(re.compile(r"/login/\?next=/invite/"))
    sign_in_with_google(page)
    expect(page.get_by_text("alice invites you to Team notes as a viewer.")).to_be_visible()
    page.get_by_role("button", name="Join Team notes").click()
    expect(page.get_by_role("heading", level=1, name="Team notes")).to_be_visible()


def test_an_invitation_link_joins_after_signing_in_with_google(drive_page: Page, user, google_account) -> None:
    folder = Folder.objects.create(owner=user, source="local", external_id="/srv/team", name="Team notes")
    _, token = invitation_create(folder=folder, actor=user, role="viewer", anyone_with_link=True)

    join_after_signing_in(drive_page, token)
    bob = SocialAccount.objects.get(provider="google").user
    assert FolderMembership.objects.filter(folder=folder, user=bob, role="viewer").exists()


def test_another_domain_gets_no_account_and_is_told_whom_to_ask(drive_page: Page, google_account) -> None:
    google_account.state.id_token_overrides.update(ELSEWHERE)
    drive_page.goto("/login/")
    sign_in_with_google(drive_page)

    expect(drive_page.get_by_role("heading", name="No account for this Google address")).to_be_visible()
    expect(drive_page.get_by_text("This site admits accounts from example.com or by invitation.")).to_be_visible()
    expect(drive_page.get_by_text("ask the person who runs it, or the owner of a folder")).to_be_visible()
    assert not SocialAccount.objects.exists()
    assert not get_user_model().objects.filter(email="eve@elsewhere.org").exists()
    drive_page.goto("/")
    expect(drive_page).to_have_url(re.compile(r"/login/\?next=/$"))


def test_an_existing_account_of_any_domain_still_signs_in(drive_page: Page, google_account, django_user_model) -> None:
    eve = django_user_model.objects.create_user(username="eve", email="eve@elsewhere.org")
    SocialAccount.objects.create(user=eve, provider="google", uid=ELSEWHERE["sub"])
    google_account.state.id_token_overrides.update(ELSEWHERE)
    drive_page.goto("/login/")
    sign_in_with_google(drive_page)

    expect(drive_page.get_by_role("heading", name="Your folders")).to_be_visible()
    expect(drive_page.locator(".account-name")).to_have_text("eve")
    assert get_user_model().objects.count() == 1


def test_an_invitation_opened_first_admits_another_domain(drive_page: Page, user, google_account) -> None:
    folder = Folder.objects.create(owner=user, source="local", external_id="/srv/team", name="Team notes")
    _, token = invitation_create(folder=folder, actor=user, role="viewer", invitee="eve@elsewhere.org")
    google_account.state.id_token_overrides.update(ELSEWHERE)

    join_after_signing_in(drive_page, token)
    eve = SocialAccount.objects.get(uid=ELSEWHERE["sub"]).user
    assert FolderMembership.objects.filter(folder=folder, user=eve, role="viewer").exists()


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
