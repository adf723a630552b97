"""The revision stage: the loop (``reviser.py``) asks the judge (``editor.judge``) whether the
evidence contradicts each sentence, and only there the proposers (``proposers.py``: the judge's
own signal's fix, then the editors in ``editors/``) for candidate fixes, each within RARR's
edit limits (``base.py``); the judge's ``choose`` decides which one is applied or suggested."""
