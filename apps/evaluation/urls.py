"""/api/folders/{id}/evaluations[/generate], /api/evaluations/{id}[/runs], /api/evaluation-runs/{id}, and
the rated answers: /api/folders/{id}/feedback, /api/messages/{id}/evaluation-question."""

from django.urls import URLPattern, URLResolver, path

from apps.evaluation import apis, feedback_apis

urlpatterns: list[URLPattern | URLResolver] = [
    path("folders/<int:folder_id>/evaluations", apis.FolderEvaluationsApi.as_view(), name="folder-evaluations"),
    path(
        "folders/<int:folder_id>/evaluations/generate",
        apis.FolderEvaluationGenerateApi.as_view(),
        name="folder-evaluations-generate",
    ),
    path("folders/<int:folder_id>/feedback", feedback_apis.FolderFeedbackApi.as_view(), name="folder-feedback"),
    path(
        "messages/<int:message_id>/evaluation-question",
        feedback_apis.MessageEvaluationQuestionApi.as_view(),
        name="message-evaluation-question",
    ),
    path("evaluations/<int:evaluation_id>", apis.EvaluationDetailApi.as_view(), name="evaluation-detail"),
    path("evaluations/<int:evaluation_id>/runs", apis.EvaluationRunsApi.as_view(), name="evaluation-runs"),
    path(
        "evaluation-runs/<uuid:evaluation_run_id>",
        apis.EvaluationRunDetailApi.as_view(),
        name="evaluation-run-detail",
    ),
]
