"""The access function: what each role may do to a folder, and what a stranger sees (nothing)."""

import pytest
from django.http import Http404

from apps.library.access import (
    FolderAction,
    FolderPermissionDenied,
    file_access,
    folder_access,
    folders_visible,
)
from apps.library.models import File, Folder, FolderMembership, FolderRole

pytestmark = pytest.mark.django_db


@pytest.fixture
def folder(user):
    return Folder.objects.create(owner=user, source="local", external_id="/srv/team", name="team")


@pytest.fixture
def member(django_user_model, folder):
    def add(role):
        person = django_user_model.objects.create_user(username=f"{role}-member")
        FolderMembership.objects.create(folder=folder, user=person, role=role)
        return person

    return add


ALLOWED = {
    FolderRole.VIEWER: {FolderAction.VIEW},
    FolderRole.EDITOR: {FolderAction.VIEW, FolderAction.EDIT},
}


@pytest.mark.parametrize("role", [FolderRole.VIEWER, FolderRole.EDITOR])
@pytest.mark.parametrize("action", list(FolderAction))
def test_a_member_may_do_what_the_role_allows_and_gets_a_403_message_beyond(member, folder, role, action):
    person = member(role)
    if action in ALLOWED[role]:
        assert folder_access(user=person, folder_id=folder.pk, action=action) == folder
    else:
        with pytest.raises(FolderPermissionDenied) as refused:
            folder_access(user=person, folder_id=folder.pk, action=action)
        assert refused.value.status_code == 403
        assert f"you are {'an' if role == FolderRole.EDITOR else 'a'} {role.value}." in refused.value.message


def test_the_owner_may_do_everything(user, folder):
    for action in FolderAction:
        assert folder_access(user=user, folder_id=folder.pk, action=action) == folder


def test_a_stranger_gets_the_same_404_as_for_a_missing_folder(other_user, folder):
    for action in FolderAction:
        with pytest.raises(Http404):
            folder_access(user=other_user, folder_id=folder.pk, action=action)
    with pytest.raises(Http404):
        folder_access(user=other_user, folder_id=folder.pk + 1000)


def test_files_follow_their_folder(member, other_user, folder):
    file = File.objects.create(folder=folder, external_id="a.txt", path="a.txt", name="a.txt")
    viewer = member(FolderRole.VIEWER)
    assert file_access(user=viewer, file_id=file.pk) == file
    with pytest.raises(FolderPermissionDenied):
        file_access(user=viewer, file_id=file.pk, action=FolderAction.EDIT)
    with pytest.raises(Http404, match="File not found"):
        file_access(user=other_user, file_id=file.pk)


def test_shared_folders_are_visible_to_members_only(user, member, other_user, folder):
    mine = Folder.objects.create(owner=other_user, source="local", external_id="/srv/own", name="own")
    viewer = member(FolderRole.VIEWER)
    assert set(folders_visible(user=viewer)) == {folder}
    assert set(folders_visible(user=other_user)) == {mine}
    assert set(folders_visible(user=user)) == {folder}


def test_a_viewer_is_refused_a_sync_over_the_api_with_a_message(member, folder):
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(user=member(FolderRole.VIEWER))
    assert client.get(f"/api/folders/{folder.pk}").status_code == 200
    response = client.post(f"/api/folders/{folder.pk}/sync")
    assert response.status_code == 403
    assert "Only an editor" in response.json()["detail"]
    assert client.delete(f"/api/folders/{folder.pk}").status_code == 403
    assert Folder.objects.filter(pk=folder.pk).exists()
