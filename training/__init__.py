"""purr training."""
