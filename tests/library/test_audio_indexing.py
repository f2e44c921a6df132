"""End to end through a real Celery worker: a folder with a voice memo, a damaged recording and a
note is indexed (the memo transcribed offline, the damaged file failing with its reason while the
others index); a question asked through the API is answered offline, citing the memo at the time
the words were said, and the memo's page plays from there."""

from __future__ import annotations

import pytest

from apps.library.indexing import folder_index
from apps.library.models import Chunk, File
from apps.llm.sources import clock_time
from tests.support.files import write
from tests.support.speech import converted, spoken_wav
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

MEMO = [
    "The plumber is coming on Tuesday to fix the boiler in the basement.",
    "Remember to buy milk, eggs and bread on the way home.",
]
QUESTION = "Who is coming to the basement?"


def test_a_question_about_a_voice_memo_cites_it_at_the_time_it_was_said(
    celery_worker_process, root, folder, auth_client, client, user
):
    memo = spoken_wav(MEMO, lead=3.0, pause=2.0)  # three seconds pass before the first word
    write(root, "memos/house.m4a", converted(memo.wav, "m4a"))
    write(root, "memos/broken.mp3", bytes(range(256)) * 40)
    write(root, "garden.md", "# Garden\nThe roses need pruning in February and the lawn feeding in spring.\n")

    folder_index(folder_id=folder.pk)
    wait_for(
        lambda: not File.objects.filter(folder=folder, status__in=["pending", "indexing"]).exists(),
        what="the folder to be indexed",
        timeout=180,
        process=celery_worker_process,
    )

    files = {path: (status, error) for path, status, error in folder.files.values_list("path", "status", "error")}
    status, error = files.pop("memos/broken.mp3")
    assert status == "failed" and error.startswith("unreadable audio: damaged, or not a recording (ffmpeg: "), error
    assert files == {"memos/house.m4a": ("indexed", ""), "garden.md": ("indexed", "")}

    started = auth_client.post(f"/api/folders/{folder.pk}/chat", {"message": QUESTION}, format="json")
    assert started.status_code == 202, started.json()
    run_url = f"/api/runs/{started.json()['run_id']}"
    wait_for(
        lambda: auth_client.get(run_url).json()["status"] == "completed",
        what="the answer",
        timeout=120,
        process=celery_worker_process,
    )
    messages = auth_client.get(f"/api/conversations/{started.json()['conversation_id']}").json()["messages"]
    cited = [citation for citation in messages[-1]["citations"] if citation["file_name"] == "house.m4a"]
    assert cited, messages[-1]
    chunk = Chunk.objects.get(pk=cited[0]["chunk_id"])
    assert "basement" in chunk.text
    said_at = chunk.location["time"]
    assert abs(said_at - memo.starts[0]) <= 1  # where the first sentence begins, not at 0:00
    assert cited[0]["location"] == f"at {clock_time(said_at)}"

    client.force_login(user)
    page = client.get(f"/files/{chunk.file_id}?chunk={chunk.pk}").content.decode()
    assert f'src="/api/files/{chunk.file_id}/content#t={said_at}"' in page
