"""Real hallucinations of real models, for ``purr eval edits``: the packaged LLMs answer real
questions closed-book, and an answer that does not give the gold answer is a real error whose
fix and evidence are known.

``purr data real-errors --out DIR [--models smollm2,gemma] [--sources nq-open,strategyqa]
[--forms short,long] [--n 300]``:

- **NQ-open** (``raw/nq_open/``): each question's evidence is the first of its five best BM25
  passages among the packaged Wikipedia summaries (the default index's corpus) that holds one
  of its gold answers; questions without one are skipped. The default index then holds the
  evidence among 10,000 distractors.
- **StrategyQA** (``raw/strategyqa/dev.json``): yes/no questions whose annotated facts are the
  evidence (written to ``DIR/corpus.jsonl``, to append to a copy of the default index).
- **CLAPnq** (``raw/clapnq/clapnq_dev_answerable.jsonl``): NQ questions with a human-written
  answer grounded in one Wikipedia passage; the gold answers are the spans of the kind the
  question asks for (a person, date, place, number or title) in that written answer which the
  passage states too, and the passage is the evidence (in ``DIR/corpus.jsonl`` as well).
  Questions of other kinds ("why", "describe") or without such a span are skipped.
- **Bridges** (``training/data/bridge_questions.jsonl``, 22 questions written against the
  packaged summaries): two-hop questions that name their subject by a description ("the
  capital of the country where Petra is located"); the answer is on the bridge entity's page,
  which is the evidence (the default index holds it).

Each model answers in one sentence (``short``) and in two or three (``long``), greedily. An
answer is right when it contains a gold answer (SQuAD normalisation, whole words; for yes/no, its
first yes or no), wrong when it does not, and dropped when it answers nothing ("I don't know",
empty, the question repeated). Rows are split into ``dev`` and ``test`` by evidence document.
For training rows (``training.data.spans.llm_answers``), ``--skip K`` leaves out what a ``--n K``
set reads (``beyond``) and ``--samples N`` adds N answers sampled at temperature 0.9.

Rows: ``{id, source, model, form, qtype, text, context, answers, wrong, planted, evidence_title,
evidence_text, split}``; ``text`` is the answer to edit and ``context`` its question, as
``purr eval edits`` reads them; ``planted`` is true for a wrong answer.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from editor.claims.slots import norm
from editor.text.words import question_type

MODELS = {"smollm2": "packaged:smollm2-135m-instruct", "gemma": "packaged:gemma-3-270m"}
SOURCES = ("nq-open", "strategyqa", "clapnq", "bridges")
BRIDGES = Path(__file__).with_name("bridge_questions.jsonl")
FORMS = ("short", "long")
_NON_ANSWER = re.compile(
    r"\b(i (do not|don ?t|cannot|can ?t|am not sure)|i'm (not sure|sorry)|sorry|no information|"
    r"not (known|sure|available)|unknown|as an ai|the answer (to this question )?is)\b",
    re.I,
)


@dataclass(frozen=True)
class Question:
    """One question with its gold answers and the passage that states them."""

    id: str
    source: str
    question: str
    answers: tuple[str, ...]
    evidence_title: str
    evidence_text: str


def normalise(text: str) -> str:
    """SQuAD's answer normalisation on the slot checks' ``norm`` (lower case, no punctuation or
    accents): articles dropped, single spaces.

    >>> normalise("The  Chrysler Building!"), normalise("Antonín Dvořák")
    ('chrysler building', 'antonin dvorak')
    """
    return " ".join(w for w in norm(text).split() if w not in {"a", "an", "the"})


def contains_answer(text: str, answer: str) -> bool:
    """Whether ``text`` states ``answer`` as whole words (both normalised).

    >>> contains_answer("It was written by Bob Dylan in 1963.", "bob dylan")
    True
    >>> contains_answer("It happened in 19630.", "1963")
    False
    """
    a = normalise(answer)
    return bool(a) and re.search(rf"(?<!\w){re.escape(a)}(?!\w)", normalise(text)) is not None


def yes_no(text: str) -> bool | None:
    """The first yes or no an answer gives; None when it gives neither.

    >>> yes_no("No, a cat cannot fly."), yes_no("Yes."), yes_no("It depends.")
    (False, True, None)
    """
    m = re.search(r"\b(yes|no)\b", text.lower())
    return None if m is None else m.group(1) == "yes"


def nq_open_questions(data: Path, n: int, progress: bool = True) -> list[Question]:
    """Up to ``n`` NQ-open questions whose gold answer one of their five best BM25 passages
    among the packaged Wikipedia summaries states (the first such passage is the evidence)."""
    from retrieval.bm25 import BM25Index
    from retrieval.config import BM25Config
    from retrieval.corpus import jsonl_rows, read_wiki_summaries

    docs = list(read_wiki_summaries())
    index = BM25Index.build([f"{d.title}. {d.text}" for d in docs], BM25Config(), False)
    rows = []
    for name in ("NQ-open.dev.jsonl", "NQ-open.efficientqa.dev.1.1.jsonl"):
        rows += [r for _, r in jsonl_rows(data / "raw" / "nq_open" / name)]
    out: list[Question] = []
    seen: set[str] = set()
    for i, row in enumerate(tqdm(rows, desc="nq-open evidence", disable=not progress)):
        q = str(row["question"]).strip()
        answers = tuple(  # an answer the question itself names would make any reply right
            a for a in row["answer"] if len(normalise(a)) >= 2 and not contains_answer(q, a)
        )
        if not answers or q.lower() in seen:
            continue
        seen.add(q.lower())
        top, _ = index.search(q, 5)
        hit = next(
            (docs[j] for j in top if any(contains_answer(docs[j].text, a) for a in answers)), None
        )
        if hit is not None:
            out.append(Question(f"nq-open-{i}", "nq-open", q, answers, hit.title, hit.text))
        if len(out) >= n:
            break
    return out


def strategyqa_questions(data: Path, n: int) -> list[Question]:
    """Up to ``n`` StrategyQA dev questions; the gold is "yes" or "no", the evidence the
    annotators' facts."""
    rows = json.loads((data / "raw" / "strategyqa" / "dev.json").read_text("utf-8"))
    out = []
    for row in rows[:n]:
        answer = "yes" if row["answer"] else "no"
        title = f"{row['term']} (StrategyQA {row['qid']})"
        out.append(
            Question(
                f"strategyqa-{row['qid']}",
                "strategyqa",
                str(row["question"]).strip(),
                (answer,),
                title,
                " ".join(row["facts"]),
            )
        )
    return out


def clapnq_questions(data: Path, n: int) -> list[Question]:
    """Up to ``n`` CLAPnq questions whose written answer names a span of the kind the question
    asks for that the gold passage states (see the module doc)."""
    from editor.claims.answers import ANSWER_KINDS, evidence_answers
    from editor.text.nlp import get_nlp
    from retrieval.corpus import jsonl_rows

    nlp = get_nlp()
    out: list[Question] = []
    path = data / "raw" / "clapnq" / "clapnq_dev_answerable.jsonl"
    for _, row in jsonl_rows(path):
        question = str(row["input"]).strip()
        kinds = ANSWER_KINDS.get(question_type(question))
        written = [o["answer"] for o in row.get("output") or () if o.get("answer")]
        if kinds is None or not written or not row.get("passages"):
            continue
        passage = row["passages"][0]
        found = evidence_answers(nlp, written[:1], question, kinds, top=1)
        answers = tuple(
            a for a in found[:2] if contains_answer(passage["text"], a) and len(normalise(a)) >= 2
        )
        if answers:
            title = f"{passage['title']} (CLAPnq {row['id']})"
            out.append(
                Question(f"clapnq-{row['id']}", "clapnq", question, answers, title, passage["text"])
            )
        if len(out) >= n:
            break
    return out


def bridge_questions(n: int) -> list[Question]:
    """Up to ``n`` of the two-hop questions (see the module doc), their evidence the answer
    page's packaged summary."""
    from retrieval.corpus import read_wiki_summaries

    pages = {d.title: d.text for d in read_wiki_summaries()}
    out = []
    for i, line in enumerate(BRIDGES.read_text("utf-8").splitlines()[:n]):
        r = json.loads(line)
        title = r["evidence_title"]
        out.append(
            Question(
                f"bridges-{i}", "bridges", r["question"], tuple(r["answers"]), title, pages[title]
            )
        )
    return out


_SHORT = """Answer each question with one complete sentence.

Question: who wrote the novel the old man and the sea
Answer: The Old Man and the Sea was written by Ernest Hemingway.

Question: when did the berlin wall fall
Answer: The Berlin Wall fell in 1989.

Question: where is the great barrier reef
Answer: The Great Barrier Reef is off the coast of Queensland, Australia.

"""
_LONG = """Answer each question in two or three sentences.

Question: who wrote the novel the old man and the sea
Answer: The Old Man and the Sea was written by Ernest Hemingway. It was published in 1952 and \
won the Pulitzer Prize for Fiction in 1953.

Question: when did the berlin wall fall
Answer: The Berlin Wall fell on 9 November 1989. Its fall opened the border between East and West \
Berlin and led to German reunification in 1990.

"""
_YES_NO = """Answer each question with yes or no and one sentence that explains why.

Question: Can a penguin fly?
Answer: No, penguins are flightless birds that use their wings to swim.

Question: Is the Pacific the largest ocean?
Answer: Yes, the Pacific Ocean covers more of the Earth than any other ocean.

"""


def prompt(question: Question, form: str, chat: bool) -> Any:
    """The closed-book prompt: a few-shot text for a base model, a conversation for a chat
    model."""
    if question.source == "strategyqa":
        head = _YES_NO
    else:
        head = _SHORT if form == "short" else _LONG
    if chat:
        return [
            {"role": "system", "content": head.split("\n", 1)[0]},
            {"role": "user", "content": question.question},
        ]
    return f"{head}Question: {question.question}\nAnswer:"


def judge(question: Question, answer: str) -> bool | None:
    """True for a right answer, False for a wrong one, None for one that answers nothing."""
    words = answer.split()
    if (
        not words
        or _NON_ANSWER.search(answer)
        or answer.rstrip().endswith(":")
        or normalise(answer) == normalise(question.question)
    ):
        return None
    if question.source == "strategyqa":
        said = yes_no(answer)
        return None if said is None else said == (question.answers[0] == "yes")
    return any(contains_answer(answer, a) for a in question.answers)


def split_of(title: str) -> str:
    """``dev`` or ``test``, fixed by the evidence document's title (about half each)."""
    return "dev" if hashlib.md5(title.encode("utf-8")).digest()[0] % 2 == 0 else "test"


def _clean(answer: str) -> str:
    """The reply's first paragraph, trimmed."""
    return answer.strip().split("\n\n")[0].split("\nQuestion:")[0].strip()


def beyond(questions: list[Question], skip: int) -> list[Question]:
    """The questions after the first ``skip`` of each source, less every one whose evidence
    document one of those has: what a ``--n skip`` measurement set never reads."""
    if skip <= 0:
        return questions
    first: dict[str, int] = {}
    banned, out = set(), []
    for q in questions:
        first[q.source] = first.get(q.source, 0) + 1
        if first[q.source] <= skip:
            banned.add(q.evidence_title)
        else:
            out.append(q)
    return [q for q in out if q.evidence_title not in banned]


def answer_rows(
    questions: list[Question],
    model: str,
    forms: tuple[str, ...],
    batch_size: int = 8,
    progress: bool = True,
    samples: int = 0,
) -> Iterator[dict[str, Any]]:
    """Each question answered by ``model`` (a key of ``MODELS``) in each form, judged: greedily,
    and ``samples`` more times at temperature 0.9 (ids end ``-s1``, ``-s2``, ...; a sample
    that repeats an earlier answer is dropped)."""
    from editor.llm.transformers_backend import TransformersBackend

    chat = model == "smollm2"
    llm = TransformersBackend(MODELS[model], temperature=0.0, batch_size=batch_size)
    runs = [(f, 0.0, 1) for f in forms] + [(f, 0.9, samples) for f in forms if samples > 0]
    seen: set[tuple[str, str]] = set()
    for form, temperature, n in runs:
        todo = [q for q in questions if form == "short" or q.source != "strategyqa"]
        prompts = [prompt(q, form, chat) for q in todo]
        limit = 48 if form == "short" else 110
        replies: list[list[str]] = []
        for i in tqdm(
            range(0, len(prompts), batch_size),
            desc=f"{model} {form}" + (f" x{n} sampled" if temperature else ""),
            disable=not progress,
        ):
            batch = prompts[i : i + batch_size]
            kw: dict[str, Any] = {"max_new_tokens": limit, "temperature": temperature, "n": n}
            if chat:
                out = llm.chat(batch, **kw)
            else:
                out = llm.complete(batch, stop=["\n\n"], **kw)
            replies += [[_clean(x) for x in r] for r in out]
        for q, said in zip(todo, replies, strict=True):
            for k, reply in enumerate(said):
                verdict = judge(q, reply)
                if verdict is None or (temperature and (q.id, reply) in seen):
                    continue  # greedy answers stay as they were; a sample must be new
                seen.add((q.id, reply))
                yield {
                    "id": f"{q.id}-{model}-{form}" + (f"-s{k + 1}" if temperature else ""),
                    "source": q.source,
                    "model": model,
                    "form": form,
                    "qtype": "yes/no" if q.source == "strategyqa" else question_type(q.question),
                    "text": reply,
                    "context": q.question,
                    "answers": list(q.answers),
                    "wrong": not verdict,
                    "planted": not verdict,
                    "evidence_title": q.evidence_title,
                    "evidence_text": q.evidence_text,
                    "split": split_of(q.evidence_title),
                }
