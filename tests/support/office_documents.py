"""Office, OpenDocument, epub and email files written by the libraries that read them, and hostile
packages (zip bombs, encrypted files) for the bad-input tests."""

from __future__ import annotations

import datetime
import functools
import io
import zipfile
from email.message import EmailMessage

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"


def xlsx_bytes() -> bytes:
    """Two sheets: "Q4" (header, two rows, a SUM formula without a saved value) and sparse "Notes"."""
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Q4"
    sheet.append(["Region", "Revenue", "Closed"])
    sheet.append(["North", 120.5, datetime.date(2024, 12, 1)])
    sheet.append(["South", 80, datetime.date(2024, 12, 2)])
    sheet.append(["Total", "=SUM(B2:B3)"])
    notes = workbook.create_sheet("Notes")
    notes["B3"] = "Audit code"
    notes["C5"] = "AX-7731"
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def pptx_bytes() -> bytes:
    """Slide 1: title, bullets and speaker notes; slide 2: a table."""
    import pptx
    from pptx.util import Inches

    deck = pptx.Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[1])
    first.shapes.title.text = "Quarterly results"
    first.placeholders[1].text = "Revenue grew 12%\nLaunch code ZQ-881"
    first.notes_slide.notes_text_frame.text = "Mention the Berlin office opening"
    second = deck.slides.add_slide(deck.slide_layouts[5])
    second.shapes.title.text = "Sales by region"
    table = second.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(4), Inches(1)).table
    for (row, column), value in {(0, 0): "Region", (0, 1): "Sales", (1, 0): "North", (1, 1): "42"}.items():
        table.cell(row, column).text = value
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def _odf_bytes(document: object) -> bytes:
    out = io.BytesIO()
    document.write(out)  # type: ignore[attr-defined]
    return out.getvalue()


def odt_bytes() -> bytes:
    from odf.opendocument import OpenDocumentText
    from odf.text import H, List, ListItem, P

    document = OpenDocumentText()
    document.text.addElement(H(outlinelevel=1, text="Lease terms"))
    document.text.addElement(P(text="The lease renews on 1 March unless notice is given."))
    document.text.addElement(H(outlinelevel=2, text="Deposit"))
    document.text.addElement(P(text="The deposit reference is DP-7731."))
    item = ListItem()
    item.addElement(P(text="Keys are returned to the agent."))
    listing = List()
    listing.addElement(item)
    document.text.addElement(listing)
    return _odf_bytes(document)


def ods_bytes() -> bytes:
    """Sheet "Budget": header, one row, a million padding rows (as saved files have), a formula."""
    from odf.opendocument import OpenDocumentSpreadsheet
    from odf.table import Table, TableCell, TableRow
    from odf.text import P

    document = OpenDocumentSpreadsheet()
    table = Table(name="Budget")
    for values in (["Item", "Cost"], ["Rent", "1200"]):
        row = TableRow()
        for value in values:
            cell = TableCell()
            cell.addElement(P(text=value))
            row.addElement(cell)
        table.addElement(row)
    padding = TableRow(numberrowsrepeated=1_000_000)
    padding.addElement(TableCell(numbercolumnsrepeated=1024))
    table.addElement(padding)
    last = TableRow()
    last.addElement(TableCell())
    last.addElement(TableCell(formula="of:=SUM([.B2])", valuetype="float"))
    table.addElement(last)
    document.spreadsheet.addElement(table)
    return _odf_bytes(document)


def odp_bytes() -> bytes:
    from odf.draw import Frame, Page, TextBox
    from odf.opendocument import OpenDocumentPresentation
    from odf.presentation import Notes
    from odf.style import MasterPage, PageLayout
    from odf.text import P

    document = OpenDocumentPresentation()
    layout = PageLayout(name="layout")
    document.automaticstyles.addElement(layout)
    master = MasterPage(name="master", pagelayoutname=layout)
    document.masterstyles.addElement(master)

    def frame(text: str, **attributes: str) -> Frame:
        box = TextBox()
        box.addElement(P(text=text))
        element = Frame(width="10cm", height="2cm", x="1cm", y="1cm", **attributes)
        element.addElement(box)
        return element

    for title, body, notes in (("Welcome", "Agenda for today", ""), ("Roadmap 2025", "Launch code RM-25", "Say hi")):
        page = Page(masterpagename=master)
        page.addElement(frame(title, **{"class": "title"}))
        page.addElement(frame(body))
        if notes:
            speaker = Notes()
            speaker.addElement(frame(notes))
            page.addElement(speaker)
        document.presentation.addElement(page)
    return _odf_bytes(document)


def epub_bytes() -> bytes:
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("sailing-1")
    book.set_title("Sailing")
    book.set_language("en")
    chapters = [
        epub.EpubHtml(
            title="One", file_name="one.xhtml", content="<h1>Harbours</h1><p>The harbour code is HB-4410.</p>"
        ),
        epub.EpubHtml(title="Two", file_name="two.xhtml", content="<h1>Knots</h1><h2>Bowline</h2><p>A fixed loop.</p>"),
    ]
    for chapter in chapters:
        book.add_item(chapter)
    book.toc = chapters
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", *chapters]
    out = io.BytesIO()
    epub.write_epub(out, book)
    return out.getvalue()


def eml_bytes() -> bytes:
    """A mail with plain and HTML bodies, a text attachment and an image attachment."""
    message = EmailMessage()
    message["From"] = "Ann Example <ann@example.com>"
    message["To"] = "bob@example.com"
    message["Subject"] = "Lease renewal"
    message["Date"] = "Mon, 02 Dec 2024 10:00:00 +0000"
    message.set_content("Hi Bob, the lease renews in March. Reference LS-3302.")
    message.add_alternative("<p>Hi Bob, the <b>lease</b> renews in March. Reference LS-3302.</p>", subtype="html")
    message.add_attachment(
        b"Deposit: 1200 EUR\nReceipt DEP-7781\n", maintype="text", subtype="plain", filename="deposit.txt"
    )
    message.add_attachment(b"\x89PNG\r\n\x1a\n", maintype="image", subtype="png", filename="photo.png")
    return message.as_bytes()


def rtf_bytes() -> bytes:
    return (
        rb"{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0 Times;}}"
        rb"\f0\b Invoice RT-5521\b0\par Caf\'e9 au lait \u8364? 4\par}"
    )


@functools.cache
def zip_bomb_bytes(*, member: str, size: int) -> bytes:
    """A small zip whose one member inflates to ``size`` bytes of zeros (written in chunks)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as package:
        package.writestr("[Content_Types].xml", "<Types/>")
        package.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        with package.open(member, "w", force_zip64=True) as handle:
            block = b"\x00" * 1_000_000
            for _ in range(size // len(block)):
                handle.write(block)
    return out.getvalue()


def encrypted_office_bytes(data: bytes) -> bytes:
    """``data`` (docx, xlsx or pptx) protected with a password, as Office saves it."""
    from msoffcrypto.format.ooxml import OOXMLFile

    out = io.BytesIO()
    OOXMLFile(io.BytesIO(data)).encrypt("secret", out)
    return out.getvalue()


def encrypted_odt_bytes() -> bytes:
    """An ODT laid out as a password-protected one: content.xml is ciphertext and the manifest
    describes its encryption (as LibreOffice writes it; odfpy cannot encrypt)."""
    with zipfile.ZipFile(io.BytesIO(odt_bytes())) as source:
        parts = {item.filename: source.read(item) for item in source.infolist()}
    entry = b'manifest:full-path="content.xml" manifest:media-type="text/xml"/>'
    encrypted_entry = entry[:-2] + (
        b'><manifest:encryption-data manifest:checksum-type="SHA1/1K" manifest:checksum="AAAA">'
        b'<manifest:algorithm manifest:algorithm-name="Blowfish CFB" manifest:initialisation-vector="AAAA"/>'
        b"</manifest:encryption-data></manifest:file-entry>"
    )
    assert entry in parts["META-INF/manifest.xml"]
    parts["META-INF/manifest.xml"] = parts["META-INF/manifest.xml"].replace(entry, encrypted_entry)
    parts["content.xml"] = bytes(range(256)) * 8
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        for filename, content in parts.items():
            package.writestr(filename, content)
    return out.getvalue()
