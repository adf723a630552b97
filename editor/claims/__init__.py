"""The claims of a sentence, read without a model: its typed slots (names, numbers, quantities,
dates; ``slots``), whether two slots state the same thing (``slot_values``), places inside
places and other names for one place (``places``, ``granularity``), role swaps and negation
flips (``flips``), the slot checks that name a contradiction (``slot_check``) and a question's
answer span (``answers``). The scoring models that read a claim against evidence are
``editor.attribution``.
"""
