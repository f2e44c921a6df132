"""The OAuth web flow against the emulator's consent page and token endpoint, and stored tokens in use."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from django.utils import timezone

from apps.connectors.models import DriveCredential, OAuthState
from apps.library.models import Folder
from tests.support.drive_oauth import consent, query
from tests.support.drive_tree import run_sync

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def plain_http_token_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    # requests-oauthlib refuses a token endpoint without TLS; the emulator is plain HTTP on loopback.
    monkeypatch.setenv("OAUTHLIB_INSECURE_TRANSPORT", "1")


def test_connect_returns_a_consent_url_for_offline_drive_access_with_pkce(auth_client, drive_settings, user):
    response = auth_client.get("/api/drive/connect")
    assert response.status_code == 200
    params = query(response.json()["auth_url"])
    assert params["client_id"] == "client-id.apps.googleusercontent.com"
    assert params["redirect_uri"] == "http://testserver/api/drive/callback"
    assert params["scope"] == "https://www.googleapis.com/auth/drive"
    assert (params["access_type"], params["prompt"], params["response_type"]) == ("offline", "consent", "code")
    assert params["code_challenge_method"] == "S256" and len(params["code_challenge"]) == 43
    stored = OAuthState.objects.get(owner=user)
    assert stored.state == params["state"] and len(stored.code_verifier or "") >= 43


def test_connect_points_at_google_without_the_emulator(auth_client, drive_settings):
    drive_settings.DRIVE_API_ENDPOINT = ""
    url = auth_client.get("/api/drive/connect").json()["auth_url"]
    assert url.startswith("https://accounts.google.com/o/oauth2/auth?")


def page_text(response) -> str:
    return response.content.decode()


def test_callback_exchanges_the_code_stores_the_tokens_encrypted_and_returns_to_the_folders_page(
    auth_client, web_client, drive_settings, state, user
):
    params = consent(auth_client)
    response = web_client.get("/api/drive/callback", params)
    assert response.status_code == 302
    assert response["Location"] == "/?drive=connected"
    assert "Google Drive is connected" in page_text(web_client.get(response["Location"]))
    credential = DriveCredential.objects.get(owner=user)
    assert credential.scopes == ["https://www.googleapis.com/auth/drive"]
    assert credential.access_token.startswith("emu-access-")
    assert credential.refresh_token.startswith("emu-refresh-")
    assert credential.token_expiry > timezone.now() + dt.timedelta(minutes=50)
    assert not OAuthState.objects.filter(owner=user).exists()  # one-time
    assert state.calls["oauth.token"] == 1


def test_a_replayed_state_gets_the_folders_page_saying_so(auth_client, web_client, drive_settings, user):
    params = consent(auth_client)
    assert web_client.get("/api/drive/callback", params).status_code == 302
    DriveCredential.objects.all().delete()
    replay = web_client.get("/api/drive/callback", params)
    assert replay.status_code == 400
    assert "Your folders" in page_text(replay) and "already used" in page_text(replay)
    assert 'role="alert"' in page_text(replay)
    assert not DriveCredential.objects.exists()


@pytest.mark.parametrize("state_value", ["", "forged-state"])
def test_a_missing_or_forged_state_is_refused_and_stores_nothing(auth_client, web_client, drive_settings, state_value):
    consent(auth_client)
    response = web_client.get("/api/drive/callback", {"state": state_value, "code": "emu-code-x"})
    assert response.status_code == 400
    assert "forged" in page_text(response)
    assert not DriveCredential.objects.exists()


def test_an_expired_state_is_refused(auth_client, web_client, drive_settings):
    params = consent(auth_client)
    OAuthState.objects.update(created_at=timezone.now() - dt.timedelta(minutes=11))
    response = web_client.get("/api/drive/callback", params)
    assert response.status_code == 400
    assert "expired" in page_text(response)
    assert not DriveCredential.objects.exists()


def test_another_users_state_is_refused_and_stays_the_owners(
    auth_client, web_client, other_web_client, drive_settings, user
):
    params = consent(auth_client)
    response = other_web_client.get("/api/drive/callback", params)
    assert response.status_code == 400
    assert not DriveCredential.objects.exists()
    assert web_client.get("/api/drive/callback", params).status_code == 302
    assert DriveCredential.objects.get().owner == user


def test_a_denied_consent_is_reported(auth_client, web_client, drive_settings):
    params = consent(auth_client)
    response = web_client.get("/api/drive/callback", {"state": params["state"], "error": "access_denied"})
    assert response.status_code == 400
    assert "did not allow access to Google Drive" in page_text(response)
    assert not DriveCredential.objects.exists()


def test_a_code_exchange_without_the_right_verifier_is_refused(auth_client, web_client, drive_settings, user):
    params = consent(auth_client)
    pending = OAuthState.objects.get(owner=user)
    pending.code_verifier = "x" * 64  # PKCE: the token endpoint checks it against the challenge
    pending.save()
    response = web_client.get("/api/drive/callback", params)
    assert response.status_code == 400
    assert "invalid_grant" in page_text(response)
    assert not DriveCredential.objects.exists()


def test_the_callback_needs_a_logged_in_browser(client, drive_settings):
    response = client.get("/api/drive/callback", {"state": "s", "code": "c"}, HTTP_ACCEPT="text/html")
    assert response.status_code == 302 and response["Location"].startswith("/login/?next=/api/drive/callback")
    assert client.get("/api/drive/callback", {"state": "s", "code": "c"}).status_code == 401


def test_connect_needs_client_credentials_and_a_login(auth_client, api_client, drive_settings):
    assert api_client.get("/api/drive/connect").status_code in (401, 403)
    drive_settings.GOOGLE_OAUTH_CLIENT_SECRET = ""
    response = auth_client.get("/api/drive/connect")
    assert response.status_code == 400
    assert "not configured" in response.json()["detail"]


def test_disconnect_forgets_the_tokens(auth_client, web_client, drive_settings, user):
    web_client.get("/api/drive/callback", consent(auth_client))
    assert auth_client.post("/api/drive/disconnect").status_code == 204
    credential = DriveCredential.objects.get(owner=user)
    assert credential.revoked_at is not None
    assert (credential.access_token, credential.refresh_token) == (None, None)


def test_a_disconnected_user_without_a_service_account_must_reconnect(
    auth_client, web_client, drive_settings, folder, sleeps, capture
):
    web_client.get("/api/drive/callback", consent(auth_client))
    auth_client.post("/api/drive/disconnect")
    drive_settings.DRIVE_API_ENDPOINT = ""  # no emulator to fall back to anonymously
    log = run_sync(folder, capture)
    folder.refresh_from_db()
    assert log is not None and "not connected" in log.error
    assert folder.status == "needs_reauth"


def test_reconnecting_resumes_folders_that_needed_reauth(auth_client, web_client, drive_settings, folder, capture):
    Folder.objects.filter(pk=folder.pk).update(status="needs_reauth", last_error="revoked")
    params = consent(auth_client)
    with capture() as callbacks:
        assert web_client.get("/api/drive/callback", params).status_code == 302
    folder.refresh_from_db()
    assert (folder.status, folder.last_error) == ("pending", "")
    assert len(callbacks) == 1  # its sync, queued on commit


def test_syncs_use_the_stored_tokens_and_keep_a_refreshed_one(
    auth_client, web_client, drive_settings, folder, state, sleeps, inline_indexing, capture, user
):
    web_client.get("/api/drive/callback", consent(auth_client))
    DriveCredential.objects.update(token_expiry=timezone.now() - dt.timedelta(minutes=5))
    old = DriveCredential.objects.get(owner=user).access_token

    run_sync(folder, capture)

    refreshed = DriveCredential.objects.get(owner=user)
    assert refreshed.access_token != old and refreshed.token_expiry > timezone.now()
    assert state.calls["oauth.token"] == 2  # the code exchange, then one refresh for sync and indexing
    run_sync(folder, capture)
    assert state.calls["oauth.token"] == 2


def test_a_service_account_from_settings_syncs_folders_of_users_without_tokens(
    drive_settings, folder, state, sleeps, inline_indexing, capture, tmp_path, emulator
):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    key_file = tmp_path / "service-account.json"
    key_file.write_text(
        json.dumps(
            {
                "type": "service_account",
                "client_email": "indexer@project.iam.gserviceaccount.com",
                "private_key": pem.decode(),
                "private_key_id": "key-1",
                "token_uri": emulator.token_uri,
            }
        )
    )
    drive_settings.GOOGLE_SERVICE_ACCOUNT_FILE = str(key_file)

    log = run_sync(folder, capture)

    assert log is not None and (log.mode, log.added, log.error) == ("full", 4, "")
    # One signed assertion exchanged per task (the sync, then each file's indexing), none per call.
    assert state.calls["oauth.token"] == 1 + 4
