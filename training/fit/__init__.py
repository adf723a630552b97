"""Everything that trains: the shared training loop, the editor, query-generator, attribution
and fusion trainers, and the model cards they write."""
