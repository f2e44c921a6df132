"""The chunk embeddings' HNSW index, split by folder into partial indexes.

pgvector 0.6 filters HNSW results after the scan, so a folder receives candidates in proportion
to its share of the indexed rows: at a million chunks a folder of 20k rows holds 2% of one
table-wide graph and would need ``ef_search`` far above pgvector's 1000 ceiling. Splitting the
graph by ``folder_id % BUCKETS`` raises every folder's share about ``BUCKETS``-fold, so folders
too large for an exact scan get their top k from a modest ``ef_search``. A search names its bucket
(``(folder_id % BUCKETS) = bucket`` in the statement) so the planner can use the partial index.

pgvector 0.8's iterative scans run inside the folder's bucket index. One table-wide index with
iterative scans instead was measured at 200k chunks (bench/search/search_speed.py --design table,
bench/search/search_halfvec.py): the planner answers folders of 18k-30k chunks from the folder btree
with an exact sort (hybrid p95 116-272 ms, against 24-27 ms on the buckets), and forced through
the index its recall@10 is 0.97-0.98 against 0.997-1.0 on the buckets, so the buckets stay.

Migration ``library/0006`` creates these indexes with a frozen copy of ``BUCKETS``; changing it
needs a migration that rebuilds them.
"""

from __future__ import annotations

BUCKETS = 16


def bucket_of(folder_id: int) -> int:
    return folder_id % BUCKETS


def index_name(bucket: int) -> str:
    return f"library_chunk_embedding_hnsw_{bucket:02d}"


def create_index_sql(bucket: int, *, concurrently: bool = True) -> str:
    how = "CONCURRENTLY IF NOT EXISTS" if concurrently else "IF NOT EXISTS"
    return (
        f"CREATE INDEX {how} {index_name(bucket)} ON library_chunk "
        f"USING hnsw (embedding vector_cosine_ops) WHERE (folder_id % {BUCKETS}) = {bucket}"
    )


def drop_index_sql(bucket: int, *, concurrently: bool = True) -> str:
    how = "CONCURRENTLY IF EXISTS" if concurrently else "IF EXISTS"
    return f"DROP INDEX {how} {index_name(bucket)}"
