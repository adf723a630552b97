"""The builder: everything a ``Pipeline`` composes, made from a ``PipelineConfig``. The research
components are built once, lazily, and shared; ``build_reviser`` makes the revision stage (the
judge and the proposers it chooses among), ``build_repairer`` citation repair;
``first_use_work`` lists the one-time work a machine still needs."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from editor.config import PipelineConfig
from editor.installed import skipped
from editor.research.researcher import Researcher
from editor.text.document import TextParser
from retrieval.backends import open_index
from retrieval.corpus import DEFAULT_CORPUS, read_corpus
from retrieval.index import CONFIG_FILE, Index
from retrieval.milvus_client import is_milvus
from retrieval.prebuilt import packaged_vectors_fit
from retrieval.rerank import Reranker, build_reranker
from retrieval.settings import Settings

if TYPE_CHECKING:
    from editor.attribution.base import AttributionModel
    from editor.citations.repair import CitationRepairer
    from editor.revision.base import Revises
    from editor.revision.reviser import Reviser
    from editor.types import Evidence
    from retrieval.milvus import MilvusIndex

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FirstUse:
    """One-time work before a first run: what it is, roughly how long, and the call doing it."""

    what: str
    estimate: str
    run: Callable[[], object]


DEFAULT_INDEX_WORK = "building the default index of 10,033 Wikipedia summaries at {path}"


def default_index_estimate(cfg: PipelineConfig) -> str:
    """Roughly how long building the default index takes with ``cfg``'s encoder."""
    if not cfg.index.dense_enabled or packaged_vectors_fit(cfg.index.dense):
        return "a few seconds: the passage vectors ship prebuilt"
    return "10-20 minutes on a 2-core CPU: every passage is embedded"


def ensure_default_index(cfg: PipelineConfig, settings: Settings, progress: bool = True) -> Path:
    """The default-corpus index, built on first use into ``settings.index_dir``."""
    path = settings.index_dir
    if not (path / CONFIG_FILE).exists():
        Index.build(
            read_corpus([DEFAULT_CORPUS]),
            path,
            cfg.index,
            overwrite=True,
            extra_config=cfg.model_dump(mode="json"),
            progress=progress,
        )
    return path


def first_use_work(
    components: Components, research: bool = True, conversions: bool = True
) -> list[FirstUse]:
    """The one-time work a pipeline over ``components`` still needs on this machine: the default
    index (when researching, with no index given) and, with ``conversions``, the GGUF
    conversions of the causal LMs its editor and prompted stages may use, each with what it is
    and roughly how long it takes. Without ``conversions`` a causal LM converts the first time
    it loads (what a single edit wants: most edits never reach the causal fallback)."""
    from editor.llm.model_files import needs_conversion

    cfg, settings = components.cfg, components.settings
    work: list[FirstUse] = []
    index = settings.index_dir
    local = cfg.research.source != "web"
    if research and local and components.index_path is None and not (index / CONFIG_FILE).exists():
        work.append(
            FirstUse(
                DEFAULT_INDEX_WORK.format(path=index),
                default_index_estimate(cfg),
                partial(ensure_default_index, cfg, settings, components.progress),
            )
        )
    # the span judge writes its own revisions and asks no editor
    editors = {cfg.editor.type, cfg.editor.fallback} if cfg.judge.type != "span" else set()
    editors -= {cfg.editor.fallback} if skipped(cfg) else set()  # this install leaves it out
    refs = []
    if "causal" in editors:
        refs.append(cfg.editor.model or cfg.llm.model)
    gate_llm = cfg.judge.type != "span" and cfg.agreement.type == "llm"
    uses_llm = "prompted" in editors or cfg.querygen.type == "llm" or gate_llm
    if uses_llm and cfg.llm.backend == "transformers":
        refs.append(cfg.llm.model)
    for ref in dict.fromkeys(refs if conversions else []):
        if needs_conversion(ref, settings.cache_dir):
            what = f"converting {ref} to safetensors in {settings.cache_dir / 'models'}"
            work.append(
                FirstUse(what, "about 1 minute", partial(_convert, ref, settings.cache_dir))
            )
    return work


def _convert(ref: str, cache_dir: Path) -> None:
    from editor.llm.model_files import locate_model

    locate_model(ref, cache_dir)


class Components:
    """Lazily built, shared pipeline parts. Nothing loads until first used."""

    def __init__(
        self,
        cfg: PipelineConfig,
        settings: Settings | None = None,
        index_path: str | Path | None = None,
        progress: bool = True,
    ):
        self.cfg = cfg
        self.settings = settings or Settings()
        # a Milvus URI stays a string: Path() would fold its '//'
        self._index_path: Path | str | None = (
            None
            if not index_path
            else str(index_path)
            if is_milvus(index_path)
            else Path(index_path)
        )
        self.progress = progress

    @property
    def index_path(self) -> Path | str | None:
        """The index given (a folder, a Milvus Lite file or a Milvus URI), or None for the
        default-corpus index."""
        return self._index_path

    def load_research_models(self) -> None:
        """Open the index and load the research models now (otherwise first use does)."""
        encoder = None
        if self.cfg.research.source != "web" and self.index.dense is not None:
            encoder = self.index.encoder
        for part in (encoder, self.reranker, self.querygen):
            load = getattr(part, "load", None)
            if callable(load):
                load()

    @cached_property
    def index(self) -> Index | MilvusIndex:
        path = self._index_path or ensure_default_index(self.cfg, self.settings, self.progress)
        return open_index(path, dense=self.cfg.index.dense if self.dense_override else None)

    @property
    def dense_override(self) -> bool:
        """Whether this config names its own encoder (``index.dense`` differs from the default),
        which a Milvus collection built with another one must refuse."""
        return self.cfg.index.dense != PipelineConfig().index.dense

    @cached_property
    def reranker(self) -> Reranker | None:
        return build_reranker(self.cfg.rerank) if self.cfg.rerank.enabled else None

    @cached_property
    def attribution(self):
        """The attribution model of ``cfg.attribution``, shared by every pipeline over these
        components (the agreement gate, the ``substitute`` editor and the report use it)."""
        from editor.attribution import build as build_attribution

        return build_attribution(self.cfg.attribution, self.settings)

    @cached_property
    def llm(self):
        from editor.llm import build as build_llm

        return build_llm(self.cfg.llm, self.settings)

    @cached_property
    def querygen(self):
        from editor.research.querygen.base import build as build_querygen

        needs_llm = self.cfg.querygen.type == "llm"
        return build_querygen(self.cfg.querygen, self.llm if needs_llm else None, self.parser)

    @cached_property
    def parser(self) -> TextParser:
        """The one parser of passages every stage shares (``editor.text.document``): a text is
        split, decontextualised and parsed once, at input, and each stage reads that parse."""
        return TextParser()

    @cached_property
    def web(self):
        """The web retriever of ``cfg.web`` (provider, page fetcher, extraction)."""
        from retrieval.netguard import NetworkPolicy
        from retrieval.web.cache import Budget, CachedFetcher, CachedSearch, WebCache
        from retrieval.web.fetch import PageFetcher
        from retrieval.web.providers import make_provider
        from retrieval.web.retriever import WebRetriever

        w = self.cfg.web
        cache = WebCache(w.cache_dir, w.cache_mode) if w.cache_dir else None
        budget = None
        if w.max_requests is not None or w.requests_per_minute is not None:
            budget = Budget(w.max_requests, w.requests_per_minute)
        provider = CachedSearch(
            make_provider(
                w.provider,
                w.url,
                self.settings.web_key(w.provider),
                timeout_s=w.timeout_s,
                retries=w.retries,
            ),
            cache,
            budget,
            w.url or "",
        )
        limits = {
            "timeout_s": w.timeout_s,
            "max_bytes": w.max_bytes,
            "concurrency": w.concurrency,
            "per_host": w.per_host,
            "retries": w.page_retries,
            # result pages and redirects reach the public internet only (and
            # web.allow_networks); the provider's own w.url is the operator's, trusted
            "policy": NetworkPolicy(w.allow_networks),
        }
        fetcher = None
        if w.fetch:
            fetcher = CachedFetcher(cache, **limits) if cache else PageFetcher(**limits)
        # a budget is spent in query order, so that a rerun spends it on the same queries
        searchers = 1 if budget is not None else min(4, w.concurrency)
        return WebRetriever(provider, fetcher, self.cfg.index.chunking, w.results, searchers)

    @cached_property
    def retriever(self):
        """What research searches: the index, the web, or both fused (``research.source``)."""
        source = self.cfg.research.source
        if source == "index":
            return self.index
        if source == "web":
            return self.web
        from retrieval.web.retriever import CombinedRetriever

        return CombinedRetriever(self.index, self.web, self.cfg.search.rrf_k)

    @cached_property
    def researcher(self) -> Researcher:
        hops = None
        if self.cfg.research.multi_hop:
            from editor.claims.places import load as load_places
            from editor.research.hops import MultiHop

            hops = MultiHop(place_level=load_places().level)
        return Researcher(
            self.retriever, self.querygen, self.reranker, self.cfg.research, self.cfg.search, hops
        )


def _as_trained(attribution: Callable[[], Any]) -> Callable[[], Any]:
    """A loader of the verifier without its recalibration (``attribution.calibration``): a
    recalibration reshapes the probabilities users read (report, check, score), never what
    decides an edit, whose thresholds were measured on the verifier as trained."""

    from editor.attribution.recalibration import Recalibrated

    def load() -> Any:
        model = attribution()
        return model.model if isinstance(model, Recalibrated) else model

    return load


def build_reviser(
    cfg: PipelineConfig,
    attribution: Callable[[], Any],
    llm: Callable[[], Any],
    parser: TextParser | None = None,
) -> Reviser:
    """The revision stage of ``cfg``: the judge (``judge.type``) and the proposers it chooses
    among. ``attribution`` and ``llm`` are loaders, called only by the stages that need them,
    so an editor without an LLM never loads one; ``parser``: the pipeline's, shared by the
    judge.

    Which proposers each judge reads, after its own signal's proposal: ``rules``, ``union``
    and ``learned`` the question's answer (``editor.answers``), ``editor.type`` and
    ``editor.fallback``, in that order (the combined judges weigh the span judge's copy against
    the rules judge's pick of those); ``span`` the question's answer."""
    from editor.judge import build as build_judge
    from editor.revision.editors.identity import IdentityEditor
    from editor.revision.reviser import Reviser

    parser = parser or TextParser()
    attribution = _as_trained(attribution)  # edits are decided by the verifier as measured
    editors = rules_editors(cfg, attribution, llm)
    judge = build_judge(cfg, attribution, llm, parser)
    loop, policy = cfg.revision, cfg.judge
    if cfg.judge.type == "span":
        if not cfg.editor.answers:
            return Reviser(IdentityEditor(), judge, loop, policy)
        from editor.judge.span import AskedToo
        from editor.revision.editors.answer import AnswerEditor

        answer = AnswerEditor(IdentityEditor(), attribution(), policy.min_gain)
        return Reviser(answer, AskedToo(judge), loop, policy)  # type: ignore[arg-type]
    if cfg.judge.type != "rules":  # the combined judges weigh the rules editors' candidates
        if not editors:
            raise ValueError(
                f"judge.type={cfg.judge.type} weighs the rules editors' edits, and "
                f"editor.type={cfg.editor.type} writes none: set editor.type=substitute"
            )
        return Reviser(editors, judge, loop, policy)
    if not editors:
        return Reviser(IdentityEditor(), None, loop.model_copy(update={"gate": False}), policy)
    causal = [e for e in editors if e.name == "causal"]
    if causal and cfg.judge.reader.rewrite:  # a sentence that gives no answer, rewritten
        from editor.revision.proposers import AnswerRewrite

        return Reviser([AnswerRewrite(causal[0]), *editors], judge, loop, policy)
    return Reviser(editors, judge, loop, policy)


def rules_editors(
    cfg: PipelineConfig, attribution: Callable[[], Any], llm: Callable[[], Any]
) -> list[Any]:
    """The editors that propose under the rules judge, in the order they are asked: the
    question's answer (``editor.answers``), ``editor.type``, then ``editor.fallback``; none
    where ``editor.type`` cannot edit."""
    from editor.revision.editors import build as build_editor
    from editor.revision.editors.base import edits
    from editor.revision.editors.identity import IdentityEditor

    main = build_editor(cfg.editor, attribution, llm, cfg.llm, cfg.judge)
    if not edits(main):
        return []
    out: list[Any] = [main]
    if cfg.editor.answers:  # a question's answer span, with the evidence's
        from editor.revision.editors.answer import AnswerEditor

        out.insert(0, AnswerEditor(IdentityEditor(), attribution(), cfg.judge.min_gain))
    if cfg.editor.fallback and not skipped(cfg):
        second = cfg.editor.model_copy(update={"type": cfg.editor.fallback, "fallback": None})
        out.append(build_editor(second, attribution, llm, cfg.llm, cfg.judge))
    return out


def build_repairer(
    components: Components, attribution: AttributionModel, reviser: Revises
) -> CitationRepairer:
    """Citation repair as ``cfg.citations`` says: the checker judges with the reviser's judge
    (``citation_checker``), ``reviser`` revises; with ``citations.research``, a claim no given
    source settles is researched through the components' researcher."""
    from editor.citations.repair import CitationRepairer

    cfg = components.cfg
    researcher = None
    if cfg.citations.research:

        def researcher(claim: str, ctx: str | None) -> list[Evidence]:
            results = components.researcher.research(claim, ctx)
            return [e for qe in results for e in qe.evidence]

    return CitationRepairer(
        citation_checker(cfg, attribution, getattr(reviser, "judge", None)),
        reviser,
        cfg.citations.max_candidates,
        cfg.judge.remove_citation_below,
        researcher,
    )


def citation_checker(cfg: PipelineConfig, attribution: AttributionModel, judge: Any) -> Any:
    """The checker of cited text: the pipeline's judge reads each (source, sentence) pair, as
    it reads researched evidence. With the gate off (no judge that assesses), the ``rules``
    gate over the verifier at the judge's ``contradicted_min`` and ``attributed_min``. ``citations.locate``: the span judge
    names the words of a non-supporting source where the judge names none."""
    from editor.citations.check import CitationChecker

    locator = span_locator(cfg.judge.quantize) if cfg.citations.locate else None
    a = cfg.attribution
    if judge is None or (hasattr(judge, "gate") and judge.gate is None):
        return CitationChecker.with_verifier(
            attribution, cfg.judge.contradicted_min, cfg.judge.attributed_min, a.decompose, locator
        )
    return CitationChecker(judge, a.decompose, locator)


def span_locator(quantize: str = "none"):
    """The shipped span judge as the citation checker's locator (loads on first use; the same
    judge as the span judge's when that is the shipped one in the same form)."""
    from editor.judge.span_fix import shared_fixer

    return shared_fixer(quantize=quantize)
