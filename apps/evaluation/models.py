"""Evaluation sets of a folder: questions with the files that answer them and the facts an answer
must state; runs that answer every question as a chat would, with each answer's result and the
run's metrics, compared with the run before."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from apps.chat.models import AgentRun, Message, RunMode
from apps.core.models import TimestampedModel
from apps.library.models import Folder

DEFAULT_REGRESSION_MARGIN = 0.05


class EvaluationSet(TimestampedModel):
    folder = models.ForeignKey(Folder, on_delete=models.CASCADE, related_name="evaluation_sets")
    name = models.CharField(max_length=255)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    nightly = models.BooleanField(default=False, help_text="Run every night by beat (the set's latest mode and model).")
    regression_margin = models.FloatField(
        default=DEFAULT_REGRESSION_MARGIN,
        help_text="A run is flagged when hit@5, MRR, facts found or citation precision drops by more than this.",
    )

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.name


class EvaluationQuestion(models.Model):
    set = models.ForeignKey(EvaluationSet, on_delete=models.CASCADE, related_name="questions")
    position = models.PositiveIntegerField(help_text="1, 2, ...: the order the set was written in.")
    question = models.TextField()
    expected_files = models.JSONField(default=list, blank=True, help_text="Paths in the folder; none: unanswerable.")
    expected_facts = models.JSONField(default=list, blank=True, help_text="Texts the answer must state.")
    source_message = models.ForeignKey(
        Message,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="The rated answer whose question this is, when it was added from the feedback page.",
    )

    class Meta:
        ordering = ["set", "position"]
        constraints = [models.UniqueConstraint(fields=["set", "position"], name="evaluation_question_position")]

    def __str__(self) -> str:
        return self.question[:80]


class EvaluationRunStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


ACTIVE_RUN_STATUSES = (EvaluationRunStatus.QUEUED, EvaluationRunStatus.RUNNING)


class EvaluationMode(models.TextChoices):
    STANDARD = RunMode.STANDARD.value, RunMode.STANDARD.label
    AGENT = RunMode.AGENT.value, RunMode.AGENT.label


class EvaluationTrigger(models.TextChoices):
    MANUAL = "manual", "Started by a person"
    NIGHTLY = "nightly", "Nightly schedule"


class EvaluationRun(TimestampedModel):
    # A UUID, as chat runs: it is named in the folder's events, and must not be enumerable.
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    set = models.ForeignKey(EvaluationSet, on_delete=models.CASCADE, related_name="runs")
    status = models.CharField(max_length=8, choices=EvaluationRunStatus.choices, default=EvaluationRunStatus.QUEUED)
    mode = models.CharField(max_length=16, choices=EvaluationMode.choices, default=EvaluationMode.STANDARD)
    model = models.CharField(max_length=100, blank=True, help_text="The model chosen for the run; empty: configured.")
    trigger = models.CharField(max_length=8, choices=EvaluationTrigger.choices, default=EvaluationTrigger.MANUAL)
    configuration = models.JSONField(
        default=dict, blank=True, help_text="What answered: mode, model, provider, search settings, the folder's index."
    )
    metrics = models.JSONField(default=dict, blank=True)
    questions_total = models.PositiveIntegerField(default=0)
    questions_done = models.PositiveIntegerField(default=0)
    regressed = models.BooleanField(default=False, db_index=True)
    regressed_metrics = models.JSONField(
        default=dict, blank=True, help_text="Each metric that dropped past the margin: previous, now, drop."
    )
    compared_with = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="+", help_text="The previous done run."
    )
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="Who started it; its questions are asked as this person (their role, their model budget).",
    )
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["set", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.set} {self.created_at:%Y-%m-%d %H:%M}"


class EvaluationResult(models.Model):
    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="results")
    question = models.ForeignKey(EvaluationQuestion, on_delete=models.CASCADE, related_name="+")
    # The chat run that answered (its conversation is of kind `eval`, in no sidebar).
    chat_run = models.ForeignKey(AgentRun, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    answer = models.TextField(blank=True)
    cited_files = models.JSONField(default=list, blank=True, help_text="Paths, in the order the answer cites them.")
    hit_rank = models.PositiveIntegerField(
        null=True, blank=True, help_text="Position of the first expected file among the cited ones."
    )
    facts_found = models.JSONField(default=list, blank=True)
    answered = models.BooleanField(default=False, help_text="False: the answer says it found nothing, or failed.")
    duration_ms = models.PositiveIntegerField(default=0)
    tokens = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=8, default=0, help_text="USD")
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["run", "question__position"]
        constraints = [models.UniqueConstraint(fields=["run", "question"], name="evaluation_result_one_per_question")]

    def __str__(self) -> str:
        return f"{self.question} (rank {self.hit_rank or '-'})"
