"""Personal API tokens: making, finding, scope checks and folder limits.

Plain functions, not DRF: the REST API (`apps.core.token_auth`), the event streams
(`apps.core.sse`) and any other server of the API (an MCP server) authenticate and check a token
the same way. A token found here rides on its user (`token_of`), so the folder-access selector of
`apps.library` honours its folder limit wherever the user object goes, without a global.
"""

from __future__ import annotations

import datetime
import hashlib
import secrets
from collections.abc import Callable, Iterable

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _
from rest_framework import status

from apps.core.api import ApplicationError
from apps.core.models import PersonalToken, TokenScope

SECRET_PREFIX = "fc_"  # noqa: S105  (the public start of every secret, not a secret)
# fc_ and eight characters of the secret: enough to tell a person's tokens apart, useless to guess with.
SHOWN_PREFIX_CHARS = len(SECRET_PREFIX) + 8
# last_used_at is written at most this often per token: a busy script does not write on every call.
LAST_USED_EVERY = datetime.timedelta(minutes=1)
MAX_EXPIRES_IN_DAYS = 3650
PASSWORD_LOGIN_NAME = "password login"  # noqa: S105  (a token's name)
_USER_ATTRIBUTE = "personal_token"

# Which of these folder ids the user has a role on. Core sits below the library, which fills this
# in its AppConfig.ready(), so a token is never limited to a folder its maker cannot see.
FolderIdsVisible = Callable[[AbstractBaseUser, list[int]], set[int]]
FOLDER_IDS_VISIBLE: list[FolderIdsVisible] = []


class TokenInvalid(ApplicationError):
    status_code = status.HTTP_401_UNAUTHORIZED


class TokenScopeMissing(ApplicationError):
    status_code = status.HTTP_403_FORBIDDEN


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def personal_token_create(
    *,
    user: AbstractBaseUser,
    name: str,
    scopes: Iterable[str],
    folder_ids: list[int] | None = None,
    expires_in_days: int | None = None,
) -> tuple[PersonalToken, str]:
    """A new token and its secret, which is returned this once and never stored."""
    chosen = sorted(set(scopes), key=list(TokenScope.values).index)
    unknown = set(chosen) - set(TokenScope.values)
    if not chosen or unknown:
        raise ApplicationError(_("Scopes must be some of: %(scopes)s.") % {"scopes": ", ".join(TokenScope.values)})
    if folder_ids is not None:
        folder_ids = sorted(set(folder_ids))
        visible = set().union(*(check(user, folder_ids) for check in FOLDER_IDS_VISIBLE))
        missing = [folder_id for folder_id in folder_ids if folder_id not in visible]
        if not folder_ids or missing:
            raise ApplicationError(
                _("folder_ids must name folders you have a role on; not found: %(ids)s.")
                % {"ids": ", ".join(map(str, missing))}
                if missing
                else _("folder_ids must name folders you have a role on.")
            )
    if expires_in_days is not None and not 1 <= expires_in_days <= MAX_EXPIRES_IN_DAYS:
        raise ApplicationError(_("expires_in_days must be from 1 to %(days)s.") % {"days": MAX_EXPIRES_IN_DAYS})
    secret = SECRET_PREFIX + secrets.token_urlsafe(32)
    token = PersonalToken.objects.create(
        user_id=user.pk,
        name=name,
        prefix=secret[:SHOWN_PREFIX_CHARS],
        digest=_digest(secret),
        scopes=chosen,
        folder_ids=folder_ids,
        expires_at=timezone.now() + datetime.timedelta(days=expires_in_days) if expires_in_days else None,
    )
    return token, secret


def personal_token_list(*, user: AbstractBaseUser) -> QuerySet[PersonalToken]:
    """The user's tokens not revoked, newest first (expired ones too: they say when they ended)."""
    return PersonalToken.objects.filter(user_id=user.pk, revoked_at__isnull=True)


def personal_token_revoke(*, user: AbstractBaseUser, token_id: int) -> bool:
    """Revoke one of the user's tokens; False when they have no such token."""
    revoked = PersonalToken.objects.filter(pk=token_id, user_id=user.pk, revoked_at__isnull=True)
    return revoked.update(revoked_at=timezone.now()) > 0


def personal_token_authenticate(*, secret: str) -> PersonalToken:
    """The live token with this secret, its user carrying it (see `token_of`); records its use.

    Raises TokenInvalid (401) for an unknown, revoked or expired token, or an inactive user.
    """
    now = timezone.now()
    token = (
        PersonalToken.objects.select_related("user")
        .filter(digest=_digest(secret), revoked_at__isnull=True)
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))
        .first()
    )
    if token is None or not token.user.is_active:
        raise TokenInvalid(_("Invalid, expired or revoked token."))
    if token.last_used_at is None or token.last_used_at <= now - LAST_USED_EVERY:
        # Conditional: of concurrent requests with one token, one writes.
        PersonalToken.objects.filter(pk=token.pk).filter(
            Q(last_used_at__isnull=True) | Q(last_used_at__lte=now - LAST_USED_EVERY)
        ).update(last_used_at=now)
        token.last_used_at = now
    setattr(token.user, _USER_ATTRIBUTE, token)
    return token


def personal_token_from_header(*, authorization: str) -> PersonalToken | None:
    """The token of an `Authorization: Bearer <secret>` header (`Token <secret>`, the old scheme,
    is an alias); None when the header is absent or another scheme. Raises TokenInvalid."""
    parts = authorization.split()
    if not parts or parts[0].lower() not in ("bearer", "token"):
        return None
    if len(parts) != 2:
        raise TokenInvalid(_("Invalid Authorization header: expected 'Bearer <token>'."))
    return personal_token_authenticate(secret=parts[1])


def personal_token_scope_check(*, token: PersonalToken | None, scope: str) -> None:
    """Raises TokenScopeMissing (403) unless the token has `scope`; no token (a session) has all."""
    if token is not None and scope not in token.scopes:
        raise TokenScopeMissing(
            _("This token lacks the '%(scope)s' scope needed here; it has: %(scopes)s.")
            % {"scope": scope, "scopes": ", ".join(token.scopes)}
        )


def token_of(user: AbstractBaseUser | AnonymousUser) -> PersonalToken | None:
    """The token that authenticated this user object, if one did."""
    return getattr(user, _USER_ATTRIBUTE, None)


def token_folder_limit(*, user: AbstractBaseUser | AnonymousUser) -> list[int] | None:
    """The only folder ids the request may reach, or None for no limit (a session, an unlimited token)."""
    token = token_of(user)
    return None if token is None else token.folder_ids
