"""rerank_documents on the search-quality collections: does re-scoring what the agent gathered help?

Per collection (Cranfield, CACM; indexed into the scratch database as ``bench/search/search_quality.py``
does, with its helpers and embedding cache), every judged query goes through the hybrid search
(``chunk_search``, mode hybrid) for its top ``--candidates`` chunks (30 = the tool's
MAX_CANDIDATES), which become the numbered passages the tool sees. Side by side, nDCG@10 of:
- ``search``: the hybrid search's own order (what the agent has without the tool);
- ``cosine``: the passages by cosine similarity to the question in the embedding model's space
  (``embedding_order``, the offline rerank as it was);
- ``rrf``: the search order and the cosine order fused by plain RRF (k 60), a candidate rejected
  (it loses too);
- ``offline``: what the tool's offline path returns now (``offline_order``: by the search's
  scores, ties in the order found; cosine only orders passages read in full, which have no score).
Chunks map to their document, which counts at its first position. Δ columns are against ``search``.

The model path (a listwise prompt) cannot be judged offline: only its size is measured here, the
prompt ``rerank_prompt`` builds for each query's candidates, in characters and in tokens
estimated at 4 characters per token (no model tokenizer is available offline), against the bound
MAX_CANDIDATES x PASSAGE_CHARS that caps it, plus the answer budget RERANK_MAX_TOKENS.

    .venv/bin/python bench/search/rerank_quality.py [--collections cranfield cacm] [--candidates 30]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench.search.common import Collection, collection_named, ndcg_at_10, rrf, use_scratch_services
from bench.search.search_quality import SCRATCH_DB, CachedEmbedder, indexed_folder

CHARS_PER_TOKEN = 4
CHUNK_TOKENS = 256  # the product default, as search_quality.py indexes by default


def documents(order: list[int], by_n: dict[int, int]) -> list[int]:
    """Passage numbers in ranked order -> document numbers, each at its first position."""
    return list(dict.fromkeys(by_n[n] for n in order))


def evaluate(collection: Collection, folder_id: int, embedder: CachedEmbedder, *, candidates: int) -> dict[str, Any]:
    from apps.chat.agent.context import NumberedPassage
    from apps.chat.agent.tools import rerank
    from apps.chat.agent.tools.search import hit_passage
    from apps.search.selectors import chunk_search

    rerank.get_embedder = lambda name=None: embedder  # type: ignore[assignment]
    numbers = collection.scored_queries()
    vectors = embedder.embed_documents([collection.queries[n] for n in numbers])
    scores: dict[str, list[float]] = {"search": [], "cosine": [], "rrf": [], "offline": []}
    prompt_chars: list[int] = []
    for number, vector in zip(numbers, vectors, strict=True):
        query = collection.queries[number]
        hits = chunk_search(folder_id=folder_id, query=query, k=candidates, mode="hybrid", query_vector=vector)
        passages = [NumberedPassage(n=n, passage=hit_passage(hit), text=hit.text) for n, hit in enumerate(hits, 1)]
        by_n = {passage.n: int(Path(passage.path).stem) for passage in passages}
        search, cosine = [passage.n for passage in passages], rerank.embedding_order(query, passages)
        orders = {
            "search": search,
            "cosine": cosine,
            "rrf": rrf([search, cosine]),
            "offline": rerank.offline_order(query, passages),
        }
        for name, order in orders.items():
            scores[name].append(ndcg_at_10(documents(order, by_n), collection.judged[number]))
        prompt_chars.append(len(rerank.RERANK_SYSTEM_PROMPT) + len(rerank.rerank_prompt(query, passages)))
    embedder.save()
    return {"ndcg": {name: statistics.mean(values) for name, values in scores.items()}, "prompt": prompt_chars}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--collections", nargs="+", default=["cranfield", "cacm"], help="names or SMART/BEIR directories"
    )
    parser.add_argument("--candidates", type=int, default=30, help="hybrid top N the tool re-scores (MAX_CANDIDATES)")
    args = parser.parse_args()
    use_scratch_services(SCRATCH_DB)
    from apps.chat.agent.tools import rerank
    from apps.embeddings.providers import get_embedder

    embedder = CachedEmbedder(get_embedder())
    rows = []
    prompts: list[int] = []
    for name in args.collections:
        collection = collection_named(name)
        queries = len(collection.scored_queries())
        print(f"\n{collection.name}: {len(collection.documents)} documents, {queries} judged queries")
        folder_id = indexed_folder(collection, CHUNK_TOKENS, embedder, reindex=False)
        figures = evaluate(collection, folder_id, embedder, candidates=args.candidates)
        rows.append((collection.name, figures["ndcg"]))
        prompts += figures["prompt"]
    print(f"\nnDCG@10 of the hybrid top {args.candidates}, reordered (Δ against the search order)")
    print(
        f"  {'collection':<12} {'search':>7}" + "".join(f" {name:>8} {'Δ':>7}" for name in ("cosine", "rrf", "offline"))
    )
    for name, ndcg in rows:
        print(
            f"  {name:<12} {ndcg['search']:>7.3f}"
            + "".join(f" {ndcg[key]:>8.3f} {ndcg[key] - ndcg['search']:>+7.3f}" for key in ("cosine", "rrf", "offline"))
        )
    bound = len(rerank.RERANK_SYSTEM_PROMPT) + rerank.MAX_CANDIDATES * (rerank.PASSAGE_CHARS + 6) + 1000 + 40
    tokens = np.array(prompts) / CHARS_PER_TOKEN
    print(
        f"\nModel path (listwise prompt), sizes only, tokens ESTIMATED at {CHARS_PER_TOKEN} chars/token:\n"
        f"  prompt per call: mean {np.mean(prompts):.0f} chars (~{tokens.mean():.0f} tokens), "
        f"max {max(prompts)} chars (~{tokens.max():.0f} tokens) over {len(prompts)} queries\n"
        f"  bound: {rerank.MAX_CANDIDATES} passages x {rerank.PASSAGE_CHARS} chars + question (<= 1000) + system "
        f"= {bound} chars (~{bound // CHARS_PER_TOKEN} tokens); answer <= {rerank.RERANK_MAX_TOKENS} tokens"
    )


if __name__ == "__main__":
    main()
