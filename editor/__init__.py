"""purr editor."""
