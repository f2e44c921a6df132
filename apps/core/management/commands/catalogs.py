"""`manage.py catalogs`: the interface's translation catalogs brought up to date (README "Languages").

Every marked string is collected (templates and Python: the `django` domain; the web scripts'
gettext() calls: `djangojs`) and merged into locale/<language>/LC_MESSAGES/*.po: new strings come
in untranslated, strings no longer marked go. Then the .mo files the app reads are compiled from
them; both are committed, so a fresh clone needs no gettext to run. Needs GNU gettext (`make
gettext`). tests/core/test_translations.py runs the same collection to check the catalogs.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

# Not the product's own strings: tests, benches, docs, data, and what `make run` writes under var/.
IGNORED = ["var", "sample_folder", "tests", "bench", "docs", "deploy", "emulators", "node_modules"]
DOMAINS = ("django", "djangojs")


def translated_languages() -> list[str]:
    """The languages with catalogs: every one of LANGUAGES but the source strings' own."""
    return [code for code, _name in settings.LANGUAGES if code != settings.LANGUAGE_CODE]


def catalogs_extract(*, verbosity: int = 0, follow_links: bool = False) -> None:
    """Collects the marked strings of the tree under the working directory into the .po files of
    its locale/ (LOCALE_PATHS[0]). `follow_links`: the tree links to the sources (the catalog test
    collects into a copy of locale/ this way, leaving the real one alone)."""
    for domain in DOMAINS:
        call_command(
            "makemessages",
            locale=translated_languages(),
            domain=domain,
            ignore_patterns=IGNORED,
            add_location="file",
            no_obsolete=True,
            symlinks=follow_links,
            verbosity=verbosity,
        )


class Command(BaseCommand):
    help = "Collect the marked strings into locale/*/LC_MESSAGES/*.po, then compile the .mo files."

    def handle(self, *args: Any, **options: Any) -> None:
        verbosity = options["verbosity"]
        catalogs_extract(verbosity=verbosity)
        # The installed packages' own catalogs are theirs: only this project's are compiled.
        call_command(
            "compilemessages",
            locale=translated_languages(),
            ignore_patterns=[".venv", *IGNORED],
            verbosity=verbosity,
        )
