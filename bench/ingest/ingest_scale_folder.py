"""The generated folder of bench/ingest/ingest_scale.py: short notes (Markdown and plain text) from a
Zipf-like vocabulary, most one chunk, some several, ~100 to a directory, cached per size and seed."""

from __future__ import annotations

import itertools
import random
import shutil
import tempfile
import time
from pathlib import Path

from bench.ingest.common import random_sentences, vocabulary

# The function words head the ranking (rank 1 weighs most): the notes read as English to the
# folder's language detection, as real notes would.
FUNCTION_WORDS = [
    *("the", "of", "and", "to", "in", "a", "is", "for", "on", "that"),
    *("with", "as", "it", "was", "by", "at", "from", "this", "be", "are"),
]


def synthetic_folder(*, files: int, seed: int, per_directory: int) -> Path:
    """The generated folder for (files, seed), written once and kept under the temporary directory."""
    root = Path(tempfile.gettempdir()) / "bench-ingest-scale" / f"files-{files}-seed-{seed}-dir-{per_directory}"
    complete = root.with_name(root.name + ".complete")  # beside the tree: never listed as a file
    if complete.exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    started = time.monotonic()
    rng = random.Random(seed)
    words, _ = vocabulary(rng)
    ranked = [*FUNCTION_WORDS, *words]
    cum_weights = list(itertools.accumulate(1 / (rank + 1) for rank in range(len(ranked))))
    for number in range(files):
        leaf = number // per_directory
        directory = root / f"area-{leaf // 100:02d}" / f"topic-{leaf // 10 % 10}" / f"notes-{leaf % 10}"
        if number % per_directory == 0:
            directory.mkdir(parents=True)
        name, text = _note(rng, ranked, cum_weights, number)
        (directory / name).write_text(text)
    complete.write_text(f"{files} files written in {time.monotonic() - started:.1f} s\n")
    print(f"generated {files:,} files in {time.monotonic() - started:.1f} s")
    return root


def _note(rng: random.Random, words: list[str], cum_weights: list[float], number: int) -> tuple[str, str]:
    """A note of 1-6 sentences (most: one chunk), 7-30 (a few chunks) or 31-120 (a long document)."""
    draw = rng.random()
    count = rng.randint(1, 6) if draw < 0.7 else rng.randint(7, 30) if draw < 0.95 else rng.randint(31, 120)
    lines = random_sentences(rng, words, cum_weights, count)
    title = " ".join(lines[0].split()[:4]).rstrip(".?!")
    if number % 5 < 3:
        sections = [" ".join(lines[start : start + 8]) for start in range(0, count, 8)]
        body = "\n\n".join(f"## Part {n + 1}\n\n{text}" if count > 8 else text for n, text in enumerate(sections))
        return f"note-{number:06d}.md", f"# {title}\n\n{body}\n"
    paragraphs = [" ".join(lines[start : start + 4]) for start in range(0, count, 4)]
    return f"note-{number:06d}.txt", "\n\n".join(paragraphs) + "\n"
