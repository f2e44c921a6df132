"""Our own overhead per standard-mode answer (search + prompt + persist + events), no model time.

A scripted provider answers instantly, so what is timed is everything around the model: the run
claim, hybrid search over a folder of 100k chunks, history, prompt, streaming the answer as
events, saving the message and run, `message` + `done`. Target: p95 <= 100 ms.

`--metered` compares, in one run and alternating answer by answer, the same answers with the model
call metered as the network providers' are (`apps.llm.usage.metered_call`: the budget checked in
Redis before, the usage recorded and counted for Prometheus after, with both budgets set) against
the plain call. Target: metering adds <= 5 ms at p95.

Runs against a scratch database (`bench_chat`) and Redis db 9 on the embedded servers, never the
development data. The folder is seeded once (a few minutes) and reused.

    .venv/bin/python bench/chat/chat_overhead.py [--chunks 100000] [--answers 200] [--metered]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench.chat.common import ANSWER, QUESTIONS, pct, seeded_folder, use_scratch_services
from bench.common.machine import cpu


def scripted_provider(*, metered: bool):
    """The scripted model; `metered`: its call goes through `metered_call` as OpenAI's and Anthropic's do."""
    from apps.llm.scripted import ScriptedProvider
    from apps.llm.usage import metered_call

    class MeteredScriptedProvider(ScriptedProvider):
        def complete(self, **request):
            plain = super().complete
            return metered_call(provider="scripted", model=self.model, call=lambda: plain(**request))

    return (MeteredScriptedProvider if metered else ScriptedProvider)(model="scripted-bench")


def answer_times(
    *, folder, provider, answers: int, warmup: int, turn: int = 0
) -> tuple[list[float], list[float], list[int]]:
    """Each answer's total and search milliseconds and its event count; one conversation per four turns."""
    from apps.chat.services import chat_start, run_execute
    from apps.llm.factory import use_provider_for_tests
    from apps.llm.types import LLMResponse, Usage

    totals: list[float] = []
    searches: list[float] = []
    events: list[int] = []
    conversation = None
    with use_provider_for_tests(provider):
        for i in range(warmup + answers):
            provider.push(LLMResponse(text=ANSWER, usage=Usage(input_tokens=900, output_tokens=60)))
            counted: list[object] = []
            started = time.perf_counter()
            run = chat_start(
                user=folder.owner, folder=folder, text=QUESTIONS[(turn + i) % len(QUESTIONS)], conversation=conversation
            )
            run = run_execute(run_id=run.pk, on_event=counted.append)
            elapsed = (time.perf_counter() - started) * 1000
            assert run.status == "completed", run.error
            # Four turns per conversation, so history is read and sent as it would be.
            conversation = run.conversation if i % 4 != 3 else None
            if i >= warmup:
                totals.append(elapsed)
                searches.append(run.metrics["search_ms"])
                events.append(len(counted))
    return totals, searches, events


def measure_metered(*, folder, answers: int, warmup: int) -> None:
    """Plain and metered answers in alternating rounds of eight, so drift touches both alike."""
    from django.conf import settings

    settings.LLM_DAILY_TOKENS_PER_USER = 10**12  # checked on every call, never reached
    settings.LLM_MONTHLY_COST_PER_USER = 10**9
    settings.LLM_PRICES = {"scripted-bench": {"input": 2.0, "output": 10.0, "cached": 0.5}}
    timings: dict[bool, list[float]] = {False: [], True: []}
    answer_times(folder=folder, provider=scripted_provider(metered=True), answers=0, warmup=warmup)
    answer_times(folder=folder, provider=scripted_provider(metered=False), answers=0, warmup=warmup)
    for round_ in range(max(1, answers // 8)):
        for metered in (round_ % 2 == 0, round_ % 2 == 1):
            totals, _, _ = answer_times(
                folder=folder, provider=scripted_provider(metered=metered), answers=4, warmup=0, turn=round_
            )
            timings[metered].extend(totals)
    print(f"answers measured: {len(timings[False])} plain, {len(timings[True])} metered (alternating)")
    for label, values in (("plain model call", timings[False]), ("metered (budget+usage+metrics)", timings[True])):
        print(f"{label:32s} p50 {pct(values, 50):7.1f} ms   p95 {pct(values, 95):7.1f} ms")
    added = pct(timings[True], 95) - pct(timings[False], 95)
    added_p50 = pct(timings[True], 50) - pct(timings[False], 50)
    print(f"metering adds p50 {added_p50:+.1f} ms, p95 {added:+.1f} ms")
    print(f"target: metering adds <= 5 ms at p95: {'PASS' if added <= 5 else 'FAIL'}")


def measure(*, folder, answers: int, warmup: int) -> None:
    totals, searches, events = answer_times(
        folder=folder, provider=scripted_provider(metered=False), answers=answers, warmup=warmup
    )
    others = [total - search for total, search in zip(totals, searches, strict=True)]
    print(f"answers measured: {answers} (after {warmup} warm-up), events per answer: {statistics.median(events):.0f}")
    for label, values in (
        ("total overhead", totals),
        ("  search (incl. history+prompt)", searches),
        ("  claim+events+persist", others),
    ):
        print(f"{label:32s} p50 {pct(values, 50):7.1f} ms   p95 {pct(values, 95):7.1f} ms   max {max(values):7.1f} ms")
    verdict = "PASS" if pct(totals, 95) <= 100 else "FAIL"
    print(f"target p95 <= 100 ms: {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--answers", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--metered", action="store_true", help="compare metered and plain model calls")
    args = parser.parse_args()
    use_scratch_services()
    folder = seeded_folder(chunks=args.chunks)
    from apps.library.models import Chunk

    print(cpu(), f"({os.cpu_count()} cores)")
    print(
        f"folder {folder.pk}: {Chunk.objects.filter(folder=folder).count()} chunks; "
        f"embedder {os.environ['EMBEDDING_PROVIDER']}"
    )
    if args.metered:
        measure_metered(folder=folder, answers=args.answers, warmup=args.warmup)
    else:
        measure(folder=folder, answers=args.answers, warmup=args.warmup)


if __name__ == "__main__":
    main()
