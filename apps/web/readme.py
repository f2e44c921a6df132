"""A section of the README as a page (the Drive setup), so the browser never repeats or contradicts it.

Only what that section uses: paragraphs, bullet lists, code blocks, and `code`, **strong** and
*emphasis* inline. The text is escaped first; the only markup is what this module adds.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from config.env import BASE_DIR

README = BASE_DIR / "README.md"
_INLINE = [
    (re.compile(r"`([^`]+)`"), r"<code>\1</code>"),
    (re.compile(r"\*\*([^*]+)\*\*"), r"<strong>\1</strong>"),
    (re.compile(r"\*([^*]+)\*"), r"<em>\1</em>"),
]


@dataclass
class Block:
    kind: str  # "text", "list" or "code"
    text: str = ""
    items: list[str] = field(default_factory=list)

    @property
    def html(self) -> SafeString:
        return _inline(self.text)

    @property
    def items_html(self) -> list[SafeString]:
        return [_inline(item) for item in self.items]


@functools.cache  # the folders page asks on every load; the README does not change under a server
def readme_section(*, title: str) -> tuple[Block, ...]:
    """The blocks under the README's ``## {title}``, up to the next second-level heading."""
    lines = README.read_text(encoding="utf-8").splitlines()
    start = lines.index(f"## {title}") + 1
    end = next((n for n in range(start, len(lines)) if lines[n].startswith("## ")), len(lines))
    blocks: list[Block] = []
    code: list[str] | None = None
    open_kind: str | None = None  # what a wrapped line continues: "text", "item" or nothing
    for line in lines[start:end]:
        if code is not None:
            if line.startswith("```"):
                blocks.append(Block("code", text="\n".join(code)))
                code = None
            else:
                code.append(line)
        elif line.startswith("```"):
            code, open_kind = [], None
        elif not line.strip():
            open_kind = None
        elif line.startswith("- "):
            if not blocks or blocks[-1].kind != "list":
                blocks.append(Block("list"))
            blocks[-1].items.append(line[2:].strip())
            open_kind = "item"
        elif open_kind == "item":
            blocks[-1].items[-1] += " " + line.strip()
        elif open_kind == "text":
            blocks[-1].text += " " + line.strip()
        else:
            blocks.append(Block("text", text=line.strip()))
            open_kind = "text"
    return tuple(blocks)


def _inline(text: str) -> SafeString:
    html = str(escape(text))
    for pattern, replacement in _INLINE:
        html = pattern.sub(replacement, html)
    return mark_safe(html)  # noqa: S308 - escaped above; the only tags are the ones just added
