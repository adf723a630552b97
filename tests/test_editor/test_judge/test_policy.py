"""One policy: outside ``editor/judge`` no code compares a model's score, a share of words or a
relative difference with a number to decide; it asks the judge's policy (``editor.policy``),
whose numbers are the judge's config section and the slot check's tolerances. The scan reads
every comparison of the product's code (``editor``, ``serve``, ``retrieval``) whose one side
names a score and whose other side is a number or a threshold.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SCORE = re.compile(
    r"(?<![a-z0-9])(p_\w+|prob\w*|supported|contradicted|not_supported|attribution|relevance"
    r"|logits?|scores?|confidence|margin|gain|f1|value|overlap|share|scale|diff\w*)(?![a-z0-9])",
    re.I,
)
THRESHOLD = re.compile(r"(min|max|threshold|floor|below|above|cut)", re.I)
ALLOWED = {
    "editor/attribution/verifier.py": "a verbatim statement's P(supported) raised to the "
    "policy's floor (editor.policy.VERBATIM_SUPPORTED): arithmetic, not a decision",
    "editor/attribution/fusion.py": "a numerical guard of the fitted scale, not a decision",
    "editor/text/language.py": "the share of a text's letters in Latin script and of its "
    "words in English: the language check, not a model's score",
    "retrieval/rerank.py": "a numerical tolerance of the calibration fit",
    "editor/research/researcher.py": "research.min_relevance picks which evidence to read, "
    "before any judgement of the text",
}
"""Files whose comparisons are not judgements, each with why."""


def _number_or_threshold(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, float):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
        return isinstance(node.operand.value, float)
    name = ast.unparse(node).split(".")[-1]
    return isinstance(node, ast.Name | ast.Attribute) and bool(THRESHOLD.search(name))


def _bounds(node: ast.Compare) -> bool:
    """``0.0 <= x <= 1.0``: a range check of an input, not a decision."""
    ends = [node.left, node.comparators[-1]]
    return len(node.ops) == 2 and all(isinstance(e, ast.Constant) for e in ends)


def decisions_outside_the_judge() -> list[str]:
    out = []
    for package in ("editor", "serve", "retrieval"):
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith("editor/judge/") or rel == "editor/policy.py" or rel in ALLOWED:
                continue
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                if not isinstance(node, ast.Compare):
                    continue
                sides = [node.left, *node.comparators]
                ordered = any(
                    isinstance(op, ast.Lt | ast.LtE | ast.Gt | ast.GtE) for op in node.ops
                )
                if not ordered or _bounds(node):
                    continue
                limits = [s for s in sides if _number_or_threshold(s)]
                scored = [s for s in sides if s not in limits and SCORE.search(ast.unparse(s))]
                if scored and limits:
                    out.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    return out


def test_no_code_outside_the_judge_compares_a_score_with_a_number_to_decide():
    found = decisions_outside_the_judge()
    assert not found, "ask editor.policy instead:\n" + "\n".join(found)


def test_the_scan_finds_such_a_comparison_and_every_allowed_file_exists(tmp_path):
    tree = ast.parse(
        "if s.attribution >= 0.5:\n    cite()\nif p_wrong < self.wrong_min: pass\n"
        "if overlap < self.min_overlap: pass\nif a.overlap >= 0.6: pass\n"
        "ok = abs(a - b) / scale <= 0.01"
    )
    compares = [n for n in ast.walk(tree) if isinstance(n, ast.Compare)]
    assert all(
        SCORE.search(ast.unparse(c.left)) and _number_or_threshold(c.comparators[0])
        for c in compares
    )
    assert all((ROOT / f).is_file() for f in ALLOWED)


VERDICT_WORDS = frozenset(
    {
        "supported",
        "contradicted",
        "not_stated",
        "not_checkable",
        "unverified",
        "not_supported",
        "supports",
        "contradicts",
        "not_enough",
    }
)
"""The judge's verdicts, the report's words, the NLI models' labels and a cited source's labels
(``editor.verdicts``)."""
PRODUCT = ("editor", "serve", "retrieval", "training")
"""The code: outside the judge and the vocabulary it names these words from
``editor.verdicts`` (a data set's own label for a row too: the models' labels are its words)."""
MINTING = ("editor/judge/", "editor/verdicts.py")
"""Where the words are written: the judge mints verdicts, the vocabulary defines every word and
the report's and a cited source's mappings."""


def verdict_literals(folders=PRODUCT, minting=MINTING) -> list[str]:
    out = []
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith(minting):
                continue
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                if isinstance(node, ast.Constant) and node.value in VERDICT_WORDS:
                    out.append(f"{rel}:{node.lineno}: {node.value!r}")
    return out


def test_no_verdict_word_is_written_outside_the_judge_and_the_vocabulary():
    found = verdict_literals()
    assert not found, "name verdicts from editor.verdicts:\n" + "\n".join(found)


def test_the_verdict_scan_finds_a_literal():
    assert verdict_literals(("editor/judge",), minting=())  # the judge mints them
    assert verdict_literals(("editor",), minting=("editor/judge/",))  # and the vocabulary
