"""Text helpers every stage shares: spaCy loading and claim detection (``nlp.py``),
decontextualisation of sentences against their passage (``decontext.py``) and content words
(``words.py``)."""
