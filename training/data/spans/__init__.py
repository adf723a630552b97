"""Span-level training pairs for the span judge (``purr data spans``).

Each row is a claim (with an optional question), an evidence window, a 3-way label, the claim's
character spans the evidence contradicts (``C``) or does not support (``U``), and for a
contradicted span the evidence characters that state the right value (the pointer's target).
``parse`` reads the corpora once with spaCy; ``make`` turns the parsed corpora into rows with
the standard library alone (so it also runs on a machine without spaCy); ``real`` adds the
human-labelled spans of WiCE, SummEdits and FEVER.
"""
