"""REST endpoints of evaluation sets and their runs. Editors (and the owner) make, change, run and
delete sets; viewers read them and their results; anyone else gets 404."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.api import Pagination
from apps.core.models import TokenScope
from apps.core.openapi import PAGINATION_PARAMETERS, error_response, paginated
from apps.core.preferences import request_language
from apps.evaluation import generation, selectors, services
from apps.evaluation.models import EvaluationMode, EvaluationSet
from apps.evaluation.serializers import (
    EvaluationRunDetailOutputSerializer,
    EvaluationSetDetailOutputSerializer,
    EvaluationSetOutputSerializer,
    GeneratedOutputSerializer,
)
from apps.library.access import FolderAction, folder_access
from apps.llm.model_choice import model_allowed, models_allowed

MAX_QUESTION_CHARS = 2000
MAX_EXPECTED_ITEMS = 20
MAX_PATH_CHARS = 1024
MAX_FACT_CHARS = 500


class QuestionInputSerializer(serializers.Serializer):
    question = serializers.CharField(max_length=MAX_QUESTION_CHARS)
    expected_files = serializers.ListField(
        child=serializers.CharField(max_length=MAX_PATH_CHARS),
        max_length=MAX_EXPECTED_ITEMS,
        help_text="Paths of files in the folder that answer it; empty: the folder cannot answer it.",
    )
    expected_facts = serializers.ListField(
        child=serializers.CharField(max_length=MAX_FACT_CHARS),
        max_length=MAX_EXPECTED_ITEMS,
        required=False,
        default=list,
        help_text="Texts the answer must state (case, spacing and digit grouping aside).",
    )


class FolderEvaluationsApi(APIView):
    class CreateInputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=255)
        questions = serializers.ListField(
            child=QuestionInputSerializer(), min_length=1, max_length=services.MAX_QUESTIONS
        )

    class CreatedOutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()

    @extend_schema(parameters=PAGINATION_PARAMETERS, responses={200: paginated(EvaluationSetOutputSerializer)})
    def get(self, request: Request, folder_id: int) -> Response:
        folder = folder_access(user=request.user, folder_id=folder_id)
        paginator = Pagination()
        page = paginator.paginate_queryset(selectors.folder_evaluation_sets(folder=folder), request, view=self) or []
        ids = [evaluation_set.last_run_id for evaluation_set in page]  # type: ignore[attr-defined]  # annotated
        last_runs = selectors.evaluation_runs_by_id(run_ids=ids)
        data = EvaluationSetOutputSerializer(page, many=True, context={"last_runs": last_runs}).data
        return paginator.get_paginated_response(data)

    @extend_schema(
        request=CreateInputSerializer,
        responses={
            201: CreatedOutputSerializer,
            400: error_response("Invalid input, or an expected file not in the folder."),
        },
    )
    def post(self, request: Request, folder_id: int) -> Response:
        folder = folder_access(user=request.user, folder_id=folder_id, action=FolderAction.EDIT)
        data = self.CreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        evaluation_set = services.evaluation_set_create(
            folder=folder,
            name=data.validated_data["name"],
            questions=[services.QuestionSpec(**question) for question in data.validated_data["questions"]],
            user=request.user,  # type: ignore[arg-type]
        )
        return Response(self.CreatedOutputSerializer({"id": evaluation_set.pk}).data, status=status.HTTP_201_CREATED)


class FolderEvaluationGenerateApi(APIView):
    """Questions drawn from the folder's own passages, each expecting its source file, for the
    person to review before saving them with `POST /api/folders/{id}/evaluations`: not saved here."""

    class GenerateInputSerializer(serializers.Serializer):
        count = serializers.IntegerField(
            min_value=1, max_value=generation.MAX_COUNT, default=generation.DEFAULT_COUNT, help_text="How many."
        )
        seed = serializers.IntegerField(
            min_value=0, max_value=2**31 - 1, required=False, help_text="Repeat a draw; absent: a new one."
        )

    @extend_schema(
        request=GenerateInputSerializer,
        responses={
            200: GeneratedOutputSerializer,
            400: error_response("Invalid count or seed, or no passage of the folder makes a question."),
        },
    )
    def post(self, request: Request, folder_id: int) -> Response:
        folder = folder_access(user=request.user, folder_id=folder_id, action=FolderAction.EDIT)
        data = self.GenerateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        generated = generation.evaluation_questions_generate(
            folder=folder,
            user=request.user,  # type: ignore[arg-type]
            count=data.validated_data["count"],
            seed=data.validated_data.get("seed"),
            language=request_language(user_id=request.user.pk),  # their account's choice, else their browser's
        )
        return Response(GeneratedOutputSerializer(generated).data)


class EvaluationDetailApi(APIView):
    class UpdateInputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=255, required=False)
        nightly = serializers.BooleanField(required=False, help_text="Run every night (beat).")
        regression_margin = serializers.FloatField(
            required=False, min_value=0.0, max_value=1.0, help_text="Flag a run whose metrics drop by more."
        )

    @extend_schema(responses={200: EvaluationSetDetailOutputSerializer})
    def get(self, request: Request, evaluation_id: int) -> Response:
        evaluation_set = selectors.evaluation_set_get(user=request.user, set_id=evaluation_id)
        return Response(_detail(evaluation_set))

    @extend_schema(request=UpdateInputSerializer, responses={200: EvaluationSetDetailOutputSerializer})
    def patch(self, request: Request, evaluation_id: int) -> Response:
        evaluation_set = selectors.evaluation_set_get(user=request.user, set_id=evaluation_id, action=FolderAction.EDIT)
        data = self.UpdateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        evaluation_set = services.evaluation_set_update(
            evaluation_set=evaluation_set,
            name=values.get("name"),
            nightly=values.get("nightly"),
            margin=values.get("regression_margin"),
        )
        return Response(_detail(evaluation_set))

    @extend_schema(responses={204: None, 409: error_response("A run of the set is still going.")})
    def delete(self, request: Request, evaluation_id: int) -> Response:
        evaluation_set = selectors.evaluation_set_get(user=request.user, set_id=evaluation_id, action=FolderAction.EDIT)
        services.evaluation_set_delete(evaluation_set=evaluation_set)
        return Response(status=status.HTTP_204_NO_CONTENT)


def _detail(evaluation_set: EvaluationSet) -> dict[str, object]:
    evaluation_set = selectors.folder_evaluation_sets(folder=evaluation_set.folder).get(pk=evaluation_set.pk)
    runs = selectors.evaluation_set_runs(evaluation_set=evaluation_set)
    context = {"runs": runs, "last_runs": {run.pk: run for run in runs[:1]}}
    return dict(EvaluationSetDetailOutputSerializer(evaluation_set, context=context).data)


class EvaluationRunsApi(APIView):
    """Run a set: every question asked as a chat would ask it, on a worker; progress on the folder's
    event stream (`evaluation.progress`, `evaluation.finished`)."""

    required_scope = TokenScope.CHAT

    class RunInputSerializer(serializers.Serializer):
        mode = serializers.ChoiceField(choices=EvaluationMode.choices, default=EvaluationMode.STANDARD)
        model = serializers.CharField(
            required=False, max_length=100, help_text="The model for every answer: one of LLM_MODELS_ALLOWED."
        )

        def validate_mode(self, value: str) -> str:
            if value == EvaluationMode.AGENT and not settings.AGENT_MODE_ENABLED:
                raise serializers.ValidationError(_("Agent mode is turned off on this server; run in standard mode."))
            return value

        def validate_model(self, value: str) -> str:
            if not model_allowed(value):
                raise serializers.ValidationError(
                    _("Not an allowed model; choose one of: %(models)s.") % {"models": ", ".join(models_allowed())}
                )
            return value

    class RunAcceptedOutputSerializer(serializers.Serializer):
        run_id = serializers.UUIDField()
        status = serializers.CharField()

    @extend_schema(
        request=RunInputSerializer,
        responses={202: RunAcceptedOutputSerializer, 409: error_response("The set is already being run.")},
    )
    def post(self, request: Request, evaluation_id: int) -> Response:
        evaluation_set = selectors.evaluation_set_get(user=request.user, set_id=evaluation_id, action=FolderAction.EDIT)
        data = self.RunInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        run = services.evaluation_run_start(
            evaluation_set=evaluation_set,
            user=request.user,  # type: ignore[arg-type]
            mode=data.validated_data["mode"],
            model=data.validated_data.get("model", ""),
        )
        body = {"run_id": run.pk, "status": run.status}
        return Response(self.RunAcceptedOutputSerializer(body).data, status=status.HTTP_202_ACCEPTED)


class EvaluationRunDetailApi(APIView):
    @extend_schema(responses={200: EvaluationRunDetailOutputSerializer})
    def get(self, request: Request, evaluation_run_id: uuid.UUID) -> Response:
        run = selectors.evaluation_run_get(user=request.user, run_id=evaluation_run_id)
        results = selectors.evaluation_run_results(run=run)
        return Response(EvaluationRunDetailOutputSerializer(run, context={"results": results}).data)
