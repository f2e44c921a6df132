"""What the inbox's one stream costs at publish time: a folder event copied to each organizer's
inbox channel (one recipient lookup, the copies in the same Redis round trip) against one the inbox
does not carry (no lookup, no copy), for folders with 0, 3 and 10 editors besides the owner.
Side by side in one run, on a scratch database and Redis db (dropped / flushed afterwards).

    nice -n 10 .venv/bin/python bench/inbox/inbox_fanout.py [--events 1000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench.common.scratch import scratch_services


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=1000)
    args = parser.parse_args()
    with scratch_services("bench_inbox_fanout"):
        from django.contrib.auth import get_user_model

        from apps.core.events import folder_channel, publish_event
        from apps.library.models import Folder, FolderMembership, FolderRole

        users = get_user_model().objects
        owner = users.create_user(username="owner")
        print(f"{'editors':>8}  {'event':<28} {'events/s':>9} {'p50 ms':>8} {'p95 ms':>8}")
        for editors in (0, 3, 10):
            folder = Folder.objects.create(owner=owner, source="local", external_id=f"/bench/{editors}", name="b")
            for n in range(editors):
                editor = users.create_user(username=f"editor-{editors}-{n}")
                FolderMembership.objects.create(folder=folder, user=editor, role=FolderRole.EDITOR)
            for label, type in (("scan (not copied)", "scan"), (f"suggestion (x{editors + 2} logs)", "suggestion")):
                timings = []
                for n in range(args.events):
                    started = time.perf_counter()
                    publish_event(channel=folder_channel(folder.pk), type=type, data={"suggestion_id": n})
                    timings.append((time.perf_counter() - started) * 1000)
                ordered = sorted(timings)
                rate = args.events / (sum(timings) / 1000)
                p50, p95 = statistics.median(ordered), ordered[int(0.95 * len(ordered))]
                print(f"{editors:>8}  {label:<28} {rate:9.0f} {p50:8.3f} {p95:8.3f}")


if __name__ == "__main__":
    main()
