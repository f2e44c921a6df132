"""The interface in the user's language: German from the browser's Accept-Language, the account
page's choice (French here) over it on every browser, the scripts' strings from the JavaScript
catalog, dates and numbers the language's way, and the offline answerer's sentences in the asker's
language (README "Languages")."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from apps.core.models import Preferences
from apps.library.members import invitation_create
from apps.library.models import UserQuota
from tests.support.browser import PASSWORD, SCREENSHOTS
from tests.web.conftest import new_page

pytestmark = pytest.mark.django_db(transaction=True)  # the server sees committed rows only

DENTIST_QUESTION = "What is the name of my dentist?"


def log_in(page: Page, *, username: str, password: str, button: str, heading: str) -> None:
    """Logs in on a login page in any language: its fields are found by their ids, its button by name."""
    page.goto("/login/")
    page.locator("#id_username").fill(username)
    page.locator("#id_password").fill(password)
    page.get_by_role("button", name=button, exact=True).click()
    expect(page.get_by_role("heading", name=heading)).to_be_visible()
    page.wait_for_load_state()


def test_a_german_browser_gets_the_folders_and_chat_pages_in_german(browser: Browser, web_server, user, folder):
    UserQuota.objects.create(user=user, folders=5, files=2000)
    with new_page(browser, web_server, height=900, locale="de-DE") as page:
        log_in(page, username="alice", password=PASSWORD, button="Anmelden", heading="Deine Ordner")
        expect(page.locator("html")).to_have_attribute("lang", "de")
        expect(
            page.get_by_role("navigation", name="Hauptnavigation").get_by_role("link", name="Ordner")
        ).to_be_visible()
        card = page.locator(".folder-card", has_text=folder.name)
        # The card is made by a script: its badge, its sync line and its buttons' names are the catalog's.
        expect(card.locator(".badge")).to_have_text("Bereit")
        expect(card).to_contain_text("Letzte Synchronisierung:")
        expect(card.get_by_role("button", name=f"Jetzt synchronisieren: {folder.name}")).to_be_visible()
        # Numbers the German way: 2.000, not 2,000.
        expect(page.locator("#quota-usage")).to_contain_text("1 von 5 Ordnern · 4 von 2.000 Dateien")
        assert page.evaluate("gettext('Sending…')") == "Wird gesendet…"
        page.screenshot(path=SCREENSHOTS / "folders-de.png", full_page=True)

        page.goto(f"/folders/{folder.pk}/")
        expect(page.locator("html")).to_have_attribute("lang", "de")
        expect(page.get_by_role("heading", name="Unterhaltungen")).to_be_visible()
        expect(page.get_by_label("Deine Frage")).to_have_attribute("placeholder", "Frag etwas zu deinen Dateien…")
        expect(page.get_by_role("button", name="Senden")).to_be_visible()
        expect(page.locator("#conversation-list")).to_have_text("Noch keine Unterhaltungen.")
        expect(page.locator("#folder-counts")).to_have_text("4 von 4 Dateien indexiert")
        page.screenshot(path=SCREENSHOTS / "chat-de.png", full_page=True)

        # A file's change date, written by the files page's script: the German date form.
        page.goto(f"/folders/{folder.pk}/files")
        expect(page.get_by_role("columnheader", name="Geändert")).to_be_visible()
        modified = page.locator("#files-rows time").first
        expect(modified).to_have_text(re.compile(r"^\d{2}\.\d{2}\.\d{4}, \d{2}:\d{2}$"))
        expect(page.locator("#files-rows .badge").first).to_have_text("Indexiert")


def test_english_stays_english(page: Page, folder):
    log_in(page, username="alice", password=PASSWORD, button="Log in", heading="Your folders")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page.locator(".folder-card .badge")).to_have_text("Ready")
    assert page.evaluate("gettext('Sending…')") == "Sending…"


def test_a_chosen_language_wins_over_the_browsers_on_every_browser(browser: Browser, web_server, user, folder):
    with new_page(browser, web_server, height=900, locale="de-DE") as page:
        log_in(page, username="alice", password=PASSWORD, button="Anmelden", heading="Deine Ordner")
        page.get_by_role("link", name="alice: Sprache und API-Tokens").click()
        expect(page.get_by_label("Sprache der Oberfläche")).to_have_value("")
        page.get_by_label("Sprache der Oberfläche").select_option("fr")
        page.get_by_role("button", name="Sprache speichern").click()
        # The same page again, now in French, the choice shown as made.
        expect(page.get_by_role("heading", name="Votre compte")).to_be_visible()
        expect(page.locator("html")).to_have_attribute("lang", "fr")
        expect(page.get_by_label("Langue de l\u2019interface")).to_have_value("fr")
    assert Preferences.objects.get(user=user).language == "fr"

    # Another browser, still asking for German, without the cookie: the account's choice wins.
    with new_page(browser, web_server, height=900, locale="de-DE") as page:
        log_in(page, username="alice", password=PASSWORD, button="Anmelden", heading="Vos dossiers")
        expect(page.locator("html")).to_have_attribute("lang", "fr")
        expect(page.locator(".folder-card .badge")).to_have_text("Prêt")
        # A date written by the server: the French form ("28 novembre 2026 09:32").
        _, token = invitation_create(folder=folder, actor=user, role="viewer", anyone_with_link=True)
        page.goto(f"/invite/{token}/")
        expect(page.get_by_text(re.compile(r"expire le \d{1,2} \S+ \d{4} \d{2}:\d{2}\.$"))).to_be_visible()

        # Back to the browser's language: German again, on the next page.
        page.goto("/settings/tokens")
        page.get_by_label("Langue de l\u2019interface").select_option("")
        page.get_by_role("button", name="Enregistrer la langue").click()
        expect(page.get_by_role("heading", name="Dein Konto")).to_be_visible()
        expect(page.locator("html")).to_have_attribute("lang", "de")
    assert Preferences.objects.get(user=user).language == ""


@pytest.mark.worker
def test_the_offline_answer_is_in_the_askers_language(
    browser: Browser, web_server, user, folder, celery_worker_process
):
    Preferences.objects.create(user=user, language="fr")
    with new_page(browser, web_server, height=900) as page:  # an English browser
        # Anonymous, the login page follows the browser; signed in, the account's choice.
        log_in(page, username="alice", password=PASSWORD, button="Log in", heading="Vos dossiers")
        page.goto(f"/folders/{folder.pk}/")
        page.get_by_label("Votre question").fill(DENTIST_QUESTION)
        page.get_by_label("Votre question").press("Enter")
        expect(page.locator("#run-status")).to_have_text("Réponse prête.", timeout=30_000)
        answer = page.locator(".message-agent .answer").last
        # Made by the worker, in the asker's language: what it found nothing about, then what it searched.
        expect(answer).to_contain_text("Je n\u2019ai rien trouvé dans ce dossier sur")
        expect(answer).to_contain_text("« dentist »")
        expect(answer).to_contain_text("Recherche dans ce dossier pour « What is the name of my dentist? »")
