"""OAuth tokens: never in any log record, never in plain text in the database, and re-encryptable."""

from __future__ import annotations

import base64
import datetime as dt
import logging
from collections.abc import Iterator

import pytest
from cryptography.fernet import Fernet
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone

from apps.connectors.models import DriveCredential, OAuthState
from apps.library.models import SyncLog
from tests.support.drive_oauth import consent
from tests.support.drive_tree import long_text, run_sync

pytestmark = pytest.mark.django_db

# Loggers that see requests, responses or token exchanges; some do not propagate to the root.
NOISY_LOGGERS = [
    "googleapiclient",
    "googleapiclient.discovery",
    "googleapiclient.http",
    "google",
    "google.auth",
    "google.oauth2",
    "google_auth_httplib2",
    "google_auth_oauthlib",
    "requests_oauthlib",
    "oauthlib",
    "urllib3",
    "httplib2",
    "requests",
    "apps",
    "django.request",
]


@pytest.fixture
def every_log(caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.LogCaptureFixture]:
    """Every record at DEBUG from every logger, including those that do not propagate, unredacted.

    The console handler's redaction rewrites records in place; without it the capture sees what
    a handler without the filter would write.
    """
    for handler in logging.getLogger().handlers:
        if handler is not caplog.handler:
            monkeypatch.setattr(handler, "filters", [])
    caplog.set_level(logging.DEBUG)
    attached = []
    for name in [*NOISY_LOGGERS, *logging.root.manager.loggerDict]:
        caplog.set_level(logging.DEBUG, logger=name)
        logger = logging.getLogger(name)
        if not logger.propagate and caplog.handler not in logger.handlers:
            logger.addHandler(caplog.handler)
            attached.append(logger)
    yield caplog
    for logger in attached:
        logger.removeHandler(caplog.handler)


def everything_logged(caplog: pytest.LogCaptureFixture) -> str:
    """Messages, arguments, extras and tracebacks of every record, as text."""
    parts = []
    for record in caplog.records:
        parts += [record.getMessage(), repr(record.__dict__)]
        if record.exc_info:
            parts.append(logging.Formatter().formatException(record.exc_info))
    return "\n".join(parts)


@pytest.fixture(autouse=True)
def plain_http_token_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OAUTHLIB_INSECURE_TRANSPORT", "1")


def test_tokens_never_reach_a_log_record(
    every_log, auth_client, web_client, drive_settings, folder, tree, state, sleeps, inline_indexing, capture, user
) -> None:
    params = consent(auth_client)
    verifier = OAuthState.objects.get(owner=user).code_verifier
    assert web_client.get("/api/drive/callback", params).status_code == 302
    first = DriveCredential.objects.get(owner=user)
    # Expired, so the sync refreshes it: the new token passes through the client too.
    DriveCredential.objects.update(token_expiry=timezone.now() - dt.timedelta(minutes=1))
    run_sync(folder, capture)
    state.edit(tree.lease, long_text("Lease, revised"))
    run_sync(folder, capture)
    refreshed = DriveCredential.objects.get(owner=user).access_token
    assert refreshed != first.access_token
    assert SyncLog.objects.filter(folder=folder, error="").count() == 2

    logged = everything_logged(every_log)
    assert "/drive/v3/changes?" in logged and "POST /token" in logged  # the client's DEBUG logs were captured
    basic = f"{drive_settings.GOOGLE_OAUTH_CLIENT_ID}:{drive_settings.GOOGLE_OAUTH_CLIENT_SECRET}"
    secrets = {
        "access token": first.access_token,
        "refresh token": first.refresh_token,
        "refreshed access token": refreshed,
        "client secret": drive_settings.GOOGLE_OAUTH_CLIENT_SECRET,
        "client Basic auth": base64.b64encode(basic.encode()).decode(),
        "PKCE verifier": verifier,
        "authorization code": params["code"],
    }
    leaked = [name for name, secret in secrets.items() if secret and secret in logged]
    assert leaked == []


def test_tokens_are_not_stored_in_plain_text(auth_client, web_client, drive_settings, user) -> None:
    web_client.get("/api/drive/callback", consent(auth_client))
    credential = DriveCredential.objects.get(owner=user)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT access_token, refresh_token FROM connectors_drivecredential WHERE owner_id = %s", [user.pk]
        )
        raw = cursor.fetchone()
    assert credential.access_token and credential.refresh_token
    assert credential.access_token not in raw[0] and credential.refresh_token not in raw[1]
    assert raw[0].startswith("gAAAA") and raw[1].startswith("gAAAA")  # Fernet tokens


def raw_secrets() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT access_token, refresh_token FROM connectors_drivecredential ORDER BY id")
        rows = cursor.fetchall()
        cursor.execute("SELECT code_verifier FROM connectors_oauthstate ORDER BY id")
        rows += cursor.fetchall()
    return [value for row in rows for value in row if value is not None]


def test_rotate_credentials_key_re_encrypts_every_row_with_the_first_key(settings, user, other_user, capsys):
    old_key, new_key = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.FIELD_ENCRYPTION_KEYS = [old_key]
    DriveCredential.objects.create(owner=user, access_token="alice-access", refresh_token="alice-refresh")
    DriveCredential.objects.create(owner=other_user, access_token=None, refresh_token=None, revoked_at=timezone.now())
    OAuthState.objects.create(owner=user, state="s1", code_verifier="v" * 64)
    before = raw_secrets()

    settings.FIELD_ENCRYPTION_KEYS = [new_key, old_key]
    call_command("rotate_credentials_key")

    after = raw_secrets()
    assert len(after) == len(before) == 3 and not set(after) & set(before)
    assert {Fernet(new_key.encode()).decrypt(value.encode()) for value in after} == {
        b"alice-access",
        b"alice-refresh",
        b"v" * 64,
    }
    settings.FIELD_ENCRYPTION_KEYS = [new_key]  # the old key can go now
    credential = DriveCredential.objects.get(owner=user)
    assert (credential.access_token, credential.refresh_token) == ("alice-access", "alice-refresh")
    assert "connectors.DriveCredential: 2 re-encrypted" in capsys.readouterr().out


def test_rotation_reports_rows_no_key_can_read(settings, user, other_user) -> None:
    lost_key, key = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.FIELD_ENCRYPTION_KEYS = [lost_key]
    DriveCredential.objects.create(owner=user, access_token="a", refresh_token="r")
    settings.FIELD_ENCRYPTION_KEYS = [key]
    DriveCredential.objects.create(owner=other_user, access_token="b", refresh_token="s")

    with pytest.raises(CommandError, match="1 row"):
        call_command("rotate_credentials_key")
    assert DriveCredential.objects.filter(owner=other_user).values_list("access_token", flat=True).get() == "b"
