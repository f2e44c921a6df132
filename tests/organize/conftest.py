"""Organize fixtures: the sample folder copied and indexed (tests/support/sample_folder.py)."""

from tests.support.sample_folder import queued_suggestions, sample  # noqa: F401  (fixtures)
