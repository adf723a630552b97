"""Prompt templates (data files) used by prompted stages."""
