"""The revision stage: the loop (``reviser.py``) asks the agreement model (``agreement/``)
whether the evidence disagrees with the text, and only then an editor (``editors/``) for a
minimal fix, which must pass RARR's edit limits (``base.py``)."""
