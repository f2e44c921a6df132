"""Inbox router latency and accuracy, per path: rules, the offline classifier, and a model over HTTP.

- rules: the fast paths (a yes/no with a suggestion pending, a lone URL, pasted text): no model;
- offline: the extractive provider's classifier (what runs with no keys);
- model: the real openai SDK against the local wire stub on loopback, answering instantly, so
  what is timed is our overhead (prompt, SDK, HTTP, JSON parsing), not a model's thinking. Add
  the provider's own latency (gpt-4o-mini: about 150-300 ms) for a real deployment.

Seed 002's target is under 200 ms for a classification. No database or Redis is used.

    .venv/bin/python bench/inbox/router_latency.py [--rounds 200]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

PENDING = "move inbox/W2_2024.pdf to taxes/ (92% sure)"
PASTED = (
    "Kitchen renovation notes: the contractor starts on the 3rd, cabinets arrive a week later, the electrician "
    "needs access to the basement panel, the budget is capped at 18,000 including the new countertop, and every "
    "receipt from the hardware store goes in the shared folder for the insurance claim."
)
# (message, a suggestion is pending, expected intent)
LABELLED = [
    ("yes", True, "confirm"),
    ("ok, do it", True, "confirm"),
    ("sounds good", True, "confirm"),
    ("no", True, "reject"),
    ("keep it here", True, "reject"),
    ("cancel", True, "reject"),
    ("https://example.com/recipes/lentil-soup", False, "save"),
    (PASTED, False, "save"),
    ("find my ID photo", False, "query"),
    ("what's in the W-2 from 2024?", False, "query"),
    ("how many pdfs do I have?", False, "query"),
    ("show me the lease renewal", False, "query"),
    ("when is the accountant appointment", False, "query"),
    ("summarize the Q4 report", False, "query"),
    ("organize my inbox", False, "organize"),
    ("move the W-2 to taxes", False, "organize"),
    ("sort these files into folders", False, "organize"),
    ("move the lease to my personal folder", False, "organize"),
    ("hello", False, "chat"),
    ("thanks!", False, "chat"),
    ("no, where is my tax return?", True, "query"),
]


def configure() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.update(LLM_PROVIDER="extractive", EMBEDDING_PROVIDER="hash", LOG_LEVEL="WARNING")
    import django

    django.setup()


def timed(messages, route, rounds: int) -> tuple[list[float], float]:
    """Latencies in ms of `rounds` passes over `messages`, and the share routed as expected."""
    latencies: list[float] = []
    right = 0
    for _ in range(rounds):
        for text, pending, expected in messages:
            started = time.perf_counter()
            result = route(text, pending)
            latencies.append((time.perf_counter() - started) * 1000)
            right += result.intent.value == expected
    return latencies, right / (rounds * len(messages))


def report(name: str, latencies: list[float], accuracy: float) -> None:
    ordered = sorted(latencies)

    def pct(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))]

    print(
        f"{name:<8} n={len(ordered):>5}  p50={statistics.median(ordered):8.3f} ms  p95={pct(0.95):8.3f} ms  "
        f"p99={pct(0.99):8.3f} ms  max={ordered[-1]:8.3f} ms  routed as labelled: {accuracy:.0%}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=200, help="passes over the labelled messages (offline, rules)")
    parser.add_argument("--model-rounds", type=int, default=5, help="passes through the SDK and the wire stub")
    args = parser.parse_args()
    configure()

    from apps.inbox.router import route_message
    from apps.llm.extractive import ExtractiveProvider
    from apps.llm.factory import ProviderConfig, build_provider
    from tests.support.llm_wire_stub import LLMWireStub

    offline = ExtractiveProvider()
    rule_cases = [case for case in LABELLED if case[2] in ("confirm", "reject", "save")]
    other_cases = [case for case in LABELLED if case not in rule_cases]

    def offline_route(text: str, pending: bool):
        return route_message(text=text, pending=PENDING if pending else None, llm=offline)

    print(f"router latency, {len(LABELLED)} labelled messages")
    report("rules", *timed(rule_cases, offline_route, args.rounds))
    report("offline", *timed(other_cases, offline_route, args.rounds))

    with LLMWireStub() as stub:
        model = build_provider(
            ProviderConfig(provider="openai", model="stub-router", api_key="bench", base_url=stub.openai_base_url)
        )

        def model_route(text: str, pending: bool):
            expected = next(label for message, _, label in LABELLED if message == text)
            stub.reply_text(json.dumps({"intent": expected, "confidence": 0.9, "params": {}}))
            return route_message(text=text, pending=PENDING if pending else None, llm=model)

        model_route(*other_cases[0][:2])  # connection set up once, as a running server would have it
        report("model", *timed(other_cases, model_route, args.model_rounds))
    print("model: loopback stub answering at once: our overhead only; add the provider's latency.")


if __name__ == "__main__":
    main()
