"""The product on a model server of one's own: `LLM_PROVIDER=openai` with `OPENAI_BASE_URL` at the
wire stub speaking Ollama, llama-server or vLLM, and no API key. A chat's streamed answer, the
agent's tool loop and the inbox router (the JSON-mode caller) each work, and usage is recorded."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal

import pytest

from apps.chat.models import Message
from apps.chat.services import chat_start, run_execute
from apps.inbox.router import Intent, Method, route_message
from apps.llm.models import ModelPrice, UsageRecord
from apps.llm.openai_compat import JSON_PROMPT
from apps.search.selectors import chunk_search
from tests.support.agent_runs import ask, tool_results
from tests.support.chat_library import THREE_FILES, add_file, make_folder
from tests.support.llm_wire_dialects import Dialect, llamacpp, ollama, vllm
from tests.support.llm_wire_stub import LLMWireStub, StubToolCall

MODEL = "llama3.1:8b"
QUESTION = "How much federal income tax was withheld on the W-2?"
WITHHELD = "Federal income tax withheld on the 2024 W-2 was 12,300 dollars."


@contextmanager
def own_server(settings, dialect: Dialect) -> Iterator[LLMWireStub]:
    """The settings the README gives for a local server: a base URL, a model, no key."""
    with LLMWireStub(dialect=dialect) as stub:
        settings.LLM_PROVIDER = "openai"
        settings.OPENAI_API_KEY = ""
        settings.OPENAI_BASE_URL = stub.openai_base_url
        settings.LLM_MODELS = {"router": MODEL, "agent": MODEL, "answer": MODEL}
        settings.LLM_MAX_RETRIES = 0
        yield stub


@pytest.fixture
def folder(user):
    folder = make_folder(user)
    for path, chunks in THREE_FILES.items():
        add_file(folder=folder, path=path, chunks=chunks)
    return folder


def withheld_number(folder, query: str = QUESTION) -> int:
    hits = chunk_search(folder_id=folder.pk, query=query, k=8)
    return next(n for n, hit in enumerate(hits, start=1) if hit.text == WITHHELD)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("dialect", "estimated"),
    [(ollama(), True), (llamacpp(), False), (vllm(), True)],
    ids=["ollama", "llama-server", "vllm"],
)
def test_a_chat_answer_streams_and_its_usage_is_recorded(settings, folder, dialect: Dialect, estimated: bool):
    n = withheld_number(folder)
    answer = f"Federal tax withheld was 12,300 dollars [{n}]."
    with own_server(settings, dialect) as stub:
        stub.reply_text(answer, model=MODEL, input_tokens=230, output_tokens=12)
        run = chat_start(user=folder.owner, folder=folder, text=QUESTION)
        events: list = []
        run = run_execute(run_id=run.pk, on_event=events.append)

    assert run.status == "completed" and run.fallback_reason == "", run.error
    message = Message.objects.get(pk=run.answer_id)
    assert message.content["text"] == answer
    assert "".join(event.data["text"] for event in events if event.type == "text_delta") == answer
    assert [citation["n"] for citation in message.content["citations"]] == [n]
    assert stub.requests[-1].headers["authorization"] == "Bearer unused"  # no key needed: a placeholder
    (record,) = UsageRecord.objects.all()
    assert (record.provider, record.model, record.estimated) == ("openai", MODEL, estimated)
    assert record.cost == 0  # a local model has no price until one is given
    if estimated:  # counted from the characters the prompt and answer hold
        assert record.input_tokens > 100 and record.output_tokens == -(-len(answer) // 4)
    else:
        assert (record.input_tokens, record.output_tokens) == (230, 12)


@pytest.mark.django_db
def test_a_local_model_given_a_price_is_charged_for_its_estimated_tokens(settings, folder):
    ModelPrice.objects.create(model="llama3.1", input_per_million=Decimal(1), output_per_million=Decimal(2))
    n = withheld_number(folder)
    with own_server(settings, ollama()) as stub:
        stub.reply_text(f"Federal tax withheld was 12,300 dollars [{n}].", model=MODEL)
        run_execute(run_id=chat_start(user=folder.owner, folder=folder, text=QUESTION).pk)

    (record,) = UsageRecord.objects.all()
    assert record.estimated and record.cost == (record.input_tokens * 1 + record.output_tokens * 2) / Decimal(10**6)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "dialect",
    [llamacpp(jinja=False), vllm(tool_parser=False), ollama(tools=False)],
    ids=["llama-server-without-jinja", "vllm-calls-as-text", "ollama-model-without-tools"],
)
def test_the_agent_searches_and_answers_on_a_server_without_tool_calls(settings, folder, dialect: Dialect):
    query = "federal income tax withheld"
    n = withheld_number(folder, query)
    answer = f"Federal income tax withheld was 12,300 dollars [{n}]."
    with own_server(settings, dialect) as stub:
        stub.reply_tool_calls(StubToolCall("call_1", "search_folder", {"query": query}))
        stub.reply_text(answer, model=MODEL)
        run, events = ask(folder, QUESTION)

    assert run.status == "completed" and run.fallback_reason == "", run.error
    assert Message.objects.get(pk=run.answer_id).content["text"] == answer
    assert [result["tool_name"] for result in tool_results(events)] == ["search_folder"]
    shown = "".join(event.data["text"] for event in events if event.type == "text_delta")
    assert shown == answer and not [event for event in events if event.type == "text_reset"]
    last = stub.requests[-1].body
    assert "tools" not in last or dialect.tools == "text"
    assert WITHHELD in last["messages"][-1]["content"]  # the search's result went back to the model


@pytest.mark.django_db
def test_the_inbox_router_gets_its_json_from_a_server_without_json_mode(settings):
    with own_server(settings, vllm(outlines_json=True, extra_fields=True)) as stub:
        stub.reply_text(
            'Here is the classification: {"intent": "organize", "confidence": 0.9, "params": {}} Done.', model=MODEL
        )
        route = route_message(text="file my new W-2 under taxes")

    assert (route.intent, route.method, route.model) == (Intent.ORGANIZE, Method.MODEL, MODEL)
    refused, prompted = (sent.body for sent in stub.requests)
    assert "response_format" in refused and "response_format" not in prompted
    assert JSON_PROMPT.split("{")[0] in prompted["messages"][0]["content"]
