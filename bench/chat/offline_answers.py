"""What the offline (extractive) answerer says, against the facts a right answer holds.

Indexes `sample_folder/` and the three folders under `bench/chat/answer_folders/` (home: tuning,
studio and office: held out) with the real local embedder into a scratch database, then asks every
question of `offline_answers_questions.py` and `offline_answers_office.py` the way standard mode
does (hybrid `chunk_search`, numbered sources, the user prompt) of two answerers in the same run:
the baseline, loaded from git at `--baseline` (default: the commit before this work), and the
working tree's, as standard mode gives it (`apps.chat.offline`: the question's terms judged, the
citations renumbered by first use). The baseline answers through its own commit's
`apps/chat/offline.py` when it has one, else with its provider's text, as standard mode gave it
until then. Per answerer and set:

- facts found: expected facts (or a "not found" notice for a part the folder does not hold) stated;
- facts wrong: a figure of the neighbouring row, year or file stated instead;
- unrelated: cited sentences per answer whose source is not among the files bearing on the question;
- factless: cited sentences per answer holding none of the question's expected facts;
- ordered: answers whose citations are numbered 1, 2, … in order of first use, without gaps;
- unanswerable answered: of the questions the folder cannot answer, those answered anyway (citing a
  source or not saying it found nothing); the right outcome is 0.

    .venv/bin/python bench/chat/offline_answers.py [--baseline COMMIT] [--show tuning|"held out"|all] [--only TEXT]
        [--redis-db N]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench import ROOT
from bench.chat.offline_answers_office import OFFICE_QUESTIONS
from bench.chat.offline_answers_questions import MISSING, QUESTIONS, Question
from bench.common.scratch import BENCH_REDIS_DB, scratch_services

# The commit before the answerer computed dates, durations and sums (issue 42 item 4).
BASELINE = "d64d26e"
ANSWER_FOLDERS = ROOT / "bench" / "chat" / "answer_folders"
FOLDERS = {
    "sample": ROOT / "sample_folder",
    "home": ANSWER_FOLDERS / "home",
    "studio": ANSWER_FOLDERS / "studio",
    "office": ANSWER_FOLDERS / "office",
}
ASKED = [*QUESTIONS, *OFFICE_QUESTIONS]
# How either answerer says a part of the question is not in the folder.
NOT_FOUND = re.compile(r"found nothing|could not find|nothing (?:in this folder )?(?:about|on)\b", re.IGNORECASE)
# An answer's cited sentences: text up to a closing punctuation that follows one or more [n].
CITED_SENTENCE = re.compile(r"[^\[]*?((?:\[\d+(?:,\s*\d+)*\]\s*)+)[.!?…]?")

# (folder id, question, numbered sources) -> the answer and the sources as it numbers them.
Answerer = Callable[[int, str, Sequence[Any]], tuple[str, Sequence[Any]]]


@dataclass
class Score:
    questions: int = 0
    facts: int = 0
    found: int = 0
    wrong: int = 0
    unrelated: int = 0
    factless: int = 0
    ordered: int = 0
    unanswerable: int = 0
    unanswerable_answered: int = 0

    def add(self, other: Score) -> None:
        for name in vars(self):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def cells(self) -> list[str]:
        per = max(1, self.questions)
        return [
            f"{self.found}/{self.facts}",
            str(self.wrong),
            f"{self.unrelated / per:.2f}",
            f"{self.factless / per:.2f}",
            f"{self.ordered}/{self.questions}",
            f"{self.unanswerable_answered}/{self.unanswerable}",
        ]


def baseline_modules(commit: str) -> dict[str, types.ModuleType]:
    """The offline answerer as it was at `commit`: every `apps/llm/extractive*.py` and
    `apps/chat/offline.py` of that commit (those it has) imported under a `baseline_` name, their
    imports of one another rewritten to match; by short name ("extractive", "offline")."""
    listing = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", commit, "apps/llm/", "apps/chat/offline.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    paths = {
        Path(path).stem: path
        for path in listing.split()
        if re.fullmatch(r"apps/llm/extractive\w*\.py|apps/chat/offline\.py", path)
    }
    imports = re.compile(r"\bapps\.(?:llm|chat)\.(extractive\w*|offline)\b")

    def load(name: str) -> types.ModuleType:
        if f"baseline_{name}" in sys.modules:
            return sys.modules[f"baseline_{name}"]
        source = subprocess.run(
            ["git", "show", f"{commit}:{paths[name]}"], cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout
        for needed in sorted(set(imports.findall(source)) & paths.keys()):
            load(needed)  # what it imports first, so its `from baseline_x import ...` finds them
        module = types.ModuleType(f"baseline_{name}")
        sys.modules[module.__name__] = module
        rewritten = imports.sub(
            lambda match: f"baseline_{match.group(1)}" if match.group(1) in paths else match.group(0), source
        )
        exec(compile(rewritten, f"{commit}:{paths[name]}", "exec"), module.__dict__)  # noqa: S102
        return module

    return {name: load(name) for name in paths}


def baseline_answerer(commit: str) -> Answerer:
    from apps.chat.prompts import standard_messages

    modules = baseline_modules(commit)
    provider_class = modules["extractive"].ExtractiveProvider
    if "offline" in modules:
        return standard_answerer(modules["offline"], provider_class)

    def answer(folder_id: int, question: str, sources: Sequence[Any]) -> tuple[str, Sequence[Any]]:
        messages = standard_messages(history=[], question=question, sources=sources)
        return str(provider_class().complete(messages=messages).text), sources

    return answer


def standard_answerer(offline: types.ModuleType, provider_class: type) -> Answerer:
    """Standard mode's offline answer through `offline` (a version of `apps.chat.offline`)."""
    from apps.chat.prompts import standard_messages

    def answer(folder_id: int, question: str, sources: Sequence[Any]) -> tuple[str, Sequence[Any]]:
        messages = standard_messages(history=[], question=question, sources=sources)
        unfound = offline.unfound_terms(folder_id=folder_id, question=question, sources=sources)
        found = offline.offline_answer(llm=provider_class(), messages=messages, sources=sources, unfound=unfound)
        return found.text, found.sources

    return answer


def indexed(name: str, root: Path) -> int:
    from django.contrib.auth import get_user_model

    from apps.library.indexing import folder_index
    from apps.library.models import Folder
    from apps.search.services import folder_lexeme_stats_refresh

    owner, _ = get_user_model().objects.get_or_create(username="bench-answers")
    folder = Folder.objects.create(owner=owner, source="local", external_id=str(root.resolve()), name=name)
    folder_index(folder_id=folder.pk, inline=True)
    folder_lexeme_stats_refresh(folder_id=folder.pk)
    return folder.pk


def has_fact(answer: str, alternatives: tuple[str, ...]) -> bool:
    if alternatives == MISSING:
        return bool(NOT_FOUND.search(answer))
    return any(re.search(rf"(?<![\w,.]){re.escape(fact)}(?!\w)", answer, re.IGNORECASE) for fact in alternatives)


def score(question: Question, answer: str, paths: dict[int, str]) -> Score:
    result = Score(questions=1, facts=len(question.facts))
    result.found = sum(has_fact(answer, fact) for fact in question.facts)
    result.wrong = sum(has_fact(answer, (fact,)) for fact in question.wrong)
    first_use: list[int] = []
    for match in CITED_SENTENCE.finditer(answer):
        numbers = [int(n) for n in re.findall(r"\d+", match.group(1))]
        first_use += [n for n in numbers if n not in first_use]
        if not any(paths.get(n) in question.files for n in numbers):
            result.unrelated += 1
        if not any(has_fact(match.group(0), fact) for fact in question.facts if fact != MISSING):
            result.factless += 1
    result.ordered = int(first_use == list(range(1, len(first_use) + 1)))
    if not question.files:
        result.unanswerable = 1
        result.unanswerable_answered = int(bool(first_use) or not NOT_FOUND.search(answer))
    return result


def run(answerers: dict[str, Answerer], *, show: str | None, only: str) -> dict[tuple[str, str], Score]:
    from django.conf import settings

    from apps.chat.prompts import numbered_sources
    from apps.embeddings.providers import get_embedder
    from apps.search.selectors import chunk_search

    folder_ids = {name: indexed(name, root) for name, root in FOLDERS.items()}
    get_embedder().embed_query("warm up")
    totals: dict[tuple[str, str], Score] = {}
    for question in [question for question in ASKED if only in question.text]:
        hits = chunk_search(folder_id=folder_ids[question.folder], query=question.text, k=settings.CHAT_SEARCH_K)
        sources = numbered_sources(hits)
        split = "held out" if question.held_out else "tuning"
        for label, answer_with in answerers.items():
            answer, numbered = answer_with(folder_ids[question.folder], question.text, sources)
            figures = score(question, answer, {source.n: source.path for source in numbered})
            totals.setdefault((label, split), Score()).add(figures)
            if show in (split, "all"):
                print(f"\n[{label} | {split} | {question.folder}] {question.text}\n  {answer}\n  -> {figures}")
        if show in (split, "all"):
            print("  sources: " + "; ".join(f"[{source.n}] {source.path} {source.location}" for source in sources))
    return totals


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", default=BASELINE, help="commit whose answerer is the 'before' column")
    parser.add_argument("--only", default="", help="ask only the questions containing this text")
    parser.add_argument("--show", choices=["tuning", "held out", "all"], help="print these answers with their scores")
    # The scratch Redis db is flushed afterwards: one nobody else is using.
    parser.add_argument("--redis-db", type=int, default=BENCH_REDIS_DB, help="Redis db for the run (flushed after)")
    args = parser.parse_args()
    with scratch_services(
        "bench_offline_answers", redis_db=args.redis_db, EMBEDDING_PROVIDER="local", LOG_LEVEL="WARNING"
    ):
        from apps.chat import offline
        from apps.llm.extractive import ExtractiveProvider

        answerers = {
            f"before ({args.baseline})": baseline_answerer(args.baseline),
            "after (working tree)": standard_answerer(offline, ExtractiveProvider),
        }
        totals = run(answerers, show=args.show, only=args.only)
    header = ["set", "answerer", "facts found", "facts wrong", "unrelated/answer", "factless/answer", "ordered"]
    header.append("unanswerable answered")
    print("\n" + " | ".join(header))
    print(" | ".join("---" for _ in header))
    for split in ("tuning", "held out"):
        for label in answerers:
            figures = totals.get((label, split), Score())
            print(" | ".join([f"{split} ({figures.questions} q)", label, *figures.cells()]))


if __name__ == "__main__":
    main()
