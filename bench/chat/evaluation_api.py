"""Evaluation sets through the evaluation API, on a scratch database, offline answerer, standard mode.

Each folder is indexed in-process (`folder_index --inline`, the local MiniLM embedder or, with
`--embedder hash`, the hash one), then its set is made, run and read through the API as a client
would (`POST /api/folders/{id}/evaluations`, `POST /api/evaluations/{id}/runs`, `GET
/api/evaluation-runs/{id}`; DRF's test client, the run executed in the request as the eager Celery
setting does, so every question is a chat run of standard mode as a worker would make it):

(a) the offline-answer folders of `offline_answers.py` (`sample_folder/` and `answer_folders/`:
    home, studio, office) with its questions: expected files, and the first way of writing each
    expected fact; a question the folder cannot answer expects no file, and its right outcome is
    an answer saying it found nothing. Printed: hit@1, hit@5, MRR (over questions expecting a
    file), citation precision, facts found, answered share (all questions, and the unanswerable
    ones), latency p50 / p95 (nearest rank, ms a question), per folder (the API's metrics) and over
    all four (the same definitions over the API's per-question results). `--baseline REV` runs
    the same sets once more with the answerer of commit REV (`offline_answers.baseline_modules`
    patched in where standard mode takes it), printed as "before" (in (b) too).
(b) the developers' IR collections (`bench/search/common.py`: Cranfield, CACM, CISI from
    ../shared/data), every document a file of one folder, the first `--queries` judged requests
    as questions expecting their relevant documents (the API takes 20 a question: the 20 of
    highest grade, then lowest number; the rest are counted as capped). Printed: hit@1, hit@5,
    MRR, citation precision, answered share, latency.

The CPU (lscpu) and the load average are printed beside the figures.

    .venv/bin/python bench/chat/evaluation_api.py [--baseline d64d26e [--show]] [--collections cranfield cacm cisi]
        [--queries 50] [--embedder local|hash] [--skip answers|ir] [--redis-db N]
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench import ROOT
from bench.chat.offline_answers import ASKED, FOLDERS, baseline_modules, indexed
from bench.chat.offline_answers_questions import MISSING, Question
from bench.common.machine import cpu, load_average, lscpu_model
from bench.common.scratch import BENCH_REDIS_DB, scratch_services

IR_COLLECTIONS = ("cranfield", "cacm", "cisi")
IR_FILES = ROOT / "var" / "bench" / "evaluation_api"
MAX_EXPECTED = 20  # expected files a question may name (apps/evaluation/apis.py)
COLUMNS = ["hit@1", "hit@5", "MRR", "cit. prec.", "facts", "answered", "unanswerable answered", "p50 ms", "p95 ms"]


def api_questions(questions: Sequence[Question]) -> list[dict[str, Any]]:
    """The API's form of `offline_answers` questions: each fact by its first way of writing it."""
    return [
        {
            "question": question.text,
            "expected_files": sorted(question.files),
            "expected_facts": [fact[0] for fact in question.facts if fact != MISSING],
        }
        for question in questions
    ]


def made(client: Any, *, folder_id: int, name: str, questions: list[dict[str, Any]]) -> int:
    """The new set's id."""
    response = client.post(
        f"/api/folders/{folder_id}/evaluations", {"name": name, "questions": questions}, format="json"
    )
    assert response.status_code == 201, response.json()
    return int(response.json()["id"])


def run_set(client: Any, set_id: int) -> dict[str, Any]:
    started = client.post(f"/api/evaluations/{set_id}/runs", {"mode": "standard"}, format="json")
    assert started.status_code == 202, started.json()
    run = client.get(f"/api/evaluation-runs/{started.json()['run_id']}").json()
    assert run["status"] == "done", (run["status"], run["error"])
    return run


def figures(results: Sequence[dict[str, Any]]) -> dict[str, float | None]:
    """The API's metrics (apps/evaluation/scoring.py) over these per-question results, plus the
    answered share of the questions expecting no file (the right outcome there is not answering)."""
    ranks = [result["hit_rank"] for result in results if result["expected_files"]]
    cited = [(path, result) for result in results for path in result["cited_files"]]
    facts = sum(len(result["expected_facts"]) for result in results)
    unanswerable = [result for result in results if not result["expected_files"]]
    durations = sorted(result["duration_ms"] for result in results)

    def share(part: float, whole: int) -> float | None:
        return part / whole if whole else None

    return {
        "hit@1": share(sum(rank == 1 for rank in ranks), len(ranks)),
        "hit@5": share(sum(rank is not None and rank <= 5 for rank in ranks), len(ranks)),
        "MRR": share(sum(1 / rank for rank in ranks if rank), len(ranks)),
        "cit. prec.": share(sum(path in result["expected_files"] for path, result in cited), len(cited)),
        "facts": share(sum(len(result["facts_found"]) for result in results), facts),
        "answered": share(sum(result["answered"] for result in results), len(results)),
        "unanswerable answered": share(sum(result["answered"] for result in unanswerable), len(unanswerable)),
        "p50 ms": _nearest_rank(durations, 50),
        "p95 ms": _nearest_rank(durations, 95),
    }


def _nearest_rank(ordered: Sequence[int], pct: int) -> float | None:
    return float(ordered[max(0, math.ceil(pct / 100 * len(ordered)) - 1)]) if ordered else None


def cells(values: dict[str, float | None]) -> list[str]:
    return [
        "-" if value is None else (f"{value:.0f}" if name.endswith("ms") else f"{value:.3f}")
        for name, value in values.items()
    ]


@contextlib.contextmanager
def answering_as(commit: str) -> Iterator[None]:
    """Standard mode answers offline with the answerer of `commit` (its provider, and its
    `apps/chat/offline.py` when it has one) while this lasts."""
    from apps.chat import answering, standard
    from apps.llm import factory

    modules = baseline_modules(commit)
    provider = modules["extractive"].ExtractiveProvider
    with contextlib.ExitStack() as patches:
        patches.enter_context(mock.patch.object(factory, "ExtractiveProvider", provider))
        patches.enter_context(mock.patch.object(answering, "ExtractiveProvider", provider))
        if "offline" in modules:
            patches.enter_context(mock.patch.object(answering, "offline_answer", modules["offline"].offline_answer))
            patches.enter_context(mock.patch.object(standard, "unfound_terms", modules["offline"].unfound_terms))
        factory.build_provider.cache_clear()  # it keeps the provider it built
        try:
            yield
        finally:
            factory.build_provider.cache_clear()


def answer_folders(client: Any, *, baseline: str | None, show: bool) -> None:
    folder_ids = {name: indexed(name, root) for name, root in FOLDERS.items()}
    print(f"(a) offline-answer folders indexed; {load_average()}", flush=True)
    sets = {}
    for name, folder_id in folder_ids.items():
        questions = [question for question in ASKED if question.folder == name]
        sets[name] = made(
            client, folder_id=folder_id, name=f"offline answers: {name}", questions=api_questions(questions)
        )
    print("\nanswerer | set | questions | " + " | ".join(COLUMNS))
    print(" | ".join("---" for _ in range(len(COLUMNS) + 3)))
    answered: dict[str, list[dict[str, Any]]] = {}
    for label, answering in answerers(baseline):
        results = answered.setdefault(label, [])
        with answering():
            for name, set_id in sets.items():
                run = run_set(client, set_id)
                results += run["results"]
                print(" | ".join([label, name, str(len(run["results"])), *cells(figures(run["results"]))]), flush=True)
        print(" | ".join([label, "all four", str(len(results)), *cells(figures(results))]), flush=True)
    if show and len(answered) == 2:
        before, after = answered.values()
        for old, new in zip(before, after, strict=True):
            if _outcome(old) != _outcome(new):
                print(f"\n{new['question']}\n  before: {old['answer']}\n  after:  {new['answer']}")


def _outcome(result: dict[str, Any]) -> tuple[Any, ...]:
    return (result["facts_found"], result["hit_rank"], result["answered"])


def answerers(baseline: str | None) -> list[tuple[str, Callable[[], contextlib.AbstractContextManager[None]]]]:
    """Who answers, by label: the `baseline` commit's answerer ("before"), if any, then this tree's."""
    if baseline is None:
        return [("after (working tree)", contextlib.nullcontext)]
    commit = baseline
    return [(f"before ({commit})", lambda: answering_as(commit)), ("after (working tree)", contextlib.nullcontext)]


def ir_collections(client: Any, *, names: Sequence[str], queries: int, baseline: str | None) -> None:
    from bench.search.common import collection_named

    print("\nanswerer | collection | questions | capped | " + " | ".join(COLUMNS))
    print(" | ".join("---" for _ in range(len(COLUMNS) + 4)))
    for name in names:
        collection = collection_named(name)
        root = _written(collection.name, collection.documents)
        started = time.monotonic()
        folder_id = indexed(collection.name, root)
        print(f"  {name}: {len(collection.documents)} files indexed in {time.monotonic() - started:.0f} s", flush=True)
        asked = collection.scored_queries()[:queries]
        questions = []
        for number in asked:
            judged = collection.judged[number]
            relevant = sorted(judged, key=lambda doc: (-judged[doc], doc))[:MAX_EXPECTED]
            questions.append(
                {
                    "question": " ".join(collection.queries[number].split())[:2000],
                    "expected_files": [f"{doc}.txt" for doc in relevant],
                }
            )
        capped = sum(len(collection.judged[number]) > MAX_EXPECTED for number in asked)
        set_id = made(client, folder_id=folder_id, name=f"IR: {name}", questions=questions)
        for label, answering in answerers(baseline):
            with answering():
                results = run_set(client, set_id)["results"]
            print(" | ".join([label, name, str(len(questions)), str(capped), *cells(figures(results))]), flush=True)


def _written(name: str, documents: dict[int, str]) -> Path:
    """The collection's documents as files `<number>.txt` (written once, kept under var/bench)."""
    root = (IR_FILES / name).resolve()
    if len(list(root.glob("*.txt"))) != len(documents):
        root.mkdir(parents=True, exist_ok=True)
        for number, text in documents.items():
            (root / f"{number}.txt").write_text(text, encoding="utf-8")
    return root


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", help="also run (a) with this commit's answerer, as 'before'")
    parser.add_argument("--collections", nargs="+", default=list(IR_COLLECTIONS), help="IR collections for (b)")
    parser.add_argument("--queries", type=int, default=50, help="judged requests asked per collection")
    parser.add_argument(
        "--embedder", choices=["local", "hash"], default="local", help="hash: fast, not the real figure"
    )
    parser.add_argument("--skip", choices=["answers", "ir"], help="leave out (a) or (b)")
    parser.add_argument("--show", action="store_true", help="print (a)'s answers that differ before and after")
    # The scratch Redis db is flushed afterwards: one nobody else is using.
    parser.add_argument("--redis-db", type=int, default=BENCH_REDIS_DB, help="Redis db for the run (flushed after)")
    args = parser.parse_args()
    print(f"{cpu()}\nlscpu: {lscpu_model()}; {load_average()}; embedder {args.embedder}", flush=True)
    with scratch_services(
        "bench_evaluation_api",
        redis_db=args.redis_db,
        EMBEDDING_PROVIDER=args.embedder,
        LLM_PROVIDER="extractive",
        CELERY_TASK_ALWAYS_EAGER="1",  # a run executes in the request that starts it, as a worker would
        LOG_LEVEL="WARNING",
    ):
        from django.contrib.auth import get_user_model
        from rest_framework.test import APIClient

        client = APIClient()
        # The folders' owner: `indexed` makes them for this user.
        client.force_authenticate(get_user_model().objects.get_or_create(username="bench-answers")[0])
        if args.skip != "answers":
            answer_folders(client, baseline=args.baseline, show=args.show)
        if args.skip != "ir":
            ir_collections(client, names=args.collections, queries=args.queries, baseline=args.baseline)
        print(f"\n{lscpu_model()}; {load_average()}")


if __name__ == "__main__":
    main()
