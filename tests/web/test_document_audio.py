"""A recording's document page in a real browser: the transcript with its times, and the original
playing from the cited time; each passage plays from its own."""

from __future__ import annotations

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from apps.library.models import Folder
from tests.support.browser import log_in
from tests.support.files import write
from tests.support.originals import add_chunks, file_row
from tests.support.speech import spoken_wav

pytestmark = [pytest.mark.django_db(transaction=True)]


def test_a_cited_passage_of_a_memo_plays_from_its_time(page: Page, user, tmp_path) -> None:
    root = tmp_path / "memos"
    memo = spoken_wav(["The plumber is coming on Tuesday.", "Remember to buy milk."], lead=1.0, pause=6.0)
    write(root, "house.wav", memo.wav)
    folder = Folder.objects.create(
        owner=user, source="local", external_id=str(root), name="Memos", status="ready", last_synced_at=timezone.now()
    )
    file = file_row(folder=folder, path="house.wav", mime_type="audio/x-wav", size=len(memo.wav))
    first, second = add_chunks(
        file=file,
        chunks=[
            ("[0:01] the plumber is coming on tuesday", {"time": 1}),
            ("[0:09] remember to buy milk", {"time": 9}),
        ],
    )
    log_in(page)

    page.goto(f"/files/{file.pk}?chunk={second.pk}")

    player = page.locator("audio#audio-view")
    assert player.get_attribute("src") == f"/api/files/{file.pk}/content#t=9"
    # The media fragment puts the player at the cited time once it has read the recording's header.
    page.wait_for_function("document.getElementById('audio-view').readyState >= 1")
    assert player.evaluate("audio => audio.currentTime") == pytest.approx(9, abs=0.5)
    expect(page.get_by_role("heading", name="Transcript")).to_be_visible()
    cited = page.locator(f"#chunk-{second.pk}")
    expect(cited.locator(".chunk-location")).to_contain_text("at 0:09")
    expect(cited).to_contain_text("[0:09] remember to buy milk")

    page.locator(f"#chunk-{first.pk}").get_by_role("button", name="Play from 0:01").click()

    page.wait_for_function("Math.abs(document.getElementById('audio-view').currentTime - 1) < 1")
