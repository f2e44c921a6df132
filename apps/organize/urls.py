"""/api/inbox/... (suggestions, moves, organize on demand) and /api/settings/organization."""

from django.urls import URLPattern, URLResolver, path

from apps.organize import apis

urlpatterns: list[URLPattern | URLResolver] = [
    path("inbox/suggestions", apis.SuggestionListApi.as_view(), name="inbox-suggestions"),
    path("inbox/suggestions/accept-all", apis.SuggestionAcceptAllApi.as_view(), name="inbox-suggestions-accept-all"),
    path("inbox/folders/<int:folder_id>/tree", apis.FolderTreeApi.as_view(), name="inbox-folder-tree"),
    path(
        "inbox/suggestions/<int:suggestion_id>/respond",
        apis.SuggestionRespondApi.as_view(),
        name="inbox-suggestion-respond",
    ),
    path(
        "inbox/guideline-proposals/<int:message_id>/respond",
        apis.GuidelineProposalRespondApi.as_view(),
        name="inbox-guideline-proposal-respond",
    ),
    path("inbox/organize", apis.OrganizeApi.as_view(), name="inbox-organize"),
    path("inbox/moves", apis.MoveListApi.as_view(), name="inbox-moves"),
    path("inbox/moves/<int:move_id>/undo", apis.MoveUndoApi.as_view(), name="inbox-move-undo"),
    path("settings/organization", apis.OrganizationSettingsApi.as_view(), name="organization-settings"),
]
