"""/mcp over Streamable HTTP: the SDK's ASGI app behind personal-token authentication, beside Django.

`config.asgi` routes /mcp (and the lifespan, which runs the SDK's session manager) here and every
other path to Django.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from django.conf import settings
from django.db import DatabaseError
from django.utils import translation
from django.utils.translation import gettext as _
from mcp.server.mcpserver import Context
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.requests import Request

from apps.core.models import PersonalToken
from apps.core.preferences import accepted_language, answer_language
from apps.core.tokens import TokenInvalid, personal_token_from_header
from apps.mcp.server import mcp_server
from apps.mcp.threads import orm_call
from apps.mcp.types import Caller

MCP_PATH = "/mcp"
# Where the authenticated token rides in the ASGI scope, from the middleware to the tools.
_TOKEN_KEY = "folder_chat.personal_token"  # noqa: S105  (a key of the scope, not a secret)
_LANGUAGE_KEY = "folder_chat.language"  # and the language to write to its owner in

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def http_caller(ctx: Context) -> Caller:
    """The token's user (carrying the token and so its folder limit), this request's origin for links, and
    the language the middleware chose for them."""
    request = ctx.request_context.request
    if not isinstance(request, Request) or _TOKEN_KEY not in request.scope:
        raise RuntimeError("An MCP tool was called over HTTP without the token middleware.")
    token: PersonalToken = request.scope[_TOKEN_KEY]
    return Caller(
        user=token.user, token=token, site_url=str(request.base_url).rstrip("/"), language=request.scope[_LANGUAGE_KEY]
    )


class PersonalTokenAuthentication:
    """Each request must carry a live personal token (`Authorization: Bearer <token>`), looked up as the
    REST API looks it up: without one, or with an unknown, expired or revoked one, 401. Scopes are the
    tools' to check: a token without `chat` may still list folders.

    What the tools write is in the token owner's language: their account choice, else the client's
    Accept-Language, else LANGUAGE_CODE; a refusal, before anyone is known, in the Accept-Language's."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # the lifespan
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        asked = accepted_language(header=headers.get("accept-language", ""))
        with translation.override(asked or settings.LANGUAGE_CODE):
            try:
                found = await orm_call(_token_and_language, authorization=headers.get("authorization", ""), asked=asked)
            except TokenInvalid as exc:
                await _refuse(send, 401, exc.message)
                return
            except DatabaseError:
                await _refuse(send, 503, _("The database is unavailable; try again shortly."))
                return
            if found is None:
                await _refuse(send, 401, _("Send a personal API token: Authorization: Bearer <token>."))
                return
        token, language = found
        await self.app({**scope, _TOKEN_KEY: token, _LANGUAGE_KEY: language}, receive, send)


def _token_and_language(*, authorization: str, asked: str) -> tuple[PersonalToken, str] | None:
    token = personal_token_from_header(authorization=authorization) if authorization else None
    if token is None:
        return None
    return token, answer_language(user_id=token.user_id, asked=asked)


async def _refuse(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="mcp"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def mcp_http_app() -> ASGIApp:
    server = mcp_server(caller_of=http_caller)
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        # Stateless: web replicas behind a balancer share no session table, and no tool needs a session
        # (progress rides each call's own response stream).
        stateless_http=True,
        # The SDK's DNS-rebinding check would allow loopback hosts only. A rebinding page cannot send
        # the bearer token every request needs, and links are built from the Host the same client sent.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    return PersonalTokenAuthentication(app)


def with_mcp(django_app: Callable[..., Awaitable[None]]) -> ASGIApp:
    """Django's application with /mcp and the ASGI lifespan (Django has none) handed to the MCP app."""
    mcp_app = mcp_http_app()

    async def application(scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] == "lifespan" or path == MCP_PATH or path.startswith(MCP_PATH + "/"):
            await mcp_app(scope, receive, send)
        else:
            await django_app(scope, receive, send)

    return application
