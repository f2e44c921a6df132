"""Public IR test collections for bench/search_quality.py: documents, queries, judgements, metrics.

Each collection is read from ``../shared/data/<name>`` (see the README there) into a
``Collection``: documents by id (the text the library indexes and bm25s reads), queries by
number, and graded judgements (query -> doc -> gain; binary collections use gain 1).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from scratch import ROOT

# ../shared/data beside the main checkout; a worktree under wt/ finds it one level further up.
DATA = next((p / "shared" / "data" for p in ROOT.parents if (p / "shared" / "data").is_dir()), ROOT / "data")


@dataclass(frozen=True)
class Collection:
    name: str
    documents: dict[int, str]
    queries: dict[int, str]
    judged: dict[int, dict[int, int]]

    def scored_queries(self) -> list[int]:
        """Queries with at least one relevant document (the others score 0 whatever the ranking)."""
        return [number for number in sorted(self.queries) if self.judged.get(number)]


def _fields(record: str, names: str) -> dict[str, str]:
    pattern = rf"^\.([{names}])\s*\n(.*?)(?=^\.[A-Z]\s*\n|\Z)"
    return {name: " ".join(text.split()) for name, text in re.findall(pattern, record, flags=re.M | re.S)}


def cranfield() -> Collection:
    """Title + text, as the README's reference figures were made (.W itself repeats the title)."""
    root = DATA / "cranfield"
    documents = {}
    for record in re.split(r"^\.I ", (root / "cran.all.1400").read_text(encoding="latin-1"), flags=re.M)[1:]:
        fields = _fields(record, "TABW")
        title, words = fields.get("T", ""), fields.get("W", "")
        documents[int(record.split(None, 1)[0])] = f"{title}\n\n{words}" if title else words
    # Queries are numbered 1..225 in file order (the .I numbers are not consecutive).
    records = re.split(r"^\.I ", (root / "cran.qry").read_text(encoding="latin-1"), flags=re.M)[1:]
    queries = {number: _fields(record, "W")["W"] for number, record in enumerate(records, start=1)}
    judged: dict[int, dict[int, int]] = defaultdict(dict)
    for line in (root / "QRelsCorrectedforTRECeval").read_text().splitlines():
        query, _, doc, gain = line.split()
        if 1 <= int(gain) <= 4:
            judged[int(query)][int(doc)] = int(gain)
    return Collection("cranfield", documents, queries, dict(judged))


def cacm() -> Collection:
    """Title + authors + abstract (the README's reference); dates and citation data left out."""
    root = DATA / "cacm"
    documents = {}
    for record in re.split(r"^\.I ", (root / "cacm.all").read_text(encoding="latin-1"), flags=re.M)[1:]:
        fields = _fields(record, "TWBANX")
        parts = [fields.get(name, "") for name in "TAW"]
        documents[int(record.split(None, 1)[0])] = "\n\n".join(part for part in parts if part)
    queries = {}
    for record in re.split(r"^\.I ", (root / "query.text").read_text(encoding="latin-1"), flags=re.M)[1:]:
        request = _fields(record, "WAN").get("W")
        if request:  # the file ends with an empty ".I 0"
            queries[int(record.split(None, 1)[0])] = request
    judged: dict[int, dict[int, int]] = defaultdict(dict)
    for line in (root / "qrels.text").read_text().splitlines():
        if line.strip():
            query, doc = line.split()[:2]
            judged[int(query)][int(doc)] = 1
    return Collection("cacm", documents, queries, dict(judged))


def titles_only(load: Callable[[], Collection]) -> Callable[[], Collection]:
    """The same queries and judgements over the documents' titles alone: short documents under long
    requests, a regime neither full collection has (a check against tuning to document length)."""

    def titles() -> Collection:
        full = load()
        documents = {number: text.split("\n\n", 1)[0] for number, text in full.documents.items()}
        return Collection(f"{full.name}-titles", documents, full.queries, full.judged)

    return titles


COLLECTIONS = {
    "cranfield": cranfield,
    "cacm": cacm,
    "cranfield-titles": titles_only(cranfield),
    "cacm-titles": titles_only(cacm),
}


def ndcg_at_10(ranked: list[int], gains: dict[int, int]) -> float:
    """Exponential gain 2^g - 1 (for binary judgements the same as linear gain)."""
    dcg = sum((2 ** gains.get(doc, 0) - 1) / math.log2(i + 2) for i, doc in enumerate(ranked[:10]))
    ideal = sorted(gains.values(), reverse=True)[:10]
    idcg = sum((2**gain - 1) / math.log2(i + 2) for i, gain in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at_100(ranked: list[int], gains: dict[int, int]) -> float:
    return len(set(ranked[:100]) & gains.keys()) / len(gains) if gains else 0.0


def rrf(rankings: list[list[int]], *, k: int = 60, depth: int = 50) -> list[int]:
    """Plain reciprocal-rank fusion of document rankings, the top ``depth`` of each."""
    scores: dict[int, float] = defaultdict(float)
    for ranking in rankings:
        for rank, doc in enumerate(ranking[:depth], start=1):
            scores[doc] += 1 / (k + rank)
    return sorted(scores, key=lambda doc: (-scores[doc], doc))


def documents_path(collection: str, chunk_tokens: int) -> Path:
    # Resolved: the folder's identity is this path, whichever checkout runs the bench.
    return (ROOT / "var" / "bench" / collection / f"tokens-{chunk_tokens}").resolve()
