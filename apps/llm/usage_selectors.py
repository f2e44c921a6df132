"""Reads of model usage: one user's totals over UTC days, grouped by day, model or folder."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from django.db.models import Count, QuerySet, Sum
from django.db.models.functions import TruncDate

from apps.llm.models import UsageRecord

GROUPS = {"day": "day", "model": "model", "folder": "folder_id"}
_SUMS = {
    "input": Sum("input_tokens"),
    "output": Sum("output_tokens"),
    "cached": Sum("cached_tokens"),
    "cost": Sum("cost"),
    "calls": Count("id"),
}


def usage_records_between(*, start: dt.date, end: dt.date) -> QuerySet[UsageRecord]:
    """Records of the UTC days `start` to `end`, both included."""
    since = dt.datetime.combine(start, dt.time.min, tzinfo=dt.UTC)
    until = dt.datetime.combine(end + dt.timedelta(days=1), dt.time.min, tzinfo=dt.UTC)
    return UsageRecord.objects.filter(created_at__gte=since, created_at__lt=until)


def _totals(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "tokens": {"input": row["input"] or 0, "output": row["output"] or 0, "cached": row["cached"] or 0},
        "cost": row["cost"] or Decimal(0),
        "calls": row["calls"],
    }


def usage_summary(*, user_id: int, start: dt.date, end: dt.date, group_by: str) -> dict[str, Any]:
    """The user's totals and one entry per group (`day`, `model` or `folder`), in key order;
    groups without usage are left out. A folder group's key is null for calls outside any folder."""
    records = usage_records_between(start=start, end=end).filter(user_id=user_id)
    field = GROUPS[group_by]
    if group_by == "day":
        records = records.annotate(day=TruncDate("created_at", tzinfo=dt.UTC))
    rows = list(records.values(field).annotate(**_SUMS).order_by(field))
    groups = [{"key": None if row[field] is None else str(row[field]), **_totals(row)} for row in rows]
    # The groups split the records: their sums are the totals, with no second pass over the table.
    summed = {name: sum((row[name] or 0 for row in rows), Decimal(0) if name == "cost" else 0) for name in _SUMS}
    return {
        "user_id": user_id,
        "from": start,
        "to": end,
        "group_by": group_by,
        "totals": _totals(summed),
        "groups": groups,
    }


def usage_by_user_and_day(*, records: QuerySet[UsageRecord]) -> list[dict[str, Any]]:
    """Per user and UTC day, newest day first: the admin's table and chart."""
    rows = (
        records.annotate(day=TruncDate("created_at", tzinfo=dt.UTC))
        .values("day", "user_id", "user__username")
        .annotate(**_SUMS)
        .order_by("-day", "user__username")
    )
    return [{"day": row["day"], "user": row["user__username"] or "(no user)", **_totals(row)} for row in rows]
