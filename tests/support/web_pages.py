"""A documentation page as Sphinx and mdBook lay them out: a header with search, a cookie banner,
a sidebar listing every chapter, the article, and a footer."""

from __future__ import annotations

CHAPTERS = [
    f"Chapter {number}: {title}"
    for number, title in enumerate(
        [
            "Getting started",
            "Installation on Linux",
            "Configuration files",
            "Command line reference",
            "Working with remotes",
            "Branching strategies",
            "Merge conflicts explained",
            "Hooks and automation",
            "Performance tuning",
            "Security model",
            "Troubleshooting checklist",
            "Glossary of terms",
        ]
        * 3,
        start=1,
    )
]
COOKIE_TEXT = "We use cookies to improve your experience. Accept all cookies or manage preferences."
FOOTER_TEXT = "Copyright 2024, Example Project contributors. Built with Sphinx using a theme."

ARTICLE_PARAGRAPHS = [
    "Synchronisation copies every change from the remote mirror to the local working tree. "
    "The tool compares checksums first, so unchanged files are never transferred twice.",
    "Run the sync command with the --prune flag to delete files that vanished upstream. "
    "Without it, stale copies stay in place and are reported in the summary at the end.",
    "The retry budget defaults to five attempts with exponential backoff between them; "
    "the error code SYNC-4471 means the budget ran out before the mirror answered.",
    "Large repositories benefit from shallow clones, which fetch only the recent history "
    "and keep the first synchronisation short even over slow links.",
]


def manual_page_html(*, title: str = "Synchronising mirrors") -> str:
    sidebar = "".join(f'<li class="toctree-l1"><a href="ch{n}.html">{name}</a></li>' for n, name in enumerate(CHAPTERS))
    body = "".join(f"<p>{paragraph}</p>" for paragraph in ARTICLE_PARAGRAPHS[:2])
    more = "".join(f"<p>{paragraph}</p>" for paragraph in ARTICLE_PARAGRAPHS[2:])
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title} &#8212; Example Manual 3.1 documentation</title>
<link rel="stylesheet" href="_static/basic.css"><script src="_static/searchtools.js"></script></head>
<body>
<div id="cookie-banner" class="cookie-consent"><p>{COOKIE_TEXT}</p><button>Accept</button></div>
<header class="site-header"><a href="index.html">Example Manual</a>
  <form class="search" action="search.html"><input type="text" name="q" placeholder="Search the docs"></form>
  <nav class="top-links"><a href="download.html">Download</a> <a href="community.html">Community</a></nav></header>
<div class="document">
  <div class="sphinxsidebar" role="navigation" aria-label="Main">
    <h3>Table of Contents</h3><ul>{sidebar}</ul>
    <h3>This page</h3><ul><li><a href="#usage">Usage</a></li><li><a href="#retries">Retries</a></li></ul>
  </div>
  <div class="documentwrapper"><div class="bodywrapper"><div class="body" role="main">
    <section id="sync"><h1>{title}</h1>{body}
      <section id="retries">
        <h2>Retries and <code>error</code> codes<a class="headerlink" href="#retries">¶</a></h2>{more}
        <pre>example-sync --prune --retries 5 mirror/</pre></section></section>
  </div></div></div>
  <div class="related" role="navigation"><a href="ch3.html">previous</a> | <a href="ch5.html">next</a></div>
</div>
<footer class="footer">{FOOTER_TEXT}</footer>
</body></html>"""
