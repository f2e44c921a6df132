"""A folder's File rows as a sync compares them with a listing: plain values, read fast.

A sync reads every row of the folder, twice (what the local source may skip hashing, then what
reconcile compares). At 100,000 rows, model instances, Django's timestamp loader (Python, one
call per value) and its converters (one on a query makes every row pass through Python) cost
seconds (bench/ops/sync_nochange.py). So these reads have no converter: times come as integer
microseconds since the epoch and ``source_extra`` as text, NULL when empty.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any, NamedTuple

from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import BigIntegerField, Func, QuerySet, TextField, Value
from django.db.models.functions import Cast, NullIf

from apps.library.models import File

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
# Rows read per round trip: a sync reads them all, and ten round trips beat fifty.
ROWS_PER_FETCH = 10_000


class EpochMicroseconds(Func):
    """A timestamp as whole microseconds since 1970 (EXTRACT gives an exact numeric)."""

    template = "(EXTRACT(EPOCH FROM %(expressions)s) * 1000000)::bigint"
    output_field = BigIntegerField()

    def get_db_converters(self, connection: BaseDatabaseWrapper) -> list[Any]:
        return []  # already a bigint: no int() on each value


def from_epoch_microseconds(value: int | None) -> dt.datetime | None:
    return None if value is None else _EPOCH + dt.timedelta(microseconds=value)


class ListedRow(NamedTuple):
    """What reconcile needs of a File row: the listing's columns, its id and its status."""

    pk: int
    external_id: str
    path: str
    name: str
    mime_type: str
    size: int
    checksum: str
    modified_time: dt.datetime | None
    source_extra: dict[str, Any]
    status: str
    error: str


def listed_rows(files: QuerySet[File]) -> dict[str, ListedRow]:
    """The rows by external id."""
    values = files.annotate(
        modified_us=EpochMicroseconds("modified_time"),
        extra_text=NullIf(Cast("source_extra", TextField()), Value("{}"), output_field=TextField()),
    ).values_list(
        "pk",
        "external_id",
        "path",
        "name",
        "mime_type",
        "size",
        "checksum",
        "status",
        "error",
        "modified_us",
        "extra_text",
    )
    rows: dict[str, ListedRow] = {}
    for (
        pk,
        external_id,
        path,
        name,
        mime_type,
        size,
        checksum,
        status,
        error,
        microseconds,
        extra_text,
    ) in values.iterator(ROWS_PER_FETCH):
        rows[external_id] = ListedRow(
            pk=pk,
            external_id=external_id,
            path=path,
            name=name,
            mime_type=mime_type,
            size=size,
            checksum=checksum,
            modified_time=from_epoch_microseconds(microseconds),
            source_extra=json.loads(extra_text) if extra_text else {},
            status=status,
            error=error,
        )
    return rows
