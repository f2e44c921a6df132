"""Fixtures a few suites opt into by importing them into their conftest."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def fresh_throttle_counts() -> None:
    """Throttle counters live in the cache (Redis): each test starts with none spent."""
    from django.core.cache import cache

    cache.clear()
