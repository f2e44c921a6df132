"""What publishing one event costs: a client on the process's pool against a new client per event.

``publish_event`` appends to the channel's Redis stream and announces the event; without a
``client`` it uses ``redis_client()``, which hands out connections from one pool per process.
Side by side in one run, on a scratch Redis db (flushed afterwards).

    .venv/bin/python bench/ops/event_publish.py [--events 2000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench.common.scratch import BENCH_REDIS_DB, scratch_redis_url


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=2000)
    args = parser.parse_args()
    os.environ.update(REDIS_URL=scratch_redis_url(BENCH_REDIS_DB), DJANGO_SETTINGS_MODULE="config.settings")
    import django

    django.setup()
    import redis
    from django.conf import settings

    from apps.core.events import publish_event, redis_client

    def new_client() -> redis.Redis:
        return redis.Redis.from_url(settings.REDIS_URL, decode_responses=True, socket_timeout=10)

    try:
        for label, client in (("pooled (redis_client)", redis_client), ("new client per event", new_client)):
            timings = []
            for n in range(args.events):
                started = time.perf_counter()
                publish_event(channel="bench:publish", type="step", data={"n": n}, client=client())
                timings.append((time.perf_counter() - started) * 1000)
            ordered = sorted(timings)
            print(
                f"  {label:<24} {args.events / (sum(timings) / 1000):8.0f} events/s"
                f"  p50 {statistics.median(ordered):.3f} ms  p95 {ordered[int(0.95 * len(ordered))]:.3f} ms"
            )
    finally:
        redis_client().flushdb()


if __name__ == "__main__":
    main()
