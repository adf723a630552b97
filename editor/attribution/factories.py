"""The attribution models purr builds by name: ``hf`` (any sequence-classification NLI model),
``t5-true`` (TRUE-style seq2seq) and ``purr`` (purr's own trained model, a local folder loaded as
``hf``; the shipped one by default, wrapped in the calibrated verifier when its folder holds a
``fusion.json``; ``large`` or a folder with a ``decoder.json``: the decoder-LM verifier)."""

from __future__ import annotations

import json
from pathlib import Path

from editor.attribution.base import AttributionModel
from editor.attribution.decoder import DecoderNLI, is_decoder_folder
from editor.attribution.fusion import FUSION_FILE, Fusion
from editor.attribution.hf import HFSequenceClassificationNLI, T5TrueNLI
from editor.attribution.nli_onnx import OnnxSequenceClassificationNLI
from editor.attribution.verifier import FusedVerifier
from editor.config import AttributionConfig
from retrieval.assets import AssetNotFoundError, resolve
from retrieval.settings import Settings

PURR_ARTEFACT = "purr-attribution"
"""Folder name of the shipped attribution model (``editor/models/purr-attribution``: the
packaged all-MiniLM-L6-v2 fully fine-tuned, saved as fp16 shards over it, with the fusion of the
calibrated verifier and its model card)."""

SHIPPED_MODELS = Path(__file__).resolve().parents[1] / "models"
"""Where the shipped artefacts live; ``attribution.model`` may name one of them by folder name
(``purr-attribution-summaries``: the adapter continued on SummEdits contrast pairs)."""


def default_purr_path(settings: Settings | None = None) -> Path:
    """The attribution model used when ``attribution.model`` is unset: the one shipped with
    purr. (``settings`` is accepted for symmetry with the other factories.)"""
    return SHIPPED_MODELS / PURR_ARTEFACT


def _common(cfg: AttributionConfig, settings: Settings) -> dict:
    """The model settings every hub-model factory passes on."""
    return {
        "max_length": cfg.max_length,
        "batch_size": cfg.batch_size,
        "overlap": cfg.overlap,
        "device": cfg.device,
        "local_files_only": settings.offline,
    }


def runtime(
    nli: HFSequenceClassificationNLI, cfg: AttributionConfig, settings: Settings
) -> AttributionModel:
    """``nli`` as ``attribution.runtime`` asks: its ONNX graph (``editor.attribution.nli_onnx``)
    for a local folder with a ``tokenizer.json`` on CPU, else the PyTorch model."""
    if cfg.runtime != "onnx" or not cfg.device.startswith("cpu"):
        return nli
    try:
        folder = Path(resolve(nli.model_ref).load_id)
    except AssetNotFoundError:
        return nli
    if not ((folder / "config.json").is_file() and (folder / "tokenizer.json").is_file()):
        return nli
    return OnnxSequenceClassificationNLI(nli, folder, settings.cache_dir)


def _hf(cfg: AttributionConfig, settings: Settings) -> AttributionModel:
    assert cfg.model is not None  # AttributionConfig refuses type=hf without a model
    nli = HFSequenceClassificationNLI(
        cfg.model, label_map=cfg.label_map, quantize=cfg.quantize, **_common(cfg, settings)
    )
    return runtime(nli, cfg, settings)


def _t5_true(cfg: AttributionConfig, settings: Settings) -> AttributionModel:
    assert cfg.model is not None  # AttributionConfig refuses type=t5-true without a model
    return T5TrueNLI(cfg.model, **_common(cfg, settings))


def _minicheck_t5(cfg: AttributionConfig, settings: Settings) -> AttributionModel:
    from editor.attribution.minicheck import MiniCheckT5NLI

    assert cfg.model is not None  # AttributionConfig refuses it without a model
    return MiniCheckT5NLI(cfg.model, **_common(cfg, settings))


def _llm_check_transformers(cfg: AttributionConfig, settings: Settings) -> AttributionModel:
    from editor.attribution.minicheck import LLMCheckNLI

    assert cfg.model is not None  # AttributionConfig refuses it without a model
    return LLMCheckNLI(cfg.model, engine="transformers", **_common(cfg, settings))


def _llm_check_vllm(cfg: AttributionConfig, settings: Settings) -> AttributionModel:
    from editor.attribution.minicheck import LLMCheckNLI

    assert cfg.model is not None  # AttributionConfig refuses it without a model
    return LLMCheckNLI(cfg.model, engine="vllm", **_common(cfg, settings))


LARGE_ARTEFACT = "purr-verifier-large"
"""The large verifier (``attribution.model=large``): Gemma-3-270M with a LoRA adapter and a
3-way head (``editor.attribution.decoder``)."""

PRESETS = {"large": LARGE_ARTEFACT, "medium": "purr-verifier-medium", "span": "purr-span-judge"}
"""Shipped verifiers by name: ``medium`` is MiniLM-L12 (the ranker's 12-layer encoder) fully
fine-tuned, twice the default's layers; ``large`` the Gemma decoder; ``span`` the span judge's
pair head (``editor.attribution.span_judge``)."""


def _is_span_folder(path: Path) -> bool:
    try:
        config = json.loads((path / "config.json").read_text("utf-8"))
    except (OSError, ValueError):
        return False
    return config.get("architectures") == ["SpanJudgeModel"]


def _purr(cfg: AttributionConfig, settings: Settings) -> AttributionModel:
    model = PRESETS.get(cfg.model, cfg.model) if cfg.model else cfg.model
    path = Path(model).expanduser() if model else default_purr_path(settings)
    if not path.exists() and (SHIPPED_MODELS / path / "config.json").is_file():
        path = SHIPPED_MODELS / path  # a shipped artefact by name: purr-attribution-summaries
    if not path.exists() and is_decoder_folder(SHIPPED_MODELS / path):
        path = SHIPPED_MODELS / path
    if is_decoder_folder(path):
        return DecoderNLI(
            path,
            batch_size=cfg.batch_size,
            overlap=cfg.overlap,
            device=cfg.device,
            cache_dir=settings.cache_dir,
            quantize=cfg.quantize,
        )
    if _is_span_folder(path):
        from editor.attribution.span_judge import SpanJudge

        return SpanJudge(
            str(path),
            cfg.max_length,
            cfg.batch_size,
            overlap=cfg.overlap,
            device=cfg.device,
            quantize=cfg.quantize,
        )
    if not (path / "config.json").is_file():
        raise AssetNotFoundError(
            f"the trained attribution model is not at {path} (no config.json); train it with the "
            "attribution trainer in training/, set attribution.model to the folder it wrote, or "
            "use attribution.type=hf / t5-true with attribution.model=HUB_ID_OR_PATH"
        )
    nli = HFSequenceClassificationNLI(
        str(path),
        label_map=cfg.label_map,
        max_length=cfg.max_length,
        batch_size=cfg.batch_size,
        overlap=cfg.overlap,
        device=cfg.device,
        local_files_only=True,
        quantize=cfg.quantize,
    )
    model = runtime(nli, cfg, settings)
    if cfg.fusion and (path / FUSION_FILE).is_file():
        return FusedVerifier(model, Fusion.load(path / FUSION_FILE))
    return model
