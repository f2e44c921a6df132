"""What a model call cost: a `ModelPrice` row (admin) first, else `LLM_PRICES`, in USD per million tokens.

A provider answers with a dated model name (gpt-4o-2024-08-06) where the price is listed under its
alias (gpt-4o), and Ollama names a model's size or quantisation after a colon (llama3.1:8b), so the
longest listed name the model starts with, before a `-` or `:`, is its price. A model without a
price costs 0, as a model on one's own server does until given one: the tokens are still recorded,
and an operator can price them later.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings

from apps.llm.models import ModelPrice
from apps.llm.types import Usage

logger = logging.getLogger(__name__)

MILLION = Decimal(1_000_000)
_unpriced_said: set[str] = set()


@dataclass(frozen=True)
class Price:
    input: Decimal
    output: Decimal
    cached: Decimal
    cache_write: Decimal

    @classmethod
    def from_setting(cls, entry: Mapping[str, float | str]) -> Price:
        given = Decimal(str(entry.get("input", 0)))
        return cls(
            input=given,
            output=Decimal(str(entry.get("output", 0))),
            cached=Decimal(str(entry.get("cached", given))),
            cache_write=Decimal(str(entry.get("cache_write", given))),
        )

    @classmethod
    def from_row(cls, row: ModelPrice) -> Price:
        return cls(
            input=row.input_per_million,
            output=row.output_per_million,
            cached=row.input_per_million if row.cached_per_million is None else row.cached_per_million,
            cache_write=row.input_per_million if row.cache_write_per_million is None else row.cache_write_per_million,
        )

    def cost(self, usage: Usage) -> Decimal:
        plain_input = max(0, usage.input_tokens - usage.cache_read_tokens - usage.cache_write_tokens)
        total = (
            plain_input * self.input
            + usage.cache_read_tokens * self.cached
            + usage.cache_write_tokens * self.cache_write
            + usage.output_tokens * self.output
        )
        return total / MILLION


def _longest_prefix(model: str, names: list[str]) -> str | None:
    matches = [name for name in names if model == name or model.startswith((f"{name}-", f"{name}:"))]
    return max(matches, key=len, default=None)


def model_price(*, models: tuple[str, ...]) -> Price | None:
    """The price of the first of `models` (the answering model's name, then the configured one) that has one."""
    rows = {row.model: row for row in ModelPrice.objects.all()}
    listed: Mapping[str, Mapping[str, float | str]] = settings.LLM_PRICES
    for model in filter(None, models):
        name = _longest_prefix(model, list(rows))
        if name is not None:
            return Price.from_row(rows[name])
        name = _longest_prefix(model, list(listed))
        if name is not None:
            return Price.from_setting(listed[name])
    unpriced = models[0] if models else "?"
    if unpriced not in _unpriced_said:  # once a process: a model on one's own server is unpriced every call
        _unpriced_said.add(unpriced)
        logger.warning("no price for model %s: its usage is recorded at cost 0", unpriced)
    return None


def usage_cost(*, models: tuple[str, ...], usage: Usage) -> Decimal:
    price = model_price(models=models)
    return price.cost(usage) if price is not None else Decimal(0)
