"""The folder picker's API: browsing My Drive and shared drives through the real client and the emulator."""

from __future__ import annotations

import pytest

from apps.connectors.models import DriveCredential
from apps.library.models import Folder
from tests.support.drive_tree import Tree

pytestmark = pytest.mark.django_db


def names(items) -> list[str]:
    return [item["name"] for item in items]


def test_my_drive_lists_its_folders_only_and_the_shared_drives(auth_client, drive_settings, tree: Tree, state):
    state.add_file("loose.txt", b"not a folder", parent_id=state.MY_DRIVE_ID)
    team = state.add_shared_drive("Team")

    response = auth_client.get("/api/drive/folders")

    assert response.status_code == 200, response.json()
    page = response.json()
    assert names(page["folders"]) == ["Elsewhere", "Lease"]  # by name; files are not offered
    assert page["drives"] == [{"id": team, "name": "Team", "drive_id": team}]
    assert names(page["breadcrumbs"]) == ["My Drive"]
    assert page["next_page_token"] is None


def test_a_shared_drive_is_browsed_with_breadcrumbs_down_to_the_folder(auth_client, drive_settings, state):
    team = state.add_shared_drive("Team")
    projects = state.add_folder("Projects", parent_id=team)
    state.add_folder("Alpha", parent_id=projects)
    state.add_folder("Beta", parent_id=projects)

    top = auth_client.get("/api/drive/folders", {"parent": team, "drive": team}).json()
    inside = auth_client.get("/api/drive/folders", {"parent": projects, "drive": team}).json()

    assert names(top["folders"]) == ["Projects"] and top["folders"][0]["drive_id"] == team
    assert names(inside["folders"]) == ["Alpha", "Beta"]
    assert names(inside["breadcrumbs"]) == ["Team", "Projects"]
    assert inside["drives"] == []


def test_folders_come_a_page_at_a_time(auth_client, drive_settings, state):
    parent = state.add_folder("Archive")
    for number in range(55):
        state.add_folder(f"Year {number:02d}", parent_id=parent)

    first = auth_client.get("/api/drive/folders", {"parent": parent}).json()
    second = auth_client.get("/api/drive/folders", {"parent": parent, "page_token": first["next_page_token"]}).json()

    assert len(first["folders"]) == 50 and first["next_page_token"]
    assert names(first["folders"] + second["folders"]) == [f"Year {number:02d}" for number in range(55)]
    assert second["next_page_token"] is None


def test_a_search_by_name_looks_in_every_drive(auth_client, drive_settings, tree: Tree, state):
    team = state.add_shared_drive("Team")
    state.add_folder("Leases 2024", parent_id=team)
    state.add_folder("Deep lease", parent_id=tree.a)

    found = auth_client.get("/api/drive/folders", {"q": "lease"}).json()

    assert sorted(names(found["folders"])) == ["Deep lease", "Lease", "Leases 2024"]


def test_a_folder_the_token_cannot_read_is_a_clear_404(auth_client, drive_settings):
    response = auth_client.get("/api/drive/folders", {"parent": "1NotYours"})
    assert response.status_code == 404
    assert response.json()["detail"] == "This Drive folder does not exist or your Google account cannot read it."


def test_without_any_drive_access_browsing_asks_to_connect(auth_client, drive_settings):
    drive_settings.DRIVE_API_ENDPOINT = ""  # no emulator: only the user's tokens or a service account
    response = auth_client.get("/api/drive/folders")
    assert response.status_code == 409
    assert "not connected" in response.json()["detail"]


def test_the_request_to_connect_is_in_the_askers_language(auth_client, drive_settings):
    drive_settings.DRIVE_API_ENDPOINT = ""
    response = auth_client.get("/api/drive/folders", HTTP_ACCEPT_LANGUAGE="de")
    assert response.status_code == 409
    assert response.json()["detail"].startswith("Google Drive ist nicht verbunden"), response.json()


def test_status_says_whether_consent_is_needed(auth_client, drive_settings, user, tmp_path):
    assert auth_client.get("/api/drive/status").json() == {"connected": False, "access": "", "can_connect": True}
    DriveCredential.objects.create(owner=user, access_token="a", refresh_token="r")
    assert auth_client.get("/api/drive/status").json()["access"] == "oauth"
    DriveCredential.objects.all().delete()
    drive_settings.GOOGLE_SERVICE_ACCOUNT_FILE = str(tmp_path / "sa.json")
    assert auth_client.get("/api/drive/status").json() == {
        "connected": True,
        "access": "service_account",
        "can_connect": True,
    }


def test_a_picked_folder_takes_its_drive_name_and_an_unreadable_id_is_refused(
    auth_client, drive_settings, tree: Tree, capture
):
    with capture():
        response = auth_client.post("/api/folders", {"source": "drive", "drive_folder_id": tree.root}, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["name"] == "Lease"

    refused = auth_client.post("/api/folders", {"source": "drive", "drive_folder_id": "1NotYours"}, format="json")
    assert refused.status_code == 400
    assert "cannot read it" in refused.json()["detail"]
    not_folder = auth_client.post("/api/folders", {"source": "drive", "drive_folder_id": tree.lease}, format="json")
    assert not_folder.status_code == 400 and "not a folder" in not_folder.json()["detail"]
    assert Folder.objects.count() == 1


def test_the_browsing_endpoint_is_in_the_schema(auth_client):
    schema = auth_client.get("/api/schema", HTTP_ACCEPT="application/json").json()
    operation = schema["paths"]["/api/drive/folders"]["get"]
    assert {parameter["name"] for parameter in operation["parameters"]} >= {"parent", "drive", "q", "page_token"}
    assert "/api/folders/{folder_id}/files/retry" in schema["paths"]
    assert "/api/files/{file_id}/retry" in schema["paths"]
