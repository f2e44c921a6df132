"""Per-folder lexeme statistics behind the BM25-like keyword ranking.

Chunks keep their tsvector in ``library_chunk.search_vector``; these tables add what BM25 needs
and a tsvector cannot tell: how many chunks of the folder hold each lexeme (document frequency)
and the folder's chunk count and total length in tokens (for IDF and the average length), and
the same per file (the keyword search scores each file as a whole too). They are
rebuilt by ``services.folder_lexeme_stats_refresh``; search reads them in its one statement and
tolerates them being stale or missing.
"""

from __future__ import annotations

from django.db import models

from apps.library.models import Folder


class FolderTermStats(models.Model):
    folder = models.OneToOneField(Folder, on_delete=models.CASCADE, primary_key=True, related_name="+")
    chunk_count = models.BigIntegerField(help_text="Chunks with a search vector.")
    total_length = models.BigIntegerField(help_text="Sum of length(search_vector): distinct lexemes per chunk.")
    total_tokens = models.BigIntegerField(
        default=0, db_default=0, help_text="Sum of the chunks' token_count: BM25's average document length."
    )
    file_count = models.BigIntegerField(null=True, help_text="Files with such a chunk; NULL before the first recount.")
    refreshed_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"folder {self.folder_id}: {self.chunk_count} chunks"

    @property
    def average_length(self) -> float:
        return self.total_length / self.chunk_count if self.chunk_count else 0.0


class FolderLexeme(models.Model):
    pk = models.CompositePrimaryKey("folder", "lexeme")
    folder = models.ForeignKey(Folder, on_delete=models.CASCADE, related_name="+", db_index=False)
    lexeme = models.TextField()
    document_count = models.IntegerField()
    file_count = models.IntegerField(null=True, help_text="Files holding it; NULL before the first recount.")

    def __str__(self) -> str:
        return f"{self.lexeme} in {self.document_count} chunks of folder {self.folder_id}"
