from django.urls import path

from apps.connectors import apis
from apps.library import sync_apis

urlpatterns = [
    path("drive/connect", apis.DriveConnectApi.as_view(), name="drive-connect"),
    path("drive/status", apis.DriveStatusApi.as_view(), name="drive-status"),
    path("drive/folders", apis.DriveFoldersApi.as_view(), name="drive-folders"),
    path("drive/disconnect", apis.DriveDisconnectApi.as_view(), name="drive-disconnect"),
    path("folders/<int:folder_id>/sync-log", sync_apis.FolderSyncLogApi.as_view(), name="folder-sync-log"),
]
