import pytest

from apps.library.models import Chunk
from apps.search import planning
from apps.search.models import FolderLexeme, FolderTermStats
from apps.search.services import folder_lexeme_stats_refresh
from apps.search.statements import KeywordMethod, VectorMethod
from tests.support.search_corpus import FILLER_CHUNKS, make_chunks, make_file


@pytest.mark.django_db
def test_refresh_counts_documents_per_lexeme(corpus):
    stats = FolderTermStats.objects.get(folder_id=corpus.folder.pk)
    assert stats.chunk_count == FILLER_CHUNKS + 4
    assert 0 < stats.average_length < 40
    df = dict(FolderLexeme.objects.filter(folder_id=corpus.folder.pk).values_list("lexeme", "document_count"))
    assert df["revenu"] == 1 and df["q4"] == 1 and df["treasur"] == 1
    assert stats.file_count == len(corpus.files)

    extra = make_file(corpus.folder, "more.md")
    make_chunks(extra, ["More revenue.", "Revenue again."])
    refreshed = folder_lexeme_stats_refresh(folder_id=corpus.folder.pk)
    assert refreshed.chunk_count == FILLER_CHUNKS + 6
    # BM25's lengths are token counts: the total is the chunks' token_count summed.
    assert (
        refreshed.total_tokens
        == sum(Chunk.objects.filter(folder=corpus.folder).values_list("token_count", flat=True))
        > 0
    )
    revenue = FolderLexeme.objects.get(folder_id=corpus.folder.pk, lexeme="revenu")
    # In three chunks of two files: the report's, and both of more.md's.
    assert (revenue.document_count, revenue.file_count) == (3, 2)
    assert refreshed.file_count == len(corpus.files) + 1


@pytest.mark.django_db
def test_refresh_is_scoped_to_its_folder(corpus, other_corpus):
    other_before = FolderLexeme.objects.filter(folder_id=other_corpus.folder.pk).count()
    make_chunks(make_file(corpus.folder, "new.md"), ["a brand new zeugma"])
    folder_lexeme_stats_refresh(folder_id=corpus.folder.pk)
    assert FolderLexeme.objects.filter(folder_id=other_corpus.folder.pk).count() == other_before
    assert not FolderLexeme.objects.filter(folder_id=other_corpus.folder.pk, lexeme="zeugma").exists()


@pytest.mark.django_db
def test_refresh_of_an_empty_folder(user):
    from apps.library.models import Folder

    folder = Folder.objects.create(owner=user, source="local", external_id="/srv/empty", name="empty")
    stats = folder_lexeme_stats_refresh(folder_id=folder.pk)
    assert stats.chunk_count == 0 and stats.average_length == 0


@pytest.mark.django_db
def test_refresh_of_a_deleted_folder_is_a_no_op():
    assert folder_lexeme_stats_refresh(folder_id=987654321) is None


@pytest.mark.django_db
def test_statistics_go_with_their_folder(corpus):
    corpus.folder.delete()
    assert not FolderLexeme.objects.exists() and not FolderTermStats.objects.exists()


@pytest.mark.parametrize(
    ("folder_rows", "graph_rows", "k", "iterative", "expected"),
    [
        (500, 1_000_000, 10, False, (VectorMethod.EXACT, planning.EF_SEARCH_MIN)),
        (planning.EXACT_MAX_ROWS, 1_000_000, 10, False, (VectorMethod.EXACT, planning.EF_SEARCH_MIN)),
        (200_000, 1_000_000, 10, False, (VectorMethod.HNSW, planning.EF_SEARCH_MIN)),  # floor: HNSW's own recall
        (40_000, 1_000_000, 10, False, (VectorMethod.HNSW, 625)),  # 2.5 x 10 / 4%
        (200_000, 200_000, 100, False, (VectorMethod.HNSW, planning.EF_SEARCH_MIN)),
        (
            20_000,
            1_000_000,
            10,
            False,
            (VectorMethod.EXACT, planning.EF_SEARCH_MIN),
        ),  # HNSW would need ef_search > 1000
        (30_000, 1_000_000, 100, False, (VectorMethod.EXACT, planning.EF_SEARCH_MIN)),
        (20_000, 1_000_000, 10, True, (VectorMethod.ITERATIVE, planning.EF_SEARCH_MIN)),
    ],
)
def test_vector_plan(folder_rows, graph_rows, k, iterative, expected):
    depth = max(k, 50)
    plan = planning.vector_plan(
        folder_rows=folder_rows, graph_rows=graph_rows, k=k, depth=depth, iterative_scans=iterative
    )
    assert (plan.method, plan.ef_search) == expected


@pytest.mark.parametrize(
    ("folder_rows", "partition_rows", "expected", "row_budget"),
    [
        (100, 1_000_000, (KeywordMethod.SCAN, 0.0), False),
        (planning.KEYWORD_SCAN_MAX_ROWS, 1_000_000, (KeywordMethod.SCAN, 0.0), False),
        (50_000, 1_000_000, (KeywordMethod.INDEX, 20.0), True),
        (200_000, 1_000_000, (KeywordMethod.INDEX_FILTER, 5.0), True),
        (50_000, -1, (KeywordMethod.INDEX_FILTER, 1.0), True),
    ],
)
def test_keyword_plan(folder_rows, partition_rows, expected, row_budget):
    plan = planning.keyword_plan(folder_rows=folder_rows, partition_rows=partition_rows)
    assert (plan.method, plan.posting_scale) == expected
    # A scanned folder lets every lexeme select candidates; the GIN paths keep the row budget.
    assert plan.row_budget is (plan.method is not KeywordMethod.SCAN)
    assert plan.row_budget is row_budget


def test_version_parsing():
    assert planning._version("0.6.2") == (0, 6)
    assert planning._version("0.8.0") >= (0, 8)
    assert planning._version("1.0") >= (0, 8)


@pytest.mark.django_db
def test_cached_statistics_are_read_from_the_database(corpus):
    planning.folder_chunk_count_forget(folder_id=corpus.folder.pk)
    assert planning.folder_chunk_count(folder_id=corpus.folder.pk) == FILLER_CHUNKS + 4
    assert planning.pgvector_has_iterative_scans() is True  # the embedded server has pgvector 0.8
    assert isinstance(planning.folder_partition(folder_id=corpus.folder.pk).rows, int)


@pytest.mark.django_db
def test_chunk_rows_keep_embedding_and_tsvector_inline():
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attname, attstorage FROM pg_attribute WHERE attrelid = 'library_chunk'::regclass"
            " AND attname IN ('embedding', 'search_vector', 'text')"
        )
        storage = dict(cursor.fetchall())
        # A partitioned table keeps its heaps' storage parameters on its partitions.
        cursor.execute(
            "SELECT c.reloptions FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
            " WHERE i.inhparent = 'library_chunk'::regclass"
        )
        options = [row[0] for row in cursor.fetchall()]
    assert storage == {"embedding": "m", "search_vector": "m", "text": "x"}
    assert options and all("toast_tuple_target=4000" in option for option in options)


def test_a_folder_small_enough_to_be_read_whole_never_reads_its_partition(monkeypatch):
    reads = []

    def partition(*, folder_id):
        reads.append(folder_id)
        return planning.FolderPartition("library_chunk_p03", 200_000)

    monkeypatch.setattr(planning, "folder_partition", partition)
    monkeypatch.setattr(planning, "pgvector_has_iterative_scans", lambda: False)
    small = planning.search_plan(folder_id=1, folder_rows=planning.KEYWORD_SCAN_MAX_ROWS, k=10, depth=50)
    assert (small.vector.method, small.keyword.method, reads) == (VectorMethod.EXACT, KeywordMethod.SCAN, [])
    # Larger: both sides need the partition's size (and the keyword side its name), read once.
    plan = planning.search_plan(folder_id=1, folder_rows=50_000, k=10, depth=50)
    assert (plan.vector.method, plan.vector.ef_search, reads) == (VectorMethod.HNSW, planning.EF_SEARCH_MIN, [1])
    assert (plan.keyword.method, plan.keyword_partition) == (KeywordMethod.INDEX_FILTER, "library_chunk_p03")
    # A twentieth of its partition: GIN with the folder btree, which needs no partition name.
    plan = planning.search_plan(folder_id=2, folder_rows=10_000, k=10, depth=50)
    assert (plan.vector.method, plan.keyword.method, plan.keyword_partition) == (
        VectorMethod.HNSW,
        KeywordMethod.INDEX,
        None,
    )
    assert reads == [1, 2]
