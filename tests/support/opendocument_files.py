"""OpenDocument files written the way office suites write them, which odfpy does not: indented XML
(whitespace between elements), soft page breaks, tracked changes, sections, comments with their
author, header rows, spanned cells, frames and custom shapes.

The markup follows what LibreOffice writes with pretty printing on: elements are indented, mixed
content (a paragraph's words, spans and anchored frames) is not. Words are codes (``DEL-…``,
``CMT-…``) so a test can tell which part reached the text.
"""

from __future__ import annotations

import io
import textwrap
import zipfile

_NAMESPACES = " ".join(
    f'xmlns:{prefix}="{uri}"'
    for prefix, uri in {
        "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
        "style": "urn:oasis:names:tc:opendocument:xmlns:style:1.0",
        "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
        "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
        "draw": "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0",
        "fo": "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0",
        "svg": "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0",
        "presentation": "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0",
        "form": "urn:oasis:names:tc:opendocument:xmlns:form:1.0",
        "dc": "http://purl.org/dc/elements/1.1/",
        "xlink": "http://www.w3.org/1999/xlink",
        "calcext": "urn:org:documentfoundation:names:experimental:calc:xmlns:calcext:1.0",
        "officeooo": "http://openoffice.org/2009/office",
    }.items()
)

# A comment as LibreOffice writes it: author and date first, then its paragraphs.
_COMMENT = (
    '<office:annotation office:name="{name}"><dc:creator>{author}</dc:creator>'
    "<dc:date>2024-12-02T09:30:00</dc:date><text:p>{text}</text:p></office:annotation>"
)

_ODT_BODY = """
<office:text>
  <text:tracked-changes text:track-changes="false">
    <text:changed-region xml:id="ct1" text:id="ct1">
      <text:deletion>
        <office:change-info>
          <dc:creator>Ann Editor</dc:creator>
          <dc:date>2024-12-01T10:00:00</dc:date>
        </office:change-info>
        <text:p text:style-name="Standard">{deleted}</text:p>
      </text:deletion>
    </text:changed-region>
    <text:changed-region xml:id="ct2" text:id="ct2">
      <text:insertion>
        <office:change-info>
          <dc:creator>Ann Editor</dc:creator>
          <dc:date>2024-12-01T10:01:00</dc:date>
        </office:change-info>
      </text:insertion>
    </text:changed-region>
  </text:tracked-changes>
  <text:sequence-decls>
    <text:sequence-decl text:display-outline-level="0" text:name="Table"/>
  </text:sequence-decls>
  <text:h text:style-name="Heading_20_1" text:outline-level="1">Lease terms</text:h>
  <text:p text:style-name="Standard">The rent is <text:change text:change-id="ct1"/><text:change-start \
text:change-id="ct2"/>{inserted}<text:change-end text:change-id="ct2"/> euros.</text:p>
  <text:section text:style-name="Sect1" text:name="Deposit">
    <text:h text:style-name="Heading_20_2" text:outline-level="2">Deposit</text:h>
    <text:p text:style-name="Standard">The deposit {comment}reference is DP-7731<office:annotation-end \
office:name="c1"/>.</text:p>
    <text:soft-page-break/>
    <text:list xml:id="list1" text:style-name="L1">
      <text:list-item>
        <text:p text:style-name="P1">Keys are returned<text:soft-page-break/> to the agent.</text:p>
      </text:list-item>
      <text:list-item>
        <text:list>
          <text:list-item>
            <text:p text:style-name="P1">{list_item}</text:p>
          </text:list-item>
        </text:list>
      </text:list-item>
    </text:list>
  </text:section>
  <text:h text:style-name="Heading_20_1" text:outline-level="1">Parties</text:h>
  <table:table table:name="Table1" table:style-name="Table1">
    <table:table-column table:style-name="Table1.A" table:number-columns-repeated="2"/>
    <table:table-header-rows>
      <table:table-row>
        <table:table-cell table:style-name="Table1.A1" office:value-type="string">
          <text:p text:style-name="Table_20_Heading">Tenant</text:p>
        </table:table-cell>
        <table:table-cell table:style-name="Table1.A1" office:value-type="string">
          <text:p text:style-name="Table_20_Heading">Rent</text:p>
        </table:table-cell>
      </table:table-row>
    </table:table-header-rows>
    <table:table-row>
      <table:table-cell table:style-name="Table1.A2" office:value-type="string">
        <text:p text:style-name="Table_20_Contents">{cell}</text:p>
      </table:table-cell>
      <table:table-cell table:style-name="Table1.A2" office:value-type="string">
        <text:p text:style-name="Table_20_Contents">950</text:p>
      </table:table-cell>
    </table:table-row>
  </table:table>
  <text:p text:style-name="Standard">See the box.<draw:frame draw:style-name="fr1" draw:name="Frame1" \
text:anchor-type="paragraph" svg:width="6cm" draw:z-index="0">
      <draw:text-box fo:min-height="1cm">
        <text:p text:style-name="Frame_20_contents">{frame}</text:p>
      </draw:text-box>
    </draw:frame></text:p>
</office:text>
"""

_ODT_MASTER_STYLES = """
<office:master-styles>
  <style:master-page style:name="Standard" style:page-layout-name="pm1">
    <style:header>
      <text:p text:style-name="Header">{header}</text:p>
    </style:header>
  </style:master-page>
</office:master-styles>
"""

_ODS_BODY = """
<office:spreadsheet>
  <table:calculation-settings table:automatic-find-labels="false"/>
  <table:table table:name="Budget" table:style-name="ta1">
    <table:shapes>
      <draw:custom-shape table:end-cell-address="Budget.D5" draw:z-index="0" svg:width="4cm" svg:height="2cm">
        <text:p>{shape}</text:p>
        <draw:enhanced-geometry svg:viewBox="0 0 21600 21600" draw:type="rectangle"/>
      </draw:custom-shape>
    </table:shapes>
    <table:table-column table:style-name="co1" table:number-columns-repeated="2"/>
    <table:table-row table:style-name="ro1">
      <table:table-cell office:value-type="string" calcext:value-type="string">
        <text:p>Item</text:p>
      </table:table-cell>
      <table:table-cell office:value-type="string" calcext:value-type="string">
        <text:p>Cost</text:p>
      </table:table-cell>
    </table:table-row>
    <table:table-row table:style-name="ro1">
      <table:table-cell office:value-type="string" calcext:value-type="string">
        <text:p>Rent</text:p>
      </table:table-cell>
      <table:table-cell office:value-type="float" office:value="1200" calcext:value-type="float">
        {comment}
        <text:p>1200</text:p>
      </table:table-cell>
    </table:table-row>
    <table:table-row table:style-name="ro1" table:number-rows-repeated="1048574">
      <table:table-cell table:number-columns-repeated="1024"/>
    </table:table-row>
  </table:table>
  <table:named-expressions/>
</office:spreadsheet>
"""

_ODP_BODY = """
<office:presentation>
  <draw:page draw:name="page1" draw:style-name="dp1" draw:master-page-name="Default">
    <office:forms form:automatic-focus="false" form:apply-design-mode="false"/>
    <draw:frame presentation:style-name="pr1" draw:layer="layout" svg:width="25cm" presentation:class="title">
      <draw:text-box>
        <text:p>Roadmap 2025</text:p>
      </draw:text-box>
    </draw:frame>
    <draw:frame presentation:style-name="pr2" draw:layer="layout" svg:width="25cm" presentation:class="outline">
      <draw:text-box>
        <text:list text:style-name="L2">
          <text:list-item>
            <text:p>Launch code RM-25</text:p>
          </text:list-item>
          <text:list-item>
            <text:p>{bullet}</text:p>
          </text:list-item>
        </text:list>
      </draw:text-box>
    </draw:frame>
    <draw:custom-shape draw:style-name="gr1" svg:width="4cm" svg:height="2cm">
      <text:p>{shape}</text:p>
      <draw:enhanced-geometry svg:viewBox="0 0 21600 21600" draw:type="rectangle"/>
    </draw:custom-shape>
    <presentation:notes draw:style-name="dp2">
      <draw:page-thumbnail draw:style-name="gr2" draw:layer="layout" presentation:class="page"/>
      <draw:frame presentation:style-name="pr3" draw:layer="layout" presentation:class="notes">
        <draw:text-box>
          <text:p>{notes}</text:p>
        </draw:text-box>
      </draw:frame>
      <draw:frame presentation:style-name="pr4" draw:layer="layout" presentation:class="page-number">
        <draw:text-box>
          <text:p><text:page-number>&lt;number&gt;</text:page-number></text:p>
        </draw:text-box>
      </draw:frame>
    </presentation:notes>
    <officeooo:annotation svg:x="1cm" svg:y="1cm"><dc:creator>Bob Reviewer</dc:creator>\
<dc:date>2024-12-02T09:30:00</dc:date><text:p>{comment}</text:p></officeooo:annotation>
  </draw:page>
</office:presentation>
"""


def comment_xml(*, text: str, author: str, name: str = "c1") -> str:
    return _COMMENT.format(name=name, author=author, text=text)


def indented_odt_bytes(
    *, deleted: str, inserted: str, comment: str, list_item: str, cell: str, frame: str, header: str
) -> bytes:
    """A lease whose rent was edited with changes tracked (``deleted`` out, ``inserted`` in), a
    section holding a commented paragraph and a nested list, a table with a header row, a frame
    anchored to a paragraph and a page header; the comment is by "Bob Reviewer"."""
    body = _ODT_BODY.format(
        deleted=deleted,
        inserted=inserted,
        comment=comment_xml(text=comment, author="Bob Reviewer"),
        list_item=list_item,
        cell=cell,
        frame=frame,
    )
    return _package(
        mimetype="application/vnd.oasis.opendocument.text",
        body=body,
        master_styles=_ODT_MASTER_STYLES.format(header=header),
    )


def indented_ods_bytes(*, comment: str, shape: str) -> bytes:
    """Sheet "Budget": a header row, a row whose cost carries a comment by "Bob Reviewer", the
    padding rows Calc writes to the sheet's edge, and a text shape drawn on the sheet."""
    body = _ODS_BODY.format(comment=comment_xml(text=comment, author="Bob Reviewer"), shape=shape)
    return _package(mimetype="application/vnd.oasis.opendocument.spreadsheet", body=body)


def indented_odp_bytes(*, bullet: str, shape: str, notes: str, comment: str) -> bytes:
    """One slide: a title, a bulleted outline, a custom shape with text, speaker notes beside the
    page-number placeholder Impress puts on notes pages (it shows "<number>"), and a comment by
    "Bob Reviewer" in the namespace Impress writes slide comments in."""
    body = _ODP_BODY.format(bullet=bullet, shape=shape, notes=notes, comment=comment)
    return _package(mimetype="application/vnd.oasis.opendocument.presentation", body=body)


def _part(root: str, inner: str) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<office:{root} {_NAMESPACES} office:version="1.3">\n'
        f"{textwrap.indent(inner.strip(), '  ')}\n"
        f"</office:{root}>\n"
    )


def _package(*, mimetype: str, body: str, master_styles: str = "") -> bytes:
    content = _part(
        "document-content",
        f"<office:automatic-styles/>\n<office:body>\n{textwrap.indent(body.strip(), '  ')}\n</office:body>",
    )
    styles = _part("document-styles", master_styles or "<office:master-styles/>")
    manifest = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"'
        ' manifest:version="1.3">\n'
        f' <manifest:file-entry manifest:full-path="/" manifest:version="1.3" manifest:media-type="{mimetype}"/>\n'
        ' <manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>\n'
        ' <manifest:file-entry manifest:full-path="styles.xml" manifest:media-type="text/xml"/>\n'
        "</manifest:manifest>\n"
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as package:
        # The mimetype comes first and uncompressed, as the standard asks.
        package.writestr("mimetype", mimetype, compress_type=zipfile.ZIP_STORED)
        package.writestr("META-INF/manifest.xml", manifest)
        package.writestr("content.xml", content)
        package.writestr("styles.xml", styles)
    return out.getvalue()
