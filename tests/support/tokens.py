"""Personal API tokens for tests: the secret a client sends as `Authorization: Bearer ...`."""

from __future__ import annotations

from collections.abc import Iterable

from apps.core.models import TokenScope
from apps.core.tokens import personal_token_create


def api_token(
    user,
    *,
    scopes: Iterable[str] = TokenScope.values,
    folder_ids: list[int] | None = None,
    expires_in_days: int | None = None,
    name: str = "test",
) -> str:
    """A new token of the user's (every scope unless told), as its secret."""
    _, secret = personal_token_create(
        user=user, name=name, scopes=scopes, folder_ids=folder_ids, expires_in_days=expires_in_days
    )
    return secret
