"""CSV/TSV (Google Sheets exports too) and JSON, rendered as ``column: value`` lines.

Each row carries its column names so that any chunk of it is understandable on its own.
"""

from __future__ import annotations

import csv
import json
from typing import Any

from django.utils.translation import gettext_noop

from apps.library.parsing.base import ParsedDocument, ParseError, TextBuilder
from apps.library.parsing.text import decode_text


def parse_csv(data: bytes, name: str) -> ParsedDocument:
    text = decode_text(data)
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    return _rows(text, dialect)


def parse_tsv(data: bytes, name: str) -> ParsedDocument:
    return _rows(decode_text(data), csv.excel_tab)


def _rows(text: str, dialect: type[csv.Dialect] | csv.Dialect) -> ParsedDocument:
    builder = TextBuilder()
    try:
        reader = csv.reader(text.splitlines(), dialect)
        header = [column.strip() for column in next(reader, [])]
        builder.add("Columns: " + ", ".join(column for column in header if column) + "\n")
        for row in reader:
            pairs = [
                f"{header[i] if i < len(header) and header[i] else f'column {i + 1}'}: {value.strip()}"
                for i, value in enumerate(row)
                if value.strip()
            ]
            if pairs:
                builder.add(" | ".join(pairs) + "\n")
    except csv.Error as exc:
        raise ParseError(gettext_noop("unreadable CSV: %(reason)s"), reason=exc) from exc
    return builder.build()


def parse_json(data: bytes, name: str) -> ParsedDocument:
    try:
        value = json.loads(decode_text(data))
    except (ValueError, RecursionError) as exc:
        raise ParseError(gettext_noop("invalid JSON: %(reason)s"), reason=exc) from exc
    builder = TextBuilder()
    _flatten(value, "", builder)
    return builder.build()


def _flatten(value: Any, path: str, builder: TextBuilder) -> None:
    # An explicit stack: deeply nested documents must not hit the recursion limit.
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack:
        key, item = stack.pop()
        if isinstance(item, dict):
            stack.extend((f"{key}.{child}" if key else str(child), sub) for child, sub in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((f"{key}[{index}]", sub) for index, sub in reversed(list(enumerate(item))))
        elif item is not None and item != "":
            builder.add(f"{key or 'value'}: {item}\n")
