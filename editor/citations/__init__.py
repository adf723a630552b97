"""Cited input: the citation markers of a text (``document``), each citation checked against
its source by the verifier, the sentence outcomes and ALCE's citation precision and recall
(``check``)."""

from editor.citations.document import CitedDocument, CitedSentence, Marker, parse_markers

__all__ = ["CitedDocument", "CitedSentence", "Marker", "parse_markers"]
