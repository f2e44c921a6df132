"""The search suite's corpora (built by tests/support/search_corpus.py)."""

from __future__ import annotations

import pytest

from tests.support.search_corpus import Corpus, build_corpus


@pytest.fixture
def corpus(user) -> Corpus:
    return build_corpus(user)


@pytest.fixture
def other_corpus(other_user) -> Corpus:
    """Another user's folder holding the same kinds of matches."""
    return build_corpus(other_user, name="secret", seed=11)
