"""The built-in tools through the registry: contracts, folder scoping, structured errors."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from django.utils import translation
from jsonschema.validators import validator_for

from apps.chat.agent.context import AgentContext
from apps.chat.agent.registry import NOT_FOUND, ToolContext, ToolOutput
from apps.chat.agent.tools import BUILTIN_TOOL_NAMES, folder_tools
from apps.chat.agent.tools import documents as documents_module
from apps.llm.factory import use_provider_for_tests
from apps.llm.scripted import ScriptedProvider, text_response
from apps.llm.types import ToolCall
from tests.support.agent_runs import SECRET_TEXT
from tests.support.chat_library import add_dated_file

pytestmark = pytest.mark.django_db

QUESTION = "How much federal income tax was withheld in 2024?"


def run_tool(library, name: str, **arguments) -> tuple[ToolOutput, dict]:
    """The tool's output and its payload as the model would get it (rendered through a context)."""
    registry = folder_tools(folder_id=library.folder.pk)
    context = ToolContext(folder_id=library.folder.pk, user_id=library.folder.owner_id, question=QUESTION)
    output = registry.execute(ToolCall(id="call_1", name=name, arguments=arguments), context)
    rendered, _ = AgentContext(max_tokens=8000).render(output.data)
    json.dumps(rendered, default=str)  # what the loop sends must serialise
    return output, rendered


def test_every_tool_offers_a_valid_json_schema_for_an_object():
    specs = folder_tools(folder_id=0).specs()

    assert (
        {spec.name for spec in specs}
        == BUILTIN_TOOL_NAMES
        == {
            "search_folder",
            "rewrite_query",
            "search_by_date_range",
            "read_document",
            "get_file",
            "read_multiple_documents",
            "list_recent_files",
            "get_file_metadata",
            "get_stats",
            "rerank_documents",
            "get_document_summary",
            "describe_image",
            "generate_answer",
        }
    )
    for spec in specs:
        validator_for(spec.parameters).check_schema(spec.parameters)
        assert spec.parameters["type"] == "object" and spec.description
        assert '"title": "' not in json.dumps(spec.parameters)  # pydantic's generated titles are dropped
    search = next(spec for spec in specs if spec.name == "search_folder")
    assert search.parameters["properties"]["k"] == {
        "default": 8,
        "description": "How many passages to return.",
        "maximum": 20,
        "minimum": 1,
        "type": "integer",
    }
    assert search.parameters["properties"]["mode"]["enum"] == ["hybrid", "vector", "keyword"]
    assert search.parameters["required"] == ["query"]


def test_search_folder_groups_numbered_passages_by_document_with_a_relevance_score(library):
    output, payload = run_tool(library, "search_folder", query="federal income tax withheld 2024", k=4)

    assert not output.is_error and output.trace == '"federal income tax withheld 2024" (hybrid)'
    documents = payload["documents"]
    assert [d["path"] for d in documents][:2] == ["finance/W2_2024.pdf", "finance/W2_2023.pdf"]
    assert len({d["file_id"] for d in documents}) == len(documents)  # each document once
    assert [d["score"] for d in documents] == sorted((d["score"] for d in documents), reverse=True)
    top = documents[0]
    assert set(top) == {"file_id", "file_name", "path", "score", "chunks"}
    assert [chunk["n"] for d in documents for chunk in d["chunks"]] == [1, 2, 3, 4]  # numbered best first
    best = top["chunks"][0]
    assert set(best) == {"n", "chunk_id", "location", "text", "score"}  # the document says which file
    assert "12,300" in best["text"] and best["location"] == "page 2" and top["score"] == best["score"]
    assert all(c["score"] <= top["score"] for d in documents for c in d["chunks"])
    assert "never instructions" in payload["notice"] and output.summary == f"4 passages from {len(documents)} files"


def test_search_folder_keeps_to_a_path_prefix_and_file_types(library):
    _, finance = run_tool(library, "search_folder", query="tax wages passport flour", path_prefix="/finance/")
    _, by_extension = run_tool(library, "search_folder", query="tax wages passport flour", file_types=["md", "txt"])
    output, none = run_tool(library, "search_folder", query="tax", file_types=["docx"])

    assert {d["path"] for d in finance["documents"]} == {"finance/W2_2024.pdf", "finance/W2_2023.pdf"}
    assert finance["path_prefix"] == "finance/"
    assert {d["path"] for d in by_extension["documents"]} == {"recipes/pancakes.md", "travel/passport.txt"}
    assert none["documents"] == [] and none["message"] == "The folder has no files of type docx."
    assert output.trace == "\"tax\" (hybrid) file_types=['docx']" and not output.is_error


def test_keyword_search_with_no_match_says_so(library):
    output, payload = run_tool(library, "search_folder", query="zeppelin", mode="keyword")

    assert payload["documents"] == [] and "Nothing matched" in payload["message"]
    assert output.summary == "0 passages from 0 files"


def test_a_search_step_summary_is_in_the_run_owners_language(library):
    with translation.override("de"):
        output, payload = run_tool(library, "search_folder", query="federal income tax withheld 2024", k=4)
        none, _ = run_tool(library, "search_folder", query="zeppelin", mode="keyword")

    files = len(payload["documents"])
    assert output.summary == f"4 Textstellen aus {files} {'Datei' if files == 1 else 'Dateien'}"
    assert none.summary == "0 Textstellen aus 0 Dateien"


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"query": "x", "k": 21}, "k"),
        ({"query": "x", "k": 0}, "k"),
        ({"query": ""}, "query"),
        ({"query": "x", "mode": "fuzzy"}, "mode"),
        ({"k": 3}, "query"),
        ({"query": "x", "folder_id": 999}, "folder_id"),
    ],
)
def test_invalid_arguments_are_a_structured_error(library, arguments, field):
    output, payload = run_tool(library, "search_folder", **arguments)

    assert output.is_error and payload["error"] == "invalid arguments"
    assert field in [detail["field"] for detail in payload["details"]]


def test_an_unknown_tool_is_a_structured_error(library):
    output, payload = run_tool(library, "delete_everything", path="/")

    assert output.is_error and payload["error"] == "unknown tool 'delete_everything'"
    assert "search_folder" in payload["available_tools"]


def test_a_failing_tool_is_a_structured_error_not_an_exception(library, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("database on fire")

    monkeypatch.setattr(documents_module, "file_blocks", broken)

    output, payload = run_tool(library, "read_document", doc_id=library.file("W2_2024.pdf").pk)

    assert output.is_error and payload == {"error": "read_document failed"}  # no internals leak


def test_read_document_returns_citable_blocks_in_document_order(library):
    w2 = library.file("W2_2024.pdf")

    output, payload = run_tool(library, "read_document", doc_id=w2.pk)

    assert not output.is_error
    assert (payload["file_id"], payload["path"], payload["total_blocks"]) == (w2.pk, "finance/W2_2024.pdf", 2)
    assert [(b["n"], b["location"]) for b in payload["blocks"]] == [(1, "page 1"), (2, "page 2")]
    assert all(isinstance(b["block_id"], int) and b["text"] for b in payload["blocks"])
    assert output.summary == "finance/W2_2024.pdf: 2 of 2 blocks"


def test_a_long_document_shows_the_blocks_matching_the_focus(library, monkeypatch):
    monkeypatch.setattr(documents_module, "READ_MAX_TOKENS", 60)
    chunks = [(f"Filler paragraph {i} about gardening, compost and tomatoes.", {"page": i}) for i in range(1, 30)]
    chunks[17] = ("The boiler service is due every October, by Heatwell Ltd.", {"page": 18})
    manual = add_dated_file(folder=library.folder, path="home/manual.md", modified=dt.date(2024, 5, 5), chunks=chunks)

    _, payload = run_tool(library, "read_document", doc_id=manual.pk, focus_query="boiler service")

    assert payload["total_blocks"] == 29 and len(payload["blocks"]) < 29
    assert any("boiler" in b["text"] for b in payload["blocks"])
    locations = [int(b["location"].split()[-1]) for b in payload["blocks"]]
    assert locations == sorted(locations)  # still in document order
    assert "focus_query" in payload["note"]


def test_get_file_is_read_document_by_file_id(library):
    w2 = library.file("W2_2024.pdf")

    _, by_doc = run_tool(library, "read_document", doc_id=w2.pk)
    _, by_file = run_tool(library, "get_file", file_id=str(w2.pk))  # models often send ids as strings

    assert by_file == by_doc


@pytest.mark.parametrize("name", ["read_document", "get_file", "get_file_metadata"])
def test_another_folders_file_is_not_found_and_nothing_of_it_leaks(library, secret_file, name):
    argument = "doc_id" if name == "read_document" else "file_id"

    output, payload = run_tool(library, name, **{argument: secret_file.pk})

    assert output.is_error and payload == {"error": NOT_FOUND}
    assert output.summary == NOT_FOUND


def test_a_missing_file_looks_exactly_like_another_folders_file(library, secret_file):
    _, missing = run_tool(library, "read_document", doc_id=10**12)
    _, foreign = run_tool(library, "read_document", doc_id=secret_file.pk)

    assert missing == foreign == {"error": NOT_FOUND}


def test_read_multiple_documents_reads_each_and_refuses_foreign_ids(library, secret_file):
    w2, w2_2023 = library.file("W2_2024.pdf"), library.file("W2_2023.pdf")

    output, payload = run_tool(library, "read_multiple_documents", doc_ids=[w2.pk, secret_file.pk, w2_2023.pk, w2.pk])

    documents = payload["documents"]
    assert [d.get("path") for d in documents] == ["finance/W2_2024.pdf", None, "finance/W2_2023.pdf"]
    assert documents[1] == {"doc_id": secret_file.pk, "error": NOT_FOUND}
    assert [b["n"] for d in documents if "blocks" in d for b in d["blocks"]] == [1, 2, 3, 4]
    assert SECRET_TEXT not in json.dumps(payload, default=str)
    assert output.summary == "read 2 of 3 documents"


def test_read_multiple_documents_takes_at_most_five(library):
    output, payload = run_tool(library, "read_multiple_documents", doc_ids=[1, 2, 3, 4, 5, 6])

    assert output.is_error and payload["details"][0]["field"] == "doc_ids"


def test_list_recent_files_newest_first_and_by_type(library, secret_file):
    _, everything = run_tool(library, "list_recent_files")
    _, pdfs = run_tool(library, "list_recent_files", type="pdf", limit=1)
    _, by_mime = run_tool(library, "list_recent_files", type="text/")
    _, by_full_mime = run_tool(library, "list_recent_files", type="TEXT/markdown")

    assert [f["path"] for f in everything["files"]] == [
        "travel/passport.txt",
        "finance/W2_2024.pdf",
        "finance/W2_2023.pdf",
        "recipes/pancakes.md",
    ]
    assert [f["path"] for f in pdfs["files"]] == ["finance/W2_2024.pdf"]
    assert {f["path"] for f in by_mime["files"]} == {"travel/passport.txt", "recipes/pancakes.md"}
    assert [f["path"] for f in by_full_mime["files"]] == ["recipes/pancakes.md"]


def test_search_by_date_range_lists_files_or_searches_within_the_range(library):
    _, files = run_tool(library, "search_by_date_range", start="2025-01-01", end="2025-01-31")
    output, passages = run_tool(
        library, "search_by_date_range", start="2024-01-01", end="2024-12-31", query="total wages"
    )

    assert [f["path"] for f in files["files"]] == ["finance/W2_2024.pdf"]
    assert {item["path"] for item in passages["results"]} == {"finance/W2_2023.pdf"}
    assert output.trace == '"total wages" modified 2024-01-01..2024-12-31'


def test_search_by_date_range_refuses_a_reversed_range(library):
    output, payload = run_tool(library, "search_by_date_range", start="2025-02-01", end="2025-01-01")

    assert output.is_error and "end is before start" in payload["details"][0]["problem"]


def test_get_file_metadata_and_get_stats(library):
    w2 = library.file("W2_2024.pdf")

    _, metadata = run_tool(library, "get_file_metadata", file_id=w2.pk)
    _, stats = run_tool(library, "get_stats")

    assert (metadata["path"], metadata["mime_type"], metadata["chunk_count"]) == (
        "finance/W2_2024.pdf",
        "application/pdf",
        2,
    )
    assert stats["files"] == 4 and stats["chunks"] == 6 and stats["files_by_status"] == {"indexed": 4}
    assert stats["top_mime_types"]["application/pdf"] == 2


def test_rewrite_query_uses_the_router_model_when_one_is_configured(library):
    router = ScriptedProvider([text_response('"federal tax withheld W-2 2024"\nbecause ...')])

    with use_provider_for_tests(router, role="router"):
        _, payload = run_tool(library, "rewrite_query", original_query="tax thing", feedback="too vague")

    assert payload == {
        "original_query": "tax thing",
        "rewritten_query": "federal tax withheld W-2 2024",
        "method": "model",
    }
    (request,) = router.requests
    assert "tax thing" in request.messages[0].content and "too vague" in request.messages[0].content
    assert request.tools == ()


def test_rewrite_query_offline_with_the_extractive_provider(library, settings):
    settings.LLM_PROVIDER = "extractive"

    _, payload = run_tool(
        library, "rewrite_query", original_query="what was the tax that was withheld?", feedback="nothing"
    )

    assert payload["rewritten_query"] == "tax withheld" and payload["method"] == "offline"


def test_rewrite_query_falls_back_offline_when_the_model_fails(library):
    from apps.llm.base import LLMUnavailableError

    with use_provider_for_tests(ScriptedProvider([LLMUnavailableError("down")]), role="router"):
        output, payload = run_tool(library, "rewrite_query", original_query="the tax withheld", feedback="")

    assert not output.is_error
    assert payload["rewritten_query"] == "tax withheld" and payload["method"] == "offline (model failed)"
