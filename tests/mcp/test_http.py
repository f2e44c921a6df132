"""/mcp over Streamable HTTP, through the official SDK's client against uvicorn serving config.asgi:
personal tokens, the four tools, their scopes and folder limits, and what another user's is."""

from __future__ import annotations

import httpx
import pytest

from apps.chat.models import AgentRun, Conversation
from apps.core.models import TokenScope
from apps.core.tokens import personal_token_list, personal_token_revoke
from apps.mcp.tools import READ_CHUNKS
from tests.mcp.conftest import library_of
from tests.support.chat_library import add_file
from tests.support.mcp_clients import INITIALIZE, call_over_http, error_text, structured
from tests.support.tokens import api_token

pytestmark = pytest.mark.django_db(transaction=True)

MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def test_without_a_live_token_every_request_is_401(asgi_server, user):
    secret = api_token(user)
    personal_token_revoke(user=user, token_id=personal_token_list(user=user).get().pk)
    for headers, detail in [
        ({}, "Authorization: Bearer <token>"),
        ({"Authorization": "Basic dXNlcjpwYXNz"}, "Authorization: Bearer <token>"),
        ({"Authorization": "Bearer fc_not-a-token"}, "Invalid, expired or revoked token."),
        ({"Authorization": f"Bearer {secret}"}, "Invalid, expired or revoked token."),
    ]:
        response = httpx.post(f"{asgi_server.url}/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **headers})
        assert response.status_code == 401, headers
        assert response.headers["www-authenticate"] == 'Bearer realm="mcp"'
        assert detail in response.json()["detail"]
    with pytest.raises(Exception):  # noqa: B017  (the SDK's client fails to connect, whichever way it words it)
        call_over_http(asgi_server.url, secret=None, tool="list_folders")


def test_a_token_opens_the_protocol_and_django_still_serves_the_rest(asgi_server, token):
    response = httpx.post(
        f"{asgi_server.url}/mcp", json=INITIALIZE, headers={**MCP_HEADERS, "Authorization": f"Bearer {token}"}
    )
    assert response.status_code == 200
    assert "folder-chat" in response.text
    assert httpx.get(f"{asgi_server.url}/api/folders", headers={"Authorization": f"Bearer {token}"}).status_code == 200


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_list_folders_names_the_folders_the_token_may_see(asgi_server, library, others_library, token, mode):
    folders = structured(call_over_http(asgi_server.url, secret=token, tool="list_folders", mode=mode))["folders"]

    assert folders == [
        {"id": library.folder.pk, "name": "notes", "role": "owner", "status": "ready", "files_indexed": 0}
    ]


def test_search_returns_passages_with_file_location_and_document_url(asgi_server, library, token):
    passport = library.files["travel/passport.txt"]
    arguments = {"folder_id": library.folder.pk, "query": "passport renewal appointment", "k": 3}

    result = structured(call_over_http(asgi_server.url, secret=token, tool="search", arguments=arguments))

    top = result["passages"][0]
    chunk_id = passport.chunks.get().pk
    assert (top["file_id"], top["file_name"], top["path"]) == (passport.pk, "passport.txt", "travel/passport.txt")
    assert top["chunk_id"] == chunk_id
    assert top["url"] == f"{asgi_server.url}/files/{passport.pk}?chunk={chunk_id}"
    assert "consulate on March 3" in top["text"]
    assert result["words_matched"] is True
    # The REST search answers the same question with the same passages in the same order.
    rest = httpx.post(
        f"{asgi_server.url}/api/folders/{library.folder.pk}/search",
        json={"query": arguments["query"], "k": 3},
        headers={"Authorization": f"Bearer {token}"},
    ).json()
    assert [hit["chunk_id"] for hit in rest["results"]] == [passage["chunk_id"] for passage in result["passages"]]


def test_search_filters_by_path_and_file_type(asgi_server, library, token):
    def paths(**filters) -> list[str]:
        arguments = {"folder_id": library.folder.pk, "query": "dollars flour passport", "k": 10, **filters}
        result = structured(call_over_http(asgi_server.url, secret=token, tool="search", arguments=arguments))
        return sorted({passage["path"] for passage in result["passages"]})

    assert paths() == sorted(["finance/W2_2024.pdf", "recipes/pancakes.md", "travel/passport.txt"])
    assert paths(file_types=["pdf"]) == ["finance/W2_2024.pdf"]
    assert paths(file_types=["text/markdown", ".txt"]) == ["recipes/pancakes.md", "travel/passport.txt"]
    assert paths(path_prefix="/recipes/") == ["recipes/pancakes.md"]
    assert paths(mode="keyword", path_prefix="travel") == ["travel/passport.txt"]
    nothing = call_over_http(
        asgi_server.url,
        secret=token,
        tool="search",
        arguments={"folder_id": library.folder.pk, "query": "passport", "file_types": ["docx"]},
    )
    assert structured(nothing)["message"] == "The folder has no files of type docx."


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_ask_answers_with_citations_and_reports_progress_meanwhile(asgi_server, library, token, mode):
    steps: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        steps.append((progress, message))

    result = call_over_http(
        asgi_server.url,
        secret=token,
        tool="ask",
        arguments={"folder_id": library.folder.pk, "question": "When is the passport renewal appointment?"},
        mode=mode,
        progress=on_progress,
    )

    answer = structured(result)
    passport = library.files["travel/passport.txt"]
    assert "March 3" in answer["answer"] and "[1]" in answer["answer"]
    source = answer["sources"][0]
    assert (source["n"], source["file_id"], source["file_name"]) == (1, passport.pk, "passport.txt")
    assert source["url"] == f"{asgi_server.url}/files/{passport.pk}?chunk={source['chunk_id']}"
    conversation = Conversation.objects.get(pk=answer["conversation_id"])
    assert conversation.owner_id == library.folder.owner_id
    assert answer["conversation_url"] == f"{asgi_server.url}/conversations/{conversation.pk}/"
    run = AgentRun.objects.get(pk=answer["run_id"])
    assert run.status == "completed"
    assert run.answer is not None and run.answer.content["text"] == answer["answer"]
    # One notification per step the run published, in order, each with its line.
    assert [progress for progress, _ in steps] == list(range(1, len(steps) + 1))
    assert "Searching the folder" in [message for _, message in steps]


def test_another_users_folder_or_file_is_not_found(asgi_server, library, others_library, token):
    theirs = others_library.folder.pk
    their_file = others_library.files["travel/passport.txt"].pk
    for tool, arguments, message in [
        ("search", {"folder_id": theirs, "query": "passport"}, "Folder not found."),
        ("ask", {"folder_id": theirs, "question": "When is the passport appointment?"}, "Folder not found."),
        ("search", {"folder_id": 10**9, "query": "passport"}, "Folder not found."),
        ("read_document", {"file_id": their_file}, "File not found."),
    ]:
        result = call_over_http(asgi_server.url, secret=token, tool=tool, arguments=arguments)
        assert result.is_error, tool
        assert error_text(result).endswith(f": {message}")  # the SDK says which tool failed first
        assert "passport" not in str(result.structured_content)
    assert not AgentRun.objects.exists()


def test_a_token_limited_to_one_folder_sees_no_other(asgi_server, user, library):
    second = library_of(user, "second")
    limited = api_token(user, folder_ids=[second.folder.pk])

    folders = structured(call_over_http(asgi_server.url, secret=limited, tool="list_folders"))["folders"]
    search = call_over_http(
        asgi_server.url, secret=limited, tool="search", arguments={"folder_id": library.folder.pk, "query": "passport"}
    )
    read = call_over_http(
        asgi_server.url,
        secret=limited,
        tool="read_document",
        arguments={"file_id": library.files["travel/passport.txt"].pk},
    )

    assert [folder["id"] for folder in folders] == [second.folder.pk]
    assert search.is_error and error_text(search).endswith("Folder not found.")
    assert read.is_error and error_text(read).endswith("File not found.")


# What each tool needs of a token: a token with only that scope gets through, one with every other
# scope gets a tool error naming it.
TOOL_SCOPES = {
    "list_folders": TokenScope.READ,
    "search": TokenScope.SEARCH,
    "ask": TokenScope.CHAT,
    "read_document": TokenScope.READ,
}


@pytest.mark.parametrize("tool", sorted(TOOL_SCOPES))
def test_each_tool_needs_its_scope_and_names_it_when_missing(asgi_server, user, library, tool):
    needed = TOOL_SCOPES[tool]
    arguments = {
        "list_folders": {},
        "search": {"folder_id": library.folder.pk, "query": "passport"},
        "ask": {"folder_id": library.folder.pk, "question": "When is the passport appointment?"},
        "read_document": {"file_id": library.files["travel/passport.txt"].pk},
    }[tool]
    others = [scope for scope in TokenScope.values if scope != needed]

    allowed = call_over_http(asgi_server.url, secret=api_token(user, scopes=[needed]), tool=tool, arguments=arguments)
    refused = call_over_http(asgi_server.url, secret=api_token(user, scopes=others), tool=tool, arguments=arguments)

    assert not allowed.is_error, error_text(allowed)
    assert refused.is_error
    assert f"lacks the '{needed}' scope" in error_text(refused)


def test_read_document_reads_in_order_from_the_start_or_a_chunk(asgi_server, library, token):
    long = add_file(
        folder=library.folder,
        path="manuals/boiler.txt",
        chunks=[(f"Boiler manual section {n}: check the pressure gauge.", {"page": n + 1}) for n in range(25)],
    )
    chunk_ids = list(long.chunks.order_by("chunk_index").values_list("pk", flat=True))

    def read(**arguments) -> dict:
        result = call_over_http(
            asgi_server.url, secret=token, tool="read_document", arguments={"file_id": long.pk, **arguments}
        )
        return structured(result)

    first = read()
    rest = read(chunk=first["next_chunk"])
    middle = read(chunk=chunk_ids[7])

    assert [chunk["chunk_id"] for chunk in first["chunks"]] == chunk_ids[:READ_CHUNKS]
    assert first["chunks"][0]["text"].startswith("Boiler manual section 0:")
    assert first["chunks"][0]["location_label"] == "page 1"
    assert (first["file_name"], first["chunk_count"], first["next_chunk"]) == ("boiler.txt", 25, chunk_ids[20])
    assert [chunk["chunk_id"] for chunk in rest["chunks"]] == chunk_ids[20:]
    assert rest["next_chunk"] is None
    assert middle["chunks"][0]["text"].startswith("Boiler manual section 7:")
    assert middle["url"] == f"{asgi_server.url}/files/{long.pk}?chunk={chunk_ids[7]}"
    elsewhere = library.files["travel/passport.txt"].chunks.get().pk
    wrong = call_over_http(
        asgi_server.url, secret=token, tool="read_document", arguments={"file_id": long.pk, "chunk": elsewhere}
    )
    assert wrong.is_error and error_text(wrong).endswith(f"Chunk {elsewhere} is not in file {long.pk}.")


def test_bad_arguments_are_tool_errors_naming_the_argument(asgi_server, library, token):
    for tool, arguments, named, why in [
        ("search", {"folder_id": library.folder.pk, "query": "passport", "k": 0}, "k", "greater than or equal to 1"),
        ("search", {"folder_id": library.folder.pk, "query": "passport", "mode": "fuzzy"}, "mode", "'keyword'"),
        ("ask", {"folder_id": library.folder.pk, "question": ""}, "question", "at least 1 character"),
    ]:
        result = call_over_http(asgi_server.url, secret=token, tool=tool, arguments=arguments)
        assert result.is_error, arguments
        assert f"\n{named}\n" in error_text(result) and why in error_text(result)
    assert not AgentRun.objects.exists()
