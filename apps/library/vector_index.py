"""The chunk embeddings' HNSW index: one graph per partition of the chunk table.

pgvector 0.6 filters HNSW results after the scan, so a folder receives candidates in proportion
to its share of the indexed rows: at a million chunks a folder of 20k rows holds 2% of one
table-wide graph and would need ``ef_search`` far above pgvector's 1000 ceiling. The chunk table is
hash-partitioned by folder (apps/library/chunk_partitions.py), and an index on it is one index per
partition, so a folder's search, pruned to its partition by ``folder_id = <folder>``, walks a graph
holding about 1/``PARTITIONS`` of the table, where its share is about ``PARTITIONS`` times larger.
pgvector 0.8's iterative scans run inside that partition's graph.

Before the partitions the same split came from 16 partial indexes, ``WHERE (folder_id % 16) = b``
(library/0006), which every search statement had to name. One table-wide index with iterative
scans instead was measured at 200k chunks (bench/search/search_speed.py's table design at d2470bb,
bench/search/search_halfvec.py): the planner answers folders of 18k-30k chunks from the folder btree
with an exact sort (hybrid p95 116-272 ms, against 24-27 ms on the buckets), and forced through
the index its recall@10 is 0.97-0.98 against 0.997-1.0 on the buckets.

m and ef_construction are pgvector's defaults (16, 64), as they were for the partial indexes.
"""

from __future__ import annotations

INDEX = "library_chunk_embedding_hnsw"


def create_index_sql() -> str:
    """The index as the partition move builds it, in one statement (locks writers out: for benches)."""
    return f"CREATE INDEX IF NOT EXISTS {INDEX} ON library_chunk USING hnsw (embedding vector_cosine_ops)"


def drop_index_sql() -> str:
    return f"DROP INDEX IF EXISTS {INDEX}"
