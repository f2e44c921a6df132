"""Spreadsheets: Excel (xlsx, xlsm) through openpyxl; rows rendered like the CSV parser's.

Each sheet starts with its column names and every row repeats them (``Region: North | Q4: 120``)
so that any chunk reads like a table on its own; each row records its cells, so a chunk's
location is its sheet and cell range (``{"sheet": "Q4", "range": "A1:F20"}``).
"""

from __future__ import annotations

import datetime
import io
from collections.abc import Iterator
from itertools import islice, zip_longest
from typing import Any

import openpyxl
from django.utils.translation import gettext_noop
from openpyxl.utils import get_column_letter
from openpyxl.utils.exceptions import InvalidFileException

from apps.core.stored_messages import StoredMessage
from apps.library.parsing.base import ParsedDocument, TextBuilder
from apps.library.parsing.packages import open_package, reading_package

# The format as reasons name it, translated where they are read.
_KIND = StoredMessage(gettext_noop("Excel workbook"))

# A row of (1-based column number, rendered value) pairs, empty cells left out.
Row = list[tuple[int, str]]


class SheetWriter:
    """Renders one sheet's rows into the builder; the first row of text cells is the header."""

    def __init__(self, builder: TextBuilder, title: str) -> None:
        self._builder = builder
        self._title = title
        self._place: tuple[tuple[str, str | int], ...] = (("sheet", title),)
        self._header: dict[int, str] = {}
        self._started = False
        self._first_column = 0
        self._last_column = 0

    def row(self, number: int, cells: Row) -> None:
        if not cells:
            return
        self._first_column = min(self._first_column or cells[0][0], cells[0][0])
        self._last_column = max(self._last_column, cells[-1][0])
        span = (f"{get_column_letter(self._first_column)}{number}", f"{get_column_letter(self._last_column)}{number}")
        self._builder.mark(place=self._place, cells=span)
        if self._start() and not any(_is_number(value) for _, value in cells):
            self._header = dict(cells)
            self._builder.add("Columns: " + ", ".join(value for _, value in cells) + "\n")
            return
        pairs = (f"{self._header.get(column) or get_column_letter(column)}: {value}" for column, value in cells)
        self._builder.add(" | ".join(pairs) + "\n")

    def text(self, line: str) -> None:
        """A line drawn on the sheet rather than in a cell (a text box, a shape), written after its rows:
        its location is the sheet alone."""
        self._builder.mark(place=self._place)
        self._start()
        self._builder.add(line + "\n")

    def _start(self) -> bool:
        """Opens the sheet with its name at its first content (an empty sheet writes nothing); True then."""
        if self._started:
            return False
        self._started = True
        self._builder.add(f"Sheet: {self._title}\n")
        return True


def render_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    if isinstance(value, datetime.datetime) and value.time() == datetime.time():
        return value.date().isoformat()
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    return " ".join(str(value).split())


def _is_number(text: str) -> bool:
    try:
        float(text.replace(",", ""))
    except ValueError:
        return False
    return True


def parse_xlsx(data: bytes, name: str) -> ParsedDocument:
    open_package(data, kind=_KIND).close()
    with reading_package(_KIND, InvalidFileException):
        formulas = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=False)
        values = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
        builder = TextBuilder()
        for formula_sheet, value_sheet in zip(formulas.worksheets, values.worksheets, strict=True):
            writer = SheetWriter(builder, formula_sheet.title)
            for number, row in enumerate(_rows(formula_sheet, value_sheet), start=1):
                writer.row(number, row)
        formulas.close()
        values.close()
    return builder.build()


def _rows(formula_sheet: Any, value_sheet: Any) -> Iterator[Row]:
    """Cell values, formulas replaced by the value Excel saved with them.

    The saved values are read by a second streaming reader, started only at the first row with
    a formula (a sheet without formulas is read once). Files written by libraries rather than a
    spreadsheet application often have no saved values: the formula itself is shown then.
    """
    # A stored dimension can claim far more cells than exist; rows then carry only real cells.
    formula_sheet.reset_dimensions()
    value_sheet.reset_dimensions()
    saved: Iterator[tuple[Any, ...]] | None = None
    for index, written in enumerate(formula_sheet.iter_rows(values_only=True)):
        has_formula = any(isinstance(value, str) and value.startswith("=") for value in written)
        if has_formula and saved is None:
            saved = islice(value_sheet.iter_rows(values_only=True), index, None)
        cached = next(saved, ()) if saved is not None else written
        cells: Row = []
        for column, (formula, value) in enumerate(zip_longest(written, cached), start=1):
            if isinstance(formula, str) and formula.startswith("=") and value is None:
                cells.append((column, f"{formula} (formula, no saved value)"))
            elif (text := render_value(value)) != "":
                cells.append((column, text))
        yield cells
