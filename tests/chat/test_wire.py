"""The same question through the real openai and anthropic SDKs, against the local wire stub."""

from __future__ import annotations

import pytest

from apps.chat.models import Message
from apps.chat.prompts import STANDARD_SYSTEM_PROMPT
from apps.chat.services import chat_start, run_execute
from apps.llm.sources import SOURCES_PREAMBLE
from apps.search.selectors import chunk_search
from tests.support.llm_wire_stub import OPENAI_PATH
from tests.support.questions import W2_QUESTION

pytestmark = pytest.mark.django_db


def test_sdk_answer_streams_and_citations_map_to_the_right_files(library, sdk, wire_stub):
    hits = chunk_search(folder_id=library.folder.pk, query=W2_QUESTION, k=8)
    n = next(n for n, hit in enumerate(hits, start=1) if "withheld" in hit.text)
    wire_stub.reply_text(
        f"Federal tax withheld was 12,300 dollars [{n}].", input_tokens=210, output_tokens=11, model="stub-model"
    )
    run = chat_start(user=library.folder.owner, folder=library.folder, text=W2_QUESTION)
    events = []

    run = run_execute(run_id=run.pk, on_event=events.append)

    assert run.status == "completed", run.error
    (sent,) = wire_stub.requests
    body = sent.body
    assert body["stream"] is True
    if sent.path == OPENAI_PATH:
        assert body["messages"][0] == {"role": "system", "content": STANDARD_SYSTEM_PROMPT}
        prompt = body["messages"][-1]["content"]
    else:
        assert STANDARD_SYSTEM_PROMPT in str(body["system"])
        content = body["messages"][-1]["content"]
        prompt = content if isinstance(content, str) else "".join(block["text"] for block in content)
    assert SOURCES_PREAMBLE in prompt and W2_QUESTION in prompt
    answer = Message.objects.get(pk=run.answer_id)
    assert answer.content["text"] == f"Federal tax withheld was 12,300 dollars [{n}]."
    w2 = library.files["finance/W2_2024.pdf"]
    assert [(c["n"], c["file_id"], c["path"], c["location"]) for c in answer.content["citations"]] == [
        (n, w2.pk, "finance/W2_2024.pdf", "page 2")
    ]
    assert answer.metadata["model"] == "stub-model"
    assert answer.metadata["tokens"] == {"input": 210, "output": 11}
    assert "".join(e.data["text"] for e in events if e.type == "text_delta") == answer.content["text"]
