"""The passage parsed once (editor.text.document): its sentences, their stand-alone forms and
parses, and one parse shared by query generation, the gate, acceptance and the report."""

from __future__ import annotations

from editor.config import load_config
from editor.factory import Components
from editor.pipeline import Pipeline
from editor.report.auto_ais import auto_ais
from editor.research.querygen.simple import EntityQueryGenerator, SentenceQueryGenerator
from editor.scope import current, one_edit
from editor.text.document import TextParser
from editor.text.nlp import get_nlp
from retrieval.sentences import split_spans

TEXT = "Marie Curie was a physicist. She won two Nobel Prizes. Any questions?"
EVIDENCE = "Marie Curie was a Polish physicist who won the Nobel Prize in 1903 and 1911."


class CountingNLP:
    """The shared spaCy pipeline, counting the texts it parses."""

    def __init__(self) -> None:
        self.nlp = get_nlp()
        self.texts: list[str] = []

    def __call__(self, text, **kw):
        self.texts.append(text)
        return self.nlp(text, **kw)

    def pipe(self, texts, **kw):
        texts = list(texts)
        self.texts.extend(texts)
        return self.nlp.pipe(texts, **kw)


def test_sentences_spans_standalone_forms_and_claims():
    parsed = TextParser().parse(TEXT)
    assert parsed.spans == split_spans(TEXT)
    assert [s.text for s in parsed.sentences] == [TEXT[a:b] for a, b in parsed.spans]
    second = parsed.sentences[1]
    assert second.standalone.decontextualized == "Marie Curie won two Nobel Prizes."
    assert second.doc.text == "Marie Curie won two Nobel Prizes."  # the stand-alone form's parse
    assert [s.claim for s in parsed.sentences] == [True, True, False]
    assert parsed.standalone("She won two Nobel Prizes.") == "Marie Curie won two Nobel Prizes."
    assert parsed.standalone("Not in the text.") == "Not in the text."


@one_edit
def test_the_context_is_part_of_what_is_parsed():
    parser = TextParser()
    alone = parser.parse("She won two Nobel Prizes.")
    answered = parser.parse("She won two Nobel Prizes.", "Tell me about Marie Curie.")
    assert alone is not answered and alone is parser.parse("She won two Nobel Prizes.")
    assert alone.sentences[0].standalone.decontextualized == "She won two Nobel Prizes."
    assert answered.sentences[0].standalone.decontextualized == "Marie Curie won two Nobel Prizes."


def test_a_parse_is_kept_for_one_edit_only_and_each_thread_edits_with_its_own():
    from concurrent.futures import ThreadPoolExecutor

    parser = TextParser()

    @one_edit
    def edit(text: str) -> tuple:
        first = parser.parse(text)
        return first, first is parser.parse(text), len(current().parses)

    first, kept, held = edit("Paris is in France.")
    assert kept and held == 1 and current() is None  # the scope went with the edit
    assert edit("Paris is in France.")[0] is not first  # the next edit parses anew
    assert parser.parse("Paris is in France.") is not parser.parse("Paris is in France.")
    with ThreadPoolExecutor(2) as pool:  # two edits at once: neither sees the other's parse
        held = [h for _, _, h in pool.map(edit, ["Rome is in Italy.", "Oslo is in Norway."])]
    assert held == [1, 1]


@one_edit
def test_query_generators_and_auto_ais_read_one_parse(mnli_model):
    nlp = CountingNLP()
    parser = TextParser(nlp)
    queries = SentenceQueryGenerator(parser=parser).generate(TEXT)
    EntityQueryGenerator(parser=parser).generate(TEXT)
    report = auto_ais(TEXT, [EVIDENCE], mnli_model, parser=parser)
    # three sentences as written, and once more the one decontextualisation rewrote
    assert sorted(nlp.texts) == sorted(
        [*split_spans_texts(TEXT), "Marie Curie won two Nobel Prizes."]
    )
    assert [q.text for q in queries] == [
        "Marie Curie was a physicist.",
        "Marie Curie won two Nobel Prizes.",
    ]
    assert [s.applicable for s in report.sentences] == [True, True, False]


def split_spans_texts(text: str) -> list[str]:
    return [text[a:b] for a, b in split_spans(text)]


def test_every_stage_of_a_pipeline_shares_its_parser(mnli_model):
    pipe = Pipeline(Components(load_config("default"), progress=False), attribution=mnli_model)
    parser = pipe.components.parser
    reviser = pipe.editor
    assert pipe.reporter.parser is parser
    assert pipe.components.querygen.parser is parser
    judge = reviser.judge
    gate = judge.gate
    while hasattr(gate, "inner"):  # under the question and reader wrappers
        gate = gate.inner
    assert judge.acceptance.parser is parser and gate.parser is parser
    result = pipe.edit(TEXT, evidence=[EVIDENCE])
    kept = parser.parse(TEXT)  # made at input; the report read the same one
    assert [s.decontextualized for s in result.report.sentences] == [
        d.decontextualized for d in kept.decontextualized
    ]
    assert "parse" in result.timings_ms
