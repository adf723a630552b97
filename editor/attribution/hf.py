"""NLI models for attribution over Hugging Face checkpoints: sequence classifiers and TRUE T5.

Both are ``ChunkedNLI`` models (long premises are scored in windows and max-pooled, see
``editor.attribution.nli``). They load lazily on the first call, once, from a local folder or the local
Hugging Face cache (never downloading unless ``local_files_only=False``). A local folder that
holds a peft adapter (``adapter_config.json``, no full weights; what ``training.fit.attribution``
writes with LoRA) is loaded as its base (``base_model_name_or_path``, resolved like any model
reference) with the folder's config and the adapter merged in.
"""

from __future__ import annotations

import json
import threading
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from editor.attribution.nli import LABELS, ChunkedNLI, canonical_label, infer_label_map
from editor.llm.partial import MANIFEST, is_partial_folder, load_partial
from editor.verdicts import CONTRADICTED, SUPPORTED
from retrieval.assets import AssetNotFoundError, resolve
from retrieval.collector import collector_paused
from retrieval.extras import require


class _HFModel(ChunkedNLI):
    """Lazy, locked, offline loading of a tokenizer and a model."""

    def __init__(
        self,
        model_id_or_path: str,
        max_length: int,
        batch_size: int,
        *,
        overlap: int = 1,
        device: str = "cpu",
        local_files_only: bool = True,
        quantize: str = "none",
    ) -> None:
        """``model_id_or_path``: a hub id (read from the local cache unless
        ``local_files_only`` is false) or a folder; ``max_length`` tokens a window (windows
        ``overlap`` sentences apart), ``batch_size`` windows a forward pass; ``quantize``:
        ``int8`` for dynamic int8 linear layers. Subclasses pass these on (``**loading``)."""
        super().__init__(max_length, batch_size, overlap)
        if quantize not in {"none", "int8"}:
            raise ValueError(f"quantize must be 'none' or 'int8', got {quantize!r}")
        self.model_ref = model_id_or_path
        self.quantize = quantize
        self.device = device
        self.local_files_only = local_files_only
        self._lock = threading.Lock()
        self._model: Any = None
        self._tokenizer: Any = None

    def load(self) -> None:
        """Load tokenizer and model now (otherwise the first call does); idempotent."""
        with self._lock:
            if self._model is None:
                with collector_paused():  # transformers' model code and the weights stay
                    self._load()

    def _from_pretrained(self, model_class: Any, quantize: bool = True) -> tuple[Any, Any]:
        resolved = resolve(self.model_ref)
        require(
            "hub", f"the PyTorch model {self.model_ref!r} (a hub id, or attribution.runtime: torch)"
        )
        from transformers import AutoTokenizer

        local = resolved.source != "hub" or self.local_files_only
        try:
            tokenizer = AutoTokenizer.from_pretrained(resolved.load_id, local_files_only=local)
            if _is_adapter_folder(resolved.load_id):
                model = _from_adapter_folder(model_class, resolved.load_id)
            elif is_partial_folder(resolved.load_id):
                base = json.loads((Path(resolved.load_id) / MANIFEST).read_text())["base"]
                model = load_partial(model_class, resolved.load_id, _base_folder(base))
            else:
                model = model_class.from_pretrained(resolved.load_id, local_files_only=local)
        except OSError as e:
            raise AssetNotFoundError(
                f"cannot load NLI model '{self.model_ref}' ({e}); offline, only local folders "
                "(save_pretrained) and models already in the Hugging Face cache load"
            ) from None
        model = model.to(self.device).eval()
        if quantize and self.quantize == "int8":
            model = quantize_int8(model, self.device)
        return tokenizer, model

    def _load(self) -> None:
        raise NotImplementedError

    def _token_lengths(self, texts: list[str]) -> list[int]:
        self.load()
        with self.tokenizer_lock:
            ids = self._tokenizer(texts, add_special_tokens=False, verbose=False)["input_ids"]
        return [len(x) for x in ids]


def quantize_int8(model: Any, device: str) -> Any:
    """Dynamic int8 quantisation of every ``nn.Linear`` (weights int8, activations quantised
    per batch): CPU only, measured by ``purr bench attribution``."""
    import torch

    if not device.startswith("cpu"):
        raise ValueError(f"int8 quantisation runs on CPU only, not on {device}; set quantize none")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.ao.quantization deprecation notice
        return torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)


_WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin")


def _base_folder(ref: str) -> str:
    """What ``from_pretrained`` loads for a partial checkpoint's base: a packaged int8 ONNX
    encoder (MiniLM-L12, bge-small) is dequantised once into the cache."""
    resolved = resolve(ref)
    if resolved.source == "packaged" and resolved.kind in ("onnx-encoder", "onnx-cross-encoder"):
        from editor.attribution.onnx_bert import bert_from_onnx
        from retrieval.settings import Settings

        return str(bert_from_onnx(ref, Settings().cache_dir))
    return resolved.load_id


def _is_adapter_folder(path: str) -> bool:
    """A local folder with a peft adapter (``adapter_config.json``) and no full weights."""
    folder = Path(path)
    return (folder / "adapter_config.json").is_file() and not any(
        (folder / name).is_file() for name in _WEIGHT_FILES
    )


def _from_adapter_folder(model_class: Any, path: str) -> Any:
    """Base model (``base_model_name_or_path``: packaged:, path or cached hub id) with the
    folder's config (its labels), the adapter and saved modules applied, merged. The merge is
    saved in the cache (``merged_model``), so later loads need neither peft nor the merge."""
    from editor.llm.model_files import merged_model
    from retrieval.settings import Settings

    base_ref = json.loads((Path(path) / "adapter_config.json").read_text())[
        "base_model_name_or_path"
    ]
    base_id = resolve(base_ref).load_id

    def merge() -> Any:
        from transformers import AutoConfig

        try:
            from peft import PeftModel
        except ImportError as e:
            raise ImportError(
                f"'{path}' holds a LoRA adapter; loading it needs peft: pip install peft"
            ) from e
        config = AutoConfig.from_pretrained(path, local_files_only=True)
        from transformers.utils import logging as hf_logging

        level = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()  # the base lacks the head the adapter brings: not news
        hf_logging.disable_progress_bar()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)  # peft calls a deprecated alias
                base = model_class.from_pretrained(base_id, config=config, local_files_only=True)
                return PeftModel.from_pretrained(base, path).merge_and_unload()
        finally:
            hf_logging.set_verbosity(level)
            hf_logging.enable_progress_bar()

    key = f"{model_class.__name__}:{base_id}"
    return merged_model(path, key, Settings().cache_dir, merge, model_class)


def label_columns(
    id2label: dict[int, str], num_labels: int, override: Mapping[Any, str] | None, ref: str
) -> tuple[dict[int, str], np.ndarray]:
    """A classifier's outputs read as purr's labels: the label map (``infer_label_map``; a
    single logit is P(supported)) and the (n_outputs, 3) matrix that sums outputs into LABELS."""
    if num_labels == 1 and not override:
        mapping = {0: canonical_label(id2label.get(0, "")) or SUPPORTED}
    else:
        mapping = infer_label_map(id2label, override)
    if num_labels == 1 and mapping[0] != SUPPORTED:
        raise ValueError(
            f"a single-logit NLI head is read as P(supported); '{ref}' maps it to "
            f"{mapping[0]!r}: fix label_map or use a classifier with one output per label"
        )
    columns = np.zeros((len(mapping), 3))
    for index, label in mapping.items():
        columns[index, LABELS.index(label)] = 1.0
    return mapping, columns


class LabelMapped:
    """A classifier whose outputs map to purr's labels once loaded (``label_map``)."""

    label_map: dict[int, str]
    load: Callable[[], None]  # the subclass's own (an annotation only: nothing is shadowed)

    @property
    def three_way(self) -> bool:
        """Whether some output means 'contradicted' (loads the model)."""
        self.load()
        return CONTRADICTED in self.label_map.values()


class HFSequenceClassificationNLI(LabelMapped, _HFModel):
    """Any Hugging Face sequence-classification NLI model, by hub id (local cache) or path.

    The label map comes from ``config.id2label`` (see ``infer_label_map``); ``label_map``
    overrides it, e.g. ``{"LABEL_0": "supported", "LABEL_1": "not_supported"}``. A
    single-logit head is read as P(supported) = sigmoid(logit).
    """

    def __init__(
        self,
        model_id_or_path: str,
        label_map: Mapping[Any, str] | None = None,
        max_length: int = 256,
        batch_size: int = 16,
        **loading: Any,
    ) -> None:
        super().__init__(model_id_or_path, max_length, batch_size, **loading)
        self.label_map_override = dict(label_map) if label_map else None
        self.label_map: dict[int, str] = {}
        self._columns: np.ndarray | None = None  # (n_outputs, 3) sums outputs into LABELS

    def _load(self) -> None:
        from transformers import AutoModelForSequenceClassification

        tokenizer, model = self._from_pretrained(AutoModelForSequenceClassification)
        id2label = {int(i): str(n) for i, n in model.config.id2label.items()}
        self.label_map, self._columns = label_columns(
            id2label, model.config.num_labels, self.label_map_override, self.model_ref
        )
        self._tokenizer, self._model = tokenizer, model

    def torch_network(self) -> Any:
        """The fp32 PyTorch model, loaded apart from this one's (what an ONNX graph of it is
        exported from)."""
        from transformers import AutoModelForSequenceClassification

        with collector_paused():
            return self._from_pretrained(AutoModelForSequenceClassification, quantize=False)[1]

    def _overhead(self) -> int:
        self.load()
        return int(self._tokenizer.num_special_tokens_to_add(pair=True))

    def _pair_probabilities(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        import torch

        self.load()
        with self.tokenizer_lock:
            enc = self._tokenizer(
                [p for p, _ in pairs],
                [h for _, h in pairs],
                truncation="longest_first",
                max_length=self.max_length,
                padding=True,
                return_tensors="pt",
            ).to(self.device)
        with torch.inference_mode():
            logits = self._model(**enc).logits.float()  # (batch, n_outputs)
        if logits.shape[-1] == 1:
            p = torch.sigmoid(logits[:, 0]).cpu().numpy().astype(np.float64)  # (batch,)
            return np.stack([p, np.zeros_like(p), 1.0 - p], axis=1)
        probs = torch.softmax(logits, dim=-1).cpu().numpy().astype(np.float64)
        assert self._columns is not None  # set by _load
        return probs @ self._columns  # (batch, n_outputs) @ (n_outputs, 3) -> (batch, 3)


class T5TrueNLI(_HFModel):
    """A TRUE-style seq2seq NLI model (``google/t5_xxl_true_nli_mixture``, or any T5 trained
    alike): input ``"premise: P hypothesis: H"``, output ``"1"`` (entailed) or ``"0"``.

    P(supported) is the softmax over the first decoder step's logits restricted to the first
    tokens of ``positive`` and ``negative`` (for T5's vocabulary "▁1" and "▁", as in RARR).
    A two-way model: ``contradicted`` is 0.0.
    """

    three_way = False
    premise_prefix = "premise: "

    def __init__(
        self,
        model_id_or_path: str,
        max_length: int = 512,
        batch_size: int = 8,
        *,
        positive: str = "1",
        negative: str = "0",
        **loading: Any,
    ) -> None:
        super().__init__(model_id_or_path, max_length, batch_size, **loading)
        self.positive, self.negative = positive, negative
        self._label_ids: tuple[int, int] = (-1, -1)
        self._prefix_len = 0

    def _load(self) -> None:
        from transformers import AutoModelForSeq2SeqLM

        tokenizer, model = self._from_pretrained(AutoModelForSeq2SeqLM)
        ids = [
            tokenizer.encode(t, add_special_tokens=False) for t in (self.positive, self.negative)
        ]
        if not ids[0] or not ids[1] or ids[0][0] == ids[1][0]:
            raise ValueError(
                f"the tokenizer of '{self.model_ref}' cannot tell {self.positive!r} from "
                f"{self.negative!r} by their first token ({ids}); pass other positive/negative"
            )
        if model.config.decoder_start_token_id is None:
            raise ValueError(
                f"'{self.model_ref}' has no decoder_start_token_id; not a T5-style model"
            )
        self._label_ids = (ids[0][0], ids[1][0])
        prefix = self.premise_prefix.strip()
        self._prefix_len = len(tokenizer.encode(prefix, add_special_tokens=False))
        self._tokenizer, self._model = tokenizer, model

    def _format_hypothesis(self, hypothesis: str) -> str:
        return f"hypothesis: {hypothesis}"

    def _overhead(self) -> int:
        self.load()
        return self._prefix_len + (self._tokenizer.eos_token_id is not None)

    def _pair_probabilities(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        import torch

        self.load()
        tok = self._tokenizer
        with self.tokenizer_lock:
            premises = tok([self.premise_prefix + p for p, _ in pairs], add_special_tokens=False)
            hyps = tok([self._format_hypothesis(h) for _, h in pairs], add_special_tokens=False)
        eos = [] if tok.eos_token_id is None else [tok.eos_token_id]
        room = self.max_length - len(eos)
        rows = []
        for prem, hyp in zip(premises["input_ids"], hyps["input_ids"], strict=True):
            hyp = hyp[
                : max(room - len(prem), room // 2)
            ]  # the hypothesis is kept whole if possible
            rows.append(prem[: room - len(hyp)] + hyp + eos)
        width = max(len(r) for r in rows)
        pad = tok.pad_token_id if tok.pad_token_id is not None else 0
        input_ids = torch.tensor([r + [pad] * (width - len(r)) for r in rows])  # (batch, width)
        mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows])
        start = torch.full((len(rows), 1), self._model.config.decoder_start_token_id)
        with torch.inference_mode():
            logits = self._model(
                input_ids=input_ids.to(self.device),
                attention_mask=mask.to(self.device),
                decoder_input_ids=start.to(self.device),
            ).logits  # (batch, 1, vocab)
        pair_logits = logits[:, 0, list(self._label_ids)].float()  # (batch, 2): positive, negative
        p = torch.softmax(pair_logits, dim=-1)[:, 0].cpu().numpy().astype(np.float64)
        return np.stack([p, np.zeros_like(p), 1.0 - p], axis=1)
