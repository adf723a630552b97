"""The default corpus: the packaged Wikipedia summaries, indexed automatically on first use."""

from pathlib import Path

import pytest

from retrieval.corpus import read_wiki_summaries


def test_packaged_wikipedia_corpus_reads():
    docs = list(read_wiki_summaries())
    assert len(docs) > 10_000
    eiffel = next(d for d in docs if d.title == "Eiffel Tower")
    assert eiffel.id == "wiki:Eiffel Tower" and eiffel.url.endswith("/wiki/Eiffel_Tower")
    assert "Gustave Eiffel" in eiffel.text


@pytest.mark.slow
def test_default_index_is_built_on_first_use(tmp_path, monkeypatch):
    """Builds the whole default index (~5 min on 2 cores) the way `purr research` does."""
    from editor.config import load_config
    from editor.factory import Components
    from retrieval.settings import Settings

    monkeypatch.setenv("PURR_CACHE_DIR", str(tmp_path))
    comp = Components(load_config("default"), Settings(), progress=False)
    (qe,) = comp.researcher.research("Gustave Eiffel's company built the Eiffel Tower.")
    assert (tmp_path / "indexes" / "default" / "config.json").exists()
    assert len(comp.index) > 14_000
    assert qe.evidence[0].title in {"Eiffel Tower", "Gustave Eiffel"}

    # the README's main job: the planted error is fixed against the default corpus
    from editor.pipeline import Pipeline

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    text = readme.split('purr edit "', 1)[1].split('"', 1)[0]
    result = Pipeline(comp).edit(text)
    assert result.status == "edited"
    assert "Gustave Eiffel's company" in result.revised and "Edison" not in result.revised
