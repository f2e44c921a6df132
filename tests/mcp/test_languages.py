"""MCP results and errors in the caller's language: their account choice, else the client's
Accept-Language, else English; the runs `ask` starts keep that language for what they write.
Through the official SDK's client, over HTTP (uvicorn) and over stdio (`manage.py mcp`)."""

from __future__ import annotations

import os
from typing import Any

import anyio
import httpx
import pytest

from apps.chat.models import AgentRun
from apps.core.models import Preferences
from tests.support.mcp_clients import INITIALIZE, call_over_http, error_text, mcp_over_stdio, structured
from tests.support.servers import BASE_DIR, test_database_env

pytestmark = pytest.mark.django_db(transaction=True)


def wrong_chunk(asgi_server, library, token, **headers: str) -> str:
    """The error of reading a file from a chunk of another file."""
    passport, elsewhere = library.files["travel/passport.txt"], library.files["recipes/pancakes.md"]
    result = call_over_http(
        asgi_server.url,
        secret=token,
        tool="read_document",
        arguments={"file_id": passport.pk, "chunk": elsewhere.chunks.get().pk},
        headers=headers,
    )
    assert result.is_error
    return error_text(result)


def test_a_german_users_tool_errors_and_messages_are_german(asgi_server, library, others_library, token):
    Preferences.objects.create(user=library.folder.owner, language="de")
    passport, elsewhere = library.files["travel/passport.txt"], library.files["recipes/pancakes.md"]

    # Their choice wins over the client's Accept-Language.
    read = wrong_chunk(asgi_server, library, token, **{"Accept-Language": "fr"})
    theirs = call_over_http(
        asgi_server.url, secret=token, tool="search", arguments={"folder_id": others_library.folder.pk, "query": "x"}
    )
    no_docx = call_over_http(
        asgi_server.url,
        secret=token,
        tool="search",
        arguments={"folder_id": library.folder.pk, "query": "passport", "file_types": ["docx"]},
    )

    assert read.endswith(f"Abschnitt {elsewhere.chunks.get().pk} gehört nicht zur Datei {passport.pk}.")
    assert theirs.is_error and error_text(theirs).endswith("Ordner nicht gefunden.")
    assert structured(no_docx)["message"] == "Der Ordner enthält keine Dateien vom Typ docx."


def test_without_a_choice_the_clients_accept_language_decides(asgi_server, library, token):
    passport, elsewhere = library.files["travel/passport.txt"], library.files["recipes/pancakes.md"]
    chunk = elsewhere.chunks.get().pk

    assert wrong_chunk(asgi_server, library, token, **{"Accept-Language": "fr-CH, fr;q=0.9"}).endswith(
        f"Le segment {chunk} ne fait pas partie du fichier {passport.pk}."
    )
    assert wrong_chunk(asgi_server, library, token, **{"Accept-Language": "ja"}).endswith(
        f"Chunk {chunk} is not in file {passport.pk}."
    )
    # Nobody is known before the token is: a refusal follows the Accept-Language alone.
    refused = httpx.post(
        f"{asgi_server.url}/mcp",
        json=INITIALIZE,
        headers={"Accept": "application/json, text/event-stream", "Accept-Language": "es"},
    )
    assert refused.status_code == 401
    assert refused.json()["detail"] == "Envía un token de API personal: Authorization: Bearer <token>."


def test_a_run_asked_through_mcp_is_written_in_the_callers_language(asgi_server, library, token):
    Preferences.objects.create(user=library.folder.owner, language="de")
    steps: list[str | None] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        steps.append(message)

    result = call_over_http(
        asgi_server.url,
        secret=token,
        tool="ask",
        arguments={"folder_id": library.folder.pk, "question": "What is the name of my dentist?"},
        progress=on_progress,
    )

    answer = structured(result)
    assert AgentRun.objects.get(pk=answer["run_id"]).language == "de"
    assert answer["answer"].startswith("Ich habe in diesem Ordner nichts über „")
    assert "Ordner wird durchsucht" in steps


def test_over_stdio_the_users_choice_applies_to_every_error(user, library, others_library):
    Preferences.objects.create(user=user, language="de")

    async def session() -> dict[str, Any]:
        log_path = BASE_DIR / "var" / f"test-mcp-stdio-language-{os.getpid()}.log"
        env = test_database_env(EMBEDDING_PROVIDER="hash", LLM_PROVIDER="extractive", THROTTLE_SEARCH="2/min")
        async with mcp_over_stdio(username=user.username, env=env, log_path=log_path) as client:
            theirs = await client.call_tool("search", {"folder_id": others_library.folder.pk, "query": "passport"})
            searches = [
                await client.call_tool("search", {"folder_id": library.folder.pk, "query": "W-2"}) for _ in range(3)
            ]
            return {"theirs": theirs, "searches": searches}

    results = anyio.run(session)

    assert error_text(results["theirs"]).endswith("Ordner nicht gefunden.")
    throttled = results["searches"][-1]  # the rate is 2/min
    assert throttled.is_error
    assert "Zu viele Anfragen; versuche es in " in error_text(throttled)
    assert error_text(throttled).endswith(" erneut.")
