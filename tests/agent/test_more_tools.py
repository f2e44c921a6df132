"""rerank_documents, get_document_summary and describe_image: offline, with a scripted model, and
through the real SDKs at the wire."""

from __future__ import annotations

import base64
import json
from dataclasses import replace

import pytest
from PIL import Image

from apps.chat.agent.context import NumberedPassage, Passage
from apps.chat.agent.registry import ToolContext
from apps.chat.agent.tools import folder_tools
from apps.chat.agent.tools.rerank import RERANK_MAX_TOKENS, parse_ranking
from apps.chat.models import DocumentSummary
from apps.library.models import Chunk, File
from apps.llm.extractive import ExtractiveProvider
from apps.llm.factory import use_provider_for_tests
from apps.llm.scripted import text_response, tool_call_response
from apps.llm.types import LLMRequest, ToolCall
from tests.support.agent_runs import QUESTION, ask, tool_results
from tests.support.images import png, receipt_image
from tests.support.llm_wire_stub import OPENAI_PATH

pytestmark = pytest.mark.django_db(transaction=True)


def run_tool(library, name: str, arguments: dict, *, passages=()):
    context = ToolContext(
        folder_id=library.folder.pk, user_id=library.folder.owner_id, question=QUESTION, passages=tuple(passages)
    )
    return folder_tools(folder_id=library.folder.pk).execute(ToolCall(id="c1", name=name, arguments=arguments), context)


def gathered(library) -> list[NumberedPassage]:
    """Every chunk of the library as the loop would have numbered it, in path order."""
    numbered = []
    for file in File.objects.filter(folder=library.folder).order_by("path"):
        for chunk in file.chunks.order_by("chunk_index"):
            passage = Passage(file_id=file.pk, file_name=file.name, path=file.path, chunk_id=chunk.pk, text=chunk.text)
            numbered.append(NumberedPassage(n=len(numbered) + 1, passage=passage, text=chunk.text))
    return numbered


def n_with(passages, needle: str) -> int:
    return next(p.n for p in passages if needle in p.text)


# -- rerank_documents ------------------------------------------------------------------------------


def test_parse_ranking_keeps_known_numbers_once_and_appends_the_rest():
    assert parse_ranking('{"ranking": [3, 9, 3, 1]}', known=[1, 2, 3]) == [3, 1, 2]
    assert parse_ranking("Best: [2], then [1]", known=[1, 2, 3]) == [2, 1, 3]
    assert parse_ranking("none of them", known=[1, 2]) is None


def rerank_offline(library, passages, *, top_k, **arguments):
    """rerank_documents with no model (the offline answerer) over ``passages``."""
    with use_provider_for_tests(ExtractiveProvider()):
        return run_tool(
            library,
            "rerank_documents",
            {"query": "passport renewal appointment consulate", "top_k": top_k, **arguments},
            passages=passages,
        )


def test_rerank_offline_orders_passages_without_a_score_with_the_embedding_model(library):
    passages = gathered(library)
    output = rerank_offline(library, passages, top_k=3)

    assert not output.is_error and output.data["method"] == "offline"
    ranking = output.data["ranking"]
    assert len(ranking) == 3 and ranking[0]["n"] == n_with(passages, "passport renewal")
    assert output.usage is None


def test_rerank_offline_keeps_the_searches_scores_and_puts_passages_read_in_full_after(library):
    """Two searches' passages merge by their rank-fused scores; cosine never overrides them."""
    passages = gathered(library)
    passport = n_with(passages, "passport renewal")
    # The passport passage (the best by cosine) scored lowest in its search; the others, read in full, have none.
    scores = {passages[0].n: 0.05, passages[1].n: 0.03, passport: 0.01, passages[2].n: 0.04}
    scored = [replace(p, passage=replace(p.passage, score=scores.get(p.n))) for p in passages]
    output = rerank_offline(library, scored, top_k=5)

    ranking = [entry["n"] for entry in output.data["ranking"]]
    assert ranking[:4] == [passages[0].n, passages[2].n, passages[1].n, passport]
    assert len(ranking) == 5 and ranking[4] not in scores


def test_rerank_scores_the_documents_asked_for_by_their_ids(library, secret_file):
    passages = gathered(library)
    w2, passport = library.file("W2_2024.pdf"), library.file("passport.txt")
    pancakes = library.file("pancakes.md")  # in the folder, not among the passages given
    gathered_here = [p for p in passages if p.passage.file_id != pancakes.pk]

    output = rerank_offline(library, gathered_here, top_k=5, doc_ids=[passport.pk, w2.pk, secret_file.pk, pancakes.pk])

    assert not output.is_error
    documents = output.data["documents"]
    assert [d["doc_id"] for d in documents] == [passport.pk, w2.pk]  # only those asked for, best first
    assert documents[0]["score"] == 1.0 and 0 < documents[1]["score"] < 1.0
    assert documents[0]["passages"] == [n_with(passages, "passport renewal")]
    assert sorted(documents[1]["passages"]) == sorted(p.n for p in passages if p.passage.file_id == w2.pk)
    ranking = output.data["ranking"]
    assert [entry["score"] for entry in ranking] == [1.0, 0.667, 0.333]  # 3 passages: place in the ranking
    assert {entry["file_id"] for entry in ranking} == {w2.pk, passport.pk}
    # Another folder's file and a file never gathered get the same answer: nothing to probe.
    assert output.data["not_gathered"] == {
        "doc_ids": [secret_file.pk, pancakes.pk],
        "error": "not found or access denied",
        "hint": "search or read them first",
    }
    refused = rerank_offline(library, passages, top_k=5, doc_ids=[secret_file.pk])
    assert refused.is_error and "not found or access denied" in refused.data["error"]


def test_rerank_with_nothing_gathered_says_to_search_first(library):
    output = run_tool(library, "rerank_documents", {})
    assert output.is_error and "search first" in output.data["error"]


def test_rerank_through_the_loop_with_a_model_listwise(library, scripted):
    prompts: list[LLMRequest] = []

    def rank(request: LLMRequest):
        prompts.append(request)
        numbers = [
            int(line[1 : line.index("]")]) for line in request.messages[0].content.splitlines() if line[:1] == "["
        ]
        return text_response(json.dumps({"ranking": list(reversed(numbers))}))

    scripted.push(
        tool_call_response(("search_folder", {"query": "W-2 wages tax withheld"})),
        tool_call_response(("rerank_documents", {"top_k": 2})),
        rank,  # the router role answers the rerank prompt
        text_response("Federal income tax withheld was 12,300 dollars [1]."),
    )

    run, events = ask(library.folder, QUESTION)

    assert run.status == "completed" and run.fallback_reason == "", run.error
    (prompt,) = prompts
    assert prompt.max_tokens == RERANK_MAX_TOKENS and prompt.tools == ()
    assert prompt.messages[0].content.startswith(f"Question: {QUESTION}")
    rerank = tool_results(events)[1]
    assert rerank["tool_name"] == "rerank_documents" and "(model)" in rerank["tool_output"]
    assert run.metrics["tool_usage"] == {"search_folder": 1, "rerank_documents": 1}
    assert "rerank_documents" in {tool.name for tool in scripted.requests[0].tools}


# -- get_document_summary -----------------------------------------------------------------------------


def test_summary_is_written_once_cached_and_rewritten_when_the_file_changes(library, scripted):
    w2 = library.file("W2_2024.pdf")
    File.objects.filter(pk=w2.pk).update(indexed_checksum="v1", digest="A W-2 for 2024.")
    scripted.push(text_response("The 2024 W-2 from Acme: wages 84,500, tax withheld 12,300."))

    first = run_tool(library, "get_document_summary", {"doc_id": w2.pk})
    again = run_tool(library, "get_document_summary", {"doc_id": w2.pk})

    assert (
        first.data["summary"] == again.data["summary"] == "The 2024 W-2 from Acme: wages 84,500, tax withheld 12,300."
    )
    assert (first.data["method"], again.data["method"]) == ("model", "cached")
    (request,) = scripted.requests  # the cached answer cost no model call
    assert "withheld on the 2024 W-2 was 12,300" in request.messages[0].content
    assert DocumentSummary.objects.get(file=w2).content_key == "v1"

    File.objects.filter(pk=w2.pk).update(indexed_checksum="v2")
    scripted.push(text_response("A corrected 2024 W-2."))
    changed = run_tool(library, "get_document_summary", {"doc_id": w2.pk})

    assert (changed.data["summary"], changed.data["method"]) == ("A corrected 2024 W-2.", "model")
    assert DocumentSummary.objects.filter(file=w2).count() == 1
    assert DocumentSummary.objects.get(file=w2).content_key == "v2"


def test_summary_offline_is_the_digest_and_other_folders_files_are_not_found(library, secret_file):
    w2 = library.file("W2_2024.pdf")
    File.objects.filter(pk=w2.pk).update(digest="A W-2 for 2024 from Acme.")
    with use_provider_for_tests(ExtractiveProvider()):
        offline = run_tool(library, "get_document_summary", {"doc_id": w2.pk})
        secret = run_tool(library, "get_document_summary", {"doc_id": secret_file.pk})

    assert (offline.data["summary"], offline.data["method"]) == ("A W-2 for 2024 from Acme.", "digest")
    assert secret.is_error and secret.data["error"] == "not found or access denied"
    assert not DocumentSummary.objects.exists()


# -- describe_image ----------------------------------------------------------------------------------


PICTURE = png(Image.new("RGB", (2, 2), "red"))  # a picture with no text in it
RECEIPT_SCAN = png(receipt_image())  # text that OCR reads: "TOTAL EUR 27.20"


def image_file(library, settings, tmp_path, name: str, data: bytes) -> File:
    """A real PNG on disk in the library's (local) folder."""
    settings.LOCAL_FOLDER_ROOTS = [str(tmp_path)]
    library.folder.external_id = str(tmp_path)
    library.folder.save(update_fields=["external_id"])
    (tmp_path / "receipts").mkdir(exist_ok=True)
    (tmp_path / "receipts" / name).write_bytes(data)
    return File.objects.create(
        folder=library.folder,
        external_id=f"receipts/{name}",
        path=f"receipts/{name}",
        name=name,
        mime_type="image/png",
        size=len(data),
        status="skipped",
    )


@pytest.fixture
def receipt(library, settings, tmp_path) -> File:
    return image_file(library, settings, tmp_path, "lunch.png", PICTURE)


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_describe_image_sends_the_bytes_to_a_vision_model(library, receipt, settings, wire_stub, api):
    wire_stub.configure(settings, api)
    settings.LLM_VISION = True
    wire_stub.reply_text("A lunch receipt: total 14.20 euros.")

    output = run_tool(library, "describe_image", {"doc_id": receipt.pk, "question": "What was the total?"})

    assert not output.is_error, output.data
    assert output.data["description"] == "A lunch receipt: total 14.20 euros." and output.data["method"] == "vision"
    (sent,) = wire_stub.requests
    encoded = base64.b64encode(PICTURE).decode()
    content = sent.body["messages"][-1]["content"]
    if sent.path == OPENAI_PATH:
        assert content[0]["image_url"]["url"] == f"data:image/png;base64,{encoded}"
    else:
        assert content[0]["source"] == {"type": "base64", "media_type": "image/png", "data": encoded}
    assert "What was the total?" in json.dumps(content)


def test_describe_image_without_vision_returns_the_ocr_text(library, settings, tmp_path, scripted):
    settings.LLM_VISION = False
    scan = image_file(library, settings, tmp_path, "market.png", RECEIPT_SCAN)

    output = run_tool(library, "describe_image", {"doc_id": scan.pk})

    assert scripted.requests == []  # the image never went to a model
    assert not output.is_error, output.data
    assert output.data["method"] == "ocr" and "TOTAL EUR 27.20" in output.data["text"]
    assert output.data["note"] == "no vision model is configured"


def test_describe_image_without_vision_says_why_not_when_ocr_finds_no_text(library, receipt, settings, scripted):
    settings.LLM_VISION = False

    output = run_tool(library, "describe_image", {"doc_id": receipt.pk})

    assert scripted.requests == []  # the image never went to a model
    assert output.is_error  # a reason a person understands
    assert output.data["error"].startswith("receipts/lunch.png cannot be described: no vision model is configured")
    assert "no text found in the image" in output.data["error"]


def test_describe_image_refuses_documents(library):
    output = run_tool(library, "describe_image", {"doc_id": library.file("W2_2024.pdf").pk})
    assert output.is_error and "use read_document" in output.data["error"]


def test_describe_image_without_vision_answers_from_the_indexed_text_without_reading_the_picture(
    library, settings, tmp_path, scripted
):
    settings.LLM_VISION = False
    scan = image_file(library, settings, tmp_path, "market.png", RECEIPT_SCAN)
    Chunk.objects.create(
        file=scan, folder=library.folder, chunk_index=0, text="MARKET HALL\nTOTAL EUR 27.20", location={}
    )
    (tmp_path / scan.path).unlink()  # read from the source, the picture would now fail

    output = run_tool(library, "describe_image", {"doc_id": scan.pk})

    assert not output.is_error, output.data
    assert output.data["method"] == "ocr" and output.data["text"] == "MARKET HALL\nTOTAL EUR 27.20"
    assert output.data["note"] == "no vision model is configured"
