"""A tool step's result names the passages it found (file and chunk), so the page links each one to
its document; the answer's citations and the steps' sources point at the same chunks."""

from __future__ import annotations

import pytest

from apps.chat.agent.step_sources import MAX_STEP_SOURCES, step_sources
from apps.library.models import Chunk
from apps.llm.scripted import tool_call_response
from tests.support.agent_runs import QUESTION, WITHHELD_2024, answer_message, ask, cite, tool_results

pytestmark = pytest.mark.django_db(transaction=True)


def test_search_and_read_results_carry_their_passages_files_and_chunks(library, scripted):
    w2 = library.file("W2_2024.pdf")
    scripted.push(
        tool_call_response(("search_folder", {"query": "federal income tax withheld 2024"})),
        tool_call_response(("read_document", {"doc_id": w2.pk})),
        cite(WITHHELD_2024),
    )

    run, events = ask(library.folder, QUESTION)

    search, read = tool_results(events)
    assert search["sources"], search
    for source in search["sources"] + read["sources"]:
        chunk = Chunk.objects.get(pk=source["chunk_id"])
        assert chunk.file_id == source["file_id"] and chunk.folder_id == library.folder.pk
    assert [source["n"] for source in search["sources"]] == sorted(source["n"] for source in search["sources"])
    # Reading the W-2 lists its blocks, with the numbers the search gave the ones it had found.
    assert {source["file_id"] for source in read["sources"]} == {w2.pk}
    (citation,) = answer_message(run).content["citations"]
    cited = [source for source in search["sources"] + read["sources"] if source["n"] == citation["n"]]
    assert cited and all(source["chunk_id"] == citation["chunk_id"] for source in cited)


def test_passages_are_found_anywhere_once_each_and_at_most_a_bounded_number():
    passage = {"n": 1, "chunk_id": 10, "file_id": 3, "file_name": "a.pdf", "location": "page 1", "text": "..."}
    seen_again = {"n": 1, "chunk_id": 10, "file_id": 3, "seen_before": True}
    block = {"n": 2, "block_id": 11, "file_id": 3}
    payload = {"results": [passage, {"nested": [block, seen_again]}], "note": "no passage", "n": 5}
    assert step_sources(payload) == [
        {"n": 1, "file_id": 3, "chunk_id": 10, "file_name": "a.pdf", "location": "page 1"},
        {"n": 2, "file_id": 3, "chunk_id": 11, "file_name": "", "location": ""},
    ]
    many = [{"n": n, "chunk_id": n, "file_id": 1} for n in range(1, 100)]
    assert len(step_sources({"results": many})) == MAX_STEP_SOURCES
    assert step_sources({"error": "no such file"}) == []
