"""/api/inbox/... (conversations, suggestions, moves) and /api/settings/organization."""

from django.urls import URLPattern, URLResolver, path

from apps.chat.inbox import apis as inbox_apis
from apps.organize import apis

urlpatterns: list[URLPattern | URLResolver] = [
    path("inbox/conversations", inbox_apis.InboxConversationCollectionApi.as_view(), name="inbox-conversations"),
    path(
        "inbox/conversations/<int:conversation_id>",
        inbox_apis.InboxConversationDetailApi.as_view(),
        name="inbox-conversation-detail",
    ),
    path(
        "inbox/conversations/<int:conversation_id>/messages",
        inbox_apis.InboxMessageCreateApi.as_view(),
        name="inbox-conversation-messages",
    ),
    path(
        "inbox/conversations/<int:conversation_id>/archive",
        inbox_apis.InboxConversationArchiveApi.as_view(),
        name="inbox-conversation-archive",
    ),
    path("inbox/suggestions", apis.SuggestionListApi.as_view(), name="inbox-suggestions"),
    path(
        "inbox/suggestions/<int:suggestion_id>/respond",
        apis.SuggestionRespondApi.as_view(),
        name="inbox-suggestion-respond",
    ),
    path("inbox/organize", apis.OrganizeApi.as_view(), name="inbox-organize"),
    path("inbox/moves", apis.MoveListApi.as_view(), name="inbox-moves"),
    path("inbox/moves/<int:move_id>/undo", apis.MoveUndoApi.as_view(), name="inbox-move-undo"),
    path("settings/organization", apis.OrganizationSettingsApi.as_view(), name="organization-settings"),
]
