"""``manage.py search FOLDER_ID "query" [--mode hybrid|vector|keyword] [--k 10] [--json]``.

An operator's tool: it reads any folder, with no user scoping.
"""

from __future__ import annotations

import dataclasses
import json
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.core.api import ApplicationError
from apps.library.models import Folder
from apps.search.selectors import K_MAX, chunk_search
from apps.search.types import SearchMode

SNIPPET_CHARS = 160


class Command(BaseCommand):
    help = "Search one folder's chunks (hybrid by default) and print the ranked hits."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("folder_id", type=int)
        parser.add_argument("query")
        parser.add_argument("--mode", choices=[mode.value for mode in SearchMode], default=SearchMode.HYBRID.value)
        parser.add_argument("--k", type=int, default=10, help=f"1..{K_MAX}")
        parser.add_argument("--json", action="store_true", help="One JSON document with the hits and timing.")

    def handle(self, *args: Any, **options: Any) -> None:
        if not Folder.objects.filter(pk=options["folder_id"]).exists():
            raise CommandError(f"Folder {options['folder_id']} does not exist.")
        started = time.perf_counter()
        try:
            hits = chunk_search(
                folder_id=options["folder_id"],
                query=options["query"],
                k=options["k"],
                mode=SearchMode(options["mode"]),
            )
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        took_ms = round((time.perf_counter() - started) * 1000, 1)
        if options["json"]:
            payload = {"results": [dataclasses.asdict(hit) for hit in hits], "took_ms": took_ms}
            self.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False))
            return
        for n, hit in enumerate(hits, start=1):
            ranks = f"vector #{hit.vector_rank or '-'} keyword #{hit.keyword_rank or '-'}"
            self.stdout.write(f"{n:>3}. {hit.score:.4f}  {ranks}  {hit.path}  (chunk {hit.chunk_id})")
            snippet = " ".join(hit.text.split())[:SNIPPET_CHARS]
            self.stdout.write(f"     {snippet}")
        self.stdout.write(f"{len(hits)} hits in {took_ms} ms")
