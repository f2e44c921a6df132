"""Documents whose words sit outside the body's paragraphs (tables, headers and footers, text
boxes, frames, notes and comments), written by python-docx, python-pptx and odfpy.

Each word is a code (``TBL-…``, ``HDR-…``) so a test can tell which part reached the index.
python-docx has no call for text boxes: the one here is the XML Word writes (DrawingML with its VML
fallback, the same text twice), put into a run.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

# Word's text box: a DrawingML shape and, for old readers, the same box as VML.
_WORD_TEXT_BOX = """
<mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"
  xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"
  xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"
  xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"
  xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"
  xmlns:v="urn:schemas-microsoft-com:vml">
 <mc:Choice Requires="wps"><w:drawing><wp:anchor distT="0" distB="0" distL="0" distR="0" simplePos="0"
   relativeHeight="1" behindDoc="0" locked="0" layoutInCell="1" allowOverlap="1">
  <wp:simplePos x="0" y="0"/><wp:positionH relativeFrom="column"><wp:posOffset>0</wp:posOffset></wp:positionH>
  <wp:positionV relativeFrom="paragraph"><wp:posOffset>0</wp:posOffset></wp:positionV>
  <wp:extent cx="1828800" cy="457200"/><wp:wrapSquare wrapText="bothSides"/><wp:docPr id="50" name="Text Box 1"/>
  <a:graphic><a:graphicData uri="http://schemas.microsoft.com/office/word/2010/wordprocessingShape">
   <wps:wsp><wps:cNvSpPr txBox="1"/><wps:spPr/><wps:txbx><w:txbxContent>
    <w:p><w:r><w:t>{text}</w:t></w:r></w:p>
   </w:txbxContent></wps:txbx><wps:bodyPr/></wps:wsp>
  </a:graphicData></a:graphic></wp:anchor></w:drawing></mc:Choice>
 <mc:Fallback><w:pict><v:shape style="width:144pt;height:36pt"><v:textbox><w:txbxContent>
    <w:p><w:r><w:t>{text}</w:t></w:r></w:p>
 </w:txbxContent></v:textbox></v:shape></w:pict></mc:Fallback>
</mc:AlternateContent>"""


def docx_parts_bytes(*, table: Sequence[Sequence[str]], header: str, footer: str, text_box: str, comment: str) -> bytes:
    """A Word document whose body is a table (one cell holding a nested table) and a text box."""
    import docx
    from lxml import etree

    document = docx.Document()
    grid = document.add_table(rows=len(table), cols=len(table[0]))
    for row, values in zip(grid.rows, table, strict=True):
        for cell, value in zip(row.cells, values, strict=True):
            cell.text = value
    nested = grid.rows[-1].cells[-1].add_table(rows=1, cols=1)
    nested.cell(0, 0).text = "nested " + table[-1][-1]
    anchor = document.add_paragraph().add_run()
    anchor._r.append(etree.fromstring(_WORD_TEXT_BOX.format(text=text_box)))
    section = document.sections[0]
    section.header.paragraphs[0].text = header
    section.footer.paragraphs[0].text = footer
    commented = grid.rows[0].cells[0].paragraphs[0].runs[0]
    document.add_comment(commented, text=comment, author="Reviewer")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def pptx_parts_bytes(*, text_box: str, grouped: str, table_cell: str, notes: str) -> bytes:
    """One slide with no title: a text box, a group holding a text box, a table and speaker notes."""
    import pptx
    from pptx.util import Inches

    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])  # blank
    slide.shapes.add_textbox(Inches(1), Inches(1), Inches(4), Inches(1)).text_frame.text = text_box
    group = slide.shapes.add_group_shape()
    group.shapes.add_textbox(Inches(1), Inches(2), Inches(4), Inches(1)).text_frame.text = grouped
    table = slide.shapes.add_table(1, 2, Inches(1), Inches(3), Inches(4), Inches(1)).table
    table.cell(0, 1).text = table_cell
    slide.notes_slide.notes_text_frame.text = notes
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def odt_parts_bytes(
    *, table: Sequence[Sequence[str]], header: str, footer: str, frame: str, note: str, comment: str
) -> bytes:
    """An OpenDocument text whose body is a table and a page-anchored frame (a text box), with a
    header and footer on its page style, a footnote and a comment in a paragraph."""
    from odf.draw import Frame, TextBox
    from odf.office import Annotation
    from odf.opendocument import OpenDocumentText
    from odf.style import Footer, Header, MasterPage, PageLayout
    from odf.table import Table, TableCell, TableColumn, TableRow
    from odf.text import Note, NoteBody, NoteCitation, P

    document = OpenDocumentText()
    layout = PageLayout(name="page")
    document.automaticstyles.addElement(layout)
    master = MasterPage(name="Standard", pagelayoutname=layout)
    top, bottom = Header(), Footer()
    top.addElement(P(text=header))
    bottom.addElement(P(text=footer))
    master.addElement(top)
    master.addElement(bottom)
    document.masterstyles.addElement(master)

    grid = Table(name="Table1")
    grid.addElement(TableColumn(numbercolumnsrepeated=len(table[0])))
    for values in table:
        row = TableRow()
        for value in values:
            cell = TableCell(valuetype="string")
            cell.addElement(P(text=value))
            row.addElement(cell)
        grid.addElement(row)
    document.text.addElement(grid)

    box = TextBox()
    box.addElement(P(text=frame))
    floating = Frame(anchortype="page", anchorpagenumber="1", width="6cm", height="2cm", x="2cm", y="2cm")
    floating.addElement(box)
    document.text.addElement(floating)

    remark = P(text="See the note.")
    footnote = Note(noteclass="footnote", id="ftn1")
    footnote.addElement(NoteCitation(text="1"))
    body = NoteBody()
    body.addElement(P(text=note))
    footnote.addElement(body)
    remark.addElement(footnote)
    annotation = Annotation()
    annotation.addElement(P(text=comment))
    remark.addElement(annotation)
    document.text.addElement(remark)
    out = io.BytesIO()
    document.write(out)
    return out.getvalue()
