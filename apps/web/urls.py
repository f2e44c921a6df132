from django.contrib.auth import views as auth_views
from django.urls import path

from apps.web import evaluate_views, language_views, library_views, views

urlpatterns = [
    path(
        "login/",
        auth_views.LoginView.as_view(template_name="web/login.html", redirect_authenticated_user=True, next_page="/"),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(next_page="/login/"), name="logout"),
    path("manifest.webmanifest", views.web_manifest, name="web-manifest"),
    path("", views.folder_list, name="web-folders"),
    path("folders/<int:folder_id>/", views.folder_chat, name="web-folder-chat"),
    path("conversations/<int:conversation_id>/", views.conversation, name="web-conversation"),
    path("inbox/", views.inbox, name="web-inbox"),
    path("invite/<str:token>/", views.invitation, name="web-invitation"),
    path("help/drive/", views.drive_setup, name="web-drive-setup"),
    path("files/<int:file_id>", views.file_document, name="web-file-document"),
    path("folders/<int:folder_id>/files", library_views.folder_files, name="web-folder-files"),
    path("folders/<int:folder_id>/search", library_views.folder_search, name="web-folder-search"),
    path("folders/<int:folder_id>/settings", library_views.folder_settings, name="web-folder-settings"),
    path("folders/<int:folder_id>/evaluate", evaluate_views.folder_evaluate, name="web-folder-evaluate"),
    path(
        "folders/<int:folder_id>/evaluate/feedback",
        evaluate_views.folder_evaluate_feedback,
        name="web-folder-evaluate-feedback",
    ),
    path("settings/organize", library_views.organize_settings, name="web-organize-settings"),
    path("settings/tokens", views.api_tokens, name="web-api-tokens"),
    path("settings/language", language_views.language_choose, name="web-language"),
    # The scripts' strings in the page's language (Django's JavaScript catalog; base.html loads it).
    path("jsi18n/", language_views.javascript_catalog, name="javascript-catalog"),
]
