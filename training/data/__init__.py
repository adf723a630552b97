"""Everything that makes rows: synthetic corruptions, the planted and cited dev sets, editor
training data and the NLI data of the attribution model."""
