import pytest

from apps.library.models import File, Folder

pytestmark = pytest.mark.django_db


@pytest.fixture
def allowed_root(tmp_path, settings):
    settings.LOCAL_FOLDER_ROOTS = [str(tmp_path)]
    (tmp_path / "notes").mkdir()
    return tmp_path


@pytest.fixture
def folder(user, allowed_root):
    return Folder.objects.create(owner=user, source="local", external_id=str(allowed_root / "notes"), name="notes")


def test_create_local_folder_under_allowed_root(auth_client, allowed_root, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        response = auth_client.post(
            "/api/folders", {"source": "local", "path": str(allowed_root / "notes")}, format="json"
        )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["name"] == "notes" and body["status"] == "indexing"
    assert len(callbacks) == 1  # indexing is queued only once the folder row is committed


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"source": "local", "path": "/etc"}, "outside the allowed local roots"),
        ({"source": "local", "path": "relative/dir"}, "must be absolute"),
        ({"source": "local"}, "Invalid input"),
        ({"source": "ftp", "path": "/x"}, "Invalid input"),
        ({"source": "drive"}, "Invalid input"),
        ({"source": "local", "path": "/tmp/\x00evil"}, "Null characters are not allowed"),
    ],
)
def test_create_folder_rejects_bad_input_with_a_message(auth_client, allowed_root, payload, message):
    response = auth_client.post("/api/folders", payload, format="json")
    assert response.status_code == 400
    assert message in str(response.json())


def test_create_local_folder_refuses_traversal_out_of_root(auth_client, allowed_root):
    response = auth_client.post(
        "/api/folders", {"source": "local", "path": f"{allowed_root}/notes/../../.."}, format="json"
    )
    assert response.status_code == 400
    assert "outside the allowed local roots" in response.json()["detail"]


def test_create_same_folder_twice_is_conflict(auth_client, folder):
    response = auth_client.post("/api/folders", {"source": "local", "path": folder.external_id}, format="json")
    assert response.status_code == 409


def test_list_shows_only_own_folders(auth_client, other_client, folder):
    assert [f["id"] for f in auth_client.get("/api/folders").json()["results"]] == [folder.pk]
    assert other_client.get("/api/folders").json()["results"] == []


def test_other_users_folder_and_files_are_404(other_client, folder):
    file = File.objects.create(folder=folder, external_id="a.txt", path="a.txt", name="a.txt")
    assert other_client.get(f"/api/folders/{folder.pk}").status_code == 404
    assert other_client.get(f"/api/folders/{folder.pk}/files").status_code == 404
    assert other_client.delete(f"/api/folders/{folder.pk}").status_code == 404
    assert other_client.post(f"/api/folders/{folder.pk}/reindex").status_code == 404
    assert other_client.get(f"/api/files/{file.pk}").status_code == 404
    assert Folder.objects.filter(pk=folder.pk).exists()


def test_owner_reads_files_and_deletes_folder(auth_client, folder):
    File.objects.create(folder=folder, external_id="b.txt", path="sub/b.txt", name="b.txt", status="indexed")
    File.objects.create(folder=folder, external_id="a.txt", path="a.txt", name="a.txt")
    listing = auth_client.get(f"/api/folders/{folder.pk}/files").json()
    assert [f["path"] for f in listing["results"]] == ["a.txt", "sub/b.txt"]
    only_indexed = auth_client.get(f"/api/folders/{folder.pk}/files?status=indexed").json()
    assert [f["path"] for f in only_indexed["results"]] == ["sub/b.txt"]
    assert auth_client.get(f"/api/folders/{folder.pk}/files?status=bogus").status_code == 400
    assert auth_client.delete(f"/api/folders/{folder.pk}").status_code == 204
    assert not File.objects.filter(folder_id=folder.pk).exists()


def test_unknown_ids_are_404(auth_client):
    assert auth_client.get("/api/folders/999999").status_code == 404
    assert auth_client.get("/api/files/999999").status_code == 404
