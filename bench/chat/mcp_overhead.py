"""`ask` over MCP against the REST stream, same question, same server: what the MCP path adds.

uvicorn serves config.asgi (the Procfile's web) on the chat benches' scratch database (`common.py`)
(a folder of `--chunks` synthetic chunks), with the offline answerer, so the answer costs the
same on both paths. Answers alternate, one path then the other (their order swapped each round):
- REST: POST /api/folders/{id}/chat with `Accept: text/event-stream`, read until the `message` event;
- MCP: the official SDK's client, connected once, `call_tool("ask")` until its result, once over the
  2026-07-28 protocol and once over the initialize handshake (stateless HTTP both).
Each from the request to the answer, with a personal token as the bearer. Target: MCP adds <= 50 ms at p95.

    .venv/bin/python bench/chat/mcp_overhead.py [--chunks 2000] [--answers 100] [--warmup 10]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench import ROOT
from bench.chat.common import QUESTIONS, bench_user, pct, seeded_folder, use_scratch_services
from bench.common.machine import lscpu_model
from tests.support.mcp_clients import mcp_over_http, structured
from tests.support.servers import start_uvicorn

Ask = Callable[[str], Awaitable[None]]
TARGET_MS = 50


def rest_asker(client: httpx.AsyncClient, folder_id: int) -> Ask:
    async def ask(question: str) -> None:
        async with client.stream(
            "POST",
            f"/api/folders/{folder_id}/chat",
            json={"message": question},
            headers={"Accept": "text/event-stream"},
        ) as response:
            response.raise_for_status()
            event = ""
            async for line in response.aiter_lines():
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: ") and event == "message":
                    return
                elif line.startswith("data: ") and event == "error":
                    raise RuntimeError(f"REST run failed: {line}")
        raise RuntimeError("the REST stream ended without an answer")

    return ask


def mcp_asker(client: Client, folder_id: int) -> Ask:
    async def ask(question: str) -> None:
        structured(await client.call_tool("ask", {"folder_id": folder_id, "question": question}))  # not an error

    return ask


async def measure(*, url: str, secret: str, folder_id: int, answers: int, warmup: int) -> dict[str, list[float]]:
    timings: dict[str, list[float]] = {"REST stream": [], "MCP 2026-07-28": [], "MCP handshake": []}
    headers = {"Authorization": f"Bearer {secret}"}
    async with (
        httpx.AsyncClient(base_url=url, headers=headers, timeout=60) as http,
        mcp_over_http(url, secret=secret, mode="auto") as modern,
        mcp_over_http(url, secret=secret, mode="legacy") as legacy,
    ):
        askers = {
            "REST stream": rest_asker(http, folder_id),
            "MCP 2026-07-28": mcp_asker(modern, folder_id),
            "MCP handshake": mcp_asker(legacy, folder_id),
        }
        order = list(askers)
        for i in range(warmup + answers):
            question = QUESTIONS[i % len(QUESTIONS)]
            for label in order if i % 2 == 0 else order[::-1]:
                started = time.perf_counter()
                await askers[label](question)
                if i >= warmup:
                    timings[label].append((time.perf_counter() - started) * 1000)
    return timings


def report(timings: dict[str, list[float]]) -> None:
    rest = timings["REST stream"]
    for label, values in timings.items():
        print(f"{label:16s} p50 {pct(values, 50):7.1f} ms   p95 {pct(values, 95):7.1f} ms   max {max(values):7.1f} ms")
    verdicts = []
    for label in ("MCP 2026-07-28", "MCP handshake"):
        added_p50 = pct(timings[label], 50) - pct(rest, 50)
        added_p95 = pct(timings[label], 95) - pct(rest, 95)
        verdicts.append(added_p95 <= TARGET_MS)
        print(f"{label} adds p50 {added_p50:+.1f} ms, p95 {added_p95:+.1f} ms over the REST stream")
    print(f"target: MCP adds <= {TARGET_MS} ms at p95: {'PASS' if all(verdicts) else 'FAIL'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=2000)
    parser.add_argument("--answers", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=10)
    args = parser.parse_args()
    use_scratch_services()
    from apps.core.tokens import personal_token_create
    from apps.library.models import Chunk

    folder = seeded_folder(chunks=args.chunks)
    _, secret = personal_token_create(user=bench_user("bench-chat"), name="mcp bench", scopes=["read", "chat"])
    print(f"CPU: {lscpu_model()} ({os.cpu_count()} cores)")
    print(f"folder {folder.pk}: {Chunk.objects.filter(folder=folder).count()} chunks; offline answerer; hash embedder")
    env = {**os.environ, "LLM_PROVIDER": "extractive", "THROTTLE_CHAT": "100000/min", "LOG_LEVEL": "WARNING"}
    log_path = ROOT / "var" / "bench-mcp-server.log"
    with start_uvicorn(env=env, log_path=log_path, log_level="warning") as server:
        timings = asyncio.run(
            measure(url=server.url, secret=secret, folder_id=folder.pk, answers=args.answers, warmup=args.warmup)
        )
    one, five, _ = os.getloadavg()
    print(f"answers measured: {args.answers} per path (after {args.warmup} warm-up), alternating")
    print(f"load average {one:.1f} / {five:.1f} (1 / 5 min): the tails move with what else the machine runs")
    report(timings)


if __name__ == "__main__":
    main()
