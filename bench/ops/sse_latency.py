"""Event latency, publish -> SSE client, through the real ASGI server (uvicorn) and Redis.

50 clients each follow one run's `/api/runs/{id}/events`; a publisher appends timestamped events to
every run in rounds; each client records when each event reached it. Target: p95 <= 50 ms.
Uses the chat benches' scratch database and Redis db (`bench/chat/common.py`), never the development data.

    .venv/bin/python bench/ops/sse_latency.py [--streams 50] [--rounds 40] [--interval 0.05]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench import ROOT
from bench.chat.common import bench_user, seeded_folder, use_scratch_services
from tests.support.servers import start_uvicorn


async def follow(client: httpx.AsyncClient, url: str, connected: asyncio.Event, latencies: list[float]) -> int:
    received = 0
    async with client.stream("GET", url) as response:
        response.raise_for_status()
        connected.set()
        event_type = ""
        async for line in response.aiter_lines():
            if line.startswith("event: "):
                event_type = line[7:]
            elif line.startswith("data: "):
                if event_type == "done":
                    return received
                latencies.append((time.time() - json.loads(line[6:])["sent"]) * 1000)
                received += 1
    return received


def publish(run_ids: list[str], *, rounds: int, interval: float) -> None:
    from apps.core.events import publish_event, redis_client, run_channel

    client = redis_client()
    for round_number in range(rounds):
        for run_id in run_ids:
            publish_event(
                channel=run_channel(run_id), type="tick", data={"sent": time.time(), "n": round_number}, client=client
            )
        time.sleep(interval)
    for run_id in run_ids:
        publish_event(channel=run_channel(run_id), type="done", data={}, client=client)


async def measure(url: str, token: str, run_ids: list[str], *, rounds: int, interval: float) -> None:
    latencies: list[float] = []
    limits = httpx.Limits(max_connections=len(run_ids) + 10)
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60, limits=limits) as client:
        connected = [asyncio.Event() for _ in run_ids]
        tasks = [
            asyncio.create_task(follow(client, f"{url}/api/runs/{run_id}/events", ready, latencies))
            for run_id, ready in zip(run_ids, connected, strict=True)
        ]
        await asyncio.wait_for(asyncio.gather(*(ready.wait() for ready in connected)), timeout=30)
        publisher = threading.Thread(target=publish, args=(run_ids,), kwargs={"rounds": rounds, "interval": interval})
        publisher.start()
        counts = await asyncio.gather(*tasks)
        publisher.join()
    expected = rounds * len(run_ids)
    ordered = sorted(latencies)

    def pct(p: int) -> float:
        return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]

    print(f"streams {len(run_ids)}, events received {sum(counts)}/{expected} (lost {expected - sum(counts)})")
    print(
        f"publish -> client latency: p50 {pct(50):.1f} ms  p95 {pct(95):.1f} ms  p99 {pct(99):.1f} ms  "
        f"max {ordered[-1]:.1f} ms"
    )
    print(f"target p95 <= 50 ms: {'PASS' if pct(95) <= 50 and sum(counts) == expected else 'FAIL'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--interval", type=float, default=0.05, help="seconds between rounds")
    args = parser.parse_args()
    use_scratch_services()

    from apps.chat.services import chat_start
    from apps.core.tokens import personal_token_create

    folder = seeded_folder(chunks=100)
    user = bench_user("bench-chat")
    _, token = personal_token_create(user=user, name="sse bench", scopes=["read", "chat"])
    run_ids = [str(chat_start(user=user, folder=folder, text=f"stream {i}").pk) for i in range(args.streams)]
    env = {**os.environ, "SSE_HEARTBEAT_SECONDS": "15"}
    log_path = ROOT / "var" / "bench-sse-server.log"
    with start_uvicorn(env=env, log_path=log_path, log_level="warning") as server:
        asyncio.run(measure(server.url, token, run_ids, rounds=args.rounds, interval=args.interval))


if __name__ == "__main__":
    main()
