"""Anthropic prompt caching in agent mode, measured on a real run: input tokens billed with and without it.

The agent resends the same system prompt and tool list on every turn, and the conversation so far.
With `cache_control` on the tools, the system prompt and the conversation's last block
(apps/llm/anthropic_provider.py), Anthropic writes each prefix to its cache when first sent (billed
at 1.25 times the input price) and reads it on later turns (0.1 times): each turn reads what the
turn before sent and writes only its new tool results. Prefixes shorter than the model's minimum
(1024 tokens for Sonnet and Opus, 2048 for Haiku) are not cached at all.

One agent-mode run (3 tool iterations, then the answer: 4 model turns) goes through the real
`anthropic` SDK to the local wire stub (tests/support/llm_wire_stub.py), twice: with cache_control
(ANTHROPIC_PROMPT_CACHE=1) and without (=0). The stub bills each request as Anthropic does, from
the cache_control breakpoints it receives: the prefix up to a breakpoint, if long enough, is a cache
write the first time and a read after (also from a breakpoint up to 20 blocks further, as
Anthropic looks back); the rest is plain input. Printed per turn and per run, with
the tokens our code recorded in the run's metrics beside the stub's figures (they must agree).

Token counts are ESTIMATES (4 characters per token, the agent's own budget estimate, over the
request's JSON): no Claude tokenizer is available offline, and the stub cannot call
`messages.count_tokens`. The verdict on the minimum uses the same estimate; as a second opinion
the prefix is also counted with the packaged MiniLM's WordPiece tokenizer (not Claude's either).

    .venv/bin/python bench/chat/prompt_cache.py [--min-tokens 1024] [--chunks 200]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench.chat.common import SCRATCH_DB, SCRATCH_REDIS_DB, seeded_folder
from bench.common.scratch import kept_database
from tests.support.llm_wire_stub import LLMWireStub, StubToolCall

CACHE_READ_PRICE = 0.1
CACHE_WRITE_PRICE = 1.25
SEARCHES = ("quarterly revenue", "third quarter growth", "revenue by region")
ANSWER = "Revenue in the third quarter reached four point two million dollars, up twelve percent [1]."


def estimate(text: str) -> int:
    from apps.chat.agent.context import estimate_tokens

    return estimate_tokens(text)


def wordpiece_count(text: str) -> int:
    from tokenizers import Tokenizer

    from apps.embeddings.minilm_onnx import model_dir

    tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tokenizer.no_truncation()
    return len(tokenizer.encode(text, add_special_tokens=False).ids)


def billed(usage: dict[str, int]) -> float:
    """Input token-equivalents as Anthropic prices them."""
    return (
        usage["input_tokens"]
        + CACHE_WRITE_PRICE * usage["cache_creation_input_tokens"]
        + CACHE_READ_PRICE * usage["cache_read_input_tokens"]
    )


def one_run(stub: LLMWireStub, folder, *, cache: bool) -> tuple[list[dict[str, int]], dict[str, int], int]:
    from django.test import override_settings

    from apps.chat.services import chat_start, run_execute

    for number, query in enumerate(SEARCHES, start=1):
        stub.reply_tool_calls(StubToolCall(f"call_{number}", "search_folder", {"query": query}))
    stub.reply_text(ANSWER)
    first = len(stub.billed)
    with override_settings(ANTHROPIC_PROMPT_CACHE=cache):
        run = chat_start(user=folder.owner, folder=folder, text="What was the third quarter revenue?", agent_mode=True)
        run = run_execute(run_id=run.pk)
    if run.status != "completed" or run.fallback_reason or run.iterations != len(SEARCHES) + 1:
        raise SystemExit(f"run {run.pk} did not go as planned: {run.status} {run.fallback_reason!r} {run.error}")
    return stub.billed[first:], run.metrics["tokens"], run.iterations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-tokens", type=int, default=1024, help="the model's minimum cacheable prefix")
    parser.add_argument("--chunks", type=int, default=200, help="chunks in the seeded folder")
    args = parser.parse_args()
    with LLMWireStub(count_tokens=estimate, cache_min_tokens=args.min_tokens) as stub:
        llm_env = {name: str(value) for name, value in stub.settings_for("anthropic").items()}
        kept_database(
            SCRATCH_DB,
            redis_db=SCRATCH_REDIS_DB,
            EMBEDDING_PROVIDER=os.environ.get("EMBEDDING_PROVIDER", "hash"),
            LOG_LEVEL="WARNING",
            **{**llm_env, "LLM_MAX_RETRIES": "0"},
        )
        folder = seeded_folder(chunks=args.chunks)
        runs = {}
        for cache in (True, False):
            sent = len(stub.requests)
            runs[cache] = (*one_run(stub, folder, cache=cache), stub.requests[sent:])

    body = runs[True][3][0].body
    system, tools = estimate(json.dumps(body["system"])), estimate(json.dumps(body["tools"]))
    prefix = system + tools
    print("Token counts are ESTIMATED at 4 characters per token (no Claude tokenizer offline).")
    print(
        f"request prefix resent every turn: system {system} + {len(body['tools'])} tools {tools} = {prefix} tokens; "
        f"cacheable at the {args.min_tokens}-token minimum: {'yes' if prefix >= args.min_tokens else 'NO'} "
        f"(Sonnet/Opus 1024: {'yes' if prefix >= 1024 else 'no'}, Haiku 2048: {'yes' if prefix >= 2048 else 'no'})"
    )
    wordpiece = wordpiece_count(json.dumps(body["tools"]) + json.dumps(body["system"]))
    print(f"  the same prefix in MiniLM WordPiece tokens (a second opinion, not Claude's tokenizer): {wordpiece}")
    if prefix < args.min_tokens:
        print("  the prefix is under the minimum: Anthropic caches nothing and cache_control saves nothing")
    totals = {}
    for cache, (usages, recorded, iterations, _) in runs.items():
        label = "with cache_control" if cache else "without cache_control"
        print(f"\n{label}: {iterations} model turns")
        print(f"  {'turn':>4} {'input':>7} {'cache write':>12} {'cache read':>11} {'billed':>8}")
        for turn, usage in enumerate(usages, start=1):
            print(
                f"  {turn:>4} {usage['input_tokens']:>7} {usage['cache_creation_input_tokens']:>12} "
                f"{usage['cache_read_input_tokens']:>11} {billed(usage):>8.0f}"
            )
        sent = sum(u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"] for u in usages)
        totals[cache] = sum(billed(usage) for usage in usages)
        expected = {
            "input": sent,
            "cache_write": sum(u["cache_creation_input_tokens"] for u in usages),
            "cache_read": sum(u["cache_read_input_tokens"] for u in usages),
        }
        agrees = all(recorded.get(key, 0) == value for key, value in expected.items())
        print(f"  input tokens sent {sent}, billed as {totals[cache]:.0f} token-equivalents")
        print(f"  run metrics recorded tokens {recorded}: {'agree' if agrees else 'DISAGREE'} with the stub's usage")
    saved = totals[False] - totals[True]
    print(
        f"\nsaved per run: {saved:.0f} input token-equivalents of {totals[False]:.0f} "
        f"({saved / totals[False]:.0%}); system prompt and tools alone, by arithmetic: {prefix * 4} uncached vs "
        f"{prefix * CACHE_WRITE_PRICE + prefix * CACHE_READ_PRICE * 3:.0f} cached"
    )


if __name__ == "__main__":
    main()
