"""Collections of short abstracts (one chunk a document) for bench/search/search_quality.py.

Both are known-item collections of a kind the others are not (issue 42 item 6): a document is a
few sentences, so a file's BM25 and its one chunk's are the same evidence, and the question is
worded otherwise than its answer. Their queries and judgements are built by fixed rules from text
Debian ships, so every machine builds the same collection.
"""

from __future__ import annotations

import gzip
import re
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from bench.search.common import Collection

WORDNET = Path("/usr/share/wordnet/data.noun")
WORDNET_TOPICS = ("08", "13")  # WordNet's lexicographer files noun.body and noun.food
WORDNET_QUERIES = 300


def wordnet() -> Collection:
    """A glossary that never names its entries: WordNet 3.0's noun synsets on the body and on food
    (Debian's ``wordnet-base``, ``make bench-docs``; 4,589 synsets), each a document of its gloss as
    WordNet prints it (the definition, then its examples), without the synset's words. A question is
    the words of a synset that has two or more ("freckle, lentigo", answered by "a small brownish
    spot (of the pigment melanin) on the skin"), 300 of them evenly spaced in the file's order;
    judged: that synset, and any other with the same words. Siblings stay in the collection (all
    of a topic's synsets), so the near misses are there. A quarter of a question's distinct words
    occur in its answer on average, and in 38% of the questions none does.
    """
    if not WORDNET.is_file():
        raise ValueError(f"{WORDNET} not found: install Debian's wordnet-base (make bench-docs)")
    documents: dict[int, str] = {}
    names: dict[int, str] = {}
    for line in WORDNET.read_text(encoding="utf-8").splitlines():
        head, _, gloss = line.partition(" | ")
        fields = head.split()
        if line.startswith(" ") or fields[1] not in WORDNET_TOPICS:  # the licence, other topics
            continue
        # A synset's line: its offset, topic, part of speech, its count of words (hexadecimal), then
        # each word and its sense number. A marker such as "(a)" is not part of the word.
        words = [re.sub(r"\(\w+\)$", "", fields[4 + 2 * i]).replace("_", " ") for i in range(int(fields[3], 16))]
        number = len(documents) + 1
        documents[number] = gloss.strip()
        if len(words) > 1:
            names[number] = ", ".join(words)
    named = list(names)
    queries = {number: names[number] for number in named[:: len(named) // WORDNET_QUERIES][:WORDNET_QUERIES]}
    same: dict[str, dict[int, int]] = defaultdict(dict)
    for number, words in names.items():
        same[words.lower()][number] = 1
    return Collection("wordnet", documents, queries, {n: same[queries[n].lower()] for n in queries})


DEBIAN_PACKAGES = Path(__file__).parent / "ir_data" / "debian_packages.tsv.gz"
PACKAGE_QUERY_EVERY = 7
_ESCAPED = re.compile(r"\\(.)")  # "\\n" a paragraph break, "\\\\" a backslash


def _unescaped(text: str) -> str:
    return _ESCAPED.sub(lambda match: "\n" if match.group(1) == "n" else match.group(1), text)


def debian_packages() -> Collection:
    """Short product descriptions: the long descriptions of 2,035 Debian packages, one a source
    package, frozen from Debian 12's package lists into ``ir_data/debian_packages.tsv.gz`` (its
    header says from which release and by what rule; 335 KiB), and as questions every 7th
    package's one-line synopsis ("Creates X menus from the shell"; 291), judged by the packages
    that synopsis describes. A document is 48 words at the median (95th percentile 144); the
    package's name is in neither the document nor the question.
    """
    rows = [
        line.split("\t")
        for line in gzip.decompress(DEBIAN_PACKAGES.read_bytes()).decode().splitlines()
        if not line.startswith("#")
    ]
    documents = {number: _unescaped(text) for number, (_, _, text) in enumerate(rows, 1)}
    synopses = {number: synopsis for number, (_, synopsis, _) in enumerate(rows, 1)}
    described: dict[str, dict[int, int]] = defaultdict(dict)
    for number, synopsis in synopses.items():
        described[synopsis.lower()][number] = 1
    queries = {number: synopses[number] for number in list(synopses)[::PACKAGE_QUERY_EVERY]}
    return Collection("debian-packages", documents, queries, {n: described[queries[n].lower()] for n in queries})


SHORT_ABSTRACTS: dict[str, Callable[[], Collection]] = {"wordnet": wordnet, "debian-packages": debian_packages}
