"""Model usage: one record per model call, prices that override `LLM_PRICES`, per-user budgets.

Folder and run are plain ids: llm sits below the apps that own them, and a record outlives both.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class ModelPrice(models.Model):
    """USD per million tokens of one model; overrides the model's entry in `LLM_PRICES`."""

    model = models.CharField(
        max_length=200,
        unique=True,
        help_text="As the provider names it; also matches dated versions (gpt-4o-2024-08-06).",
    )
    input_per_million = models.DecimalField(max_digits=12, decimal_places=4)
    output_per_million = models.DecimalField(max_digits=12, decimal_places=4)
    cached_per_million = models.DecimalField(
        max_digits=12, decimal_places=4, null=True, blank=True, help_text="Prompt-cache reads; empty: the input price."
    )
    cache_write_per_million = models.DecimalField(
        max_digits=12, decimal_places=4, null=True, blank=True, help_text="Prompt-cache writes; empty: the input price."
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["model"]

    def __str__(self) -> str:
        return self.model


class UsageRecord(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="llm_usage"
    )
    folder_id = models.BigIntegerField(null=True, blank=True)
    run_id = models.UUIDField(null=True, blank=True)
    provider = models.CharField(max_length=20)
    model = models.CharField(max_length=200)
    input_tokens = models.PositiveIntegerField(default=0, help_text="Every input token, cached ones included.")
    output_tokens = models.PositiveIntegerField(default=0)
    cached_tokens = models.PositiveIntegerField(default=0, help_text="Of input, read from the prompt cache.")
    cache_write_tokens = models.PositiveIntegerField(default=0, help_text="Of input, written to the prompt cache.")
    cost = models.DecimalField(max_digits=14, decimal_places=8, default=0, help_text="USD")
    estimated = models.BooleanField(
        default=False, help_text="Tokens estimated from the characters sent and written: the server reported none."
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["user", "created_at"]), models.Index(fields=["created_at"])]

    def __str__(self) -> str:
        return f"{self.model} {self.input_tokens}+{self.output_tokens} tokens"

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class UsageBudget(models.Model):
    """A user's own limits; an empty field falls back to the setting."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="llm_budget")
    daily_tokens = models.PositiveBigIntegerField(
        null=True, blank=True, help_text="Input + output tokens per UTC day; empty: LLM_DAILY_TOKENS_PER_USER."
    )
    monthly_cost = models.DecimalField(
        max_digits=12,
        decimal_places=4,
        null=True,
        blank=True,
        help_text="USD per UTC calendar month; empty: LLM_MONTHLY_COST_PER_USER.",
    )

    def __str__(self) -> str:
        return f"budget of user {self.user_id}"
