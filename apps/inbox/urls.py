"""/api/inbox/conversations...: talking to the inbox assistant (suggestions and moves: apps.organize.urls)."""

from django.urls import URLPattern, URLResolver, path

from apps.inbox import apis, stream, upload_apis

urlpatterns: list[URLPattern | URLResolver] = [
    path("inbox/events", stream.inbox_events, name="inbox-events"),
    path("inbox/files", upload_apis.InboxFileUploadApi.as_view(), name="inbox-files"),
    path("inbox/files/waiting", apis.InboxUnsuggestedFileListApi.as_view(), name="inbox-files-unsuggested"),
    path("inbox/conversations", apis.InboxConversationCollectionApi.as_view(), name="inbox-conversations"),
    path(
        "inbox/conversations/<int:conversation_id>",
        apis.InboxConversationDetailApi.as_view(),
        name="inbox-conversation-detail",
    ),
    path(
        "inbox/conversations/<int:conversation_id>/messages",
        apis.InboxMessageCreateApi.as_view(),
        name="inbox-conversation-messages",
    ),
    path(
        "inbox/conversations/<int:conversation_id>/archive",
        apis.InboxConversationArchiveApi.as_view(),
        name="inbox-conversation-archive",
    ),
]
