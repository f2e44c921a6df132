"""Agent metrics across runs: what `GET /api/metrics/agent` and the admin's metrics page show.

Read from each run's stored `metrics`, `tool_calls` and `fallback_reason`; failed runs count too
(they keep what they did, `services.run_fail`).
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.db.models import Count

from apps.chat.models import AgentRun, FeedbackRating, MessageFeedback, RunMode, RunStatus

REWRITE_TOOL = "rewrite_query"
SEARCH_TOOLS = frozenset({"search_folder", "search_by_date_range", "search_files"})
# Runs read per request: the newest, so a long history costs a bounded query.
MAX_RUNS = 10_000
_LEADING_NUMBER = re.compile(r"^\s*(\d+)")
_LIMIT_VALUE = re.compile(r"\s+of\s+[\d.]+\s*s\b")

FIELDS = ("mode", "status", "iterations", "tool_calls", "metrics", "fallback_reason")


def agent_metrics_summary(
    *, owner_id: int | None, folder_id: int | None = None, since: dt.datetime | None = None
) -> dict[str, Any]:
    """Aggregates over finished runs: all owners' when `owner_id` is None (the admin page)."""
    runs = AgentRun.objects.filter(status__in=[RunStatus.COMPLETED, RunStatus.ERROR, RunStatus.CANCELLED])
    if owner_id is not None:
        runs = runs.filter(owner_id=owner_id)
    if folder_id is not None:
        runs = runs.filter(conversation__folder_id=folder_id)
    if since is not None:
        runs = runs.filter(created_at__gte=since)
    rows = list(runs.order_by("-created_at").values(*FIELDS)[:MAX_RUNS])
    return {**summarise(rows), "feedback": feedback_summary(owner_id=owner_id, folder_id=folder_id, since=since)}


def feedback_summary(
    *, owner_id: int | None, folder_id: int | None = None, since: dt.datetime | None = None
) -> dict[str, Any]:
    """Ratings of answers, in all and by the mode of the run that wrote each (`metadata.mode`)."""
    feedback = MessageFeedback.objects.all()
    if owner_id is not None:
        feedback = feedback.filter(message__conversation__owner_id=owner_id)
    if folder_id is not None:
        feedback = feedback.filter(message__conversation__folder_id=folder_id)
    if since is not None:
        feedback = feedback.filter(message__created_at__gte=since)
    counts = feedback.values("message__metadata__mode", "rating").annotate(count=Count("id")).order_by()
    empty = {rating: 0 for rating in FeedbackRating.values}
    by_mode: dict[str, dict[str, int]] = {mode: dict(empty) for mode in (RunMode.STANDARD, RunMode.AGENT)}
    for row in counts:
        mode = str(row["message__metadata__mode"] or "unknown")
        by_mode.setdefault(mode, dict(empty))[row["rating"]] += row["count"]
    totals = {rating: sum(ratings[rating] for ratings in by_mode.values()) for rating in FeedbackRating.values}
    return {**totals, "by_mode": by_mode}


def summarise(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    agent_rows = [row for row in rows if row["mode"] == RunMode.AGENT]
    fallbacks = [row["fallback_reason"] for row in agent_rows if row["fallback_reason"]]
    tool_usage: Counter[str] = Counter(call.get("name", "") for row in rows for call in row["tool_calls"] or ())
    rewrites, rewrites_found = _rewrite_outcomes(row["tool_calls"] or () for row in rows)
    tokens_in = sum(_tokens(row, "input") for row in rows)
    tokens_out = sum(_tokens(row, "output") for row in rows)
    cache = {key: sum(_tokens(row, key) for row in rows) for key in ("cache_write", "cache_read")}
    return {
        "runs": len(rows),
        "runs_by_mode": dict(Counter(str(row["mode"]) for row in rows)),
        "failed_runs": sum(row["status"] == RunStatus.ERROR for row in rows),
        "cancelled_runs": sum(row["status"] == RunStatus.CANCELLED for row in rows),
        "latency_ms": {
            mode: _latency([row for row in rows if row["mode"] == mode]) for mode in (RunMode.STANDARD, RunMode.AGENT)
        },
        "average_iterations": round(sum(row["iterations"] for row in agent_rows) / len(agent_rows), 2)
        if agent_rows
        else None,
        "tool_usage": dict(tool_usage.most_common()),
        "rewrites": {
            "count": rewrites,
            "succeeded": rewrites_found,
            "success_rate": round(rewrites_found / rewrites, 3) if rewrites else None,
        },
        "fallback": {
            "count": len(fallbacks),
            "rate": round(len(fallbacks) / len(agent_rows), 3) if agent_rows else None,
            "reasons": dict(Counter(fallback_reason_kind(reason) for reason in fallbacks).most_common()),
        },
        "tokens": {"input": tokens_in, "output": tokens_out, **cache},
    }


def fallback_reason_kind(reason: str) -> str:
    """'model error: upstream 503' -> 'model error'; 'total timeout of 60 s reached' -> 'total timeout reached'."""
    return _LIMIT_VALUE.sub("", reason.split(":", 1)[0]).strip() or reason


def _rewrite_outcomes(runs: Iterable[Sequence[Mapping[str, Any]]]) -> tuple[int, int]:
    """Rewrites, and those whose next search in the same run found passages."""
    count = found = 0
    for calls in runs:
        for index, call in enumerate(calls):
            if call.get("name") != REWRITE_TOOL:
                continue
            count += 1
            after = next((later for later in calls[index + 1 :] if later.get("name") in SEARCH_TOOLS), None)
            if after is not None and after.get("status") == "complete" and _leading_number(after.get("output")) > 0:
                found += 1
    return count, found


def _latency(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    values = sorted(
        int(row["metrics"]["total_ms"]) for row in rows if isinstance((row["metrics"] or {}).get("total_ms"), int)
    )
    if not values:
        return {"count": 0, "p50": None, "p95": None}
    return {"count": len(values), "p50": _percentile(values, 50), "p95": _percentile(values, 95)}


def _percentile(ordered: Sequence[int], percentile: int) -> int:
    return ordered[min(len(ordered) - 1, round(percentile / 100 * (len(ordered) - 1)))]


def _tokens(row: Mapping[str, Any], key: str) -> int:
    tokens = (row["metrics"] or {}).get("tokens") or {}
    value = tokens.get(key, 0) if isinstance(tokens, Mapping) else 0
    return value if isinstance(value, int) else 0


def _leading_number(text: object) -> int:
    match = _LEADING_NUMBER.match(str(text or ""))
    return int(match.group(1)) if match else 0
