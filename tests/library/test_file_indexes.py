"""library/0018 drops the HNSW graph over the files' embeddings (no statement could use it) and
builds it back on the way down; file searches by meaning rank the same either way."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection

from apps.library.models import File, Folder
from apps.search.selectors import file_search
from apps.search.types import SearchMode
from tests.support.chunk_tables import migration_before, migration_named, unit_vectors

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def _file_vector_indexes() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'library_file' AND indexdef ILIKE '%%USING hnsw%%'"
        )
        return [name for (name,) in cursor.fetchall()]


def _nearest_files(folder: Folder, vectors) -> list[str]:
    """Each vector's nearest file by meaning alone."""
    return [
        file_search(folder_id=folder.pk, query="nearest", k=1, mode=SearchMode.VECTOR, query_vector=vector)[0].path
        for vector in vectors
    ]


def test_the_files_vector_graph_is_dropped_and_built_back_on_the_way_down(user):
    dropped = migration_named("library", "_drop_file_embedding_hnsw")
    folder = Folder.objects.create(owner=user, source="local", external_id="/files", name="files", status="ready")
    vectors = unit_vectors(40)
    for n, vector in enumerate(vectors):
        File.objects.create(
            folder=folder, external_id=str(n), path=f"f{n}.md", name=f"f{n}.md", status="indexed", embedding=vector
        )
    expected = [f"f{n}.md" for n in range(len(vectors))]
    assert _file_vector_indexes() == []
    assert _nearest_files(folder, vectors) == expected
    try:
        call_command("migrate", "library", migration_before(dropped), verbosity=0)
        assert _file_vector_indexes() == ["library_file_embedding_hnsw"]
        assert _nearest_files(folder, vectors) == expected
        call_command("migrate", "library", dropped[1], verbosity=0)
        assert _file_vector_indexes() == []
    finally:
        call_command("migrate", "library", verbosity=0)
