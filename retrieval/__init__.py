"""purr's research library: corpora, snippets, BM25 / dense / hybrid search and reranking.

No LLMs here and no imports from the other purr packages.
"""
