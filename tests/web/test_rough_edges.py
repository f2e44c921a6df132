"""The rough edges of a first walk through the product: API docs offline, DEBUG off with friendly
error pages and static files through WhiteNoise, relative times that tick, and the Drive option
when Drive is not configured."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import httpx
import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client, RequestFactory
from django.views.defaults import permission_denied
from playwright.sync_api import Page, Route, expect

from apps.core.views import server_error
from apps.web.readme import Block, readme_section
from tests.support.browser import SCREENSHOTS, log_in
from tests.support.servers import RunningServer

pytestmark = pytest.mark.django_db(transaction=True)


def test_api_docs_reference_no_other_host_and_their_assets_are_served(client: Client) -> None:
    html = client.get("/api/docs").content.decode()
    references = re.findall(r"""(?:src|href)=["']([^"']+)["']""", html)
    assert any("swagger-ui-bundle.js" in url for url in references), references
    for url in references:
        assert not urlsplit(url).netloc and not url.startswith("//"), url
    # Served by WhiteNoise from the venv's drf-spectacular-sidecar, with DEBUG off.
    for url in references:
        assert client.get(url).status_code == 200, url


def test_api_docs_render_in_the_browser_with_every_request_to_the_server_alone(
    page: Page, web_server: RunningServer
) -> None:
    elsewhere: list[str] = []

    def refuse_other_hosts(route: Route) -> None:
        if route.request.url.startswith(web_server.url):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    page.route("**/*", refuse_other_hosts)
    page.goto("/api/docs")
    expect(page.get_by_role("heading", name=re.compile("Folder Chat API"))).to_be_visible()
    expect(page.locator(".opblock-summary-path", has_text="/api/folders").first).to_be_visible()
    assert elsewhere == []


def test_a_wrong_url_is_a_friendly_page_without_the_url_list(client: Client, user) -> None:
    client.force_login(user)
    response = client.get("/no/such/page")
    assert response.status_code == 404
    body = response.content.decode()
    assert "Page not found" in body and "Go to your folders" in body and "Log out" in body
    assert "URLconf" not in body and "api/folders" not in body
    api = client.get("/api/no-such-endpoint")
    assert api.status_code == 404 and api.json() == {"detail": "Not found."}


def test_a_crash_is_a_friendly_page_and_json_under_the_api() -> None:
    page = server_error(RequestFactory().get("/folders/1/"))
    assert page.status_code == 500
    assert "Something went wrong" in page.content.decode() and "Traceback" not in page.content.decode()
    api = server_error(RequestFactory().get("/api/folders/1"))
    assert api.status_code == 500 and api.content == b'{"detail": "Server error."}'


def test_a_refusal_is_a_friendly_page(user) -> None:
    request = RequestFactory().get("/admin/somewhere/")
    request.user = user
    response = permission_denied(request, PermissionDenied())
    assert response.status_code == 403
    assert "Not allowed" in response.content.decode() and "Go to your folders" in response.content.decode()


def test_the_server_runs_with_debug_off_and_serves_static_files(web_server: RunningServer) -> None:
    missing = httpx.get(f"{web_server.url}/no/such/page", headers={"Accept": "text/html"})
    assert missing.status_code == 404 and "Page not found" in missing.text and "URLconf" not in missing.text
    stylesheet = httpx.get(f"{web_server.url}/static/web/css/base.css")
    assert stylesheet.status_code == 200 and stylesheet.headers["content-type"].startswith("text/css")


def test_relative_times_tick_without_a_reload(page: Page, folder) -> None:
    page.clock.install()
    log_in(page)
    last_sync = page.locator(".folder-card [data-field=last-sync]")
    expect(last_sync).to_have_text("Last sync: just now")
    page.clock.fast_forward("03:01")
    expect(last_sync).to_have_text("Last sync: 3 minutes ago")
    page.clock.fast_forward("01:00:00")
    expect(last_sync).to_have_text("Last sync: 1 hour ago")


def test_unconfigured_drive_points_to_the_setup_section_and_the_emulator_demo(page: Page, user) -> None:
    log_in(page)
    page.locator("#add-folder-form").get_by_label("Google Drive").check()
    expect(page.locator("#drive-status")).to_have_text("Google Drive is not configured on this server.")
    setup = page.locator("#drive-setup")
    expect(setup.locator("pre")).to_contain_text("manage.py drive_emulator --root sample_folder")
    expect(setup.locator("pre")).to_contain_text("DRIVE_API_ENDPOINT=http://127.0.0.1:8765/drive/v3/")
    expect(page.get_by_role("button", name="Connect Google Drive")).to_be_hidden()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "drive-unconfigured.png")

    setup.get_by_role("link", name="How to set up Google Drive").click()
    expect(page.get_by_role("heading", level=1, name="Google Drive setup")).to_be_visible()
    expect(page.locator("main")).to_contain_text("GOOGLE_OAUTH_CLIENT_ID")
    expect(page.locator("main code").filter(has_text="GOOGLE_SERVICE_ACCOUNT_FILE")).to_be_visible()
    expect(page.locator("main pre")).to_contain_text("make run")


def test_the_readme_section_renders_lists_code_and_escapes_the_rest() -> None:
    blocks = readme_section(title="Google Drive setup")
    kinds = [block.kind for block in blocks]
    assert kinds[:2] == ["text", "list"] and "code" in kinds
    items = blocks[1].items_html
    assert len(items) == 2 and "<strong>OAuth, each user connecting their own Drive</strong>" in items[0]
    assert "<code>GOOGLE_SERVICE_ACCOUNT_FILE</code>" in items[1]
    code = next(block for block in blocks if block.kind == "code")
    assert code.text.splitlines()[0].startswith(".venv/bin/python manage.py drive_emulator")
    # Text is escaped before the inline markup is added: only that markup is ever HTML.
    assert Block("text", text="<script>x</script> `a<b>` **c**").html == (
        "&lt;script&gt;x&lt;/script&gt; <code>a&lt;b&gt;</code> <strong>c</strong>"
    )


def test_a_source_picked_before_the_page_script_runs_still_shows_its_side_of_the_form(page: Page, user) -> None:
    log_in(page)
    held: list[Route] = []
    # The page's script waits until the choice is made.
    page.route("**/web/js/folders.js", lambda route: held.append(route))
    page.goto("/", wait_until="commit")
    page.locator("#add-folder-form").get_by_label("Google Drive").check()
    assert len(held) == 1
    held[0].continue_()
    expect(page.locator("#drive-status")).to_have_text("Google Drive is not configured on this server.")
    expect(page.get_by_role("textbox", name="Directory path")).to_be_hidden()
