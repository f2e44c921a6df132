"""Migration library/0012 gives the files indexed before it their token count, from their chunks."""

import importlib

import pytest
from django.db import connection

from apps.library.models import File, Folder
from tests.support.search_corpus import make_chunks, make_file

pytestmark = pytest.mark.django_db

MIGRATION = importlib.import_module("apps.library.migrations.0012_file_token_count")


def test_files_indexed_before_the_migration_get_their_chunks_tokens(user) -> None:
    folder = Folder.objects.create(owner=user, source="local", external_id="/srv/old", name="old", status="ready")
    long_file = make_file(folder, "long.md")
    make_chunks(long_file, ["one two three", "four five"])
    short_file = make_file(folder, "short.md")
    make_chunks(short_file, ["six"])
    unindexed = make_file(folder, "empty.md")
    File.objects.filter(folder=folder).update(token_count=0)  # as the new column starts

    with connection.cursor() as cursor:
        cursor.execute(MIGRATION.COUNT_EXISTING)

    counts = dict(File.objects.filter(folder=folder).values_list("path", "token_count"))
    assert counts == {long_file.path: 5, short_file.path: 1, unindexed.path: 0}
