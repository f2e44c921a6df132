import json

import pytest

from apps.library.parsing import ParseError, UnsupportedDocument, parse_document
from tests.support.documents import docx_bytes, encrypted_pdf_bytes, long_log_pages, pdf_bytes, pdfium_pdf_bytes

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def parse(data: bytes | str, mime: str, name: str = "file"):
    return parse_document(data=data.encode() if isinstance(data, str) else data, mime_type=mime, name=name)


def test_plain_text_normalises_newlines_and_falls_back_from_utf8():
    assert parse("a\r\nb\rc", "text/plain").text == "a\nb\nc"
    assert parse("caf\xe9".encode("cp1252"), "text/plain").text == "café"
    assert parse("\ufeffbom".encode(), "text/plain").text == "bom"
    assert parse("wide".encode("utf-16"), "text/plain").text == "wide"


def test_markdown_headings_become_heading_paths_outside_code_fences():
    text = "# Finance\nintro\n## Invoices\nINV-20931\n```\n# not a heading\n```\n# Personal\nend\n"
    document = parse(text, "text/markdown")
    assert [(s.start, s.heading) for s in document.segments] == [
        (0, ("Finance",)),
        (text.index("## Invoices"), ("Finance", "Invoices")),
        (text.index("# Personal"), ("Personal",)),
    ]


def test_html_keeps_visible_text_and_headings_and_drops_scripts_and_styles(settings):
    settings.INDEX_HTML_MAIN_CONTENT = False  # every visible word (main content: test_html_extraction.py)
    html = (
        "<html><head><title>Report</title><style>p{color:red}</style><script>var secret=1;</script></head>"
        "<body><h1>Quarterly &amp; yearly</h1><p>Revenue   grew\n in Q4-2024.</p><noscript>enable js</noscript>"
        "<h2>Costs</h2><ul><li>rent</li><li>salaries</li></ul></body></html>"
    )
    document = parse(html, "text/html")
    assert "secret" not in document.text and "color" not in document.text and "enable js" not in document.text
    assert document.text.split("\n")[:4] == ["Report", "Quarterly & yearly", "Revenue grew in Q4-2024.", "Costs"]
    headings = {s.heading: document.text[s.start : s.start + 8] for s in document.segments}
    assert headings == {("Quarterly & yearly",): "Quarterl", ("Quarterly & yearly", "Costs"): "Costs\nre"}


def test_pdf_text_is_split_by_page():
    document = parse(pdf_bytes(["First page text", "Second (page) text"]), "application/pdf")
    assert [s.page for s in document.segments] == [1, 2]
    second = document.segments[1].start
    assert "First page text" in document.text[:second]
    assert "Second (page) text" in document.text[second:]


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (encrypted_pdf_bytes(), "password-protected PDF"),
        (b"%PDF-1.4\n garbage without objects", "unreadable PDF"),
        (pdf_bytes(["x"])[:60], "unreadable PDF"),
    ],
)
def test_encrypted_or_corrupt_pdf_fails_with_a_reason(data, reason):
    with pytest.raises(ParseError, match=reason):
        parse(data, "application/pdf")


def test_a_long_pdf_is_read_to_its_last_page():
    """No page limit (there was one of 500): the time budget and the text cap bound a long PDF."""
    document = parse(pdfium_pdf_bytes(long_log_pages()), "application/pdf", "log.pdf")
    assert [s.page for s in document.segments] == list(range(1, 601))
    assert "WINTER-6600" in document.text[document.segments[-1].start :]
    assert "page 599." in document.text[document.segments[-2].start : document.segments[-1].start]


def test_a_pdf_with_more_text_than_the_cap_stops_being_read_with_the_reason(settings):
    settings.INDEX_MAX_TEXT_CHARS = 1_000
    pages = [f"Page {n} of the ledger, with its entries and totals for the month." for n in range(1, 101)]
    with pytest.raises(UnsupportedDocument) as raised:
        parse(pdfium_pdf_bytes(pages), "application/pdf", "ledger.pdf")
    # About 66 characters a page: over 1,000 on page 16, and the other 84 pages are never read.
    assert str(raised.value) == (
        "too much text to index: 1,063 characters, more than the limit of 1,000 (INDEX_MAX_TEXT_CHARS);"
        " stopped reading at page 16 of 100"
    )


def test_docx_paragraphs_headings_and_tables_in_order():
    data = docx_bytes(
        [
            ("Title", "Handbook"),
            ("Heading 1", "Expenses"),
            ("", "Submit receipts."),
            ("Heading 2", "Travel"),
            ("", "Trains only."),
        ],
        table=[["Code", "Amount"], ["INV-20931", "120"]],
    )
    document = parse(data, DOCX, "handbook.docx")
    assert document.text == (
        "Handbook\nExpenses\nSubmit receipts.\nTravel\nTrains only.\nCode | Amount\nINV-20931 | 120\n"
    )
    assert [s.heading for s in document.segments] == [("Handbook",), ("Expenses",), ("Expenses", "Travel")]


def test_corrupt_docx_fails():
    with pytest.raises(ParseError, match="Word document"):
        parse(b"PK\x03\x04 not really a zip", DOCX)


def test_csv_and_tsv_rows_carry_their_column_names():
    csv_text = parse("date,code,amount\n2024-12-01,INV-20931,120.50\n\n2024-12-02,INV-20932,\n", "text/csv").text
    assert csv_text == (
        "Columns: date, code, amount\ndate: 2024-12-01 | code: INV-20931 | amount: 120.50\n"
        "date: 2024-12-02 | code: INV-20932\n"
    )
    tsv_text = parse("name\trole\nDana Whitfield\taccountant\n", "text/tab-separated-values").text
    assert tsv_text == "Columns: name, role\nname: Dana Whitfield | role: accountant\n"


def test_json_is_flattened_to_key_paths():
    data = json.dumps({"client": {"name": "Dana"}, "invoices": [{"id": "INV-1"}, {"id": "INV-2"}], "empty": None})
    assert parse(data, "application/json").text == "client.name: Dana\ninvoices[0].id: INV-1\ninvoices[1].id: INV-2\n"
    with pytest.raises(ParseError, match="invalid JSON"):
        parse("{nope", "application/json")


@pytest.mark.parametrize(
    ("data", "mime", "name", "reason"),
    [
        (b"\x00\x00\x01\x00", "image/vnd.microsoft.icon", "favicon.ico", "unsupported file type image/"),
        (b"\x00\x01binary", "application/x-msdownload", "a.exe", "unsupported file type"),
        (b"ab\x00\x01binary", "text/plain", "a.txt", "binary content"),
        (b"   \n\n", "text/plain", "blank.txt", "no text"),
    ],
)
def test_unknown_binary_and_empty_files_are_skipped_with_a_reason(data, mime, name, reason):
    with pytest.raises(UnsupportedDocument, match=reason):
        parse_document(data=data, mime_type=mime, name=name)


def test_vague_mime_types_fall_back_to_the_file_name_and_text_types_to_text():
    assert parse("# Head", "application/octet-stream", "notes.md").segments[0].heading == ("Head",)
    assert parse("key: value", "application/x-yaml", "c.yaml").text == "key: value"
    assert parse("print(1)", "text/x-python", "a.py").text == "print(1)"


def test_nul_characters_are_replaced_without_moving_offsets():
    from apps.library.parsing.base import document

    assert document(text="a\x00b").text == "a\ufffdb"


def test_digest_leads_with_the_title_and_keeps_the_most_central_sentences():
    from apps.library.parsing.digest import DIGEST_CHARS, text_digest, text_preview

    text = (
        "# Tax checklist 2024\n\n- [ ] Collect the W-2 from Contoso.\n\n"
        "Pay the Q4-2024 estimated tax before January.\n\nThe cat likes the sofa.\n\n"
        "The estimated tax and the W-2 go to the accountant.\n\n" + "Filler sentence about nothing. " * 200
    )
    digest = text_digest(text=text)
    assert digest.startswith("Tax checklist 2024. ")
    assert "Q4-2024 estimated tax" in digest and "- [ ]" not in digest and "cat" not in digest
    assert len(digest) <= DIGEST_CHARS + 1
    preview = text_preview(text=text)
    assert preview.startswith("# Tax checklist 2024 - [ ] Collect") and len(preview) <= 501
