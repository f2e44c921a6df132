"""Document formats: HTML main content on real manuals, parser throughput, zip-bomb refusal.

1. Real HTML manuals found on this machine (Debian's python3 docs, git-doc, nodejs, valgrind,
   rustup's books, or the globs given): per set, pages, redirect stubs skipped, text kept by the
   main-content extractor against every visible word (the fallback parser), headings found, and
   ms per page for both, side by side. A Sphinx-like page with a 36-chapter sidebar shows how
   many sidebar entries each leaves in the text.
2. Generated office documents (openpyxl, python-pptx, odfpy, ebooklib, email): size, parse time
   and characters per second.
3. A 1 GB zip bomb disguised as xlsx: time to refuse and peak memory growth.

    .venv/bin/python bench/ingest/formats.py [--pages 150] [GLOB ...]

No database or Redis: parsing only (settings are loaded for the limits).
"""

from __future__ import annotations

import argparse
import glob
import io
import os
import random
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench.ingest.common import django_without_database

MANUALS = [
    "/usr/share/doc/python3*/html/**/*.html",
    "/usr/share/doc/git-doc/*.html",
    "/usr/share/doc/nodejs/api/*.html",
    "/usr/share/doc/valgrind/html/*.html",
    os.path.expanduser("~/.rustup/toolchains/*/share/doc/rust/html/book/**/*.html"),
]


def html_sets(globs: list[str], pages: int) -> None:
    from apps.library.parsing import UnsupportedDocument, parse_document
    from apps.library.parsing.html import parse_html

    print(
        f"{'manual':<44} {'pages':>5} {'stubs':>5} {'visible':>10} {'main':>10} {'kept':>5} {'heads':>6} "
        f"{'ms/page main':>12} {'ms/page all':>11}"
    )
    for pattern in globs:
        files = sorted(glob.glob(pattern, recursive=True))
        if not files:
            continue
        random.Random(7).shuffle(files)
        stubs = visible = main = headings = 0
        main_seconds = all_seconds = 0.0
        for path in files[:pages]:
            data = Path(path).read_bytes()
            started = time.perf_counter()
            try:
                document = parse_document(data=data, mime_type="text/html", name=path)
            except UnsupportedDocument:
                stubs += 1
                continue
            finally:
                main_seconds += time.perf_counter() - started
            started = time.perf_counter()
            visible += len(parse_html(data, path).text)
            all_seconds += time.perf_counter() - started
            main += len(document.text)
            headings += len(document.segments)
        count = min(pages, len(files))
        label = pattern if len(pattern) <= 44 else "…" + pattern[-43:]
        print(
            f"{label:<44} {count:>5} {stubs:>5} {visible:>10,} {main:>10,} {main / max(visible, 1):>5.0%} "
            f"{headings:>6} {1000 * main_seconds / count:>12.1f} {1000 * all_seconds / count:>11.1f}"
        )

    from tests.support.web_pages import CHAPTERS, manual_page_html

    page = manual_page_html().encode()
    left_main = sum(
        chapter in parse_document(data=page, mime_type="text/html", name="p.html").text for chapter in CHAPTERS
    )
    left_all = sum(chapter in parse_html(page, "p.html").text for chapter in CHAPTERS)
    print(
        f"Sphinx-like page, sidebar entries left in the text: main content {left_main} of {len(CHAPTERS)}, "
        f"every visible word {left_all} of {len(CHAPTERS)}"
    )


def generated(rows: int) -> dict[str, tuple[str, bytes]]:
    import openpyxl
    import pptx
    from ebooklib import epub
    from odf.opendocument import OpenDocumentSpreadsheet, OpenDocumentText
    from odf.table import Table, TableCell, TableRow
    from odf.text import H, P

    from tests.support.office_documents import eml_bytes

    sentence = "Invoice {n} for the Atlas project was approved by Dana on the {d}th and paid in full."
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append([f"column {c}" for c in range(10)])
    for n in range(rows):
        sheet.append([n, f"INV-{n}", n * 1.5, "North", "approved", n % 7, n * 3, "EUR", "paid", f"=C{n + 2}*2"])
    xlsx = io.BytesIO()
    workbook.save(xlsx)

    deck = pptx.Presentation()
    for n in range(200):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = f"Slide title {n}"
        slide.placeholders[1].text = "\n".join(sentence.format(n=n * 10 + k, d=k) for k in range(5))
        slide.notes_slide.notes_text_frame.text = sentence.format(n=n, d=1)
    deck_bytes = io.BytesIO()
    deck.save(deck_bytes)

    text = OpenDocumentText()
    for n in range(rows // 4):
        if n % 20 == 0:
            text.text.addElement(H(outlinelevel=1, text=f"Section {n}"))
        text.text.addElement(P(text=sentence.format(n=n, d=n % 28)))
    odt = io.BytesIO()
    text.write(odt)

    spreadsheet = OpenDocumentSpreadsheet()
    table = Table(name="Ledger")
    for n in range(rows // 4):
        row = TableRow()
        for value in (f"INV-{n}", str(n * 1.5), "approved"):
            cell = TableCell()
            cell.addElement(P(text=value))
            row.addElement(cell)
        table.addElement(row)
    spreadsheet.spreadsheet.addElement(table)
    ods = io.BytesIO()
    spreadsheet.write(ods)

    book = epub.EpubBook()
    book.set_identifier("bench")
    book.set_title("Bench")
    chapters = []
    for n in range(100):
        body = "".join(f"<p>{sentence.format(n=n * 50 + k, d=k % 28)}</p>" for k in range(50))
        chapter = epub.EpubHtml(title=f"C{n}", file_name=f"c{n}.xhtml", content=f"<h1>Chapter {n}</h1>{body}")
        book.add_item(chapter)
        chapters.append(chapter)
    book.spine = chapters
    book.add_item(epub.EpubNcx())
    epub_bytes = io.BytesIO()
    epub.write_epub(epub_bytes, book)

    rtf = "{\\rtf1\\ansi " + "".join(sentence.format(n=n, d=n % 28) + "\\par " for n in range(rows // 4)) + "}"
    return {
        f"xlsx ({rows:,} rows x 10, a formula per row)": ("report.xlsx", xlsx.getvalue()),
        "pptx (200 slides with notes)": ("deck.pptx", deck_bytes.getvalue()),
        f"odt ({rows // 4:,} paragraphs)": ("text.odt", odt.getvalue()),
        f"ods ({rows // 4:,} rows x 3)": ("ledger.ods", ods.getvalue()),
        "epub (100 chapters x 50 paragraphs)": ("book.epub", epub_bytes.getvalue()),
        f"rtf ({rows // 4:,} paragraphs)": ("text.rtf", rtf.encode()),
        "eml (2 bodies, 2 attachments)": ("mail.eml", eml_bytes()),
    }


def parsers(rows: int) -> None:
    from apps.library.parsing import parse_document

    print(f"\n{'document':<42} {'bytes':>11} {'seconds':>8} {'chars':>11} {'chars/s':>11} {'sections':>8}")
    for label, (name, data) in generated(rows).items():
        started = time.perf_counter()
        document = parse_document(data=data, mime_type="application/octet-stream", name=name)
        seconds = time.perf_counter() - started
        print(
            f"{label:<42} {len(data):>11,} {seconds:>8.2f} {len(document.text):>11,} "
            f"{len(document.text) / seconds:>11,.0f} {len(document.segments):>8,}"
        )


def zip_bomb() -> None:
    from apps.library.parsing import UnsupportedDocument, parse_document
    from tests.support.office_documents import zip_bomb_bytes

    data = zip_bomb_bytes(member="xl/worksheets/sheet1.xml", size=1_000_000_000)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    try:
        parse_document(data=data, mime_type="application/octet-stream", name="bomb.xlsx")
        outcome = "NOT REFUSED"
    except UnsupportedDocument as exc:
        outcome = str(exc)
    seconds = time.perf_counter() - started
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    print(
        f"\nzip bomb ({len(data):,} bytes, 1 GB inflated) as xlsx: {1000 * seconds:.1f} ms, "
        f"peak memory +{grown / 1024:.1f} MB: {outcome}"
    )


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=150, help="pages sampled per manual")
    parser.add_argument("--rows", type=int, default=20_000, help="rows of the generated workbook")
    parser.add_argument("globs", nargs="*", default=MANUALS)
    args = parser.parse_args(argv)
    django_without_database()
    print(f"load average {os.getloadavg()[0]:.2f}")
    html_sets(args.globs, args.pages)
    parsers(args.rows)
    zip_bomb()


if __name__ == "__main__":
    main(sys.argv[1:])
