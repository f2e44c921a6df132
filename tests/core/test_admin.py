import pytest
from django.contrib import admin
from django.urls import reverse

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client, django_user_model):
    staff = django_user_model.objects.create_superuser("root", "root@example.com", "root-password")
    client.force_login(staff)
    return client


def test_every_model_changelist_renders_for_staff(staff_client, user):
    from apps.chat.models import Conversation
    from apps.library.models import File, Folder, SyncLog

    # Rows, so the list_display columns (foreign keys, __str__, summaries) are rendered too.
    folder = Folder.objects.create(owner=user, source="local", external_id="/srv/admin", name="admin-folder")
    File.objects.create(folder=folder, external_id="a.txt", path="a.txt", name="a.txt")
    SyncLog.objects.create(folder=folder, mode="full", added=1)
    Conversation.objects.create(owner=user, folder=folder, kind="chat", title="admin-chat")
    with_rows = {Folder, File, SyncLog, Conversation}
    assert with_rows <= set(admin.site._registry)
    for model in admin.site._registry:
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        response = staff_client.get(url)
        assert response.status_code == 200, url
        if model in with_rows:
            assert b'id="result_list"' in response.content, url


def test_admin_is_closed_to_non_staff(client, user):
    client.force_login(user)
    response = client.get("/admin/library/folder/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_reindexing_files_from_admin_queues_them_even_when_unchanged(
    staff_client, user, monkeypatch, django_capture_on_commit_callbacks
):
    from apps.library.models import File, Folder

    folder = Folder.objects.create(owner=user, source="local", external_id="/srv/a", name="a")
    files = [
        File.objects.create(folder=folder, external_id=name, path=name, name=name, checksum="c", status="indexed")
        for name in ("a.txt", "b.txt")
    ]
    File.objects.filter(folder=folder).update(indexed_checksum="c")
    sent = []
    monkeypatch.setattr("apps.library.enqueue.index_files", lambda file_ids, task_id, **options: sent.append(file_ids))
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(
            "/admin/library/file/", {"action": "reindex", "_selected_action": [file.pk for file in files]}
        )
    assert response.status_code == 302
    assert sorted(sent[0]) == sorted(file.pk for file in files) and len(sent) == 1
    assert set(File.objects.filter(folder=folder).values_list("indexed_checksum", flat=True)) == {""}
