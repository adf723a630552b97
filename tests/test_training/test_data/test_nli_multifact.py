"""Multi-fact NLI pairs (``training.data.nli_multifact``) from the packaged Wikipedia summaries."""

from __future__ import annotations

from collections import Counter

from retrieval.corpus import read_wiki_summaries
from training.data.nli_multifact import multifact_pairs


def test_two_facts_fused_are_supported_only_by_both_sentences():
    rows = multifact_pairs(read_wiki_summaries(), max_articles=150, seed=3, progress=False)
    labels = Counter(r.label for r in rows)
    assert labels["supported"] >= 20 and labels["not_supported"] >= 10
    assert labels["contradicted"] >= 10
    by_group: dict[str, dict[str, object]] = {}
    for r in rows:
        by_group.setdefault(r.group, {})[r.label] = r
    for g in by_group.values():
        sup = g["supported"]
        assert ", and " in sup.hypothesis
        if "not_supported" in g:  # the same claim, one of its sentences left out
            part = g["not_supported"]
            assert part.hypothesis == sup.hypothesis
            assert part.premise != sup.premise and sup.premise.startswith(part.premise)
        if "contradicted" in g:
            con = g["contradicted"]
            assert con.premise == sup.premise and con.hypothesis != sup.hypothesis
            # the first fact is untouched; the corruption is in the second
            first = sup.hypothesis.split(", and ")[0]
            assert con.hypothesis.startswith(first)
    # the same seed gives the same rows
    again = multifact_pairs(read_wiki_summaries(), max_articles=150, seed=3, progress=False)
    assert [r.id for r in again] == [r.id for r in rows]
