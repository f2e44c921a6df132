"""Encryption at rest for secrets stored in the database (OAuth tokens).

Keys come from ``settings.FIELD_ENCRYPTION_KEYS``: the first encrypts, every key decrypts, so a
key can be rotated without downtime (see ``manage.py rotate_credentials_key``).
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.db import models


def _fernet() -> MultiFernet:
    keys = list(settings.FIELD_ENCRYPTION_KEYS)
    if not keys:
        digest = hashlib.sha256(("field-encryption:" + settings.SECRET_KEY).encode()).digest()
        keys = [base64.urlsafe_b64encode(digest).decode()]
    return MultiFernet([Fernet(key.encode()) for key in keys])


def encrypt(plaintext: str) -> str:
    return _fernet().encrypt(plaintext.encode()).decode()


def decrypt(token: str) -> str:
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken as exc:
        raise ValueError("stored secret cannot be decrypted with the configured keys") from exc


def rotate(token: str) -> str:
    """Re-encrypt with the current primary key."""
    return _fernet().rotate(token.encode()).decode()


class EncryptedTextField(models.TextField):
    """A text column whose value is Fernet-encrypted in the database."""

    def from_db_value(self, value: str | None, expression: Any, connection: Any) -> str | None:
        return None if value is None else decrypt(value)

    def get_prep_value(self, value: Any) -> str | None:
        value = super().get_prep_value(value)
        return None if value is None or value == "" else encrypt(value)
