from django.urls import path

from apps.chat import apis, attachment_apis, metrics_api, sse

urlpatterns = [
    path("folders/<int:folder_id>/chat", apis.FolderChatApi.as_view(), name="folder-chat"),
    path("conversations", apis.ConversationListApi.as_view(), name="conversations"),
    path("conversations/<int:conversation_id>", apis.ConversationDetailApi.as_view(), name="conversation-detail"),
    path(
        "conversations/<int:conversation_id>/archive",
        apis.ConversationArchiveApi.as_view(),
        name="conversation-archive",
    ),
    path(
        "conversations/<int:conversation_id>/regenerate",
        apis.ConversationRegenerateApi.as_view(),
        name="conversation-regenerate",
    ),
    path("messages/<int:message_id>/feedback", apis.MessageFeedbackApi.as_view(), name="message-feedback"),
    path("messages/<int:message_id>/continue", apis.AnswerContinueApi.as_view(), name="answer-continue"),
    path(
        "attachments/<int:attachment_id>",
        attachment_apis.AttachmentContentApi.as_view(),
        name="attachment-content",
    ),
    path("runs/<uuid:run_id>", apis.RunDetailApi.as_view(), name="run-detail"),
    path("runs/<uuid:run_id>/cancel", apis.RunCancelApi.as_view(), name="run-cancel"),
    path("runs/<uuid:run_id>/events", sse.run_events, name="run-events"),
    path("metrics/agent", metrics_api.AgentMetricsApi.as_view(), name="agent-metrics"),
]
