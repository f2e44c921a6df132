"""Per-folder exclude patterns (gitignore syntax): never listed, never indexed, and a pattern
change takes files out of (or back into) the index on the next sync."""

import datetime as dt

import pytest
from django.utils import timezone

from apps.connectors import local
from apps.connectors.local import LocalSource
from apps.library.exclusions import DEFAULT_EXCLUDE_PATTERNS, ExcludePatternError, exclude_patterns_clean, exclusion_for
from apps.library.indexing import folder_index
from apps.library.models import Chunk, File, Folder
from apps.library.reconcile import changes_apply
from apps.library.sources import ChangeSet, SourceEntry
from apps.library.sync import folder_sync
from tests.support.files import write

pytestmark = pytest.mark.django_db


def paths(folder):
    return set(File.objects.filter(folder=folder).values_list("path", flat=True))


def project_tree(root):
    write(root, "README.md", "# Project\n\nHow the invoices are processed.")
    write(root, "src/app.py", "def total(lines):\n    return sum(line.amount for line in lines)\n")
    write(root, "node_modules/left-pad/index.js", "module.exports = function leftPad() {}\n")
    write(root, "src/__pycache__/app.cpython-311.pyc", b"\x00\x01compiled")
    write(root, "venv/lib/site.py", "import os\n")
    write(root, "static/vendor.min.js", "var a=1;")
    write(root, "static/app.js.map", '{"version":3}')
    write(root, "build/report.log", "build output\n")


def test_default_patterns_keep_dependencies_caches_and_build_output_out(root, folder):
    project_tree(root)
    folder_index(folder_id=folder.pk, inline=True)
    assert paths(folder) == {"README.md", "src/app.py", "build/report.log"}
    assert Folder._meta.get_field("exclude_patterns").default == DEFAULT_EXCLUDE_PATTERNS


def test_local_source_does_not_walk_into_excluded_directories(root, monkeypatch):
    project_tree(root)
    walked = []
    real = local.directory_open_beneath

    def directory_open_beneath(*, root, parts, **options):
        walked.append("/".join(parts))
        return real(root=root, parts=parts, **options)

    monkeypatch.setattr(local, "directory_open_beneath", directory_open_beneath)
    source = LocalSource(root, exclusion=exclusion_for(DEFAULT_EXCLUDE_PATTERNS))
    listed = {entry.path for entry in source.list_entries()}
    assert listed == {"README.md", "src/app.py", "build/report.log"}
    assert "src" in walked
    assert not any(part.startswith(("node_modules", "venv", "src/__pycache__")) for part in walked)


def test_a_pattern_added_later_removes_files_from_the_index_on_the_next_sync(
    root, folder, auth_client, django_capture_on_commit_callbacks, monkeypatch
):
    project_tree(root)
    folder_index(folder_id=folder.pk, inline=True)
    assert Chunk.objects.filter(file__path="build/report.log").exists()
    sent = []
    monkeypatch.setattr("apps.library.enqueue.sync_folder", lambda folder_id: sent.append(folder_id))

    with django_capture_on_commit_callbacks(execute=True):
        response = auth_client.patch(
            f"/api/folders/{folder.pk}",
            {"exclude_patterns": DEFAULT_EXCLUDE_PATTERNS + "\nbuild/\n"},
            format="json",
        )
    assert response.status_code == 200, response.json()
    assert response.json()["exclude_patterns"].endswith("build/")
    assert sent == [folder.pk]  # a changed pattern queues a sync

    log = folder_sync(folder_id=folder.pk)
    assert log is not None and log.deleted == 1
    assert paths(folder) == {"README.md", "src/app.py"}
    assert not Chunk.objects.filter(folder=folder, file__path__startswith="build/").exists()

    # Taken out again: the file comes back.
    with django_capture_on_commit_callbacks(execute=True):
        auth_client.patch(f"/api/folders/{folder.pk}", {"exclude_patterns": DEFAULT_EXCLUDE_PATTERNS}, format="json")
    folder_sync(folder_id=folder.pk)
    assert "build/report.log" in paths(folder)


@pytest.mark.parametrize(
    ("patterns", "message"),
    [
        ("docs/\n!", "Line 2 ('!') is not a valid gitignore pattern"),
        ("[z-a].txt", "Line 1 ('[z-a].txt') is not a valid gitignore pattern"),
        ("x\n" * 600, "Too many patterns"),
    ],
)
def test_a_bad_pattern_is_a_400_naming_the_line(auth_client, folder, root, patterns, message):
    response = auth_client.patch(f"/api/folders/{folder.pk}", {"exclude_patterns": patterns}, format="json")
    assert response.status_code == 400
    assert message in str(response.json()["errors"]["exclude_patterns"])
    folder.refresh_from_db()
    assert folder.exclude_patterns == DEFAULT_EXCLUDE_PATTERNS
    created = auth_client.post(
        "/api/folders", {"source": "local", "path": str(root), "exclude_patterns": patterns}, format="json"
    )
    assert created.status_code == 400 and message in str(created.json())


def test_create_with_patterns_and_another_users_folder_is_404(auth_client, other_client, root, folder):
    folder.delete()
    response = auth_client.post(
        "/api/folders", {"source": "local", "path": str(root), "exclude_patterns": "*.log\r\ntmp/\n\n"}, format="json"
    )
    assert response.status_code == 201, response.json()
    created = Folder.objects.get(pk=response.json()["id"])
    assert created.exclude_patterns == "*.log\ntmp/"
    assert other_client.patch(f"/api/folders/{created.pk}", {"exclude_patterns": ""}, format="json").status_code == 404
    assert other_client.get(f"/api/folders/{created.pk}").status_code == 404


def test_the_admin_refuses_a_bad_pattern(client, user, folder):
    user.is_staff = user.is_superuser = True
    user.save()
    client.force_login(user)
    url = f"/admin/library/folder/{folder.pk}/change/"
    form = client.get(url).context["adminform"].form
    data = {name: form[name].value() or "" for name in form.fields}
    data.update(exclude_patterns="ok/\n\\", owner=user.pk)
    response = client.post(url, data)
    assert response.status_code == 200
    assert "is not a valid gitignore pattern" in response.content.decode()


def _entry(path):
    return SourceEntry(
        external_id=f"id-{path}",
        path=path,
        name=path.rsplit("/", 1)[-1],
        mime_type="text/plain",
        size=1,
        checksum=f"sum-{path}",
        modified_time=timezone.now() - dt.timedelta(days=1),
    )


def test_drive_change_sets_honour_the_patterns(folder):
    changes_apply(
        folder=folder, changes=ChangeSet(upserted=[_entry("a.txt"), _entry("b.txt")], removed_ids=[], cursor="1")
    )
    assert paths(folder) == {"a.txt", "b.txt"}
    # A file moved under node_modules/ and a new one there: neither is kept; a new pattern drops b.txt.
    folder.exclude_patterns = DEFAULT_EXCLUDE_PATTERNS + "\nb.txt"
    folder.save()
    moved = _entry("node_modules/pkg/a.txt")
    moved = SourceEntry(**{**moved.__dict__, "external_id": "id-a.txt"})
    result = changes_apply(
        folder=folder,
        changes=ChangeSet(
            upserted=[moved, _entry("node_modules/pkg/c.txt"), _entry("d.txt")], removed_ids=[], cursor="2"
        ),
    )
    assert paths(folder) == {"d.txt"}
    assert result.excluded == 2 and result.deleted == 2


def test_pattern_cleaning():
    assert exclude_patterns_clean(text="a/\r\n*.log  \n\n") == "a/\n*.log"
    with pytest.raises(ExcludePatternError):
        exclude_patterns_clean(text="bad\x00pattern")
    exclusion = exclusion_for("docs/\n!docs/keep.md\n*.tmp")
    assert exclusion.excludes("x/y.tmp") and exclusion.excludes("docs/a.md") and not exclusion.excludes("a.md")
    assert exclusion.excludes_directory("docs") and not exclusion.excludes_directory("src")
    assert not exclusion_for("").excludes("anything")


@pytest.mark.parametrize(
    "patterns",
    [
        DEFAULT_EXCLUDE_PATTERNS,
        DEFAULT_EXCLUDE_PATTERNS + "\nbuild/\n/top.txt\na/**/b\n*.log\ndocs/*.tmp\nsecret[0-9].txt\n**/cache",
        DEFAULT_EXCLUDE_PATTERNS + "\n\\#hash\nx|y\n(p)",  # characters a regex would read as its own
        DEFAULT_EXCLUDE_PATTERNS + "\n*.log\n!keep.log\nbuild/\n!build/keep.txt",  # negations: pathspec's order
    ],
)
def test_exclusion_answers_as_pathspec_does(patterns):
    # Without negations all patterns are matched as one regex (a sync checks every path of the
    # folder); the answer must be pathspec's own for every path, file or directory.
    import itertools

    import pathspec

    spec = pathspec.GitIgnoreSpec.from_lines(patterns.splitlines())
    exclusion = exclusion_for(patterns)
    names = ["a", "b", "build", "docs", "node_modules", ".git", "x.pyc", "top.txt", "cache", "f.min.js"]
    names += ["secret3.txt", "n.log", "keep.log", "k.tmp", "#hash", "y~", ".~lock.x#", "x|y", "(p)", "keep.txt"]
    paths = [*names, *itertools.product(names, repeat=2), *itertools.product(names[:8], repeat=3)]
    for parts in paths:
        path = parts if isinstance(parts, str) else "/".join(parts)
        assert exclusion.excludes(path) == spec.match_file(path), path
        assert exclusion.excludes_directory(path) == spec.match_file(path + "/"), path
