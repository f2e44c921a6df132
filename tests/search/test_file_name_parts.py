import pytest

from apps.search.selectors import file_search
from apps.search.types import SearchMode

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("2024", {"W2_2024.pdf", "summary-2024.md"}),  # a part of a name joined by _ or -
        ("summary", {"summary-2024.md"}),
        ("W2_2024.pdf", {"W2_2024.pdf"}),  # the whole name still matches
    ],
)
def test_a_file_is_found_by_a_part_of_its_name(corpus, query, expected):
    hits = file_search(folder_id=corpus.folder.pk, query=query, k=5, mode=SearchMode.KEYWORD)
    assert expected <= {hit.file_name for hit in hits}
    assert {hit.file_name for hit in hits[: len(expected)]} == expected
