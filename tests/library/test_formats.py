"""Office, OpenDocument, rtf, epub and email files through the dispatcher, with their locations,
and hostile packages (zip bombs, encrypted and corrupt files) refused with a reason."""

import io
import random
import zipfile

import pytest

from apps.library.chunking import RegexTokenizer, chunk_document
from apps.library.parsing import ParseError, UnsupportedDocument, parse_document
from apps.llm.sources import describe_location
from tests.support.documents import docx_bytes
from tests.support.office_documents import (
    PPTX,
    XLSX,
    eml_bytes,
    encrypted_odt_bytes,
    encrypted_office_bytes,
    epub_bytes,
    odp_bytes,
    ods_bytes,
    odt_bytes,
    pptx_bytes,
    rtf_bytes,
    xlsx_bytes,
    zip_bomb_bytes,
)

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
OCTET = "application/octet-stream"


def parse(data: bytes, name: str, mime: str = OCTET):
    # Local folders without a system mime.types report these files as plain binary: the name decides.
    return parse_document(data=data, mime_type=mime, name=name)


def section(document, text: str):
    """The segment in force where ``text`` starts."""
    offset = document.text.index(text)
    return [segment for segment in document.segments if segment.start <= offset][-1]


def test_xlsx_rows_read_like_a_table_with_sheet_and_cell_locations():
    document = parse(xlsx_bytes(), "report.xlsx")
    assert document.text == (
        "Sheet: Q4\n"
        "Columns: Region, Revenue, Closed\n"
        "Region: North | Revenue: 120.5 | Closed: 2024-12-01\n"
        "Region: South | Revenue: 80 | Closed: 2024-12-02\n"
        "Region: Total | Revenue: =SUM(B2:B3) (formula, no saved value)\n"
        "Sheet: Notes\n"
        "Columns: Audit code\n"
        "C: AX-7731\n"
    )
    south = section(document, "Region: South")
    assert (dict(south.place), south.cells) == ({"sheet": "Q4"}, ("A3", "C3"))
    code = section(document, "C: AX-7731")
    assert (dict(code.place), code.cells) == ({"sheet": "Notes"}, ("B5", "C5"))


def test_xlsx_chunks_report_their_sheet_and_cell_range():
    pieces = chunk_document(document=parse(xlsx_bytes(), "report.xlsx"), tokenizer=RegexTokenizer(), max_tokens=30)
    locations = [{key: piece.location.get(key) for key in ("sheet", "range")} for piece in pieces]
    assert locations[0]["sheet"] == "Q4" and locations[0]["range"].startswith("A1:")
    assert locations[-1] == {"sheet": "Notes", "range": "B3:C5"}
    assert all(location["sheet"] and location["range"] for location in locations)
    assert describe_location(pieces[-1].location) == "sheet Notes, cells B3:C5"


def test_xlsm_is_read_like_xlsx():
    assert "AX-7731" in parse(xlsx_bytes(), "macros.xlsm").text


def test_pptx_slides_titles_tables_and_notes_with_slide_numbers():
    document = parse(pptx_bytes(), "deck.pptx", PPTX)
    assert document.text == (
        "Slide 1: Quarterly results\n"
        "Revenue grew 12%\n"
        "Launch code ZQ-881\n"
        "Speaker notes: Mention the Berlin office opening\n"
        "Slide 2: Sales by region\n"
        "Region | Sales\n"
        "North | 42\n"
    )
    assert [(dict(s.place), s.heading) for s in document.segments] == [
        ({"slide": 1}, ("Quarterly results",)),
        ({"slide": 2}, ("Sales by region",)),
    ]
    (whole,) = chunk_document(document=document, tokenizer=RegexTokenizer())
    assert (whole.location["slide"], whole.location["slide_end"]) == (1, 2)
    pieces = chunk_document(document=document, tokenizer=RegexTokenizer(), max_tokens=24)
    assert [piece.location.get("slide") for piece in pieces] == [1, 2]
    assert describe_location(pieces[1].location) == "slide 2, Sales by region"


def test_odt_paragraphs_lists_and_heading_paths():
    document = parse(odt_bytes(), "lease.odt")
    assert document.text == (
        "Lease terms\nThe lease renews on 1 March unless notice is given.\nDeposit\nThe deposit reference is DP-7731.\n"
        "Keys are returned to the agent.\n"
    )
    assert section(document, "The deposit").heading == ("Lease terms", "Deposit")


def test_ods_sheet_with_padding_rows_and_a_formula_without_value():
    document = parse(ods_bytes(), "budget.ods")
    assert document.text == (
        "Sheet: Budget\nColumns: Item, Cost\nItem: Rent | Cost: 1200\nCost: of:=SUM([.B2]) (formula, no saved value)\n"
    )
    rent = section(document, "Item: Rent")
    assert (dict(rent.place), rent.cells) == ({"sheet": "Budget"}, ("A2", "B2"))
    # The million repeated empty rows count, so the formula sits on its real row.
    assert section(document, "Cost: of:").cells == ("A1000003", "B1000003")


def test_odp_slides_with_titles_and_notes():
    document = parse(odp_bytes(), "talk.odp")
    assert document.text == (
        "Slide 1: Welcome\nAgenda for today\nSlide 2: Roadmap 2025\nLaunch code RM-25\nSpeaker notes: Say hi\n"
    )
    assert [(dict(s.place), s.heading) for s in document.segments] == [
        ({"slide": 1}, ("Welcome",)),
        ({"slide": 2}, ("Roadmap 2025",)),
    ]


def test_rtf_text_with_code_page_and_unicode_escapes():
    assert parse(rtf_bytes(), "invoice.rtf").text == "Invoice RT-5521\nCafé au lait € 4\n"
    assert parse(rtf_bytes(), "invoice.rtf", "text/rtf").text.startswith("Invoice RT-5521")
    with pytest.raises(ParseError, match="not an RTF document"):
        parse(b"plain words", "fake.rtf", "application/rtf")


def test_epub_chapters_in_reading_order_with_headings_and_without_the_navigation():
    document = parse(epub_bytes(), "sailing.epub")
    assert document.text == "Harbours\nThe harbour code is HB-4410.\nKnots\nBowline\nA fixed loop.\n"
    assert [(dict(s.place), s.heading) for s in document.segments] == [
        ({"chapter": 1}, ("Harbours",)),
        ({"chapter": 2}, ("Knots",)),
        ({"chapter": 2}, ("Knots", "Bowline")),
    ]


def test_eml_headers_body_and_attachments_through_the_dispatcher():
    document = parse(eml_bytes(), "renewal.eml")
    header, _, rest = document.text.partition("\n\n")
    assert header.split("\n") == [
        "From: Ann Example <ann@example.com>",
        "To: bob@example.com",
        "Date: Mon, 02 Dec 2024 10:00:00 +0000",
        "Subject: Lease renewal",
        "Attachments: deposit.txt, photo.png"
        " (not indexed: unreadable image: not a picture in a format that can be read)",
    ]
    # The plain body is preferred over its HTML twin, so the text appears once.
    assert rest.count("LS-3302") == 1
    attachment = section(document, "Receipt DEP-7781")
    assert dict(attachment.place) == {"attachment": "deposit.txt"}
    assert document.segments[0].heading == ("Lease renewal",)


def test_eml_html_only_body_goes_through_the_html_parser():
    from email.message import EmailMessage

    message = EmailMessage()
    message["Subject"] = "Newsletter"
    message.set_content("<html><body><h1>News</h1><p>Our code is NW-19.</p></body></html>", subtype="html")
    document = parse(message.as_bytes(), "news.eml", "message/rfc822")
    assert "<p>" not in document.text and "Our code is NW-19." in document.text


# --- bad input ---------------------------------------------------------------------------------

ZIP_FORMATS = [
    ("report.docx", "word/document.xml"),
    ("report.xlsx", "xl/worksheets/sheet1.xml"),
    ("deck.pptx", "ppt/slides/slide1.xml"),
    ("lease.odt", "content.xml"),
    ("book.epub", "OEBPS/chapter.xhtml"),
]


def test_zip_bomb_disguised_as_xlsx_is_refused_before_unpacking_with_default_limits(monkeypatch):
    data = zip_bomb_bytes(member="xl/worksheets/sheet1.xml", size=300_000_000)
    assert len(data) < 400_000
    # Nothing may inflate a member: the refusal comes from the central directory alone.
    monkeypatch.setattr(zipfile.ZipFile, "open", lambda *args, **kwargs: pytest.fail("a member was opened"))
    with pytest.raises(UnsupportedDocument, match=r"unpacks to 300 MB from \d+ KB.*possibly a zip bomb"):
        parse(data, "report.xlsx")


@pytest.mark.parametrize(("name", "member"), ZIP_FORMATS)
def test_zip_bomb_is_refused_for_every_zip_based_format(name, member, settings, monkeypatch):
    settings.INDEX_MAX_UNPACKED_BYTES = 50_000_000  # a smaller bomb keeps the test quick
    data = zip_bomb_bytes(member=member, size=60_000_000)
    monkeypatch.setattr(zipfile.ZipFile, "open", lambda *args, **kwargs: pytest.fail("a member was opened"))
    with pytest.raises(UnsupportedDocument, match=r"unpacks to 60 MB .*INDEX_MAX_UNPACKED_BYTES"):
        parse(data, name)


@pytest.mark.parametrize(("name", "member"), ZIP_FORMATS)
def test_a_member_compressed_far_beyond_documents_is_refused(name, member):
    with pytest.raises(UnsupportedDocument, match=rf"member {member} is compressed \d+:1.*zip bomb"):
        parse(zip_bomb_bytes(member=member, size=20_000_000), name)


def test_zip_limits_are_settings(settings):
    settings.INDEX_MAX_UNPACKED_BYTES = 1000
    with pytest.raises(UnsupportedDocument, match="INDEX_MAX_UNPACKED_BYTES"):
        parse(xlsx_bytes(), "report.xlsx")


@pytest.mark.parametrize(
    ("data", "name", "kind"),
    [
        (docx_bytes([("", "salary figures")]), "pay.docx", "Word document"),
        (xlsx_bytes(), "pay.xlsx", "Excel workbook"),
        (pptx_bytes(), "pay.pptx", "PowerPoint presentation"),
    ],
)
def test_password_protected_office_files_fail_with_the_reason(data, name, kind):
    with pytest.raises(ParseError, match=f"password-protected {kind}"):
        parse(encrypted_office_bytes(data), name)


def test_password_protected_odt_fails_with_the_reason():
    with pytest.raises(ParseError, match="password-protected OpenDocument text"):
        parse(encrypted_odt_bytes(), "secret.odt")


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("a.docx", "Word document"),
        ("a.xlsx", "Excel workbook"),
        ("a.pptx", "PowerPoint presentation"),
        ("a.odt", "OpenDocument text"),
        ("a.ods", "OpenDocument spreadsheet"),
        ("a.odp", "OpenDocument presentation"),
        ("a.epub", "EPUB book"),
    ],
)
def test_corrupt_packages_fail_with_the_reason(name, kind):
    with pytest.raises(ParseError, match=f"corrupt {kind}"):
        parse(b"PK\x03\x04 truncated download", name)
    # A valid zip that is not the document it claims to be.
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        package.writestr("readme.txt", "hello")
    with pytest.raises(ParseError, match=f"unreadable {kind}"):
        parse(out.getvalue(), name)


DAMAGEABLE = {
    "a.docx": lambda: docx_bytes([("Heading 1", "Pay"), ("", "salary figures")]),
    "a.xlsx": xlsx_bytes,
    "a.pptx": pptx_bytes,
    "a.odt": odt_bytes,
    "a.ods": ods_bytes,
    "a.odp": odp_bytes,
    "a.epub": epub_bytes,
    "a.eml": eml_bytes,
    "a.rtf": rtf_bytes,
}


@pytest.mark.parametrize("name", sorted(DAMAGEABLE))
def test_damaged_files_parse_or_fail_with_a_reason_never_an_unexpected_error(name):
    """Truncated downloads and flipped bytes: whatever the library trips on becomes a reason."""
    data = DAMAGEABLE[name]()
    rng = random.Random(name)
    damaged = [data[: len(data) * tenth // 10] for tenth in range(1, 10)]
    for _ in range(25):
        flipped = bytearray(data)
        for _ in range(rng.randint(1, 20)):
            flipped[rng.randrange(len(flipped))] = rng.randrange(256)
        damaged.append(bytes(flipped))
    for variant in damaged:
        try:
            parse(variant, name)
        except (ParseError, UnsupportedDocument) as exc:
            assert str(exc)


def test_legacy_binary_office_file_under_a_new_name_fails_with_the_reason():
    legacy = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 2000
    with pytest.raises(ParseError, match=r"older binary Office file"):
        parse(legacy, "old.xlsx", XLSX)
