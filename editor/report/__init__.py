"""The report stage: the evidence that covers the queries best (``selection.py``, RARR's M=5 by
coverage), auto-AIS of the text before and after against it (``builder.py``'s ``Reporter``) and
the pure metrics every report and evaluation uses (``metrics.py``: preservation, F1_AP, edit
categories). Its records, ``AttributionReport`` and ``SentenceReport``, are part of the result
contract (``editor/result.py``)."""
