"""What the search benches share: their scratch services, percentiles, public IR test collections.

``use_scratch_services("bench_search_quality")`` creates the database when missing (it is kept
between runs, so loaded corpora are reused), points Django at it, migrates it and sets Django
up. Drop one with ``DROP DATABASE bench_search_...`` when done.

Each collection is read from ``../shared/data/<name>`` (see the README there) into a
``Collection``: documents by id (the text the library indexes and bm25s reads), queries by
number, and graded judgements (query -> doc -> gain; binary collections use gain 1).

Cranfield and CACM have their own readers (their README's reference figures say which fields
count). Any other directory there, or one named by path, is read by its layout
(``collection_at``), so a collection can be added without code:
- SMART (the Cornell layout of CACM, CISI, MED, ADI...): a documents file and a queries file of
  ``.I <id>`` records, whose ``.T`` title, ``.A`` authors, ``.W`` text and ``.K`` keywords are read
  (other fields, such as ``.X`` citations and ``.B`` dates, are not); and a judgements file of
  ``query doc`` lines, or TREC's ``query 0 doc gain``;
- BEIR: ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl`` (``_id``, ``text``) and
  ``qrels/test.tsv`` (``query-id``, ``corpus-id``, ``score``).
"""

from __future__ import annotations

import gzip
import json
import math
import re
import statistics
import subprocess
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from bench import ROOT
from bench.common.scratch import kept_database

SCRATCH_REDIS_DB = 10


def use_scratch_services(
    database_name: str, *, embedding_provider: str = "local", redis_db: int = SCRATCH_REDIS_DB
) -> None:
    if not database_name.startswith("bench_search"):
        raise SystemExit(f"refusing to use {database_name!r}: search benchmarks only use bench_search* databases")
    kept_database(database_name, redis_db=redis_db, EMBEDDING_PROVIDER=embedding_provider, LOG_LEVEL="WARNING")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    return statistics.quantiles(ordered, n=100, method="inclusive")[round(q) - 1]


# --- public IR test collections ---------------------------------------------------------------------

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


_SMART_TEXT_FIELDS = "TAWK"
_NUMBERS = re.compile(r"^\s*\d+(\s+[-\w.]+)+\s*$")


def _records(text: str) -> list[tuple[str, dict[str, str]]]:
    """``.I`` records as (id, fields); every field is read, the caller picks."""
    return [
        (record.split(None, 1)[0], _fields(record, "A-Z"))
        for record in re.split(r"^\.I\s+", text, flags=re.M)[1:]
        if record.strip()
    ]


def _smart_text(fields: dict[str, str], names: str) -> str:
    return "\n\n".join(fields[name] for name in names if fields.get(name))


def _smart_judgements(text: str) -> dict[int, dict[int, int]]:
    """``query doc ...`` lines, or TREC's ``query 0 doc gain`` (the second column always 0 or Q0)."""
    rows = [line.split() for line in text.splitlines() if line.strip()]
    trec = all(len(row) >= 3 and row[1] in ("0", "Q0") for row in rows)
    judged: dict[int, dict[int, int]] = defaultdict(dict)
    for row in rows:
        query, doc = (row[0], row[2]) if trec else (row[0], row[1])
        gain = int(float(row[3])) if trec and len(row) > 3 else 1
        if gain >= 1:
            judged[int(query)][int(doc)] = gain
    return dict(judged)


def smart(root: Path) -> Collection:
    """A SMART collection. Files are told apart by content: the queries file is the ``.I`` file
    named like a query file, the documents file the largest other one (CISI ships its Boolean
    queries as ``.I`` records too), the judgements file the one of number lines (``*rel*`` if several)."""
    texts = {
        path: path.read_text(encoding="latin-1")
        for path in sorted(root.iterdir())
        if path.is_file() and not path.name.lower().startswith("readme")
    }
    recorded = [path for path, text in texts.items() if text.lstrip().startswith(".I")]
    query_files = [path for path in recorded if re.search(r"qry|quer|que\b|topic", path.name, flags=re.I)]
    document_files = sorted((path for path in recorded if path not in query_files), key=lambda p: len(texts[p]))
    judgement_files = [
        path
        for path, text in texts.items()
        if path not in recorded
        and (lines := [line for line in text.splitlines() if line.strip()])
        and all(_NUMBERS.match(line) for line in lines)
    ]
    if len(judgement_files) > 1:
        judgement_files = [path for path in judgement_files if "rel" in path.name.lower()]
    if len(query_files) != 1 or not document_files or len(judgement_files) != 1:
        raise ValueError(
            f"{root}: a SMART collection needs a documents file and a queries file of .I records "
            f"(the queries file named like *.qry or query*) and one judgements file; found documents "
            f"{[p.name for p in document_files]}, queries {[p.name for p in query_files]}, "
            f"judgements {[p.name for p in judgement_files]}"
        )
    documents = {
        int(number): text
        for number, fields in _records(texts[document_files[-1]])
        if (text := _smart_text(fields, _SMART_TEXT_FIELDS))
    }
    requests = [(int(number), _smart_text(fields, "TW")) for number, fields in _records(texts[query_files[0]])]
    judged = _smart_judgements(texts[judgement_files[0]])
    # Judgements name queries by their .I number, or (as Cranfield's do) by their place in the file.
    by_number = {number: text for number, text in requests if text}
    if not judged.keys() <= by_number.keys():
        by_number = {place: text for place, (_, text) in enumerate(requests, start=1) if text}
    return Collection(root.name, documents, by_number, judged)


def beir(root: Path) -> Collection:
    """A BEIR collection; its string ids are numbered in file order."""

    def lines(path: Path) -> list[dict[str, str]]:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]

    corpus, requests = lines(root / "corpus.jsonl"), lines(root / "queries.jsonl")
    doc_ids = {row["_id"]: number for number, row in enumerate(corpus, start=1)}
    query_ids = {row["_id"]: number for number, row in enumerate(requests, start=1)}
    documents = {
        doc_ids[row["_id"]]: "\n\n".join(part for part in (row.get("title", ""), row.get("text", "")) if part)
        for row in corpus
    }
    judged: dict[int, dict[int, int]] = defaultdict(dict)
    for line in (root / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        query, doc, score = line.split("\t")[:3]
        if int(float(score)) >= 1 and query in query_ids and doc in doc_ids:
            judged[query_ids[query]][doc_ids[doc]] = int(float(score))
    queries = {query_ids[row["_id"]]: row["text"] for row in requests}
    return Collection(root.name, documents, queries, dict(judged))


def collection_at(root: Path) -> Collection:
    """The collection in a directory, read by its layout (BEIR if it has corpus.jsonl, else SMART)."""
    return beir(root) if (root / "corpus.jsonl").is_file() else smart(root)


MANPAGE_PACKAGES = ("manpages", "manpages-dev")  # Debian's Linux man-pages project, sections 2 to 7
MANPAGE_QUERY_EVERY = 3  # every third page's summary is a query (the pages in name order)


def manpages() -> Collection:
    """Known-item search over the man pages Debian's ``manpages`` packages ship (``make bench-docs``).

    A document is a page as ``man`` renders it, without its NAME line; a query is that line's
    summary after the dash ("formatted output conversion" for printf(3)), which finds the pages
    summarised so. The pages are long (several chunks each) and technical, unlike Cranfield and
    CACM's abstracts; the summaries are short and seldom repeat the page's own words.
    """
    listed = subprocess.run(["dpkg", "-L", *MANPAGE_PACKAGES], capture_output=True, text=True, check=False)
    pages = sorted(
        path
        for line in listed.stdout.splitlines()
        if re.search(r"/man/man[2-7]/[^/]+\.gz$", line)
        and (path := Path(line)).is_file()
        and not path.is_symlink()  # another name of a page
        and not gzip.decompress(path.read_bytes()).startswith(b".so")  # so is this
    )
    if not pages:
        raise ValueError(f"no man pages found: install Debian's {' '.join(MANPAGE_PACKAGES)} (make bench-docs)")
    cache = ROOT / "var" / "bench" / "manpages.json"
    rendered: dict[str, str] = json.loads(cache.read_text()) if cache.exists() else {}
    missing = [path for path in pages if path.name not in rendered]
    for path in missing:
        render = subprocess.run(
            ["man", "-l", str(path)],
            capture_output=True,
            text=True,
            check=False,
            env={"MANWIDTH": "80", "LANG": "C.UTF-8"},
        )
        rendered[path.name] = render.stdout
    if missing:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(rendered))
    documents: dict[int, str] = {}
    summaries: dict[int, str] = {}
    for number, path in enumerate(pages, start=1):
        text = rendered[path.name]
        name = re.search(r"^NAME\n(.*?)\n\n", text, flags=re.M | re.S)
        summary = name and " ".join(name.group(1).split()).partition(" - ")[2]
        if not summary:
            continue
        body = text[: name.start()] + text[name.end() :]
        documents[number] = "\n".join(line.rstrip() for line in body.splitlines()[1:-1]).strip()  # no header, footer
        summaries[number] = summary
    summarised: dict[str, dict[int, int]] = defaultdict(dict)  # the pages each summary finds
    for number, summary in summaries.items():
        summarised[summary.lower()][number] = 1
    queries = {number: summaries[number] for number in list(summaries)[::MANPAGE_QUERY_EVERY]}
    return Collection("manpages", documents, queries, {n: summarised[queries[n].lower()] for n in queries})


KJV_QUESTIONS = Path(__file__).parent / "ir_data" / "kjv_questions.tsv"
_CHAPTER = re.compile(r"^((?:[1-3] )?[A-Z][a-z]+(?: of [A-Z][a-z]+)?) (\d+)$", flags=re.M)


def kjv() -> Collection:
    """Long natural-language questions over non-technical prose: the King James Bible as Debian's
    ``bible-kjv`` prints it (``make bench-docs``), one document a chapter (1,189), and the 60
    questions of ``ir_data/kjv_questions.tsv`` (modern English, written from memory of the stories,
    not from the text), each judged against the chapters that tell its story. Unlike the other
    collections, question and text seldom share their words (1611 English: "unto", "thee", "spake").
    """
    try:
        printed = subprocess.run(["bible", "gen1:1-rev22:21"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        raise ValueError(f"no bible program: install Debian's bible-kjv (make bench-docs); {error}") from None
    headers = list(_CHAPTER.finditer(printed))
    numbers = {f"{h.group(1)} {h.group(2)}": number for number, h in enumerate(headers, start=1)}
    documents = {}
    for number, (header, following) in enumerate(zip(headers, [*headers[1:], None], strict=True), start=1):
        verses = printed[header.end() : following.start() if following else len(printed)]
        # A verse per line: "  3 And God said, ..." starts one, an indented line without a number goes on.
        text = re.sub(r"\n(?!\s*\d+ )\s*", " ", verses.strip())
        documents[number] = header.group(0) + "\n\n" + re.sub(r"^\s*\d+ ", "", text, flags=re.M)
    queries: dict[int, str] = {}
    judged: dict[int, dict[int, int]] = {}
    for line in KJV_QUESTIONS.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            number, chapters, question = line.split("\t")
            queries[int(number)] = question
            judged[int(number)] = {numbers[chapter]: 1 for chapter in chapters.split(";")}
    return Collection("kjv", documents, queries, judged)


COLLECTIONS: dict[str, Callable[[], Collection]] = {
    "cranfield": cranfield,
    "cacm": cacm,
    "cranfield-titles": titles_only(cranfield),
    "cacm-titles": titles_only(cacm),
    "manpages": manpages,
    "kjv": kjv,
}
# Every other collection in the data directory, by its directory's name.
COLLECTIONS.update(
    (path.name, partial(collection_at, path))
    for path in sorted(DATA.iterdir() if DATA.is_dir() else [])
    if path.is_dir() and path.name not in COLLECTIONS
)


def collection_named(name: str) -> Collection:
    """A collection by its name here, or the one in the directory ``name`` is a path to."""
    if name in COLLECTIONS:
        return COLLECTIONS[name]()
    path = Path(name)
    if not path.is_dir():
        raise ValueError(f"{name}: neither a known collection ({', '.join(sorted(COLLECTIONS))}) nor a directory")
    return collection_at(path.resolve())


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
