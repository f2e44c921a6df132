"""The one rule for file names written into a folder (apps/library/file_names.py): uploads and the
local source refuse by it, saved pages are named by it."""

from __future__ import annotations

import pytest

from apps.library.file_names import MAX_NAME_BYTES, file_name_from_text, file_name_problem


@pytest.mark.parametrize("name", ["W2.pdf", "Résumé 2024.docx", "no extension", "a" * MAX_NAME_BYTES, "x.y.z"])
def test_plain_names_pass(name: str) -> None:
    assert file_name_problem(name) is None


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("", "needs a name"),
        ("../escape.txt", "not a plain file name"),
        ("a/b.txt", "not a plain file name"),
        ("..\\escape.txt", "not a plain file name"),
        (".", "starts with a dot"),
        ("..", "starts with a dot"),
        (".hidden", "starts with a dot"),
        ("tab\there.txt", "control characters"),
        ("nul\x00.txt", "control characters"),
        ("del\x7f.txt", "control characters"),
        ("a" * (MAX_NAME_BYTES + 1), f"longer than {MAX_NAME_BYTES} bytes"),
        ("é" * 128, f"longer than {MAX_NAME_BYTES} bytes"),  # 128 characters, 256 bytes
    ],
)
def test_names_that_are_not_plain_are_refused_with_the_reason(name: str, words: str) -> None:
    problem = file_name_problem(name)
    assert problem is not None and words in problem


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ('Q3: "Results" / <draft>?', "Q3 Results draft"),
        ("...hidden title", "hidden title"),
        ("line\nbreak\ttab", "line break tab"),
        ("C:\\Windows|*", "C Windows"),
        ("///", ""),
        ("   ", ""),
    ],
)
def test_text_is_repaired_into_a_name(text: str, name: str) -> None:
    assert file_name_from_text(text, max_chars=80) == name


def test_a_repaired_name_is_cut_to_its_length_without_a_trailing_space() -> None:
    assert file_name_from_text("alpha beta gamma", max_chars=11) == "alpha beta"


@pytest.mark.parametrize(
    "text", ['Q3: "Results" / <draft>?', "../../etc/passwd", ".env", "a\x00b", "Kyoto 2025 — trip"]
)
def test_every_repaired_name_passes_the_rule(text: str) -> None:
    assert file_name_problem(file_name_from_text(text, max_chars=80)) is None
