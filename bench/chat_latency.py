"""What a user waits for, standard mode vs agent mode, with a model that takes its time.

The real openai (or anthropic) SDK talks to the local wire stub (`tests/support/llm_wire_stub.py`),
which streams like a hosted model: 400 ms to the first token, then 50 tokens/s. Each answer is
followed the way the browser follows it, over `GET /api/runs/{id}/events` on a real uvicorn. Printed:

- standard mode: time to the client's first `text_delta` and to the saved answer (`message`);
- agent mode (3 iterations: search, search, answer): time to the saved answer;
- both modes: the gap from the model's first token (written by the stub) to the client's first
  `text_delta`.

Targets: standard first token <= 1 s, answer <= 3 s; agent <= 15 s; first-token gap <= 100 ms.
Uses the scratch database and Redis db of `chat_overhead.py`, never the development data.

    .venv/bin/python bench/chat_latency.py [--trials 3] [--provider openai|anthropic] [--answer-tokens 100]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))

from bench.chat_overhead import bench_user, kept_database, seeded_folder  # noqa: E402
from tests.support.llm_wire_stub import LLMWireStub, StubToolCall  # noqa: E402
from tests.support.servers import start_uvicorn  # noqa: E402

FIRST_TOKEN_SECONDS = 0.4
SECONDS_PER_TOKEN = 1 / 50
SEED_CHUNKS = 2000


@dataclass
class Followed:
    """When each event reached the client (monotonic seconds)."""

    connected: threading.Event = field(default_factory=threading.Event)
    first_text: float | None = None
    message: float | None = None
    types: list[str] = field(default_factory=list)


def follow(url: str, token: str, followed: Followed) -> None:
    headers = {"Authorization": f"Token {token}"}
    with httpx.stream("GET", url, headers=headers, timeout=60) as response:
        response.raise_for_status()
        followed.connected.set()
        event_type = ""
        for line in response.iter_lines():
            if line.startswith("event: "):
                event_type = line[7:]
            elif line.startswith("data: "):
                now = time.monotonic()
                followed.types.append(event_type)
                if event_type == "text_delta" and followed.first_text is None:
                    followed.first_text = now
                elif event_type == "message":
                    followed.message = now
                elif event_type in ("done", "error"):
                    return


def answer_words(tokens: int) -> str:
    sentence = "Revenue in the third quarter reached four point two million dollars, up twelve percent [1]."
    words: list[str] = []
    while len(words) < tokens:
        words.extend(sentence.split())
    return " ".join(words[:tokens])


def one_run(*, server_url: str, token: str, folder, stub: LLMWireStub, agent: bool, tokens: int) -> dict[str, float]:
    from apps.chat.services import chat_start, run_execute

    pace = {"first_chunk_delay": FIRST_TOKEN_SECONDS, "chunk_delay": SECONDS_PER_TOKEN}
    if agent:
        stub.reply_tool_calls(StubToolCall("call_1", "search_folder", {"query": "quarterly revenue"}), **pace)
        stub.reply_tool_calls(StubToolCall("call_2", "search_folder", {"query": "third quarter growth"}), **pace)
    stub.reply_text(answer_words(tokens), **pace)
    run = chat_start(user=folder.owner, folder=folder, text="What was the third quarter revenue?", agent_mode=agent)
    followed = Followed()
    client = threading.Thread(
        target=follow, args=(f"{server_url}/api/runs/{run.pk}/events", token, followed), daemon=True
    )
    client.start()
    followed.connected.wait(10)
    sent_before = len(stub.text_sent)
    started = time.monotonic()
    run = run_execute(run_id=run.pk)
    client.join(30)
    if run.status != "completed" or run.fallback_reason or followed.first_text is None or followed.message is None:
        raise SystemExit(f"run {run.pk} did not answer as planned: {run.status} {run.fallback_reason!r} {run.error}")
    model_first_token = stub.text_sent[sent_before]
    return {
        "first_text": followed.first_text - started,
        "answer": followed.message - started,
        "gap_ms": (followed.first_text - model_first_token) * 1000,
        "iterations": run.iterations,
    }


def summary(label: str, values: list[float]) -> str:
    return f"{label:50s} median {statistics.median(values):8.2f} s    max {max(values):8.2f} s "


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--provider", choices=("openai", "anthropic"), default="openai")
    parser.add_argument("--answer-tokens", type=int, default=100)
    args = parser.parse_args()
    with LLMWireStub() as stub:
        llm_env = {name: str(value) for name, value in stub.settings_for(args.provider).items()}
        kept_database(
            "bench_chat",
            redis_db=9,
            EMBEDDING_PROVIDER=os.environ.get("EMBEDDING_PROVIDER", "hash"),
            LOG_LEVEL="WARNING",
            **{**llm_env, "LLM_MAX_RETRIES": "0"},
        )
        from rest_framework.authtoken.models import Token

        folder = seeded_folder(chunks=SEED_CHUNKS)
        token, _ = Token.objects.get_or_create(user=bench_user("bench-chat"))
        log_path = BASE_DIR / "var" / "bench-chat-latency-server.log"
        with start_uvicorn(env=dict(os.environ), log_path=log_path, log_level="warning") as server:
            results: dict[bool, list[dict[str, float]]] = {False: [], True: []}
            for trial in range(args.trials + 1):  # the first round warms connections and caches up
                for agent in (False, True):
                    measured = one_run(
                        server_url=server.url,
                        token=token.key,
                        folder=folder,
                        stub=stub,
                        agent=agent,
                        tokens=args.answer_tokens,
                    )
                    if trial:
                        results[agent].append(measured)
    standard, agent_runs = results[False], results[True]
    print(
        f"provider {args.provider} SDK -> wire stub: {FIRST_TOKEN_SECONDS * 1000:.0f} ms to first token, "
        f"{1 / SECONDS_PER_TOKEN:.0f} tokens/s, answers of {args.answer_tokens} tokens; {args.trials} trials each"
    )
    iterations = agent_runs[0]["iterations"]
    rows: list[tuple[str, list[float], float | None]] = [
        ("standard: first text_delta at client", [r["first_text"] for r in standard], 1.0),
        ("standard: answer saved (message event)", [r["answer"] for r in standard], 3.0),
        (f"agent ({iterations:.0f} iterations): answer saved", [r["answer"] for r in agent_runs], 15.0),
        ("agent: first text_delta at client", [r["first_text"] for r in agent_runs], None),
    ]
    verdicts = []
    for label, values, target in rows:
        line = summary(label, values)
        if target is not None:
            ok = max(values) <= target
            verdicts.append(ok)
            line += f"   target <= {target:g} s: {'PASS' if ok else 'FAIL'}"
        print(line)
    for label, runs in (("standard", standard), ("agent", agent_runs)):
        gaps = [r["gap_ms"] for r in runs]
        ok = max(gaps) <= 100
        verdicts.append(ok)
        print(
            f"{label + ': model first token -> client text_delta':50s} median {statistics.median(gaps):8.1f} ms   "
            f"max {max(gaps):8.1f} ms   target <= 100 ms: {'PASS' if ok else 'FAIL'}"
        )
    print(json.dumps({"all_targets_met": all(verdicts)}))


if __name__ == "__main__":
    main()
