"""Personal tokens in DRF: the authentication class and the scope permission every API view gets.

A view says what a token needs with `required_scope`: a scope, or a mapping of HTTP method to
scope. Without it, reading (GET, HEAD, OPTIONS) needs `read` and anything else `manage`, so a new
write endpoint is closed to narrow tokens until it says otherwise. `session_only = True` refuses
tokens altogether (token management: a leaked token must not mint itself successors), and
`ANY_SCOPE` admits every token (a token may always revoke itself).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext as _
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request

from apps.core.models import PersonalToken, TokenScope

ANY_SCOPE = "any"


class PersonalTokenAuthentication(BaseAuthentication):
    """`Authorization: Bearer <token>` (or `Token <token>`): the user, and the token as `request.auth`."""

    def authenticate(self, request: Request) -> tuple[Any, PersonalToken] | None:
        # Imported here: DRF loads this class while `rest_framework.views` (which apps.core.tokens
        # reaches through apps.core.api) is still being imported.
        from apps.core.tokens import TokenInvalid, personal_token_from_header

        try:
            token = personal_token_from_header(authorization=request.META.get("HTTP_AUTHORIZATION", ""))
        except TokenInvalid as exc:
            raise exceptions.AuthenticationFailed(exc.message) from exc
        return None if token is None else (token.user, token)

    def authenticate_header(self, request: Request) -> str:
        # Makes DRF answer 401 (with this challenge), not 403, when credentials are missing or bad.
        return 'Bearer realm="api"'


def view_required_scope(view: Any, method: str) -> str:
    declared = getattr(view, "required_scope", None)
    if isinstance(declared, Mapping):
        declared = declared.get(method)
    if declared:
        return str(declared)
    return TokenScope.READ if method in SAFE_METHODS else TokenScope.MANAGE


class TokenScopePermission(BasePermission):
    def has_permission(self, request: Request, view: Any) -> bool:
        token = request.auth if isinstance(request.auth, PersonalToken) else None
        if token is None:
            return True
        if getattr(view, "session_only", False):
            raise exceptions.PermissionDenied(
                _("API tokens cannot manage tokens: sign in to the site (its API tokens page) to make or revoke them.")
            )
        from apps.core.tokens import personal_token_scope_check  # see authenticate()

        scope = view_required_scope(view, request.method or "GET")
        if scope != ANY_SCOPE:
            personal_token_scope_check(token=token, scope=scope)
        return True
