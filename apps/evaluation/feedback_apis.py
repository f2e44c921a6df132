"""REST endpoints of a folder's rated answers, and the one that turns a rated answer into a
question of an evaluation set (who sees what: `apps.evaluation.feedback`)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.chat.models import FeedbackRating, MessageFeedback
from apps.core.api import Pagination
from apps.core.openapi import PAGINATION_PARAMETERS, error_response, paginated
from apps.evaluation import feedback, services
from apps.evaluation.apis import MAX_EXPECTED_ITEMS, MAX_FACT_CHARS, MAX_PATH_CHARS
from apps.evaluation.models import EvaluationMode
from apps.library.access import FolderAction, folder_access
from apps.library.models import FolderRole

ANSWER_EXCERPT_CHARS = 400


class SetNamedOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


class RatedAnswerOutputSerializer(serializers.ModelSerializer):
    message_id = serializers.IntegerField()
    question = serializers.SerializerMethodField()
    answer = serializers.SerializerMethodField(help_text=f"The answer's first {ANSWER_EXCERPT_CHARS} characters.")
    cited_files = serializers.SerializerMethodField()
    mode = serializers.SerializerMethodField()
    model = serializers.SerializerMethodField()
    rated_at = serializers.DateTimeField(source="updated_at")
    answered_at = serializers.DateTimeField(source="message.created_at")
    asked_by = serializers.CharField(source="message.conversation.owner.username")
    conversation_id = serializers.SerializerMethodField(help_text="Only for the caller's own answers: theirs to open.")
    in_sets = serializers.SerializerMethodField(help_text="The evaluation sets its question was added to.")

    class Meta:
        model = MessageFeedback
        fields = [
            "message_id",
            "question",
            "answer",
            "cited_files",
            "rating",
            "comment",
            "mode",
            "model",
            "rated_at",
            "answered_at",
            "asked_by",
            "conversation_id",
            "in_sets",
        ]

    def get_question(self, rated: MessageFeedback) -> str:
        return str(self.context["questions"].get(rated.message_id, ""))

    def get_answer(self, rated: MessageFeedback) -> str:
        return str(rated.message.content.get("text", ""))[:ANSWER_EXCERPT_CHARS]

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_cited_files(self, rated: MessageFeedback) -> list[str]:
        citations = rated.message.content.get("citations") or []
        return list(dict.fromkeys(str(c["path"]) for c in citations if isinstance(c, dict) and c.get("path")))

    def get_mode(self, rated: MessageFeedback) -> str:
        return str(rated.message.metadata.get("mode", ""))

    def get_model(self, rated: MessageFeedback) -> str:
        return str(rated.message.metadata.get("model", ""))

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_conversation_id(self, rated: MessageFeedback) -> int | None:
        conversation = rated.message.conversation
        return conversation.pk if conversation.owner_id == self.context["user_id"] else None

    @extend_schema_field(SetNamedOutputSerializer(many=True))
    def get_in_sets(self, rated: MessageFeedback) -> list[dict[str, Any]]:
        return list(self.context["in_sets"].get(rated.message_id, []))


class WeekCountOutputSerializer(serializers.Serializer):
    week = serializers.DateField(help_text="Its Monday.")
    mode = serializers.CharField()
    model = serializers.CharField()
    up = serializers.IntegerField()
    down = serializers.IntegerField()


class FeedbackPageOutputSerializer(paginated(RatedAnswerOutputSerializer)):  # type: ignore[misc]
    totals = serializers.DictField(child=serializers.IntegerField(), help_text="`up` and `down`, filters applied.")
    weeks = WeekCountOutputSerializer(many=True, help_text="Per week, mode and model, newest first (26 weeks).")
    models = serializers.ListField(child=serializers.CharField(), help_text="The models of the folder's rated answers.")
    scope = serializers.ChoiceField(
        choices=["folder", "mine"], help_text="Whose rated answers `results` holds; the counts are the folder's."
    )


class FolderFeedbackApi(APIView):
    """The folder's rated answers and their counts per week. Counts: the whole folder's, for every
    member. Answers: every one for the owner and editors; a viewer's own only."""

    class FilterSerializer(serializers.Serializer):
        rating = serializers.ChoiceField(choices=FeedbackRating.choices, required=False)
        mode = serializers.ChoiceField(choices=EvaluationMode.choices, required=False)
        model = serializers.CharField(required=False, max_length=100)
        since = serializers.DateField(required=False, help_text="Rated on or after this day (YYYY-MM-DD).")

    @extend_schema(parameters=[FilterSerializer, *PAGINATION_PARAMETERS], responses={200: FeedbackPageOutputSerializer})
    def get(self, request: Request, folder_id: int) -> Response:
        folder = folder_access(user=request.user, folder_id=folder_id)
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        values = filters.validated_data
        counted = feedback.feedback_filtered(
            feedback.folder_feedback(folder=folder),
            mode=values.get("mode"),
            model=values.get("model"),
            since=values.get("since"),
        )
        role = folder.caller_role  # type: ignore[attr-defined]  # set by folder_access
        rated = feedback.rated_answers_readable(
            feedback=feedback.feedback_filtered(counted, rating=values.get("rating")), user=request.user, role=role
        )
        paginator = Pagination()
        page = paginator.paginate_queryset(rated, request, view=self) or []
        ids = [item.message_id for item in page]
        context = {
            "user_id": request.user.pk,
            "questions": feedback.answer_questions(message_ids=ids),
            "in_sets": feedback.answers_in_sets(message_ids=ids),
        }
        response = paginator.get_paginated_response(RatedAnswerOutputSerializer(page, many=True, context=context).data)
        response.data.update(
            totals=feedback.feedback_totals(feedback=counted),
            weeks=WeekCountOutputSerializer(feedback.feedback_weeks(feedback=counted), many=True).data,
            models=feedback.feedback_models(folder=folder),
            scope="mine" if role == FolderRole.VIEWER else "folder",
        )
        return response


class MessageEvaluationQuestionApi(APIView):
    """A rated answer's question into an evaluation set of its folder (editors), in one step."""

    class AddInputSerializer(serializers.Serializer):
        expected_file = serializers.CharField(
            max_length=MAX_PATH_CHARS,
            allow_blank=True,
            help_text='The path of the file that answers it; "": the folder cannot answer it.',
        )
        expected_facts = serializers.ListField(
            child=serializers.CharField(max_length=MAX_FACT_CHARS),
            max_length=MAX_EXPECTED_ITEMS,
            required=False,
            default=list,
        )
        set_id = serializers.IntegerField(
            required=False, help_text=f'A set of the folder; absent: its "{services.FEEDBACK_SET_NAME}" set.'
        )

    class AddedOutputSerializer(serializers.Serializer):
        set_id = serializers.IntegerField()
        set_name = serializers.CharField()
        question_id = serializers.IntegerField()
        position = serializers.IntegerField()
        question = serializers.CharField()

    @extend_schema(
        request=AddInputSerializer,
        responses={
            201: AddedOutputSerializer,
            400: error_response("Invalid input, a file not in the folder, or a set of another folder."),
            409: error_response("The answer's question is already in that set."),
        },
    )
    def post(self, request: Request, message_id: int) -> Response:
        message = feedback.rated_answer_get(user=request.user, message_id=message_id, action=FolderAction.EDIT)
        data = self.AddInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        question = services.evaluation_question_from_answer(
            message=message,
            user=request.user,  # type: ignore[arg-type]
            expected_file=values["expected_file"],
            expected_facts=values["expected_facts"],
            set_id=values.get("set_id"),
        )
        body = {
            "set_id": question.set_id,
            "set_name": question.set.name,
            "question_id": question.pk,
            "position": question.position,
            "question": question.question,
        }
        return Response(self.AddedOutputSerializer(body).data, status=status.HTTP_201_CREATED)
