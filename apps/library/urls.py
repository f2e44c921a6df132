from django.urls import path

from apps.library import apis, document_apis, sse

urlpatterns = [
    path("folders", apis.FolderCollectionApi.as_view(), name="folders"),
    path("folders/<int:folder_id>", apis.FolderDetailApi.as_view(), name="folder-detail"),
    path("folders/<int:folder_id>/files", apis.FolderFilesApi.as_view(), name="folder-files"),
    path("folders/<int:folder_id>/reindex", apis.FolderReindexApi.as_view(), name="folder-reindex"),
    path("folders/<int:folder_id>/sync", apis.FolderSyncApi.as_view(), name="folder-sync"),
    path("folders/<int:folder_id>/events", sse.folder_events, name="folder-events"),
    path("folders/<int:folder_id>/files/retry", apis.FolderFilesRetryApi.as_view(), name="folder-files-retry"),
    path("files/<int:file_id>", apis.FileDetailApi.as_view(), name="file-detail"),
    path("files/<int:file_id>/retry", apis.FileRetryApi.as_view(), name="file-retry"),
    path("files/<int:file_id>/content", document_apis.FileContentApi.as_view(), name="file-content"),
    path("files/<int:file_id>/chunks", document_apis.FileChunksApi.as_view(), name="file-chunks"),
]
