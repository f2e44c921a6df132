"""Small real documents built in memory: PDFs written by hand (one text object per line) or by
PDFium (long ones), docx through python-docx. The sample folder generator uses these too."""

from __future__ import annotations

import ctypes
import io


def _pdf_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def pdf_bytes(pages: list[str]) -> bytes:
    """A valid PDF with one page per string, each line drawn with the standard Helvetica font."""
    kids = [4 + 2 * index for index in range(len(pages))]
    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: f"<< /Type /Pages /Kids [{' '.join(f'{kid} 0 R' for kid in kids)}] /Count {len(pages)} >>".encode(),
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    }
    for kid, text in zip(kids, pages, strict=True):
        lines = " ".join(f"({_pdf_escape(line)}) Tj T*" for line in text.split("\n"))
        stream = f"BT /F1 11 Tf 14 TL 72 740 Td {lines} ET".encode("latin-1")
        objects[kid] = (
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
            f"/Contents {kid + 1} 0 R >>"
        ).encode()
        objects[kid + 1] = b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream)
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = {}
    for number in sorted(objects):
        offsets[number] = out.tell()
        out.write(b"%d 0 obj\n%s\nendobj\n" % (number, objects[number]))
    xref = out.tell()
    count = max(objects) + 1
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % count)
    for number in range(1, count):
        out.write(b"%010d 00000 n \n" % offsets[number])
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (count, xref))
    return out.getvalue()


def long_log_pages() -> list[str]:
    """600 pages (over the old 500-page limit), the last one holding the code WINTER-6600."""
    pages = [f"Chapter {n}: the harbour master's log.\nTides and mooring fees, page {n}." for n in range(1, 601)]
    pages[-1] = "The last page.\nHarbour closes for winter: code WINTER-6600."
    return pages


def pdfium_pdf_bytes(pages: list[str]) -> bytes:
    """A PDF written by PDFium (pypdfium2), one page per string, each line a Helvetica text object.

    PDFium slows down with every page added to one document (600 pages: ~10 s), so pages are drawn
    in documents of 50 and imported into the one saved (under a second)."""
    import pypdfium2
    import pypdfium2.raw as pdfium_c

    out = pypdfium2.PdfDocument.new()
    for first in range(0, len(pages), 50):
        part = pypdfium2.PdfDocument.new()
        font = pdfium_c.FPDFText_LoadStandardFont(part.raw, b"Helvetica")
        for text in pages[first : first + 50]:
            page = part.new_page(612, 792)
            for number, line in enumerate(text.split("\n")):
                item = pdfium_c.FPDFPageObj_CreateTextObj(part.raw, font, 11.0)
                wide = ctypes.create_string_buffer((line + "\x00").encode("utf-16-le"))
                pdfium_c.FPDFText_SetText(item, ctypes.cast(wide, ctypes.POINTER(pdfium_c.FPDF_WCHAR)))
                pdfium_c.FPDFPageObj_Transform(item, 1, 0, 0, 1, 72, 720 - 14 * number)
                pdfium_c.FPDFPage_InsertObject(page.raw, item)
            pdfium_c.FPDFPage_GenerateContent(page.raw)
            page.close()
        out.import_pages(part)
        part.close()
    buffer = io.BytesIO()
    out.save(buffer)
    out.close()
    return buffer.getvalue()


def encrypted_pdf_bytes() -> bytes:
    password = "secret"
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_bytes(["Top secret salary figures"]))))
    writer.encrypt(user_password=password, owner_password=password, algorithm="AES-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def docx_bytes(blocks: list[tuple[str, str]], table: list[list[str]] | None = None) -> bytes:
    """Paragraphs as (style, text): style "Heading 1", "Heading 2", "Title" or "" for body text."""
    import docx

    document = docx.Document()
    for style, text in blocks:
        if style.startswith("Heading"):
            document.add_heading(text, level=int(style.split()[-1]))
        elif style == "Title":
            document.add_heading(text, level=0)
        else:
            document.add_paragraph(text)
    if table:
        grid = document.add_table(rows=len(table), cols=len(table[0]))
        for row, values in zip(grid.rows, table, strict=True):
            for cell, value in zip(row.cells, values, strict=True):
                cell.text = value
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()
