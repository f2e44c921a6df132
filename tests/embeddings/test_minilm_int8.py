"""The int8 graph's float32 part: each feed-forward product's outlier input channels, found on CACM."""

import re

import numpy as np
import pytest

from apps.embeddings.minilm_int8 import (
    FEED_FORWARD_PRODUCTS,
    OUTLIER_CHANNELS,
    OUTLIERS_PER_PRODUCT,
    activation_peaks,
    fuse,
    outlier_product_name,
)
from apps.embeddings.minilm_onnx import DIMENSIONS, HEADS, default_graph_path, graph_export
from tests.support.servers import BASE_DIR


def cacm_chunks(count: int) -> list[str]:
    """CACM's title, authors and abstract (as bench/search/common.py reads them) cut by the chunker."""
    from apps.library.chunking import chunk_document
    from apps.library.parsing import ParsedDocument

    shared = next(parent / "shared" for parent in BASE_DIR.parents if (parent / "shared").is_dir())
    text = (shared / "data" / "cacm" / "cacm.all").read_text(encoding="latin-1")
    chunks: list[str] = []
    for record in re.split(r"^\.I ", text, flags=re.M)[1:]:
        fields = {
            name: " ".join(value.split())
            for name, value in re.findall(r"^\.([A-Z])\s*\n(.*?)(?=^\.[A-Z]\s*\n|\Z)", record, flags=re.M | re.S)
        }
        document = "\n\n".join(fields[name] for name in "TAW" if fields.get(name))
        chunks.extend(piece.text for piece in chunk_document(document=ParsedDocument(text=document)))
        if len(chunks) >= count:
            break
    return chunks[:count]


def test_each_feed_forward_product_multiplies_its_outlier_channels_in_float32_and_the_rest_in_int8():
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(default_graph_path())).graph
    weights = {tensor.name: numpy_helper.to_array(tensor) for tensor in graph.initializer}
    nodes = {node.name: node for node in graph.node}
    produced_by = {output: node for node in graph.node for output in node.output}
    float_products = {node.name for node in graph.node if node.op_type == "MatMul"}
    # Nothing else in float32: the attention's products and all the inlier channels are int8.
    assert float_products == {outlier_product_name(product) for product in FEED_FORWARD_PRODUCTS}
    # The embedding lookup multiplies nothing: its table stays float32 (a uint8 one cost cosine).
    assert "EmbedLayerNormalization" in {node.op_type for node in graph.node}
    float_weights = int_weights = 0
    for product, channels in OUTLIER_CHANNELS.items():
        outliers = nodes[outlier_product_name(product)]
        gather = produced_by[outliers.input[0]]
        assert gather.op_type == "Gather" and weights[gather.input[1]].tolist() == list(channels)
        assert weights[outliers.input[1]].shape[0] == OUTLIERS_PER_PRODUCT
        integer = nodes[f"{product}_quant"]
        assert integer.op_type == "MatMulInteger"
        # The int8 product sees those channels as zeros (so its activation scale ignores their
        # peaks) and has no weights for them; the two outputs are summed.
        masked = produced_by[produced_by[integer.input[0]].input[0]]
        assert masked.op_type == "Mul" and np.flatnonzero(weights[masked.input[1]] == 0).tolist() == list(channels)
        assert not weights[integer.input[1]][list(channels)].any()
        float_weights += weights[outliers.input[1]].size
        int_weights += weights[integer.input[1]].size
    # 8 of 384 or of 1,536 input rows: 1.3% of the feed-forward multiply-adds are float32.
    assert float_weights / int_weights < 0.015


@pytest.mark.slow
def test_the_outlier_channels_are_the_largest_activation_peaks_over_cacm(tmp_path, monkeypatch):
    """Recomputed as they were chosen: 300 CACM chunks, not the CISI ones the cosine test measures."""
    pytest.importorskip("torch")
    from tokenizers import Tokenizer

    from apps.embeddings.minilm_onnx import MAX_SEQ_TOKENS, model_dir

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    traced = graph_export(path=tmp_path / "fp32.onnx", quantize=False)
    fused = tmp_path / "fused.onnx"
    fuse(source=str(traced), target=str(fused), heads=HEADS, hidden_size=DIMENSIONS)
    tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tokenizer.enable_truncation(MAX_SEQ_TOKENS)
    tokenizer.no_padding()
    peaks = activation_peaks(fused=fused, texts=cacm_chunks(300), tokenizer=tokenizer)
    for product, channels in OUTLIER_CHANNELS.items():
        assert sorted(np.argsort(peaks[product])[-OUTLIERS_PER_PRODUCT:].tolist()) == list(channels), product
        # Outliers indeed: each of them peaks at least twice as high as the median channel.
        assert peaks[product][list(channels)].min() > 2 * np.median(peaks[product]), product
