"""`manage.py mcp --user NAME` over stdio, started by the official SDK's client as a desktop client
starts it, on the test database: the same tools as the user, with every scope."""

from __future__ import annotations

import os
from typing import Any

import anyio
import pytest
from django.core.management import CommandError, call_command

from tests.support.mcp_clients import error_text, mcp_over_stdio, structured
from tests.support.servers import BASE_DIR, test_database_env

pytestmark = pytest.mark.django_db(transaction=True)

SITE_URL = "https://folders.example.org"


def stdio_env() -> dict[str, str]:
    return test_database_env(
        EMBEDDING_PROVIDER="hash",
        LLM_PROVIDER="extractive",
        SITE_URL=SITE_URL,
        SSE_HEARTBEAT_SECONDS="1",
        THROTTLE_SEARCH="2/min",  # the REST API's rate, spent by the tool too
    )


def test_the_tools_over_stdio_act_as_the_user(user, library, others_library):
    passport = library.files["travel/passport.txt"]
    steps: list[str | None] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        steps.append(message)

    async def session() -> dict[str, Any]:
        log_path = BASE_DIR / "var" / f"test-mcp-stdio-{os.getpid()}.log"
        async with mcp_over_stdio(username=user.username, env=stdio_env(), log_path=log_path) as client:
            return {
                "tools": sorted(tool.name for tool in (await client.list_tools()).tools),
                "folders": await client.call_tool("list_folders", {}),
                "search": await client.call_tool(
                    "search", {"folder_id": library.folder.pk, "query": "passport renewal", "k": 2}
                ),
                "ask": await client.call_tool(
                    "ask",
                    {"folder_id": library.folder.pk, "question": "When is the passport renewal appointment?"},
                    progress_callback=on_progress,
                ),
                "read": await client.call_tool("read_document", {"file_id": passport.pk}),
                "theirs": await client.call_tool(
                    "search", {"folder_id": others_library.folder.pk, "query": "passport"}
                ),
                "third search": await client.call_tool("search", {"folder_id": library.folder.pk, "query": "W-2"}),
            }

    results = anyio.run(session)

    assert results["tools"] == ["ask", "list_folders", "read_document", "search"]
    assert [folder["id"] for folder in structured(results["folders"])["folders"]] == [library.folder.pk]
    top = structured(results["search"])["passages"][0]
    assert top["file_id"] == passport.pk
    assert top["url"] == f"{SITE_URL}/files/{passport.pk}?chunk={top['chunk_id']}"
    answer = structured(results["ask"])
    assert "March 3" in answer["answer"] and "[1]" in answer["answer"]
    assert answer["sources"][0]["file_id"] == passport.pk
    assert "Searching the folder" in steps
    assert structured(results["read"])["chunks"][0]["text"].startswith("The passport renewal appointment")
    assert results["theirs"].is_error
    assert error_text(results["theirs"]).endswith("Folder not found.")
    assert results["third search"].is_error
    assert "Too many requests; try again in" in error_text(results["third search"])


def test_an_unknown_or_inactive_user_is_refused(user):
    user.is_active = False
    user.save(update_fields=["is_active"])
    for name in ("nobody", user.username):
        with pytest.raises(CommandError, match=f"No active user named '{name}'"):
            call_command("mcp", user=name)
