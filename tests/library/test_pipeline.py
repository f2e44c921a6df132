"""The indexing pipeline: files are prepared and written while earlier files embed."""

import threading

import numpy as np
import pytest

from apps.embeddings.providers import get_embedder
from apps.library.indexing import files_index, folder_index
from apps.library.models import Chunk, File
from apps.library.pipeline import EmbeddingPipeline
from tests.support.files import write


def _vectors(texts):
    return np.asarray([[float(len(text)), 1.0] for text in texts], dtype=np.float32)


def test_pipeline_embeds_a_full_group_while_the_caller_adds_the_next_file():
    caller_went_on = threading.Event()
    threads = []

    def embed(texts):
        threads.append(threading.current_thread().name)
        # Returns only once the caller has added another file: the two overlap, or this times out.
        assert caller_went_on.wait(timeout=10)
        return _vectors(texts)

    with EmbeddingPipeline[str](embed=embed, group_tokens=10) as pipeline:
        pipeline.add("a", ["one", "three"], tokens=6)
        pipeline.add("b", ["sixteen chars.."], tokens=4)  # the group is full: sent to the embed thread
        pipeline.add("c", ["x"], tokens=1)
        caller_went_on.set()
        results = list(pipeline.drain())
    assert [item for item, _, _ in results] == ["a", "b", "c"]
    assert [vectors[:, 0].tolist() for _, vectors, _ in results] == [[3.0, 5.0], [15.0], [1.0]]
    # Each item is charged its share of its group's embedding time, by its number of texts.
    assert all(seconds > 0 for _, _, seconds in results)
    assert results[0][2] == pytest.approx(2 * results[1][2])
    assert all(name.startswith("embed") for name in threads) and len(threads) == 2


def test_finished_yields_only_embedded_groups_and_an_error_reaches_every_file_of_its_group():
    def embed(texts):
        if "bad" in texts:
            raise RuntimeError("model failed")
        return _vectors(texts)

    with EmbeddingPipeline[str](embed=embed, group_tokens=2) as pipeline:
        assert list(pipeline.finished()) == []
        pipeline.add("a", ["aa"], tokens=1)
        assert list(pipeline.finished()) == []  # still open: not sent
        pipeline.add("b", ["bad"], tokens=1)
        pipeline.add("c", ["ccc", "c"], tokens=2)
        results = {item: vectors for item, vectors, _ in pipeline.drain()}
    assert isinstance(results["a"], RuntimeError) and results["a"] is results["b"]
    assert results["c"][:, 0].tolist() == [3.0, 1.0]


@pytest.mark.django_db
def test_files_index_writes_each_file_with_its_own_vectors_across_many_groups(root, folder, settings):
    settings.EMBEDDING_BATCH_TOKENS = 8  # a group every file or two
    bodies = {
        f"note{n:02d}.txt": f"Note {n}: the invoice INV-{n} for client {n * 7} is due in week {n}." for n in range(12)
    }
    for name, body in bodies.items():
        write(root, name, body)
    folder_index(folder_id=folder.pk)  # lists and queues; the files are indexed below, in one call
    ids = list(File.objects.filter(folder=folder).order_by("path").values_list("pk", flat=True))
    outcomes = files_index(file_ids=ids, task_id="group")
    assert sorted(outcome.status for outcome in outcomes) == ["indexed"] * 12
    embedder = get_embedder()
    for chunk in Chunk.objects.filter(folder=folder).select_related("file"):
        assert chunk.text == bodies[chunk.file.path]
        np.testing.assert_allclose(np.asarray(chunk.embedding), embedder.embed_query(chunk.text), atol=1e-6)
