"""Batch jobs: Ray worker pools, resumable row-by-row output, scoring files of texts."""
