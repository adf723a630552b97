"""Research on the open web: search providers, page fetching, main-text extraction."""
