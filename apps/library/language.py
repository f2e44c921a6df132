"""A folder's language: which PostgreSQL text search configuration stems and filters its words.

Keyword search compares lexemes, so a German folder read with English rules keeps "Verzeichnisse"
and "Verzeichnissen" apart and treats "die" as a word. Each folder has a configuration
(``Folder.language``): chosen by a person, or detected from the text of the first file indexed with
enough of it, through py3langid (a maintained fork of langid.py: its model ships inside the wheel,
4.5 MB, no download at run time, numpy only, about 1 ms a detection once loaded; lingua is more
accurate on short text but its wheel is ten times larger, and fastText detectors fetch their model
or need a native build). The chunk and file tsvector triggers, the backfill and the question's
lexemes all read it through the SQL function ``library_folder_regconfig`` (library/0011).
"""

from __future__ import annotations

from django.db import transaction

from apps.library import enqueue
from apps.library.models import Chunk, Folder

# PostgreSQL's own text search configurations (pg_ts_config of a stock server): the choices.
SEARCH_LANGUAGES = (
    "simple",
    "arabic",
    "armenian",
    "basque",
    "catalan",
    "danish",
    "dutch",
    "english",
    "finnish",
    "french",
    "german",
    "greek",
    "hindi",
    "hungarian",
    "indonesian",
    "irish",
    "italian",
    "lithuanian",
    "nepali",
    "norwegian",
    "portuguese",
    "romanian",
    "russian",
    "serbian",
    "spanish",
    "swedish",
    "tamil",
    "turkish",
    "yiddish",
)
# ISO 639-1 codes (what py3langid names) of the languages PostgreSQL has a configuration for.
_BY_CODE = {
    "ar": "arabic",
    "hy": "armenian",
    "eu": "basque",
    "ca": "catalan",
    "da": "danish",
    "nl": "dutch",
    "en": "english",
    "fi": "finnish",
    "fr": "french",
    "de": "german",
    "el": "greek",
    "hi": "hindi",
    "hu": "hungarian",
    "id": "indonesian",
    "ga": "irish",
    "it": "italian",
    "lt": "lithuanian",
    "ne": "nepali",
    "no": "norwegian",
    "nb": "norwegian",
    "nn": "norwegian",
    "pt": "portuguese",
    "ro": "romanian",
    "ru": "russian",
    "sr": "serbian",
    "es": "spanish",
    "sv": "swedish",
    "ta": "tamil",
    "tr": "turkish",
    "yi": "yiddish",
}
# Fewer letters than this say too little about their language (a title, a table of numbers).
DETECT_MIN_CHARS = 200
# The start of the text decides; more only costs time.
_DETECT_SAMPLE_CHARS = 20_000


def language_detect(*, text: str) -> str | None:
    """The search configuration for ``text``: its language's, "simple" for a language PostgreSQL
    has no stemmer for (Chinese, Japanese...: words kept as written), None when too short to tell."""
    sample = " ".join(text[:_DETECT_SAMPLE_CHARS].split())
    if sum(ch.isalpha() for ch in sample) < DETECT_MIN_CHARS:
        return None
    import py3langid  # loads its model (about 1 s) on first use: workers only

    code, _ = py3langid.classify(sample)
    return _BY_CODE.get(code, "simple")


def folder_language_detect(*, folder: Folder, text: str) -> str | None:
    """Set a folder's language from the first file with enough text, once: the conditional UPDATE
    lets one file of those indexed at the same time decide. Chunks already indexed (files with too
    little text, under the fallback) get their keyword vectors again. The language set, or None."""
    if folder.language:
        return None
    language = language_detect(text=text)
    if language is None:
        return None
    with transaction.atomic():
        claimed = Folder.objects.filter(pk=folder.pk, language="").update(language=language)
        if claimed:
            folder.language = language
            if Chunk.objects.filter(folder_id=folder.pk).exists():
                folder_keywords_reindex_enqueue(folder_id=folder.pk)
    return language if claimed else None


def folder_keywords_reindex_enqueue(*, folder_id: int) -> None:
    """Recompute the folder's chunk and file keyword vectors under its language, once this commits."""
    transaction.on_commit(lambda: enqueue.reindex_folder_keywords(folder_id))
