"""A local directory belongs to whoever connected it first: another user can connect neither it
nor a directory around or inside it (they ask for a share), and roots can be per user."""

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from apps.library.models import Folder
from apps.library.services import local_roots

pytestmark = pytest.mark.django_db


@pytest.fixture
def shared_root(tmp_path, settings):
    settings.LOCAL_FOLDER_ROOTS = [str(tmp_path)]
    (tmp_path / "team" / "alice" / "taxes").mkdir(parents=True)
    return tmp_path


def _connect(client, path):
    return client.post("/api/folders", {"source": "local", "path": str(path)}, format="json")


@pytest.mark.parametrize("relative", ["team/alice", "team", "team/alice/taxes"], ids=["same", "parent", "child"])
def test_another_user_cannot_connect_a_directory_someone_connected(auth_client, other_client, shared_root, relative):
    assert _connect(auth_client, shared_root / "team" / "alice").status_code == 201

    response = _connect(other_client, shared_root / relative)

    assert response.status_code == 409, response.json()
    assert "ask them to share" in response.json()["detail"]
    assert Folder.objects.count() == 1


def test_the_refusal_holds_both_ways(auth_client, other_client, shared_root):
    """Mallory connected the child first: Alice's connecting its parent would index Mallory's files."""
    assert _connect(other_client, shared_root / "team" / "alice" / "taxes").status_code == 201

    assert _connect(auth_client, shared_root / "team").status_code == 409
    assert _connect(auth_client, shared_root / "team" / "alice").status_code == 409


def test_a_sibling_with_a_common_prefix_is_not_nested(auth_client, other_client, shared_root):
    (shared_root / "team" / "alice-archive").mkdir()
    assert _connect(auth_client, shared_root / "team" / "alice").status_code == 201

    assert _connect(other_client, shared_root / "team" / "alice-archive").status_code == 201


def test_the_owner_may_connect_nested_directories_of_their_own(auth_client, shared_root):
    assert _connect(auth_client, shared_root / "team" / "alice").status_code == 201
    assert _connect(auth_client, shared_root / "team" / "alice" / "taxes").status_code == 201


def test_a_symlink_to_someone_elses_directory_is_refused(auth_client, other_client, shared_root):
    assert _connect(auth_client, shared_root / "team" / "alice").status_code == 201
    (shared_root / "mine").symlink_to(shared_root / "team" / "alice" / "taxes")

    assert _connect(other_client, shared_root / "mine").status_code == 409


def test_roots_can_be_per_user(auth_client, other_client, tmp_path, settings):
    settings.LOCAL_FOLDER_ROOTS = [str(tmp_path / "homes" / "{username}")]
    for name in ("alice", "mallory"):
        (tmp_path / "homes" / name / "docs").mkdir(parents=True)

    assert _connect(auth_client, tmp_path / "homes" / "alice" / "docs").status_code == 201
    refused = _connect(other_client, tmp_path / "homes" / "alice" / "docs")
    assert refused.status_code == 400
    assert refused.json()["allowed_roots"] == [str((tmp_path / "homes" / "mallory").resolve())]
    assert _connect(other_client, tmp_path / "homes" / "mallory" / "docs").status_code == 201


# A name that is one plain directory name gets its own root; any other gets none under the entry
# (it would name the entry's parent, the shared directory itself, or another user's root).
@pytest.mark.parametrize(
    ("username", "own"),
    [
        ("alice", "alice"),
        ("alice.smith", "alice.smith"),
        (".alice", ".alice"),
        ("...", "..."),
        ("a..b", "a..b"),
        ("bob@example.com", "bob@example.com"),
        (".", None),
        ("..", None),
        ("", None),
        ("alice/taxes", None),
        ("../..", None),
        ("/etc", None),
        ("alice\x00", None),
    ],
)
def test_a_per_user_root_stays_strictly_inside_its_entry(tmp_path, settings, username, own):
    settings.LOCAL_FOLDER_ROOTS = [str(tmp_path / "homes" / "{username}"), str(tmp_path / "shared")]

    roots = local_roots(user=User(username=username))

    expected = [tmp_path / "homes" / own] if own else []
    assert roots == [path.resolve() for path in [*expected, tmp_path / "shared"]]


@pytest.mark.parametrize("username", [".", ".."])
def test_a_user_whose_name_is_no_directory_cannot_connect_under_a_per_user_entry(
    django_user_model, tmp_path, settings, username
):
    settings.LOCAL_FOLDER_ROOTS = [str(tmp_path / "homes" / "{username}")]
    (tmp_path / "homes" / "alice").mkdir(parents=True)
    client = APIClient()
    client.force_authenticate(user=django_user_model.objects.create_user(username=username, password="dots"))

    for path in (tmp_path, tmp_path / "homes", tmp_path / "homes" / "alice"):
        refused = _connect(client, path)
        assert refused.status_code == 400, path
        assert "user name" in refused.json()["detail"] and refused.json()["allowed_roots"] == []
    assert Folder.objects.count() == 0
