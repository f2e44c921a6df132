"""The chunk embeddings' HNSW index: one graph per partition of the chunk table, over ``halfvec``.

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

The graphs hold ``embedding::halfvec(DIMENSIONS)`` (an expression index, ``halfvec_cosine_ops``;
library/0017): two bytes a dimension instead of four, for the same recall. Measured at 1M chunks
on the partitions (bench/search/search_halfvec.py, vector leg alone, index forced): recall@10
against exact search equals the ``vector`` index's within 0.02 at every folder size (0.958-1.000
for the sizes that use HNSW), at 57% of the index's bytes (1,116 against 1,953 MiB). At 2M, through
the product's statement (bench/search/search_speed.py): recall@10 0.964-1.000 at every folder size
with ``ef_search`` 500, the largest folder 0.932 with halfvec and 0.930 with vector at 300; 2,232
against 3,906 MiB. The column
stays ``vector``: exact scans and the distance a search reports read it, and the search ranks the
rows the index finds by that exact distance (apps/search/statements.py).

m and ef_construction are pgvector's defaults (16, 64), as they were for the partial indexes.
This module needs no Django setup: the ingestion benches read its SQL before it.
"""

from __future__ import annotations

# The chunk column's dimensions: the model declares ``Chunk.embedding`` with it, and the index
# and the search statement cast to ``halfvec`` of it (an HNSW index needs them in its type).
DIMENSIONS = 384
HALFVEC = f"halfvec({DIMENSIONS})"
INDEX = "library_chunk_embedding_halfvec_hnsw"
DEFINITION = f"USING hnsw ((embedding::{HALFVEC}) halfvec_cosine_ops)"


def create_index_sql() -> str:
    """The index as the partition move builds it, in one statement (locks writers out: for benches)."""
    return f"CREATE INDEX IF NOT EXISTS {INDEX} ON library_chunk {DEFINITION}"


def drop_index_sql() -> str:
    return f"DROP INDEX IF EXISTS {INDEX}"
