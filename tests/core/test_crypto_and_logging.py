import logging

import pytest
from cryptography.fernet import Fernet
from django.db import connection

from apps.connectors.models import DriveCredential
from apps.core import crypto
from apps.core.logging import RedactSecretsFilter


@pytest.mark.django_db
def test_tokens_are_encrypted_at_rest(user):
    DriveCredential.objects.create(owner=user, access_token="ya29.secret-access", refresh_token="1//secret-refresh")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT access_token, refresh_token FROM connectors_drivecredential WHERE owner_id = %s", [user.pk]
        )
        raw_access, raw_refresh = cursor.fetchone()
    assert "secret" not in raw_access and "secret" not in raw_refresh
    stored = DriveCredential.objects.get(owner=user)
    assert (stored.access_token, stored.refresh_token) == ("ya29.secret-access", "1//secret-refresh")


def test_key_rotation_keeps_old_ciphertexts_readable(settings):
    old_key, new_key = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.FIELD_ENCRYPTION_KEYS = [old_key]
    token = crypto.encrypt("refresh-me")
    settings.FIELD_ENCRYPTION_KEYS = [new_key, old_key]
    assert crypto.decrypt(token) == "refresh-me"
    rotated = crypto.rotate(token)
    settings.FIELD_ENCRYPTION_KEYS = [new_key]
    assert crypto.decrypt(rotated) == "refresh-me"
    with pytest.raises(ValueError, match="cannot be decrypted"):
        crypto.decrypt(token)


def test_log_filter_redacts_tokens():
    record = logging.LogRecord(
        "x", logging.INFO, __file__, 1, "refreshing %s with refresh_token=%s", ("ya29.abcDEF", "1//xyz"), None
    )
    kept = RedactSecretsFilter().filter(record)
    message = record.getMessage()
    assert "abcDEF" not in message and "xyz" not in message
    assert "[REDACTED]" in message
    assert kept is True and message.startswith("refreshing ")  # redacted, not dropped
