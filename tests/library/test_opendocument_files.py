"""OpenDocument files as office suites write them (indented XML, tracked changes, sections,
comments, soft page breaks, shapes) read in reading order with their locations."""

from apps.library.parsing import parse_document
from tests.support.opendocument_files import indented_odp_bytes, indented_ods_bytes, indented_odt_bytes

OCTET = "application/octet-stream"


def section(document, text: str):
    """The segment in force where ``text`` starts."""
    offset = document.text.index(text)
    return [segment for segment in document.segments if segment.start <= offset][-1]


def test_an_indented_text_reads_in_order_without_its_deleted_text():
    data = indented_odt_bytes(
        deleted="DEL-900",
        inserted="INS-950",
        comment="CMT-Check",
        list_item="LST-Nested",
        cell="TBL-Meyer",
        frame="BOX-Notice",
        header="HDR-Acme",
    )

    document = parse_document(data=data, mime_type=OCTET, name="lease.odt")

    assert document.text.splitlines() == [
        "Lease terms",
        "The rent is INS-950 euros.",
        "Deposit",
        "The deposit reference is DP-7731.",
        # A reviewer's remark, told apart from the document's own words, right after what it is about.
        "Comment by Bob Reviewer: CMT-Check",
        "Keys are returned to the agent.",
        "LST-Nested",
        "Parties",
        "Tenant | Rent",
        "TBL-Meyer | 950",
        "See the box.",
        "BOX-Notice",
        "HDR-Acme",
    ]
    # Tracked deletions and who made the changes are not the document's words.
    assert "DEL-900" not in document.text and "Ann Editor" not in document.text
    assert section(document, "The deposit").heading == ("Lease terms", "Deposit")
    assert section(document, "LST-Nested").heading == ("Lease terms", "Deposit")
    assert section(document, "TBL-Meyer").heading == ("Parties",)
    assert section(document, "HDR-Acme").heading == ("Headers and footers",)


def test_an_indented_spreadsheet_keeps_cell_locations_comments_and_shapes():
    document = parse_document(
        data=indented_ods_bytes(comment="CMT-Indexed", shape="SHP-Draft"), mime_type=OCTET, name="budget.ods"
    )

    assert document.text == (
        "Sheet: Budget\n"
        "Columns: Item, Cost\n"
        "Item: Rent | Cost: 1200 (Comment by Bob Reviewer: CMT-Indexed)\n"
        "SHP-Draft\n"
    )
    rent = section(document, "Item: Rent")
    assert (dict(rent.place), rent.cells) == ({"sheet": "Budget"}, ("A2", "B2"))
    assert dict(section(document, "SHP-Draft").place) == {"sheet": "Budget"}


def test_an_indented_presentation_reads_its_slide_shapes_and_notes():
    document = parse_document(
        data=indented_odp_bytes(bullet="BUL-Hiring", shape="SHP-Callout", notes="NOTES-Say", comment="CMT-Slide"),
        mime_type=OCTET,
        name="talk.odp",
    )

    assert document.text == (
        "Slide 1: Roadmap 2025\n"
        "Launch code RM-25\n"
        "BUL-Hiring\n"
        "SHP-Callout\n"
        "Comment by Bob Reviewer: CMT-Slide\n"
        "Speaker notes: NOTES-Say\n"
    )
    assert [(dict(s.place), s.heading) for s in document.segments] == [({"slide": 1}, ("Roadmap 2025",))]
