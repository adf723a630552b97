"""The research stage: questions about the passage (``querygen/``), K documents per question from
the index, snippets ranked by the cross-encoder, the top J kept per question
(``researcher.py``); or the caller's own evidence instead (``given.py``). Records: ``base.py``
and ``editor/types.py`` (``Query``, ``Evidence``, ``QueryEvidence``)."""
