"""Distilling the prompted query generator into a small model (PURR's CQGen distillation).

1. ``purr data querygen``: passages (the first sentences of corpus documents, dev split held
   out, or a JSONL/text file of passages) go through the *teacher*, the prompted LLM generator
   (``querygen.type=llm`` over the configured LLM: the local model, or any OpenAI-compatible
   server such as ``vllm serve``); rows ``{id, text, context, queries}`` keep only the questions
   the teacher itself wrote (passages where it fell back to sentences are skipped, and said
   so in ``<out>.skipped.jsonl``). Progress bar; resumable.
2. ``purr train querygen``: a causal LM (LoRA over packaged Gemma-3-270M by default) learns to
   write those questions after a short prompt without examples (editor/research/querygen/trained.py),
   with the same loop as the editors (training/fit/loop.py). ``querygen.type=trained
   querygen.adapter=DIR`` then uses it.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import Field
from tqdm.auto import tqdm

from retrieval.corpus import jsonl_rows, read_utf8
from retrieval.files import RowJournal
from retrieval.sentences import split
from retrieval.types import Document
from training.fit.loop import TrainLoopConfig, causal_lm_loss, fit, split_rows, with_lora


def corpus_passages(
    docs: Iterable[Document], sentences: int = 3
) -> Iterator[tuple[str, str, str | None]]:
    """``(id, passage, context)``: the first ``sentences`` sentences of each document."""
    for doc in docs:
        sents = split(doc.text)[:sentences]
        if sents:
            yield doc.id, " ".join(sents), None


def read_passages(path: Path) -> list[tuple[str, str, str | None]]:
    """Passages from JSONL rows ``{id?, text, context?}`` or a text file (one per line)."""
    if path.suffix.lower() == ".jsonl":
        out = []
        for lineno, row in jsonl_rows(path):
            if not isinstance(row, dict) or not str(row.get("text") or "").strip():
                raise ValueError(f"{path}:{lineno}: a row needs a non-empty 'text'")
            out.append((str(row.get("id", f"line-{lineno}")), row["text"], row.get("context")))
        return out
    lines = [line.strip() for line in read_utf8(path).splitlines()]
    return [(f"line-{i}", line, None) for i, line in enumerate(lines, 1) if line]


def make_teacher_file(
    teacher: Any,
    passages: Iterable[tuple[str, str, str | None]],
    out: Path,
    n: int,
    batch_size: int = 4,
    progress: bool = True,
    stop: Any = None,
) -> dict[str, Any]:
    """Up to ``n`` rows of the teacher's questions in ``out`` (a ``RowJournal``, appended to;
    ids already written or skipped are not redone); counts and the rate. ``stop`` (a
    ``GracefulStop``) ends the run after the batch in hand."""
    if n < 1 or batch_size < 1:
        raise ValueError(f"n and batch_size must be >= 1, got {n}, {batch_size}")
    skipped_path = out.with_name(out.name + ".skipped.jsonl")
    started, new_rows, skipped = time.perf_counter(), 0, 0
    pending: list[tuple[str, str, str | None]] = []
    with RowJournal(out) as f, RowJournal(skipped_path) as sk:
        done = {str(r["id"]) for r in f.rows} | {str(r["id"]) for r in sk.rows}
        made = len(f.rows)
        bar = tqdm(total=n, initial=min(made, n), desc="teacher questions", disable=not progress)

        def flush() -> None:
            nonlocal made, new_rows, skipped
            results = teacher.generate_batch([p[1] for p in pending], [p[2] for p in pending])
            for (pid, text, context), queries in zip(pending, results, strict=True):
                own = [q.text for q in queries if q.generator == teacher.name]
                if not own or made >= n:
                    if not own:
                        sk.write({"id": pid, "reason": "no question"})
                        skipped += 1
                    continue
                f.write({"id": pid, "text": text, "context": context, "queries": own})
                made += 1
                new_rows += 1
                bar.update(1)
            f.sync()
            sk.sync()
            pending.clear()

        for passage in passages:
            if made >= n or (stop is not None and stop.requested):
                break
            if passage[0] in done:
                continue
            done.add(passage[0])
            pending.append(passage)
            if len(pending) == batch_size:
                flush()
        if pending and made < n:
            flush()
    bar.close()
    minutes = (time.perf_counter() - started) / 60
    return {
        "rows": made,
        "new_rows": new_rows,
        "skipped": skipped,
        "redone": f.redone,
        "interrupted": bool(stop is not None and stop.requested),
        "rows_per_minute": round(new_rows / minutes, 2) if minutes > 0 else None,
    }


class QueryGenTrainConfig(TrainLoopConfig):
    """Everything that determines a query-generator training run (train_config.json)."""

    base: str = Field(
        "packaged:gemma-3-270m", description="causal base: packaged:NAME, hub id or local path"
    )
    prompt: str | None = Field(None, description="prompt file (default querygen_trained.txt)")
    max_target_length: int = Field(128, ge=8)


def read_teacher_rows(path: Path) -> list[dict[str, Any]]:
    rows = []
    for lineno, row in jsonl_rows(path):
        if not isinstance(row, dict) or not row.get("text") or not row.get("queries"):
            raise ValueError(
                f"{path}:{lineno}: a row needs 'text' and 'queries' "
                "(make them with `purr data querygen`)"
            )
        rows.append(row)
    if not rows:
        raise ValueError(f"{path}: no rows")
    return rows


def querygen_pairs(
    rows: Sequence[dict[str, Any]], template: str, eos: str
) -> list[tuple[str, str]]:
    """``(prompt, target)`` of each row: the short prompt, the teacher's questions, end."""
    from editor.research.querygen.llm import render_prompt
    from editor.research.querygen.trained import questions_target

    return [
        (render_prompt(template, r["text"], r.get("context")), questions_target(r["queries"]) + eos)
        for r in rows
    ]


def train_querygen(
    cfg: QueryGenTrainConfig, progress: bool = True, stop: Any = None
) -> dict[str, Any]:
    from editor.llm.loading import load_causal
    from editor.research.querygen.trained import load_trained_prompt

    train, dev = split_rows(read_teacher_rows(Path(cfg.data)), cfg, key="text")
    tokenizer, model = load_causal(cfg.base, None, cfg.device)
    model = with_lora(model, cfg, "CAUSAL_LM")
    template = load_trained_prompt(cfg.prompt)
    eos = tokenizer.eos_token or ""

    def loss(rows: Sequence[dict[str, Any]], _rng: Any) -> Any:
        pairs = querygen_pairs(rows, template, eos)
        return causal_lm_loss(
            model, tokenizer, pairs, cfg.max_length, cfg.max_target_length, cfg.device
        )

    return fit(cfg, model, tokenizer, train, dev, loss, "train querygen", progress, stop)
