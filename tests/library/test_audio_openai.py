"""TRANSCRIPTION_PROVIDER=openai: the real openai SDK uploads the recording (as a small Opus file)
to the wire stub's transcription route and asks for verbose_json segments, whose start times
become the transcript's; the minutes are recorded as the folder owner's usage."""

from __future__ import annotations

from decimal import Decimal

import pytest

from apps.library.indexing import folder_index
from apps.library.models import Chunk, File
from apps.llm.models import UsageRecord
from tests.support.files import write
from tests.support.llm_wire_stub import OPENAI_TRANSCRIPTIONS_PATH
from tests.support.speech import converted, spoken_wav

pytestmark = pytest.mark.django_db

SEGMENTS = [
    (1.5, 6.0, " The plumber is coming on Tuesday to fix the boiler."),
    (64.2, 70.0, " Remember to buy milk on the way home."),
]


@pytest.fixture
def openai_transcription(settings, wire_stub):
    settings.TRANSCRIPTION_PROVIDER = "openai"
    settings.OPENAI_API_KEY = "sk-test"
    settings.OPENAI_BASE_URL = wire_stub.openai_base_url
    settings.LLM_MAX_RETRIES = 0
    settings.OPENAI_TRANSCRIPTION_USD_PER_MINUTE = 0.006
    return wire_stub


@pytest.fixture
def memo_m4a() -> bytes:
    return converted(spoken_wav(["The plumber is coming on Tuesday."], lead=1.0).wav, "m4a")


def test_a_recording_is_transcribed_by_openai_with_segment_times(root, folder, openai_transcription, memo_m4a):
    write(root, "memos/plumber.m4a", memo_m4a)
    openai_transcription.reply_transcript(SEGMENTS)

    folder_index(folder_id=folder.pk, inline=True)

    (request,) = openai_transcription.requests
    assert request.path == OPENAI_TRANSCRIPTIONS_PATH
    form = request.body
    assert (form["model"], form["response_format"], form["timestamp_granularities[]"]) == (
        "whisper-1",
        "verbose_json",
        "segment",
    )
    upload = form["file"]
    assert upload["content_type"] == "audio/ogg" and upload["data"].startswith(b"OggS")
    assert len(upload["data"]) < len(memo_m4a)  # speech-rate Opus, smaller than the original

    file = File.objects.get(folder=folder)
    assert file.status == "indexed", file.error
    chunks = list(Chunk.objects.filter(file=file).order_by("chunk_index").values_list("text", "location"))
    assert [text for text, _ in chunks] == [
        "[0:01] The plumber is coming on Tuesday to fix the boiler.\n[1:04] Remember to buy milk on the way home."
    ]
    assert (chunks[0][1]["time"], chunks[0][1]["time_end"]) == (1, 64)

    (record,) = UsageRecord.objects.all()
    assert (record.user_id, record.folder_id, record.provider, record.model) == (
        folder.owner_id,
        folder.pk,
        "openai",
        "whisper-1",
    )
    assert (record.input_tokens, record.output_tokens) == (0, 0)
    assert record.cost == Decimal("0.00700000")  # 70 s at 0.006 USD a minute


def test_when_the_api_fails_the_file_fails_with_its_answer_and_the_others_index(
    root, folder, openai_transcription, memo_m4a
):
    write(root, "memos/plumber.m4a", memo_m4a)
    write(root, "notes.md", "# Notes\nThe boiler is in the basement.")
    openai_transcription.reply_transcript(503)

    folder_index(folder_id=folder.pk, inline=True)

    files = dict(File.objects.filter(folder=folder).values_list("path", "error"))
    assert files["memos/plumber.m4a"] == "transcription by OpenAI failed: 503 llm wire stub: transcription failed"
    assert File.objects.get(folder=folder, path="notes.md").status == "indexed"
    assert not UsageRecord.objects.exists()
