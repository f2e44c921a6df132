"""The accumulated context: numbering, deduplication by chunk, the token budget, citations, trace."""

from __future__ import annotations

from apps.chat.agent.context import AgentContext, Passage, TraceEntry


def passage(chunk_id: int, text: str = "", *, file_id: int = 1, block: bool = False) -> Passage:
    return Passage(
        file_id=file_id,
        file_name=f"f{file_id}.md",
        path=f"docs/f{file_id}.md",
        chunk_id=chunk_id,
        text=text or f"Passage number {chunk_id} says something distinctive about topic {chunk_id}.",
        location={"page": chunk_id},
        block=block,
    )


def test_passages_are_numbered_in_order_and_rendered_with_their_identity():
    context = AgentContext(max_tokens=1000)

    rendered, stats = context.render({"query": "q", "results": [passage(11), passage(12, file_id=2)]})

    assert [item["n"] for item in rendered["results"]] == [1, 2]
    first = rendered["results"][0]
    assert first["chunk_id"] == 11 and first["file_id"] == 1 and first["path"] == "docs/f1.md"
    assert first["location"] == "page 11" and "topic 11" in first["text"]
    assert rendered["query"] == "q"
    assert (stats.hits, stats.new, stats.seen, stats.omitted) == (2, 2, 0, 0)


def test_a_chunk_seen_again_keeps_its_number_and_is_not_resent():
    context = AgentContext(max_tokens=1000)
    context.render({"results": [passage(11), passage(12)]})
    used = context.tokens_used

    rendered, stats = context.render({"blocks": [passage(12, block=True), passage(13, block=True)]})

    seen, new = rendered["blocks"]
    assert seen == {"n": 2, "block_id": 12, "file_id": 1, "seen_before": True}
    assert new["n"] == 3 and new["block_id"] == 13 and "text" in new
    assert (stats.new, stats.seen) == (1, 1)
    assert len(context.passages) == 3
    assert context.tokens_used > used


def test_the_budget_truncates_then_omits_passages():
    context = AgentContext(max_tokens=60)
    long_text = "word " * 100  # ~126 tokens

    rendered, stats = context.render({"results": [passage(1, long_text), passage(2), passage(3)]})

    (only,) = rendered["results"]
    assert only["truncated"] is True and only["text"].endswith("…")
    assert context.tokens_used <= 60
    assert (stats.new, stats.omitted) == (1, 2)
    assert [p.n for p in context.passages] == [1]


def test_citations_follow_what_the_answer_cites_not_the_order_gathered():
    context = AgentContext(max_tokens=1000)
    context.render({"results": [passage(1), passage(2, file_id=2), passage(3, file_id=3)]})

    citations = context.citations("Three says so [3], and one agrees [1, 3]. Nine is unknown [9].")

    assert [(c.n, c.chunk_id, c.file_id) for c in citations] == [(3, 3, 3), (1, 1, 1)]
    assert citations[0].location == "page 3" and "topic 3" in citations[0].snippet


def test_the_trace_lists_attempts_with_hits_and_new_passages():
    context = AgentContext(max_tokens=1000)
    context.record(TraceEntry(iteration=1, tool="search_folder", attempt='"w2" (hybrid)', hits=4, new=4))
    context.record(TraceEntry(iteration=2, tool="search_folder", attempt='"wages" (keyword)', hits=3, new=1))

    assert context.trace_text() == (
        '1. search_folder "w2" (hybrid): 4 passages, 4 new\n2. search_folder "wages" (keyword): 3 passages, 1 new'
    )
