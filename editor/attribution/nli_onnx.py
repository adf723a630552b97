"""A sequence-classification NLI model run by onnxruntime and ``tokenizers``: no torch and no
``transformers`` once its graph is in the cache (``attribution.runtime: onnx``, the default).

The graph is built once per model folder into ``<cache_dir>/models/nli-onnx/KEY`` (KEY: a digest
of the folder's config and weights, its base, and the recipe): a BERT folder's weights written as a
graph directly (``bert_graph``: numpy and ``onnx``, no torch), any other model loaded as
``HFSequenceClassificationNLI`` loads it and exported by torch, at fp32 (batch and length dynamic); with
``quantize: int8`` the linear layers are then stored as block-wise 8-bit weights (the span
judge's recipe, ``editor.attribution.span_onnx.quantize``). Later processes open the graph and
the folder's ``tokenizer.json`` only. Tokenisation is the same library the ``transformers`` fast
tokenizer wraps, with the same truncation (``longest_first`` at ``max_length``) and padding, so
the ids are the same (tested); the scores agree with the PyTorch path to about 1e-6 at fp32
(``purr bench attribution`` and the equivalence table in docs/pages/results/speed.md).

A hub id (not a local folder) keeps the PyTorch path.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from editor.attribution.hf import LabelMapped
from editor.attribution.nli import ChunkedNLI

log = logging.getLogger(__name__)

RECIPE = {"format": 2, "opset": 17}  # format 2: a BERT folder's graph written by bert_graph
MODEL_FILE = "model.onnx"
LABELS_FILE = "labels.json"
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_WHOLE_HASH_MAX = 64 << 20  # larger files are keyed by name, size and mtime, not read


def _weight_files(folder: Path) -> list[Path]:
    names = ("config.json", "purr_base.json", "adapter_config.json", "tokenizer.json")
    files = [folder / n for n in names]
    files += sorted(folder.glob("*.safetensors")) + sorted(folder.glob("*.bin"))
    return [f for f in files if f.is_file()]


def cache_key(folder: Path, quantize: str) -> str:
    """A digest of what the graph is built from (see the module doc)."""
    from editor.attribution import bert_graph, span_onnx

    h = hashlib.sha256(json.dumps({**RECIPE, "quantize": quantize}, sort_keys=True).encode())
    h.update(Path(bert_graph.__file__).read_bytes())
    if quantize == "int8":
        h.update(json.dumps(span_onnx.RECIPE, sort_keys=True).encode())
    span_onnx.hash_files(h, _weight_files(folder), _WHOLE_HASH_MAX)
    return h.hexdigest()[:16]


def export_fp32(model: Any, out: Path) -> None:
    """``model`` (a ``transformers`` sequence classifier, eval mode) as an fp32 ONNX graph."""
    from editor.attribution import span_onnx

    model.config._attn_implementation = "eager"  # a traceable attention, same arithmetic
    span_onnx.export_graph(model, out, ["logits"])


def build(model: Any, target: Path, quantize: str, source: str) -> None:
    """The graph of ``model`` with its labels, written whole into the folder ``target``.
    ``model``: a ``transformers`` sequence classifier, or ``(config, weights)`` of a BERT folder
    (``bert_weights.folder_weights``), written directly by ``bert_graph`` without torch."""
    import shutil
    import tempfile

    from editor.attribution import span_onnx
    from retrieval.files.atomic import atomic_dir

    def write(out: Path) -> None:
        if isinstance(model, tuple):
            from editor.attribution.bert_graph import save_graph

            save_graph(model[0], model[1], "sequence", out)
        else:
            export_fp32(model, out)

    if isinstance(model, tuple):
        config = model[0]
        id2label = {str(k): v for k, v in config.get("id2label", {"0": "LABEL_0"}).items()}
        labels = {"id2label": id2label, "num_labels": len(id2label)}
    else:
        labels = {
            "id2label": {str(k): v for k, v in model.config.id2label.items()},
            "num_labels": model.config.num_labels,
        }
    with atomic_dir(target) as tmp, tempfile.TemporaryDirectory(dir=tmp) as work:
        if quantize == "int8":
            fp32 = Path(work) / "fp32.onnx"
            write(fp32)
            span_onnx.quantize(fp32, tmp / MODEL_FILE)
        else:
            write(tmp / MODEL_FILE)
        shutil.rmtree(work, ignore_errors=True)
        (tmp / LABELS_FILE).write_text(json.dumps(labels, indent=2) + "\n", "utf-8")
        meta = {"source": source, "quantize": quantize, **RECIPE}
        (tmp / "build.json").write_text(json.dumps(meta, indent=2) + "\n", "utf-8")


def source_network(folder: Path, torch_network: Any) -> Any:
    """What the graph of ``folder`` is built from: its BERT weights read without torch, or
    (another architecture, an adapter folder) ``torch_network()``."""
    from editor.attribution.bert_weights import UnsupportedModel, folder_weights

    try:
        return folder_weights(folder)
    except UnsupportedModel:
        return torch_network()


def graph_folder(folder: Path, cache_dir: Path, quantize: str) -> Path:
    """Where the graph of the model in ``folder`` lives in the cache (built or not)."""
    return Path(cache_dir).expanduser() / "models" / "nli-onnx" / cache_key(folder, quantize)


class OnnxPairClassifier:
    """An exported graph with its tokenizer: ``logits(pairs)`` for (premise, hypothesis) pairs,
    and the token counts the chunking needs."""

    def __init__(self, graph: Path, folder: Path, max_length: int, pad_token: str) -> None:
        from tokenizers import Tokenizer

        from retrieval import onnx_runtime

        self.session = onnx_runtime.session(str(graph / MODEL_FILE))
        self.names = [i.name for i in self.session.get_inputs()]
        self.labels = json.loads((graph / LABELS_FILE).read_text("utf-8"))
        self.pairs = onnx_runtime.tokenizer(folder, max_length)  # longest_first, no padding
        self.plain = Tokenizer.from_file(str(folder / "tokenizer.json"))  # whole lengths
        self.plain.no_truncation()
        self.plain.no_padding()
        self.pad_id = self.pairs.token_to_id(pad_token) or 0
        processor = self.pairs.post_processor
        self.overhead = processor.num_special_tokens_to_add(True) if processor else 0

    def lengths(self, texts: list[str]) -> list[int]:
        return [len(e.ids) for e in self.plain.encode_batch(texts, add_special_tokens=False)]

    def logits(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        from retrieval import onnx_runtime

        feed = onnx_runtime.pad(self.pairs.encode_batch(pairs), self.pad_id)
        return self.session.run(["logits"], {k: feed[k] for k in self.names})[0]


def _pad_token(folder: Path) -> str:
    try:
        config = json.loads((folder / "tokenizer_config.json").read_text("utf-8"))
    except (OSError, ValueError):
        return "[PAD]"
    pad = config.get("pad_token") or "[PAD]"
    return pad["content"] if isinstance(pad, dict) else str(pad)


class OnnxSequenceClassificationNLI(LabelMapped, ChunkedNLI):
    """``HFSequenceClassificationNLI``'s model, run from its ONNX graph (see the module doc).
    Same constructor; the PyTorch model loads only to build the graph once."""

    def __init__(
        self,
        torch_model: Any,  # HFSequenceClassificationNLI: builds the graph, maps the labels
        folder: Path,
        cache_dir: Path,
    ) -> None:
        super().__init__(torch_model.max_length, torch_model.batch_size, torch_model.overlap)
        self.torch_model = torch_model
        self.model_ref = torch_model.model_ref
        self.quantize = torch_model.quantize
        self.folder = Path(folder)
        self.cache_dir = Path(cache_dir)
        self._lock = threading.Lock()
        self._net: OnnxPairClassifier | None = None
        self._columns: np.ndarray | None = None
        self.label_map: dict[int, str] = {}

    def _graph(self) -> Path:
        from editor.llm.model_files import _exclusive

        target = graph_folder(self.folder, self.cache_dir, self.quantize)
        if (target / MODEL_FILE).is_file():
            return target
        log.warning(
            "preparing: the ONNX graph of %s in %s (first use only)", self.folder.name, target
        )
        started = time.perf_counter()
        # before the lock: a base converts under its own
        model = source_network(self.folder, self.torch_model.torch_network)
        target.parent.mkdir(parents=True, exist_ok=True)
        with _exclusive(target.parent):
            if not (target / MODEL_FILE).is_file():
                try:
                    build(model, target, self.quantize, str(self.folder))
                    log.warning("prepared in %.0f s", time.perf_counter() - started)
                except ImportError as e:
                    raise RuntimeError(
                        f"building the ONNX graph of '{self.model_ref}' needs the "
                        f"{e.name or 'onnx'} package (it comes with purr); or set "
                        "attribution.runtime: torch"
                    ) from e
        return target

    def load(self) -> None:
        """Open the graph and the tokenizer now (building the graph on the very first use)."""
        with self._lock:
            if self._net is not None:
                return
            from editor.attribution.hf import label_columns

            graph = self._graph()
            net = OnnxPairClassifier(graph, self.folder, self.max_length, _pad_token(self.folder))
            id2label = {int(k): v for k, v in net.labels["id2label"].items()}
            self.label_map, self._columns = label_columns(
                id2label,
                net.labels["num_labels"],
                self.torch_model.label_map_override,
                self.model_ref,
            )
            self._net = net

    def _overhead(self) -> int:
        self.load()
        assert self._net is not None
        return int(self._net.overhead)

    def _token_lengths(self, texts: list[str]) -> list[int]:
        self.load()
        assert self._net is not None
        return self._net.lengths(texts)

    def _pair_probabilities(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        self.load()
        assert self._net is not None and self._columns is not None
        logits = self._net.logits(pairs).astype(np.float64)  # (batch, n_outputs)
        if logits.shape[-1] == 1:
            p = 1.0 / (1.0 + np.exp(-logits[:, 0]))
            return np.stack([p, np.zeros_like(p), 1.0 - p], axis=1)
        z = np.exp(logits - logits.max(axis=1, keepdims=True))
        return (z / z.sum(axis=1, keepdims=True)) @ self._columns
