"""The interface's catalogs (locale/de, fr, es; README "Languages"): every entry translated, none
fuzzy, the plural forms each language needs, the placeholders of each string kept, the committed
.mo files compiled from the .po files as they are, and every string the code marks in them (and
nothing it no longer marks): `manage.py catalogs` collects the strings again into a copy here."""

from __future__ import annotations

import re
from pathlib import Path

import polib
import pytest

from apps.core.management.commands.catalogs import DOMAINS, catalogs_extract, translated_languages
from tests.support.servers import BASE_DIR

LOCALE = BASE_DIR / "locale"
CATALOGS = [(language, domain) for language in translated_languages() for domain in DOMAINS]
# What each language's plural forms are (CLDR as Django's own catalogs have them).
NPLURALS = {"de": 2, "fr": 2, "es": 3}
PLACEHOLDER = re.compile(r"%\(\w+\)s")


def catalog(language: str, domain: str, root: Path = LOCALE) -> polib.POFile:
    return polib.pofile(str(root / language / "LC_MESSAGES" / f"{domain}.po"))


def key(entry: polib.POEntry | polib.MOEntry) -> tuple[str, str]:
    return (entry.msgctxt or "", entry.msgid)


@pytest.mark.parametrize(("language", "domain"), CATALOGS)
def test_every_entry_is_translated_and_none_is_fuzzy(language: str, domain: str) -> None:
    po = catalog(language, domain)
    assert po.metadata["Language"] == language
    assert not po.metadata_is_fuzzy, "the header is fuzzy: msgfmt would drop its plural forms"
    assert len(po) > 100
    assert [entry.msgid for entry in po.untranslated_entries()] == []
    assert [entry.msgid for entry in po.fuzzy_entries()] == []
    assert [entry.msgid for entry in po.obsolete_entries()] == []


@pytest.mark.parametrize(("language", "domain"), CATALOGS)
def test_plural_forms_are_the_languages_own(language: str, domain: str) -> None:
    po = catalog(language, domain)
    assert f"nplurals={NPLURALS[language]};" in po.metadata["Plural-Forms"]
    plurals = [entry for entry in po if entry.msgid_plural]
    assert plurals, "no string with a count is marked with ngettext or blocktranslate count"
    for entry in plurals:
        forms = entry.msgstr_plural
        assert sorted(forms) == list(range(NPLURALS[language])), entry.msgid
        assert all(forms.values()), entry.msgid


@pytest.mark.parametrize(("language", "domain"), CATALOGS)
def test_translations_keep_their_placeholders(language: str, domain: str) -> None:
    """A placeholder left out shows the wrong sentence; one made up fails the page (KeyError). A
    singular may leave out the count ("checked every minute")."""
    for entry in catalog(language, domain):
        wanted = sorted(PLACEHOLDER.findall(entry.msgid))
        if entry.msgid_plural:
            plural = sorted(PLACEHOLDER.findall(entry.msgid_plural))
            for form, text in entry.msgstr_plural.items():
                found = sorted(PLACEHOLDER.findall(text))
                assert (found == plural) or (form == 0 and set(found) <= set(plural)), (entry.msgid, text)
        else:
            assert sorted(PLACEHOLDER.findall(entry.msgstr)) == wanted, (entry.msgid, entry.msgstr)
        assert entry.msgid.count("%%") == (entry.msgstr or entry.msgstr_plural[0]).count("%%"), entry.msgid


@pytest.mark.parametrize(("language", "domain"), CATALOGS)
def test_the_compiled_catalogs_are_those_of_the_po_files(language: str, domain: str) -> None:
    """The app reads the .mo files: one not compiled again after an edit serves the old text."""
    po = catalog(language, domain)
    mo = polib.mofile(str(LOCALE / language / "LC_MESSAGES" / f"{domain}.mo"))

    def texts(entries):
        return {
            key(entry): dict(entry.msgstr_plural) if entry.msgid_plural else entry.msgstr
            for entry in entries
            if entry.msgid
        }

    assert texts(mo) == texts(po.translated_entries()), "run `make messages` (manage.py catalogs) and commit locale/"
    assert mo.metadata["Plural-Forms"] == po.metadata["Plural-Forms"]


def test_every_marked_string_is_in_the_catalogs(tmp_path: Path, settings, monkeypatch) -> None:
    """makemessages run again over the sources (linked, into an empty locale/ here) finds exactly
    the catalogs' strings: none marked and missing, none left behind after its mark went."""
    for entry in BASE_DIR.iterdir():
        if entry.name != "locale" and not entry.name.startswith("."):
            (tmp_path / entry.name).symlink_to(entry)
    (tmp_path / "locale").mkdir()
    settings.LOCALE_PATHS = [tmp_path / "locale"]
    monkeypatch.chdir(tmp_path)
    catalogs_extract(follow_links=True)
    for language, domain in CATALOGS:
        marked = {key(entry) for entry in catalog(language, domain, tmp_path / "locale")}
        kept = {key(entry) for entry in catalog(language, domain)}
        assert sorted(marked - kept) == [], f"{language}/{domain}: marked but not in the catalog: run `make messages`"
        assert sorted(kept - marked) == [], f"{language}/{domain}: in the catalog but no longer marked"
