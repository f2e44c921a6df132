from django.urls import path

from apps.library import apis, document_apis, member_apis, quota_apis, sse

urlpatterns = [
    path("folders", apis.FolderCollectionApi.as_view(), name="folders"),
    path("folders/<int:folder_id>", apis.FolderDetailApi.as_view(), name="folder-detail"),
    path("folders/<int:folder_id>/files", apis.FolderFilesApi.as_view(), name="folder-files"),
    path("folders/<int:folder_id>/reindex", apis.FolderReindexApi.as_view(), name="folder-reindex"),
    path("folders/<int:folder_id>/sync", apis.FolderSyncApi.as_view(), name="folder-sync"),
    path("folders/<int:folder_id>/events", sse.folder_events, name="folder-events"),
    path("folders/<int:folder_id>/files/retry", apis.FolderFilesRetryApi.as_view(), name="folder-files-retry"),
    path("folders/<int:folder_id>/members", member_apis.FolderMembersApi.as_view(), name="folder-members"),
    path(
        "folders/<int:folder_id>/members/<int:user_id>",
        member_apis.FolderMemberDetailApi.as_view(),
        name="folder-member-detail",
    ),
    path("folders/<int:folder_id>/invitations", member_apis.FolderInvitationsApi.as_view(), name="folder-invitations"),
    path(
        "folders/<int:folder_id>/invitations/<int:invitation_id>",
        member_apis.FolderInvitationDetailApi.as_view(),
        name="folder-invitation-detail",
    ),
    path("folders/<int:folder_id>/audit", member_apis.FolderAuditApi.as_view(), name="folder-audit"),
    path("quota", quota_apis.QuotaApi.as_view(), name="quota"),
    path("invitations/accept", member_apis.InvitationAcceptApi.as_view(), name="invitation-accept"),
    path("files/<int:file_id>", apis.FileDetailApi.as_view(), name="file-detail"),
    path("files/<int:file_id>/retry", apis.FileRetryApi.as_view(), name="file-retry"),
    path("files/<int:file_id>/content", document_apis.FileContentApi.as_view(), name="file-content"),
    path("files/<int:file_id>/chunks", document_apis.FileChunksApi.as_view(), name="file-chunks"),
]
