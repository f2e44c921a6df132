"""Embedding providers and their tokenizer: below both library (chunking) and search (queries)."""
