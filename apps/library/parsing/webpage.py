"""Web pages: the main content through trafilatura, headings kept as locations.

Navigation, sidebars (a manual's list of every chapter), headers, footers and cookie banners are
left out. When the extractor finds nothing (or ``INDEX_HTML_MAIN_CONTENT`` is off) every visible
word is indexed instead (``html.parse_html``). Redirect stubs (a meta refresh, or a tiny page that
is only a link to where the content moved) are skipped.
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace

import lxml.html
import trafilatura
from django.conf import settings
from django.utils.translation import gettext_noop
from lxml.etree import ParserError

from apps.library.parsing.base import HeadingPath, ParsedDocument, Segment, UnsupportedDocument, document
from apps.library.parsing.html import parse_html
from apps.library.parsing.text import decode_text, parse_markdown

# trafilatura logs each page it finds too short or empty; the outcome is recorded on the file.
logging.getLogger("trafilatura").setLevel(logging.ERROR)

_REFRESH_TARGET = re.compile(r"^\s*\d*(?:\.\d+)?\s*[;,]?\s*url\s*=\s*['\"]?\s*([^'\"\s]+)", re.IGNORECASE)
_MOVED = re.compile(r"\b(?:moved|redirect\w*|relocated|new (?:home|location|address))\b", re.IGNORECASE)
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")
_PERMALINKS = frozenset({"¶", "§", "#", "🔗", "∞"})
# Inline markdown the extractor puts around words; heading locations read better without it.
_INLINE_MARKUP = re.compile(r"`|\*\*|(?<!\w)[*_](?=\w)|(?<=\w)[*_](?!\w)")
# A page with more to say than this is content, whatever it links to or refreshes into.
_STUB_MAX_CHARS = 300


def parse_html_page(data: bytes, name: str) -> ParsedDocument:
    html = decode_text(data)
    tree = _tree(html)
    if tree is not None and (target := redirect_target(tree)):
        raise UnsupportedDocument(gettext_noop("redirect stub to %(target)s"), target=target)
    if settings.INDEX_HTML_MAIN_CONTENT and tree is not None:
        main = _main_content(tree)
        if main:
            parsed = parse_markdown(main.encode(), name)
            if not parsed.segments:
                return _with_page_headings(parsed.text, tree)
            segments = [
                replace(s, heading=tuple(_INLINE_MARKUP.sub("", t) for t in s.heading)) for s in parsed.segments
            ]
            return document(text=parsed.text, segments=segments)
    return parse_html(data, name)


def page_main_text(data: bytes) -> tuple[str, str]:
    """A web page's title and its main content as markdown (either "" when the page has none)."""
    tree = _tree(decode_text(data))
    if tree is None:
        return "", ""
    title = " ".join((tree.findtext(".//title") or "").split())
    main = _main_content(tree) or ""
    return title, main.removeprefix(f"{title}\n\n") if title else main


def _with_page_headings(text: str, tree: lxml.html.HtmlElement) -> ParsedDocument:
    """Headings for text the extractor returned without markup (it does so for short pages):
    the page's h1-h6, in order, where they stand as whole lines of the text."""
    path = HeadingPath()
    segments: list[Segment] = []
    position = 0
    for element in tree.iter("h1", "h2", "h3", "h4", "h5", "h6"):
        title = " ".join(element.text_content().split())
        match = re.compile(rf"^{re.escape(title)}$", re.MULTILINE).search(text, position) if title else None
        if match:
            segments.append(Segment(start=match.start(), heading=path.enter(int(str(element.tag)[1]), title)))
            position = match.end()
    return document(text=text, segments=segments)


def _tree(html: str) -> lxml.html.HtmlElement | None:
    try:
        # lxml refuses decoded text that still declares an encoding (XHTML's <?xml ...?> line).
        return lxml.html.document_fromstring(_XML_DECLARATION.sub("", html, count=1))
    except (ParserError, ValueError):
        return None


def redirect_target(tree: lxml.html.HtmlElement) -> str | None:
    """Where a redirect stub points, or None when the page has content of its own."""
    body_text, links = _body(tree)
    if len(body_text) > _STUB_MAX_CHARS:
        return None
    for meta in tree.iter("meta"):
        refresh = (meta.get("http-equiv") or "").strip().lower() == "refresh"
        if refresh and (match := _REFRESH_TARGET.match(meta.get("content") or "")):
            return match[1]
    if len(links) == 1 and (_MOVED.search(body_text) or body_text == links[0].text_content().strip()):
        return links[0].get("href")
    return None


def _body(tree: lxml.html.HtmlElement) -> tuple[str, list[lxml.html.HtmlElement]]:
    body = tree.find("body")
    if body is None:
        return "", []
    hidden = {element for tag in ("script", "style", "noscript", "template") for element in body.iter(tag)}
    words = [
        text
        for element in body.iter()
        if element not in hidden and isinstance(element.tag, str)
        for text in (element.text, element.tail)
        if text and text.strip()
    ]
    links = [link for link in body.iter("a") if link.get("href")]
    return " ".join(" ".join(words).split()), links


def _main_content(tree: lxml.html.HtmlElement) -> str | None:
    # trafilatura keeps <noscript> text ("please enable JavaScript"), which is never content, and
    # permalink anchors (Sphinx's ¶, rustdoc's §) that would end every heading.
    for element in list(tree.iter("noscript", "template")):
        element.drop_tree()
    for link in list(tree.iter("a")):
        if link.text_content().strip() in _PERMALINKS:
            link.drop_tree()
    markdown = trafilatura.extract(
        tree,
        output_format="markdown",
        include_formatting=True,  # keeps headings as '#' lines, which become locations
        include_tables=True,
        include_comments=False,
        include_links=False,
        favor_recall=True,
    )
    if not markdown or not markdown.strip():
        return None
    title = " ".join((tree.findtext(".//title") or "").split())
    if title and title not in markdown[: len(title) + 200]:
        # The page title names the manual or site, which the body rarely repeats.
        markdown = f"{title}\n\n{markdown}"
    return markdown
