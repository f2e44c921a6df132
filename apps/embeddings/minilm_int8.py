"""How the traced float32 MiniLM graph becomes the int8 one the local embedder runs.

ONNX Runtime's transformer optimizer fuses it (one Attention node per layer, SkipLayerNormalization,
BiasGelu), then ``quantize_dynamic`` turns every matrix product into an int8 one: weights per
output channel, activations per run (no calibration baked into the scales). The embedding lookup
stays float32: it multiplies nothing, and its uint8 table cost cosine for no time.

Dynamic quantization scales a product's activations by their largest magnitude in the run. The
inputs of the feed-forward products (LayerNorm outputs, GELU outputs) have a few channels whose
peaks are 3 to 15 times the median channel's, always the same channels: one scale for all spreads
the 256 steps over those peaks and rounds the others coarsely. So each feed-forward product is
split: its ``OUTLIER_CHANNELS`` (the 8 input channels with the largest peaks) go to a float32
product of 8 rows, the other channels (those 8 masked to zero) to the int8 product, and the two
are added. On 60 Cranfield chunks the relative error of a product's output fell from up to 8.6%
to at most 3.0%, so no product needs to stay whole in float32 any more (six did): the float32
share of ONNX Runtime's op time fell from 39% to about 2% (bench/search/embedder_speed.py
--profile). SmoothQuant's channel scaling (activations divided, weight rows multiplied) was
tried first and lost: with 7-bit weights per output channel, the scaled rows coarsened them.

Every int8 product takes uint8 activations and int8 weights; without VNNI the CPU multiplies
u8 x s8 pairs with VPMADDUBSW, whose 16-bit sum saturates once two products pass 32,767 (255 x 127
x 2 does). ``reduce_range`` keeps the weights to 7 bits (|w| <= 64), so a pair is at most 255 x 64
x 2 = 32,640: no CPU saturates, and the vectors are the same on AVX2, VNNI and AVX-512 alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

FEED_FORWARD_PRODUCTS = tuple(
    f"/model/encoder/layer.{layer}/{product}/dense/MatMul"
    for layer in range(6)
    for product in ("intermediate", "output")
)
# Per feed-forward product (layers 0-5, intermediate then output), the 8 input channels with the
# largest peak |x| over the first 300 CACM chunks (bench/search/common.py's reader, the project's
# chunker; not CISI, which the tests measure). Cranfield's first 300 chunks give the same 96
# channels; tests/embeddings/test_minilm_int8.py recomputes them from CACM.
OUTLIER_CHANNELS: dict[str, tuple[int, ...]] = dict(
    zip(
        FEED_FORWARD_PRODUCTS,
        (
            (63, 99, 157, 246, 267, 303, 338, 347),
            (329, 433, 691, 829, 856, 1170, 1261, 1337),
            (63, 99, 157, 223, 238, 267, 338, 347),
            (116, 251, 278, 484, 607, 646, 821, 1200),
            (63, 99, 157, 223, 267, 338, 347, 363),
            (218, 456, 842, 874, 1004, 1073, 1166, 1265),
            (63, 99, 112, 157, 223, 245, 338, 363),
            (201, 267, 318, 358, 444, 750, 759, 1506),
            (63, 99, 127, 157, 223, 319, 338, 363),
            (128, 637, 852, 1031, 1089, 1097, 1321, 1357),
            (63, 99, 127, 157, 223, 249, 319, 341),
            (119, 372, 745, 830, 923, 1300, 1302, 1381),
        ),
        strict=True,
    )
)
OUTLIERS_PER_PRODUCT = 8
# Largest weight magnitude under reduce_range: 255 x 64 x 2 fits VPMADDUBSW's signed 16 bits.
MAX_INT8_WEIGHT = 64


def outlier_product_name(product: str) -> str:
    """The float32 product that takes ``product``'s outlier channels."""
    return f"{product.rsplit('/', 1)[0]}/Outliers/MatMul"


def fuse(*, source: str, target: str, heads: int, hidden_size: int) -> None:
    from onnxruntime.transformers.optimizer import optimize_model

    model = optimize_model(source, model_type="bert", num_heads=heads, hidden_size=hidden_size, opt_level=0)
    # Another exporter's node names would leave the outlier channels in the int8 products.
    missing = set(FEED_FORWARD_PRODUCTS) - {node.name for node in model.model.graph.node}
    if missing:
        raise RuntimeError(f"The exported graph has no nodes {sorted(missing)} to split")
    model.save_model_to_file(target)


def quantize(*, fused: str, target: str) -> None:
    """Split the feed-forward products' outlier channels off ``fused``, then quantize the rest."""
    import onnx
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model = onnx.load(fused)
    for product, channels in OUTLIER_CHANNELS.items():
        _split_outlier_channels(model.graph, product=product, channels=channels)
    split = f"{target}.split"
    try:
        onnx.save(model, split)
        quantize_dynamic(
            split,
            target,
            weight_type=QuantType.QInt8,
            per_channel=True,
            reduce_range=True,
            op_types_to_quantize=["MatMul", "Attention"],
            nodes_to_exclude=[outlier_product_name(product) for product in OUTLIER_CHANNELS],
            # The fused contrib operators carry no inferred types; their tensors are float32.
            extra_options={"DefaultTensorType": TensorProto.FLOAT},
        )
    finally:
        Path(split).unlink(missing_ok=True)


def _split_outlier_channels(graph: Any, *, product: str, channels: Sequence[int]) -> None:
    """y = (x * mask) @ W' + x[..., channels] @ W[channels], W' being W with those rows zeroed."""
    from onnx import helper, numpy_helper

    node = next(node for node in graph.node if node.name == product)
    weight = next(tensor for tensor in graph.initializer if tensor.name == node.input[1])
    rows = numpy_helper.to_array(weight)
    index = np.asarray(channels, dtype=np.int64)
    mask = np.ones(rows.shape[0], dtype=np.float32)
    mask[index] = 0
    weight.CopyFrom(numpy_helper.from_array(rows * mask[:, None], weight.name))
    prefix = outlier_product_name(product).rsplit("/", 1)[0]
    graph.initializer.extend(
        [
            numpy_helper.from_array(mask, f"{prefix}/mask"),
            numpy_helper.from_array(index, f"{prefix}/channels"),
            numpy_helper.from_array(rows[index], f"{prefix}/weight"),
        ]
    )
    activations, output = node.input[0], node.output[0]
    node.input[0], node.output[0] = f"{prefix}/inliers", f"{prefix}/int8_output"
    before = [
        helper.make_node("Mul", [activations, f"{prefix}/mask"], [f"{prefix}/inliers"], name=f"{prefix}/Mask"),
        helper.make_node(
            "Gather", [activations, f"{prefix}/channels"], [f"{prefix}/outliers"], name=f"{prefix}/Gather", axis=-1
        ),
        helper.make_node(
            "MatMul",
            [f"{prefix}/outliers", f"{prefix}/weight"],
            [f"{prefix}/output"],
            name=outlier_product_name(product),
        ),
    ]
    after = helper.make_node("Add", [f"{prefix}/int8_output", f"{prefix}/output"], [output], name=f"{prefix}/Add")
    nodes = list(graph.node)
    at = nodes.index(node)
    nodes[at : at + 1] = [*before, node, after]
    del graph.node[:]
    graph.node.extend(nodes)


def activation_peaks(*, fused: Path, texts: Sequence[str], tokenizer: Any) -> dict[str, np.ndarray]:
    """Each feed-forward product's peak |x| per input channel over ``texts``, run one at a time."""
    import onnx
    import onnxruntime
    from onnx import TensorProto, helper

    model = onnx.load(str(fused))
    inputs = {node.name: node.input[0] for node in model.graph.node if node.name in FEED_FORWARD_PRODUCTS}
    model.graph.output.extend(helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in inputs.values())
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    peaks: dict[str, np.ndarray] = {}
    for encoding in tokenizer.encode_batch(list(texts)):
        ids = np.asarray([encoding.ids], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        values = session.run(list(inputs.values()), feed)
        for product, value in zip(inputs, values, strict=True):
            peak = np.abs(value.reshape(-1, value.shape[-1])).max(axis=0)
            peaks[product] = np.maximum(peaks[product], peak) if product in peaks else peak
    return peaks
