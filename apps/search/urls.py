from django.urls import path

from apps.search import apis

urlpatterns = [
    path("folders/<int:folder_id>/search", apis.FolderSearchApi.as_view(), name="folder-search"),
]
