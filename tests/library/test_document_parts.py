"""Every word of an office document is indexed: tables, nested tables, text boxes and frames,
headers and footers, notes and comments, in Word, PowerPoint and OpenDocument files written by
python-docx, python-pptx and odfpy."""

from apps.library.parsing import parse_document
from tests.support.document_parts import docx_parts_bytes, odt_parts_bytes, pptx_parts_bytes

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
TABLE = [["Tenant", "Rent"], ["TBL-Meyer", "TBL-950"]]


def test_a_word_document_brings_its_table_text_box_header_footer_and_comment():
    data = docx_parts_bytes(table=TABLE, header="HDR-Acme", footer="FTR-Page", text_box="BOX-Notice", comment="CMT-Ok")

    document = parse_document(data=data, mime_type=DOCX, name="lease.docx")

    lines = document.text.splitlines()
    assert lines[:3] == ["Tenant | Rent", "TBL-Meyer | TBL-950 nested TBL-950", "BOX-Notice"]
    # The text box is stored twice (DrawingML and its VML fallback) and read once.
    assert document.text.count("BOX-Notice") == 1
    assert {"HDR-Acme", "FTR-Page", "CMT-Ok"} <= set(lines)
    assert {segment.heading for segment in document.segments} == {("Headers and footers",), ("Comments",)}


def test_an_opendocument_text_of_a_table_and_a_page_frame_is_read_whole():
    data = odt_parts_bytes(
        table=TABLE, header="HDR-Acme", footer="FTR-Page", frame="FRM-Box", note="NOTE-Law", comment="CMT-Ok"
    )

    document = parse_document(data=data, mime_type="application/vnd.oasis.opendocument.text", name="lease.odt")

    # The note and the comment follow their paragraph on lines of their own, not glued to its words;
    # the comment is marked as one (odfpy writes it without an author).
    assert document.text.splitlines() == [
        "Tenant | Rent",
        "TBL-Meyer | TBL-950",
        "FRM-Box",
        "See the note.",
        "NOTE-Law",
        "Comment: CMT-Ok",
        "HDR-Acme",
        "FTR-Page",
    ]


def test_a_table_only_opendocument_text_is_not_skipped_as_empty():
    data = odt_parts_bytes(table=TABLE, header="", footer="", frame="", note="", comment="")

    document = parse_document(data=data, mime_type="application/vnd.oasis.opendocument.text", name="t.odt")

    assert "TBL-Meyer | TBL-950" in document.text


def test_a_slide_brings_its_text_boxes_groups_table_and_speaker_notes():
    data = pptx_parts_bytes(text_box="BOX-Intro", grouped="GRP-Inner", table_cell="CELL-42", notes="NOTES-Say")

    document = parse_document(
        data=data,
        mime_type="application/vnd.openxmlformats-officedocument.presentationml.presentation",
        name="deck.pptx",
    )

    assert document.text.splitlines() == ["Slide 1", "BOX-Intro", "GRP-Inner", "CELL-42", "Speaker notes: NOTES-Say"]
