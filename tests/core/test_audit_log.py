"""The audit log is append-only: the admin shows it and nothing more, and the database itself
refuses UPDATE and DELETE, yet removing a folder or a person still works and is recorded."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction
from django.urls import reverse

from apps.core.audit import AuditAction, audit_record
from apps.core.models import AuditEntry
from apps.library.models import Folder

pytestmark = pytest.mark.django_db


@pytest.fixture
def superuser_client(client, django_user_model):
    client.force_login(django_user_model.objects.create_superuser("root", "root@example.com", "root-password"))
    return client


@pytest.fixture
def entry(user) -> AuditEntry:
    return audit_record(actor=user, action=AuditAction.SHARE, folder_id=7, folder_name="team", target="bob")


def _unchanged(entry: AuditEntry) -> bool:
    stored = AuditEntry.objects.get(pk=entry.pk)
    return (stored.action, stored.target, stored.actor_id) == (entry.action, entry.target, entry.actor_id)


def test_a_superuser_can_neither_change_nor_delete_an_entry_in_the_admin(superuser_client, entry):
    change = reverse("admin:core_auditentry_change", args=[entry.pk])
    delete = reverse("admin:core_auditentry_delete", args=[entry.pk])

    assert superuser_client.get(change).status_code == 200  # shown, read-only
    assert superuser_client.post(change, {"action": "revoke", "target": "eve"}).status_code == 403
    assert superuser_client.get(delete).status_code == 403
    assert superuser_client.post(delete, {"post": "yes"}).status_code == 403
    assert _unchanged(entry)


def test_the_admin_list_offers_no_bulk_delete(superuser_client, entry):
    changelist = reverse("admin:core_auditentry_changelist")

    assert b"delete_selected" not in superuser_client.get(changelist).content
    superuser_client.post(changelist, {"action": "delete_selected", "_selected_action": [entry.pk], "post": "yes"})
    assert AuditEntry.objects.filter(pk=entry.pk).exists()


@pytest.mark.parametrize(
    "write",
    [
        lambda entry: AuditEntry.objects.filter(pk=entry.pk).update(target="eve"),
        lambda entry: AuditEntry.objects.filter(pk=entry.pk).delete(),
        lambda entry: entry.delete(),
        lambda entry: AuditEntry.objects.all().delete(),
    ],
    ids=["orm-update", "orm-delete", "instance-delete", "delete-all"],
)
def test_the_database_refuses_changing_or_deleting_an_entry_through_the_orm(entry, write):
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        write(entry)
    assert _unchanged(entry)


@pytest.mark.parametrize(
    ("sql", "params"),
    [
        ("UPDATE core_auditentry SET target = %s WHERE id = %s", ["eve"]),
        ("DELETE FROM core_auditentry WHERE id = %s", []),
    ],
    ids=["update", "delete"],
)
def test_the_database_refuses_changing_or_deleting_an_entry_in_raw_sql(entry, sql, params):
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, [*params, entry.pk])
    assert _unchanged(entry)


def test_removing_a_shared_folder_works_and_is_audited(auth_client, user, other_user, tmp_path):
    folder = Folder.objects.create(owner=user, source="local", external_id=str(tmp_path), name="team")
    shared = auth_client.post(f"/api/folders/{folder.pk}/members", {"username": "mallory", "role": "viewer"})
    assert shared.status_code == 201, shared.json()

    assert auth_client.delete(f"/api/folders/{folder.pk}").status_code == 204

    assert not Folder.objects.filter(pk=folder.pk).exists()
    entries = AuditEntry.objects.filter(folder_id=folder.pk).order_by("created_at")
    assert list(entries.values_list("action", "actor_id")) == [
        (AuditAction.SHARE, user.pk),
        (AuditAction.REMOVE, user.pk),
    ]


def test_deleting_a_person_keeps_their_entries_as_written(superuser_client, user, entry):
    """The actor's id is kept, not set to NULL: the entry says who acted even after they left."""
    user.delete()

    assert _unchanged(entry)
    assert AuditEntry.objects.get(pk=entry.pk).actor_name == "alice"
    page = superuser_client.get(reverse("admin:core_auditentry_change", args=[entry.pk]))
    assert page.status_code == 200 and b"alice" in page.content
