import itertools

import pytest

from apps.library.chunking import RegexTokenizer, chunk_document
from apps.library.parsing import ParsedDocument, Segment, parse_document
from tests.support.documents import pdf_bytes


def sentences(count: int, prefix: str = "word") -> str:
    return " ".join(f"{prefix} number {index} is here." for index in range(count))


def chunks(document, max_tokens=40, overlap=8):
    return chunk_document(document=document, tokenizer=RegexTokenizer(), max_tokens=max_tokens, overlap_tokens=overlap)


def test_offsets_slice_back_to_the_text_and_respect_the_token_limit():
    document = ParsedDocument(text=sentences(60))
    pieces = chunks(document)
    assert len(pieces) > 5
    for piece in pieces:
        start, end = piece.location["char_start"], piece.location["char_end"]
        assert document.text[start:end] == piece.text
        assert piece.token_count <= 40
        assert piece.text.endswith(".")  # cut at sentence ends, not mid-sentence
    assert [piece.index for piece in pieces] == list(range(len(pieces)))


def test_consecutive_chunks_overlap_and_cover_the_whole_text():
    document = ParsedDocument(text=sentences(60))
    pieces = chunks(document)
    for previous, current in itertools.pairwise(pieces):
        assert current.location["char_start"] < previous.location["char_end"]
    assert pieces[0].location["char_start"] == 0
    assert pieces[-1].location["char_end"] == len(document.text.rstrip())


def test_chunks_start_at_headings_and_carry_the_heading_path():
    text = f"# Finance\n{sentences(12, 'money')}\n## Invoices\n{sentences(12, 'invoice')}\n# Personal\nShort note.\n"
    document = parse_document(data=text.encode(), mime_type="text/markdown", name="n.md")
    pieces = chunks(document, max_tokens=120)
    assert [piece.location.get("heading") for piece in pieces] == [
        ["Finance"],
        ["Finance", "Invoices"],
        ["Personal"],
    ]
    assert pieces[1].text.startswith("## Invoices") and pieces[2].text == "# Personal\nShort note."


def test_small_sections_are_merged_rather_than_made_tiny_chunks():
    text = "".join(f"# H{index}\nline {index}.\n" for index in range(10))
    document = parse_document(data=text.encode(), mime_type="text/markdown", name="n.md")
    assert len(chunks(document, max_tokens=200)) == 1


def test_pdf_chunks_know_their_page_and_where_they_end():
    document = parse_document(
        data=pdf_bytes([sentences(5, "one"), sentences(5, "two")]), mime_type="application/pdf", name="p.pdf"
    )
    whole = chunks(document, max_tokens=500)
    assert len(whole) == 1 and whole[0].location["page"] == 1
    by_page = chunks(document, max_tokens=50)
    assert [(piece.location["page"], piece.location.get("page_end")) for piece in by_page] == [(1, None), (2, None)]


def test_page_spanning_chunk_records_page_end():
    document = ParsedDocument(text="alpha beta\ngamma delta\n", segments=(Segment(0, page=3), Segment(11, page=4)))
    [piece] = chunks(document, max_tokens=100)
    assert piece.location == {"char_start": 0, "char_end": 22, "page": 3, "page_end": 4}


def test_text_without_any_break_is_cut_at_the_limit_with_overlap():
    document = ParsedDocument(text=" ".join(f"w{index}" for index in range(100)))
    pieces = chunks(document, max_tokens=30, overlap=5)
    assert [piece.token_count for piece in pieces[:3]] == [30, 30, 30]
    assert pieces[1].text.startswith("w25 ")


def test_empty_text_gives_no_chunks():
    assert chunks(ParsedDocument(text="  \n")) == []


@pytest.mark.parametrize("overlap", [0, 8, 100])
def test_overlap_never_stalls(overlap):
    document = ParsedDocument(text=sentences(40))
    pieces = chunks(document, max_tokens=16, overlap=overlap)
    starts = [piece.location["char_start"] for piece in pieces]
    assert starts == sorted(set(starts))
