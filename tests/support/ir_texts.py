"""Held-out text for the embedder tests: CISI's abstracts (``../shared/data/cisi``) cut by the project's chunker.

The same chunks bench/search/embedder_speed.py measures (fields T, A, W, K of each ``.I`` record, in file order).
"""

from __future__ import annotations

import re

from tests.support.servers import BASE_DIR

_FIELDS = "TAWK"


def cisi_chunks(count: int) -> list[str]:
    from apps.library.chunking import chunk_document
    from apps.library.parsing import ParsedDocument

    shared = next((parent / "shared" for parent in BASE_DIR.parents if (parent / "shared").is_dir()), None)
    assert shared is not None, "the CISI collection lies in ../shared/data/cisi"
    path = shared / "data" / "cisi" / "CISI.ALL"
    chunks: list[str] = []
    for record in re.split(r"^\.I\s+", path.read_text(encoding="latin-1"), flags=re.M)[1:]:
        fields = {
            name: " ".join(text.split())
            for name, text in re.findall(r"^\.([A-Z])\s*\n(.*?)(?=^\.[A-Z]\s*\n|\Z)", record, flags=re.M | re.S)
        }
        text = "\n\n".join(fields[name] for name in _FIELDS if fields.get(name))
        chunks.extend(piece.text for piece in chunk_document(document=ParsedDocument(text=text)))
        if len(chunks) >= count:
            break
    return chunks[:count]
