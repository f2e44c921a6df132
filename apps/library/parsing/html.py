"""HTML through the standard library parser: visible text only, headings as locations."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from apps.library.parsing.base import HeadingPath, ParsedDocument, TextBuilder
from apps.library.parsing.text import decode_text

_SKIPPED = frozenset({"script", "style", "noscript", "template", "svg", "head"})
_KEPT_IN_HEAD = "title"
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_BLOCKS = frozenset(
    {
        "p",
        "div",
        "br",
        "li",
        "tr",
        "td",
        "th",
        "ul",
        "ol",
        "table",
        "section",
        "article",
        "header",
        "footer",
        "nav",
        "aside",
        "main",
        "pre",
        "blockquote",
        "dd",
        "dt",
        "dl",
        "hr",
        "figure",
        "figcaption",
        "form",
        "title",
        *_HEADINGS,
    }
)
_SPACES = re.compile(r"\s+")


class _VisibleText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.builder = TextBuilder()
        self._skip_depth = 0
        self._in_title = False
        self._pre_depth = 0
        self._headings = HeadingPath()
        self._heading: tuple[int, int, list[str]] | None = None  # level, start offset, words

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == _KEPT_IN_HEAD:
            self._in_title = True
        elif tag in _SKIPPED:
            self._skip_depth += 1
        if tag == "pre":
            self._pre_depth += 1
        if tag in _BLOCKS:
            self.builder.newline()
        if tag in _HEADINGS and not self._skip_depth:
            self._heading = (_HEADINGS[tag], self.builder.length, [])

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCKS:
            self.builder.newline()

    def handle_endtag(self, tag: str) -> None:
        if tag == _KEPT_IN_HEAD:
            self._in_title = False
        elif tag in _SKIPPED and self._skip_depth:
            self._skip_depth -= 1
        if tag == "pre" and self._pre_depth:
            self._pre_depth -= 1
        if tag in _HEADINGS and self._heading is not None:
            level, start, words = self._heading
            self._heading = None
            title = " ".join(words).strip()
            if title:
                self.builder.mark(start=start, heading=self._headings.enter(level, title))
        if tag in _BLOCKS:
            self.builder.newline()

    def handle_data(self, data: str) -> None:
        if self._skip_depth and not self._in_title:
            return
        text = data if self._pre_depth else _SPACES.sub(" ", data)
        if self.builder.ends_with_newline():
            text = text.lstrip(" ")
        if not text.strip():
            if text and not self.builder.ends_with_newline():
                self.builder.add(" ")
            return
        self.builder.add(text)
        if self._heading is not None:
            self._heading[2].append(text.strip())


def parse_html(data: bytes, name: str) -> ParsedDocument:
    parser = _VisibleText()
    parser.feed(decode_text(data))
    parser.close()
    return parser.builder.build()
