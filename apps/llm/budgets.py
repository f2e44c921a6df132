"""Per-user model budgets: tokens per UTC day, cost per UTC month, checked before every model call.

Limits come from the user's `UsageBudget` row, each empty field from its setting
(`LLM_DAILY_TOKENS_PER_USER`, `LLM_MONTHLY_COST_PER_USER`; None: no limit). What was spent is a
Redis counter per user and period, which expires when the period ends. A missing counter (a new
period, a flushed Redis) is seeded from the usage records with SET NX, so two processes seeding at
once agree; a call adds its tokens and cost only to a counter that exists (one script, atomic), so
a counter seeded after a call was recorded never counts it twice. Calls already in flight when the
budget runs out still finish: the check refuses the next call, not a running one. Without Redis
the records are summed directly.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass
from decimal import Decimal

import redis
from django.conf import settings
from django.db.models import F, Sum
from django.utils import timezone
from django.utils.translation import gettext

from apps.core.events import redis_client
from apps.llm.base import LLMBudgetExceededError
from apps.llm.models import UsageBudget, UsageRecord
from apps.llm.usage_context import current_usage_context

logger = logging.getLogger(__name__)

# Adds to each counter that exists (KEYS[i] += ARGV[i]); a missing one is left for the next
# check to seed from the records, which then include this call.
_ADD_IF_PRESENT = """
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('INCRBY', KEYS[1], ARGV[1]) end
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('INCRBYFLOAT', KEYS[2], ARGV[2]) end
return 1
"""
# A counter outlives its period a little: a call checked just before midnight still finds it.
_EXPIRY_GRACE_SECONDS = 60


@dataclass(frozen=True)
class BudgetLimits:
    daily_tokens: int | None
    monthly_cost: Decimal | None

    @property
    def unlimited(self) -> bool:
        return self.daily_tokens is None and self.monthly_cost is None


@dataclass(frozen=True)
class BudgetRefusal:
    what: str  # "50,000 tokens a day"
    resets_at: dt.datetime

    @property
    def notice(self) -> str:
        when = self.resets_at.strftime("%Y-%m-%d %H:%M UTC")
        return gettext(
            "Your model usage budget (%(what)s) is used up; it resets at %(when)s. "
            "These are the most relevant passages, found without the model."
        ) % {"what": self.what, "when": when}


def budget_limits(*, user_id: int) -> BudgetLimits:
    own = UsageBudget.objects.filter(user_id=user_id).first()
    daily = own.daily_tokens if own and own.daily_tokens is not None else settings.LLM_DAILY_TOKENS_PER_USER
    monthly = own.monthly_cost if own and own.monthly_cost is not None else settings.LLM_MONTHLY_COST_PER_USER
    return BudgetLimits(
        daily_tokens=None if daily is None else int(daily),
        monthly_cost=None if monthly is None else Decimal(str(monthly)),
    )


def _day_start(now: dt.datetime) -> dt.datetime:
    return now.astimezone(dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def _month_start(now: dt.datetime) -> dt.datetime:
    return _day_start(now).replace(day=1)


def _next_month(start: dt.datetime) -> dt.datetime:
    return (start + dt.timedelta(days=32)).replace(day=1)


def _tokens_key(user_id: int, day: dt.datetime) -> str:
    return f"llm:budget:tokens:{user_id}:{day:%Y-%m-%d}"


def _cost_key(user_id: int, month: dt.datetime) -> str:
    return f"llm:budget:cost:{user_id}:{month:%Y-%m}"


def _recorded(*, user_id: int, since: dt.datetime) -> tuple[int, Decimal]:
    sums = UsageRecord.objects.filter(user_id=user_id, created_at__gte=since).aggregate(
        tokens=Sum(F("input_tokens") + F("output_tokens")), cost=Sum("cost")
    )
    return int(sums["tokens"] or 0), Decimal(sums["cost"] or 0)


def budget_refusal(*, user_id: int, now: dt.datetime | None = None) -> BudgetRefusal | None:
    """Why a model call for `user_id` may not be made now, or None when it may."""
    limits = budget_limits(user_id=user_id)
    if limits.unlimited:
        return None
    now = now or timezone.now()
    day, month = _day_start(now), _month_start(now)
    if limits.daily_tokens is not None:
        resets = day + dt.timedelta(days=1)
        tokens = _counted(user_id=user_id, key=_tokens_key(user_id, day), since=day, resets_at=resets, index=0)
        if tokens >= limits.daily_tokens:
            what = gettext("%(tokens)s tokens a day") % {"tokens": f"{limits.daily_tokens:,}"}
            return BudgetRefusal(what=what, resets_at=resets)
    if limits.monthly_cost is not None:
        resets = _next_month(month)
        cost = _counted(user_id=user_id, key=_cost_key(user_id, month), since=month, resets_at=resets, index=1)
        if cost >= limits.monthly_cost:
            what = gettext("%(cost)s a month") % {"cost": f"${limits.monthly_cost:,.2f}"}
            return BudgetRefusal(what=what, resets_at=resets)
    return None


def _counted(*, user_id: int, key: str, since: dt.datetime, resets_at: dt.datetime, index: int) -> Decimal:
    """The counter at `key`, seeded from the records when missing; the records alone without Redis.
    `index`: 0 for tokens, 1 for cost."""
    client = redis_client()
    try:
        value = client.get(key)
        if value is None:
            seed = _recorded(user_id=user_id, since=since)[index]
            client.set(key, str(seed), nx=True, exat=int(resets_at.timestamp()) + _EXPIRY_GRACE_SECONDS)
            value = client.get(key)
        return Decimal(str(value or 0))
    except redis.RedisError as exc:
        logger.warning("budget counter unavailable (%s); summing the usage records", type(exc).__name__)
        return Decimal(_recorded(user_id=user_id, since=since)[index])


def budget_check(*, user_id: int | None) -> None:
    """Raise `LLMBudgetExceededError` when `user_id` (None: nobody's call, never limited) may not call a model."""
    if user_id is None:
        return
    refusal = budget_refusal(user_id=user_id)
    if refusal is not None:
        raise LLMBudgetExceededError(refusal.notice, resets_at=refusal.resets_at)


def budget_count(*, user_id: int, tokens: int, cost: Decimal, at: dt.datetime) -> None:
    """Add a recorded call to the user's counters that exist."""
    keys = [_tokens_key(user_id, _day_start(at)), _cost_key(user_id, _month_start(at))]
    try:
        redis_client().eval(_ADD_IF_PRESENT, 2, *keys, str(tokens), str(cost))
    except redis.RedisError as exc:
        logger.warning("budget counter not updated (%s): it counts short until it expires", type(exc).__name__)


def budget_notice() -> str:
    """The notice for the current caller's used-up budget (`FailureKind.BUDGET`)."""
    context = current_usage_context()
    user_id = context.user_id if context is not None else None
    refusal = budget_refusal(user_id=user_id) if user_id is not None else None
    if refusal is None:
        return gettext(
            "Your model usage budget is used up. These are the most relevant passages, found without the model."
        )
    return refusal.notice
