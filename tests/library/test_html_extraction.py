"""HTML pages keep their main content: sidebars, headers, footers and cookie banners go; headings
stay locations; redirect stubs are skipped with their target."""

import pytest
import trafilatura

from apps.library.parsing import UnsupportedDocument, parse_document
from tests.support.web_pages import ARTICLE_PARAGRAPHS, CHAPTERS, COOKIE_TEXT, FOOTER_TEXT, manual_page_html


def parse(html: str, name: str = "page.html"):
    return parse_document(data=html.encode(), mime_type="text/html", name=name)


def test_documentation_page_keeps_the_article_and_drops_the_chrome():
    document = parse(manual_page_html())
    text = " ".join(document.text.split())
    for paragraph in ARTICLE_PARAGRAPHS:
        assert " ".join(paragraph.split()) in text
    assert "example-sync --prune --retries 5 mirror/" in document.text
    assert not [chapter for chapter in CHAPTERS if chapter in text]
    assert COOKIE_TEXT not in text and "Accept all cookies" not in text
    assert FOOTER_TEXT not in text and "Search the docs" not in text and "Community" not in text
    # The title names the manual, which the article never repeats.
    assert document.text.startswith("Synchronising mirrors — Example Manual 3.1 documentation")


def test_xhtml_with_an_xml_declaration_gets_main_content_too():
    document = parse('<?xml version="1.0" encoding="utf-8"?>\n' + manual_page_html(), "page.xhtml")
    assert "SYNC-4471" in document.text and CHAPTERS[-1] not in document.text


def test_documentation_page_headings_become_locations():
    document = parse(manual_page_html())
    headings = {segment.heading for segment in document.segments}
    assert headings == {("Synchronising mirrors",), ("Synchronising mirrors", "Retries and error codes")}
    retries = next(s for s in document.segments if s.heading[-1] == "Retries and error codes")
    assert "SYNC-4471" in document.text[retries.start :]
    assert "SYNC-4471" not in document.text[: retries.start]


def test_the_whole_page_is_indexed_when_main_content_extraction_is_off(settings):
    settings.INDEX_HTML_MAIN_CONTENT = False
    text = parse(manual_page_html()).text
    assert CHAPTERS[-1] in text and "SYNC-4471" in text


def test_scripts_styles_and_noscript_messages_are_not_content():
    html = (
        "<html><head><title>Report</title><style>p{color:red}</style><script>var secret=1;</script></head>"
        "<body><h1>Quarterly &amp; yearly</h1><p>Revenue grew in Q4-2024.</p><noscript>enable js</noscript>"
        "<h2>Costs</h2><ul><li>rent</li><li>salaries</li></ul></body></html>"
    )
    document = parse(html)
    assert "secret" not in document.text and "color" not in document.text and "enable js" not in document.text
    assert "Revenue grew in Q4-2024." in document.text and "salaries" in document.text
    assert [segment.heading for segment in document.segments] == [
        ("Quarterly & yearly",),
        ("Quarterly & yearly", "Costs"),
    ]


def test_tables_in_the_main_content_are_kept():
    html = "<html><body><table><tr><th>Invoice</th><th>Amount</th></tr><tr><td>INV-20931</td><td>120.50</td></tr>"
    assert "| INV-20931 | 120.50 |" in parse(html + "</table></body></html>").text


def test_a_page_the_extractor_finds_nothing_in_falls_back_to_every_visible_word(monkeypatch):
    # trafilatura gives up on some pages (over its size limit, nothing it calls content).
    monkeypatch.setattr(trafilatura, "extract", lambda *args, **kwargs: None)
    document = parse(manual_page_html())
    assert "SYNC-4471" in document.text and CHAPTERS[-1] in document.text
    assert ("Synchronising mirrors", "Retries and error codes ¶") in {segment.heading for segment in document.segments}


@pytest.mark.parametrize(
    ("html", "target"),
    [
        # rustdoc's and Sphinx's generated redirects
        (
            '<html><head><meta http-equiv="refresh" content="0;URL=../../core/fn.copy.html">'
            "<title>Redirection</title></head><body><p>Redirecting to "
            '<a href="../../core/fn.copy.html">../../core/fn.copy.html</a>...</p>'
            '<script>location.replace("../../core/fn.copy.html")</script></body></html>',
            "../../core/fn.copy.html",
        ),
        (
            "<html><head><noscript><meta http-equiv='Refresh' content='0; url=\"new/index.html\"'></noscript>"
            "</head></html>",
            "new/index.html",
        ),
        (
            '<html><body><h1>Moved</h1><p>This page has moved to <a href="https://docs.example.org/v3/">'
            "the new documentation site</a>.</p></body></html>",
            "https://docs.example.org/v3/",
        ),
        ('<html><body><a href="install.html">Installation</a></body></html>', "install.html"),
    ],
)
def test_redirect_stubs_are_skipped_with_their_target(html, target):
    with pytest.raises(UnsupportedDocument, match=f"^redirect stub to {target}$"):
        parse(html)


def test_a_real_page_with_a_refresh_or_a_link_is_not_a_stub():
    page = manual_page_html().replace("<head>", '<head><meta http-equiv="refresh" content="300; url=index.html">')
    assert "SYNC-4471" in parse(page).text
    short = '<html><body><p>The invoice INV-20931 is due. See <a href="terms.html">terms</a>.</p></body></html>'
    assert "INV-20931" in parse(short).text
