"""The one place model calls are metered: the budget is checked before, the usage recorded after.

Both network providers send every call through `metered_call`, so whatever asks a model (an
answer, an agent turn, the inbox router, a summary, an image description) is counted for the
caller in the current `usage_context`. Every run sets one (`run_execute`, in the worker or the web
process, and `manage.py ask` through it), and the runs are where the product calls models; a
provider used outside any (a shell, the providers' own tests) is neither metered nor limited. The
offline extractive answerer calls nothing and records nothing; a failed call records nothing
either, as the SDKs report no usage for it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from decimal import Decimal

from django.db import DatabaseError
from django.utils import timezone

from apps.core.metrics import model_usage_observe
from apps.core.tracing import tracing_span
from apps.llm.budgets import budget_check, budget_count
from apps.llm.models import UsageRecord
from apps.llm.pricing import usage_cost
from apps.llm.types import LLMResponse, Usage
from apps.llm.usage_context import UsageContext, current_usage_context

logger = logging.getLogger(__name__)


def metered_call(*, provider: str, model: str, call: Callable[[], LLMResponse]) -> LLMResponse:
    context = current_usage_context()
    if context is None:
        return _traced_call(provider=provider, model=model, call=call)
    budget_check(user_id=context.user_id)
    response = _traced_call(provider=provider, model=model, call=call)
    try:
        usage_record(
            context=context, provider=provider, model=response.model or model, configured=model, usage=response.usage
        )
    except DatabaseError:
        # The answer is already paid for and streamed: losing its record beats losing the answer.
        logger.exception("usage of a %s call not recorded", provider)
    return response


def _traced_call(*, provider: str, model: str, call: Callable[[], LLMResponse]) -> LLMResponse:
    # The SDK's HTTP requests (retries included) become this span's children through the httpx
    # instrumentation; the OpenTelemetry GenAI names, and nothing of the prompt.
    with tracing_span("llm.call", attributes={"gen_ai.system": provider, "gen_ai.request.model": model}):
        return call()


def usage_record(
    *,
    context: UsageContext,
    provider: str,
    model: str,
    usage: Usage,
    configured: str = "",
    cost: Decimal | None = None,
) -> UsageRecord:
    """`model`: the name the provider answered with; `configured`: the one asked for, priced when it
    has none; `cost`: a call not billed by tokens (audio transcribed by the minute)."""
    now = timezone.now()
    record = UsageRecord.objects.create(
        user_id=context.user_id,
        folder_id=context.folder_id,
        run_id=context.run_id,
        provider=provider,
        model=model,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cached_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        cost=usage_cost(models=(model, configured), usage=usage) if cost is None else cost,
        estimated=usage.estimated,
        created_at=now,
    )
    model_usage_observe(
        provider=provider,
        model=model,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cached_tokens=usage.cache_read_tokens,
        cost=record.cost,
    )
    if context.user_id is not None:
        budget_count(user_id=context.user_id, tokens=usage.total_tokens, cost=record.cost, at=now)
    return record
