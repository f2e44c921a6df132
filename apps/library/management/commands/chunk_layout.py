from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from apps.library import chunk_partitions
from apps.library.chunk_partitions import PartitionSize

_GIB = 2**30
# Measured at 1M-5M chunks (bench/README.md): a large folder's vector recall@10 stays >= 0.96 in a
# partition of up to ~460k rows and fell to 0.94 at ~550k.
LARGEST_PARTITION_ROWS = 400_000


class Command(BaseCommand):
    requires_system_checks: list[str] = []
    help = (
        "Show how library_chunk is partitioned (chunks and bytes per partition); with --partitions N, move "
        "it to N hash partitions by folder while searches and indexing go on."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--partitions",
            type=int,
            help=f"move to this many hash partitions (the migrations create {chunk_partitions.PARTITIONS})",
        )
        parser.add_argument(
            "--batch-rows",
            type=int,
            default=chunk_partitions.COPY_BATCH_ROWS,
            help="rows copied per short transaction during a move",
        )

    def handle(self, *args: Any, partitions: int | None, batch_rows: int, **options: Any) -> None:
        sizes = chunk_partitions.chunk_partition_sizes()
        if partitions is not None and self._move(partitions=partitions, batch_rows=batch_rows, now=len(sizes)):
            sizes = chunk_partitions.chunk_partition_sizes()
        self._show(sizes)

    def _move(self, *, partitions: int, batch_rows: int, now: int) -> bool:
        """Move to ``partitions`` unless the table has that many (``now``); whether it moved."""
        if not 1 <= partitions <= chunk_partitions.MAX_PARTITIONS:
            raise CommandError(f"--partitions must be between 1 and {chunk_partitions.MAX_PARTITIONS}.")
        if batch_rows < 1:
            raise CommandError("--batch-rows must be at least 1.")
        if now == partitions:
            self.stdout.write(f"library_chunk already has {partitions} partitions: nothing to move.")
            return False
        self.stdout.write(f"Moving library_chunk to {partitions} hash partitions; searches and indexing go on.")
        report = chunk_partitions.chunk_table_move(
            layout=chunk_partitions.partitioned_layout(partitions=partitions), batch_rows=batch_rows
        )
        steps = ", ".join(f"{step} {seconds:.1f} s" for step, seconds in report.seconds.items())
        self.stdout.write(
            f"Moved {report.rows_copied:,} chunks in {report.batches:,} batches"
            f" ({report.retries} lock waits retried): {steps}."
        )
        return True

    def _show(self, sizes: list[PartitionSize]) -> None:
        if not sizes:
            self.stdout.write("library_chunk is one plain table (not partitioned).")
            return
        rows = sum(size.rows for size in sizes)
        average = rows / len(sizes)
        self.stdout.write(
            f"library_chunk: {len(sizes)} hash partitions by folder, ~{rows:,} chunks,"
            f" {sum(size.bytes for size in sizes) / _GIB:.2f} GiB with indexes"
        )
        for size in sizes:
            share = f"{size.rows / average:.1f}x the average" if average else "empty"
            self.stdout.write(f"  {size.name}: ~{size.rows:,} chunks ({share}), {size.bytes / _GIB:.2f} GiB")
        largest = max(sizes, key=lambda size: size.rows)
        if largest.rows > LARGEST_PARTITION_ROWS:
            self.stdout.write(
                f"{largest.name} holds more than {LARGEST_PARTITION_ROWS:,} chunks: searches of its large folders"
                f" lose recall. Move to more partitions: chunk_layout --partitions {len(sizes) * 2}"
            )
