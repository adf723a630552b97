"""Dense text encoders: the packaged bge-small ONNX model or any sentence-transformers model."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Protocol

import numpy as np

from retrieval import onnx_runtime
from retrieval.assets import resolve
from retrieval.config import DenseConfig

log = logging.getLogger(__name__)

BGE_QUERY_PREFIX = "Represent this sentence for searching relevant passages: "


class Encoder(Protocol):
    """Maps texts to L2-normalised vectors (inner product = cosine)."""

    name: str
    dim: int

    def encode_query(self, text: str) -> np.ndarray: ...

    def encode_queries(self, texts: list[str]) -> np.ndarray: ...

    def encode_passages(
        self, texts: list[str], progress: Callable[[int], None] | None = None
    ) -> np.ndarray: ...


def _normalise(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float32, copy=False)
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


class _BatchEncoder:
    """The ``Encoder`` methods over a subclass's ``_run`` (texts -> normalised vectors)."""

    query_prefix: str

    def encode_query(self, text: str) -> np.ndarray:
        return self.encode_queries([text])[0]

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        return self._run([self.query_prefix + t for t in texts])

    def encode_passages(
        self, texts: list[str], progress: Callable[[int], None] | None = None
    ) -> np.ndarray:
        return self._run(texts, progress)

    def _run(self, texts: list[str], progress: Callable[[int], None] | None = None) -> np.ndarray:
        raise NotImplementedError


class OnnxEncoder(_BatchEncoder):
    """A BERT-style ONNX encoder with CLS pooling (bge-small-en-v1.5 by default)."""

    def __init__(
        self,
        model_dir,
        *,
        name: str,
        query_prefix: str = "",
        max_length: int = 256,
        batch_size: int = 64,
    ):
        from pathlib import Path

        self.model_dir = Path(model_dir)
        self.name = name
        self.query_prefix = query_prefix
        self.max_length = max_length
        self.batch_size = batch_size
        self.dim = 384
        self._session = None

    def load(self) -> None:
        """Open the ONNX session and tokenizer now (otherwise the first call does)."""
        if self._session is None:
            self._session = onnx_runtime.session(str(self.model_dir / "model.onnx"))
            out = self._session.get_outputs()[0].shape
            self.dim = int(out[-1]) if isinstance(out[-1], int) else self.dim
        onnx_runtime.tokenizer(self.model_dir, self.max_length)

    def _run(self, texts: list[str], progress: Callable[[int], None] | None = None) -> np.ndarray:
        self.load()
        tok = onnx_runtime.tokenizer(self.model_dir, self.max_length)
        encs = tok.encode_batch(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)  # (n, dim)
        for batch in onnx_runtime.length_sorted_batches(
            [len(e.ids) for e in encs], self.batch_size
        ):
            inputs = onnx_runtime.pad([encs[i] for i in batch])
            hidden = self._session.run(None, inputs)[0]  # (batch, seq, dim)
            out[batch] = hidden[:, 0]  # CLS pooling
            if progress:
                progress(len(batch))
        return _normalise(out)


@dataclass(eq=False)
class SentenceTransformerEncoder(_BatchEncoder):
    """Any sentence-transformers model by hub id (from the local HF cache) or path."""

    load_id: str
    _: KW_ONLY
    name: str
    query_prefix: str = ""
    max_length: int = 256
    batch_size: int = 64
    _model: Any = field(default=None, init=False, repr=False)
    _dim: int | None = field(default=None, init=False, repr=False)

    @property
    def model(self):
        if self._model is None:
            from retrieval.extras import require

            require(
                "hub",
                f"the sentence-transformers encoder {self.load_id!r}",
                ("torch", "transformers", "sentence_transformers"),
            )
            from sentence_transformers import SentenceTransformer

            try:
                self._model = SentenceTransformer(self.load_id, device="cpu")
            except OSError as e:
                raise FileNotFoundError(
                    f"cannot load sentence-transformers model '{self.load_id}' ({e}); offline, only "
                    "local paths, packaged:NAME models and models already in the HF cache load"
                ) from None
            self._model.max_seq_length = self.max_length
        return self._model

    @property
    def dim(self) -> int:  # type: ignore[override]
        if self._dim is None:
            get_dim = (
                getattr(self.model, "get_embedding_dimension", None)
                or self.model.get_sentence_embedding_dimension
            )
            self._dim = int(get_dim())
        return self._dim

    def _run(self, texts: list[str], progress: Callable[[int], None] | None = None) -> np.ndarray:
        out = []
        for i in range(0, len(texts), self.batch_size):
            chunk = texts[i : i + self.batch_size]
            out.append(
                self.model.encode(
                    chunk,
                    batch_size=self.batch_size,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
            )
            if progress:
                progress(len(chunk))
        if not out:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _normalise(np.concatenate(out))


def build_encoder(cfg: DenseConfig) -> Encoder:
    """An encoder for ``cfg.model``: ONNX for packaged/exported ONNX folders, else sentence-transformers."""
    resolved = resolve(cfg.model)
    size: dict[str, Any] = {"max_length": cfg.max_length, "batch_size": cfg.batch_size}
    if resolved.path is not None and (resolved.path / "model.onnx").exists():
        default_prefix = BGE_QUERY_PREFIX if "bge" in cfg.model.lower() else ""
        prefix = cfg.query_prefix if cfg.query_prefix is not None else default_prefix
        return OnnxEncoder(resolved.path, name=cfg.model, query_prefix=prefix, **size)
    prefix = cfg.query_prefix if cfg.query_prefix is not None else ""
    return SentenceTransformerEncoder(resolved.load_id, name=cfg.model, query_prefix=prefix, **size)
