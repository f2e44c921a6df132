from __future__ import annotations

import json
from collections.abc import Callable, Sequence

import pytest

from apps.llm.extractive import NOTHING_RELEVANT, ExtractiveProvider, rewrite_query_offline
from apps.llm.sources import ParsedSource, build_user_prompt, extract_citations, format_sources
from apps.llm.types import LLMResponse, Message, StopReason, TextDelta, ToolCall, ToolSpec

LEASE = ParsedSource(
    n=1,
    file_name="lease.md",
    path="home/lease.md",
    location="Rent",
    text="The lease starts on March 1, 2024. Rent is due on the first day of each month.\n\n"
    "The monthly rent is $1,850, paid by bank transfer.",
)
W2 = ParsedSource(
    n=2,
    file_name="W2_2024.pdf",
    path="inbox/W2_2024.pdf",
    location="page 1",
    text="Employer: Acme Corp. Wages, tips and other compensation: $52,000. Federal income tax withheld: $6,240.",
)
BREAD = ParsedSource(
    n=3,
    file_name="bread.md",
    path="recipes/bread.md",
    location="",
    text="Preheat the oven. Bake for 35 minutes.",
)


def _ask(question: str, sources: Sequence[ParsedSource], **options: object) -> LLMResponse:
    prompt = build_user_prompt(question=question, sources_block=format_sources(sources))
    return ExtractiveProvider().complete(messages=[Message.user(prompt)], **options)  # type: ignore[arg-type]


# -- standard mode --------------------------------------------------------------------------------


def test_answers_with_the_matching_sentence_and_its_citation():
    response = _ask("When is the rent due?", [W2, LEASE, BREAD])

    assert response.text.startswith("Rent is due on the first day of each month [1].")
    assert extract_citations(response.text) == [1]
    assert "Acme" not in response.text
    assert response.stop_reason is StopReason.END_TURN
    assert response.tool_calls == ()


def test_cites_each_sentence_with_its_own_source():
    response = _ask("How much federal tax was withheld, and how much is the rent?", [LEASE, W2])

    assert "Federal income tax withheld: $6,240 [2]." in response.text
    # "How much" asks for an amount: the sentence with the rent's figure answers, not its due date.
    assert "The monthly rent is $1,850, paid by bank transfer [1]." in response.text
    assert "Rent is due" not in response.text
    assert set(extract_citations(response.text)) == {1, 2}
    assert {(source.n, source.file_name) for source in response.citation_sources} == {
        (1, "lease.md"),
        (2, "W2_2024.pdf"),
    }


def test_says_plainly_when_nothing_is_relevant():
    response = _ask("What is the boiling point of mercury?", [LEASE, W2, BREAD])

    assert response.text == NOTHING_RELEVANT
    assert extract_citations(response.text) == []
    assert response.citation_sources == ()


def test_nothing_relevant_without_sources():
    assert _ask("When is the rent due?", []).text == NOTHING_RELEVANT


def test_a_single_shared_common_word_is_not_enough():
    # "lease" alone out of four question terms is too little to pass the passage off as an answer.
    response = _ask("Which lease clause covers pets, smoking and subletting?", [LEASE])

    assert response.text == NOTHING_RELEVANT


def test_stemming_matches_word_forms():
    baking = ParsedSource(n=1, file_name="b.md", path="b.md", location="", text="Baking times vary by oven.")

    assert "[1]" in _ask("how long to bake", [baking]).text


def test_streams_the_answer_as_deltas():
    deltas: list[TextDelta] = []

    response = _ask("When is the rent due?", [LEASE], on_text=deltas.append)

    assert len(deltas) > 3
    assert "".join(delta.text for delta in deltas) == response.text


def test_is_deterministic():
    first = _ask("How much federal tax was withheld, and how much is the rent?", [LEASE, W2, BREAD])
    second = _ask("How much federal tax was withheld, and how much is the rent?", [LEASE, W2, BREAD])

    assert first == second


def test_answers_the_last_turn_of_a_conversation():
    history = [
        Message.user(build_user_prompt(question="Who is the employer?", sources_block=format_sources([W2]))),
        Message.assistant("Employer: Acme Corp [2]."),
        Message.user(build_user_prompt(question="When is the rent due?", sources_block=format_sources([LEASE]))),
    ]

    response = ExtractiveProvider().complete(messages=history)

    assert extract_citations(response.text) == [1]


# -- agent mode -----------------------------------------------------------------------------------

QUESTION = "When do I have to pay my rent?"


def _tool(name: str, *arguments: str) -> ToolSpec:
    properties = {argument: {"type": "string"} for argument in arguments}
    return ToolSpec(name=name, description=name, parameters={"type": "object", "properties": properties})


SEARCH = _tool("search_folder", "query", "k")
REWRITE = _tool("rewrite_query", "original_query", "feedback")
READ = _tool("read_document", "doc_id")
ALL_TOOLS = [SEARCH, REWRITE, READ]

RESULTS = [
    {
        "file_id": "f-lease",
        "file_name": "lease.md",
        "path": "home/lease.md",
        "chunk_id": "c1",
        "score": 0.03,
        "text": "Rent is due on the first day of each month.",
        "location": {"page": 1},
    },
    {
        "file_id": "f-lease",
        "file_name": "lease.md",
        "path": "home/lease.md",
        "chunk_id": "c2",
        "score": 0.02,
        "text": "Late fees apply after the fifth day.",
    },
    {
        "file_id": "f-bank",
        "file_name": "bank.csv",
        "path": "bank.csv",
        "chunk_id": "c3",
        "score": 0.02,
        "text": "Rent payment of 1850 sent on 2024-03-01.",
    },
    {
        "file_id": "f-cats",
        "file_name": "cats.md",
        "path": "cats.md",
        "chunk_id": "c4",
        "score": 0.01,
        "text": "Cats sleep most of the day.",
    },
]
DOCUMENTS = {
    "f-lease": {
        "file_id": "f-lease",
        "file_name": "lease.md",
        "path": "home/lease.md",
        "blocks": [
            {
                "block_id": "b1",
                "location": {"page": 2},
                "text": "Rent is due on the first day of each month. The tenant must pay the rent by the 5th day.",
            }
        ],
    },
    "f-bank": {
        "file_id": "f-bank",
        "file_name": "bank.csv",
        "path": "bank.csv",
        "content": "Rent payment of 1850 sent on 2024-03-01.",
    },
}


class FakeTools:
    """Plays the chat code's tools: the question's own wording finds nothing, the rewrite does."""

    def __init__(self, *, first_search_empty: bool = True) -> None:
        self.first_search_empty = first_search_empty

    def __call__(self, call: ToolCall) -> str:
        if call.name == "search_folder":
            empty = self.first_search_empty and call.arguments["query"] == QUESTION
            return json.dumps({"query": call.arguments["query"], "results": [] if empty else RESULTS})
        if call.name == "rewrite_query":
            return json.dumps({"rewritten_query": "rent due date"})
        document_id = str(call.arguments.get("doc_id") or call.arguments.get("file_id"))
        return json.dumps(DOCUMENTS.get(document_id, {"error": "File not found or access denied"}))


def run_agent(
    *,
    tools: Sequence[ToolSpec],
    execute: Callable[[ToolCall], str],
    messages: list[Message] | None = None,
    max_steps: int = 10,
) -> tuple[LLMResponse, list[list[ToolCall]], list[Message]]:
    """The loop the chat code runs: call the model, run the tools it asks for, until it answers."""
    provider = ExtractiveProvider()
    messages = messages if messages is not None else [Message.user(QUESTION)]
    steps: list[list[ToolCall]] = []
    for _ in range(max_steps):
        response = provider.complete(messages=messages, tools=tools)
        if not response.tool_calls:
            return response, steps, messages
        steps.append(list(response.tool_calls))
        messages.append(response.as_message())
        messages.extend(
            Message.tool_result(tool_call_id=call.id, content=execute(call)) for call in response.tool_calls
        )
    raise AssertionError("the agent never answered")


def test_agent_searches_rewrites_when_empty_searches_again_reads_then_answers():
    response, steps, _ = run_agent(tools=ALL_TOOLS, execute=FakeTools())

    assert [[call.name for call in step] for step in steps] == [
        ["search_folder"],
        ["rewrite_query"],
        ["search_folder"],
        ["read_document", "read_document"],
    ]
    assert dict(steps[0][0].arguments) == {"query": QUESTION, "k": 8}
    assert steps[1][0].arguments["original_query"] == QUESTION
    assert steps[2][0].arguments["query"] == "rent due date"
    assert [call.arguments["doc_id"] for call in steps[3]] == ["f-lease", "f-bank"]
    all_ids = [call.id for step in steps for call in step]
    assert len(set(all_ids)) == len(all_ids)

    assert response.stop_reason is StopReason.END_TURN
    assert response.text.startswith("The tenant must pay the rent by the 5th day [5].")
    cited = extract_citations(response.text)
    by_number = {source.n: source for source in response.citation_sources}
    assert sorted(by_number) == sorted(cited)
    assert (by_number[5].file_id, by_number[5].block_id, by_number[5].location) == ("f-lease", "b1", "page 2")
    # The lease sentence found by both the search and the read is never quoted twice.
    assert response.text.count("Rent is due on the first day of each month") <= 1


def test_agent_skips_the_rewrite_when_the_first_search_is_good():
    _, steps, _ = run_agent(tools=ALL_TOOLS, execute=FakeTools(first_search_empty=False))

    assert [[call.name for call in step] for step in steps] == [
        ["search_folder"],
        ["read_document", "read_document"],
    ]


def test_agent_treats_results_sharing_no_terms_as_weak():
    def unrelated(call: ToolCall) -> str:
        if call.name == "search_folder" and call.arguments["query"] == QUESTION:
            return json.dumps({"results": [RESULTS[3]]})
        return FakeTools()(call)

    _, steps, _ = run_agent(tools=ALL_TOOLS, execute=unrelated)

    assert [step[0].name for step in steps][:3] == ["search_folder", "rewrite_query", "search_folder"]


def test_agent_only_calls_offered_tools_and_fits_their_schemas():
    search_without_k = _tool("search_folder", "query")

    response, steps, _ = run_agent(tools=[search_without_k], execute=FakeTools(first_search_empty=False))

    assert [[call.name for call in step] for step in steps] == [["search_folder"]]
    assert dict(steps[0][0].arguments) == {"query": QUESTION}
    assert "[1]" in response.text


def test_agent_uses_get_file_when_that_is_the_read_tool_offered():
    get_file = _tool("get_file", "file_id")

    _, steps, _ = run_agent(tools=[SEARCH, get_file], execute=FakeTools(first_search_empty=False))

    assert [(call.name, dict(call.arguments)) for call in steps[1]] == [
        ("get_file", {"file_id": "f-lease"}),
        ("get_file", {"file_id": "f-bank"}),
    ]


def test_agent_answers_when_the_caller_sends_no_tools():
    execute = FakeTools(first_search_empty=False)
    first = ExtractiveProvider().complete(messages=[Message.user(QUESTION)], tools=ALL_TOOLS)
    messages = [
        Message.user(QUESTION),
        first.as_message(),
        Message.tool_result(tool_call_id=first.tool_calls[0].id, content=execute(first.tool_calls[0])),
        Message.user("You are out of steps: answer now with what you have."),
    ]

    forced = ExtractiveProvider().complete(messages=messages, tools=None)

    assert forced.tool_calls == ()
    assert forced.text.startswith("Rent is due on the first day of each month [1].")


def test_agent_keeps_source_numbers_the_tools_gave():
    def numbered(call: ToolCall) -> str:
        return json.dumps({"results": [{**RESULTS[0], "n": 7}]})

    response, _, _ = run_agent(tools=[SEARCH], execute=numbered)

    assert extract_citations(response.text) == [7]
    assert response.citation_sources[0].n == 7


def test_agent_with_error_results_says_nothing_relevant():
    def broken(call: ToolCall) -> str:
        return json.dumps({"error": "search backend down"})

    response, steps, _ = run_agent(tools=ALL_TOOLS, execute=broken)

    assert [step[0].name for step in steps] == ["search_folder", "rewrite_query"]
    assert response.text == NOTHING_RELEVANT


def test_agent_starts_over_for_a_new_question_in_the_same_conversation():
    first_response, first_steps, messages = run_agent(tools=ALL_TOOLS, execute=FakeTools(first_search_empty=False))
    messages.append(Message.assistant(first_response.text))
    messages.append(Message.user("Where is the cat?"))

    _, steps, _ = run_agent(tools=ALL_TOOLS, execute=FakeTools(), messages=messages)

    assert steps[0][0].name == "search_folder"
    assert steps[0][0].arguments["query"] == "Where is the cat?"
    earlier_ids = {call.id for step in first_steps for call in step}
    assert not earlier_ids & {call.id for step in steps for call in step}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What is the boiling point of water?", "boiling point water"),
        ("the the", "the the"),
    ],
)
def test_rewrite_query_offline_keeps_content_words(query: str, expected: str):
    assert rewrite_query_offline(original_query=query, feedback="no results") == expected


def test_sentences_split_in_lower_case_text_but_not_after_abbreviations():
    from apps.llm.extractive_text import split_sentences

    text = "Dr. Smith paid $1.5 m. in Jan. 2024, e.g. for rent. the scan is lower case . so is this!\n\n- a bullet item"

    assert split_sentences(text) == [
        "Dr. Smith paid $1.5 m. in Jan. 2024, e.g. for rent.",
        "the scan is lower case .",
        "so is this!",
        "a bullet item",  # the list marker is layout, not part of the sentence
    ]


def test_a_german_day_before_its_month_does_not_end_the_sentence():
    from apps.llm.extractive_text import split_sentences

    text = "Die Nachzahlung ist bis zum 31. März 2025 zu überweisen. Vielen Dank! Wir trafen uns am May 31. Then lunch."

    assert split_sentences(text) == [
        "Die Nachzahlung ist bis zum 31. März 2025 zu überweisen.",
        "Vielen Dank!",
        "Wir trafen uns am May 31.",
        "Then lunch.",
    ]
