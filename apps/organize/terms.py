"""Comparable words of file names, digests and guideline lines.

The extractive provider's stemmer and stopwords, plus what matters for filing: "W-2" and "W2"
must meet, file extensions and years say nothing about where a file belongs, and long numbers
are ids (invoice numbers), not topics.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from apps.llm.extractive_text import terms as _terms

# "W-2", "Q-4", "I-9": short letter-digit codes written with a hyphen are the same code without it.
_CODE = re.compile(r"\b([a-z]{1,2})-(\d{1,2})\b")
_YEAR = re.compile(r"^(19|20)\d{2}$")
# Words of filing rules that say how, not what ("always goes first"), and date templates (YYYY-MM).
_FILLER = frozenset(_terms("go goes always even first below above like one keep yyyy mm dd"))


def organize_terms(text: str) -> list[str]:
    words = _terms(_CODE.sub(r"\1\2", text.lower()).replace("_", " "))
    return [word for word in words if _meaningful(word)]


def name_terms(name: str) -> list[str]:
    """Terms of a file name without its extension (``W2_2024.pdf`` -> ``["w2"]``)."""
    return organize_terms(PurePosixPath(name).stem)


def folder_terms(path: str) -> list[str]:
    return organize_terms(path.replace("/", " ").replace("{year}", " "))


def _meaningful(word: str) -> bool:
    if len(word) < 2 or word in _FILLER or _YEAR.match(word):
        return False
    # Three or four digits can be a form (1099, 401); longer are ids, shorter are noise.
    return not word.isdigit() or 3 <= len(word) <= 4
