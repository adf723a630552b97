"""purr serve."""
