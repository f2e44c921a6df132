"""Recordings in every format a phone or recorder writes are decoded by Debian's ffmpeg and
transcribed offline by PocketSphinx into lines that start with their time; chunks carry that time.
What cannot be transcribed says why in words a person reads."""

from __future__ import annotations

import pytest

from apps.library.chunking import RegexTokenizer, chunk_document
from apps.library.parsing import ParseError, UnsupportedDocument, parse_document
from apps.library.parsing.speech import LOCAL_AUDIO_SECONDS_PER_SECOND, TRANSCRIPTION_SHARE_OF_FILE_BUDGET
from apps.llm.sources import clock_time, describe_location
from tests.support.speech import FORMATS, Speech, converted, spoken_wav, streamed_webm

# Started two seconds in, as a memo does after the button is pressed; a pause between the sentences.
SENTENCES = [
    "The plumber is coming on Tuesday to fix the boiler in the basement.",
    "Remember to buy milk, eggs and bread on the way home.",
]


@pytest.fixture(scope="module")
def memo() -> Speech:
    return spoken_wav(SENTENCES, lead=2.0, pause=2.0)


def _near(times: list[int], starts: list[float]) -> bool:
    """Each time within a second of where its sentence starts (the recogniser hears the first sound)."""
    return len(times) == len(starts) and all(abs(time - start) <= 1 for time, start in zip(times, starts, strict=True))


@pytest.mark.parametrize("audio_format", list(FORMATS))
def test_each_format_is_decoded_and_transcribed_with_the_time_of_each_line(memo, audio_format):
    data = converted(memo.wav, audio_format)

    # A local folder may report nothing better than "binary": the name tells the format.
    document = parse_document(data=data, mime_type="application/octet-stream", name=f"memo.{audio_format}")

    text = document.text.lower()
    assert "basement" in text and "remember" in text, text
    times = [int(dict(segment.place)["time"]) for segment in document.segments]
    assert _near(times, memo.starts), (times, memo.starts)  # each sentence after its silence
    assert [line[: line.index("]") + 1] for line in document.text.splitlines()] == [f"[{clock_time(t)}]" for t in times]


def test_a_chunk_carries_the_time_it_starts_at_and_a_citation_says_it(memo):
    document = parse_document(data=memo.wav, mime_type="audio/x-wav", name="memo.wav")

    pieces = chunk_document(document=document, tokenizer=RegexTokenizer(), max_tokens=24, overlap_tokens=0)

    times = [piece.location["time"] for piece in pieces]
    assert _near(times, memo.starts), (times, memo.starts)
    assert all(piece.text.startswith(f"[{clock_time(time)}]") for piece, time in zip(pieces, times, strict=True))
    assert describe_location(pieces[1].location) == f"at 0:{times[1]:02d}"
    assert describe_location({"time": 3723}) == "at 1:02:03"


def test_damaged_files_fail_with_a_reason_a_person_understands(memo):
    noise = bytes(range(256)) * 20
    with pytest.raises(ParseError, match=r"^unreadable audio: damaged, or not a recording \(ffmpeg: .+\)$"):
        parse_document(data=noise, mime_type="audio/mpeg", name="broken.mp3")
    # An m4a cut short loses its index, which sits at the end of the file.
    with pytest.raises(ParseError, match="moov atom not found"):
        parse_document(data=converted(memo.wav, "m4a")[:3000], mime_type="audio/mp4", name="cut.m4a")


def test_a_recording_longer_than_the_limit_is_skipped_with_its_length(memo, settings):
    settings.TRANSCRIPTION_MAX_SECONDS = 5
    with pytest.raises(UnsupportedDocument) as limited:
        parse_document(data=memo.wav, mime_type="audio/x-wav", name="memo.wav")
    length = clock_time(memo.seconds)
    assert str(limited.value) == f"recording is {length} long, more than 0:05, the limit (TRANSCRIPTION_MAX_SECONDS)"

    # Unset, the limit is what local transcription gets done in the file's time budget.
    settings.TRANSCRIPTION_MAX_SECONDS = 0
    settings.INDEX_FILE_TIME_BUDGET_SECONDS = 3
    limit = clock_time(TRANSCRIPTION_SHARE_OF_FILE_BUDGET * 3 * LOCAL_AUDIO_SECONDS_PER_SECOND)
    with pytest.raises(UnsupportedDocument, match=f"more than {limit}, what local transcription fits in the file's"):
        parse_document(data=memo.wav, mime_type="audio/x-wav", name="memo.wav")


def test_a_streamed_recording_without_its_length_is_measured_by_decoding(memo, settings):
    live = streamed_webm(memo.wav)

    document = parse_document(data=live, mime_type="audio/webm", name="memo.webm")
    assert "basement" in document.text

    settings.TRANSCRIPTION_MAX_SECONDS = 5
    with pytest.raises(UnsupportedDocument) as limited:
        parse_document(data=live, mime_type="audio/webm", name="memo.webm")
    assert str(limited.value) == "recording is longer than 0:05, the limit (TRANSCRIPTION_MAX_SECONDS)"


def test_silence_has_no_speech_to_index():
    silence = spoken_wav([], lead=3.0)
    with pytest.raises(UnsupportedDocument, match="no speech recognised in the recording"):
        parse_document(data=silence.wav, mime_type="audio/x-wav", name="silence.wav")


def test_audio_is_skipped_with_the_reason_when_it_cannot_be_transcribed(memo, settings, monkeypatch, tmp_path):
    settings.TRANSCRIPTION_PROVIDER = "off"
    with pytest.raises(UnsupportedDocument, match=r"turned off \(TRANSCRIPTION_PROVIDER=off\)"):
        parse_document(data=memo.wav, mime_type="audio/x-wav", name="memo.wav")

    settings.TRANSCRIPTION_PROVIDER = "openai"
    settings.OPENAI_API_KEY = settings.OPENAI_BASE_URL = ""
    with pytest.raises(UnsupportedDocument, match="TRANSCRIPTION_PROVIDER is openai, but OPENAI_API_KEY is not set"):
        parse_document(data=memo.wav, mime_type="audio/x-wav", name="memo.wav")

    settings.TRANSCRIPTION_PROVIDER = "local"
    monkeypatch.setenv("PATH", str(tmp_path))  # a machine without Debian's ffmpeg
    with pytest.raises(
        UnsupportedDocument, match=r"audio needs ffmpeg and ffprobe, which are not installed \(run `make audio`\)"
    ):
        parse_document(data=memo.wav, mime_type="audio/x-wav", name="memo.wav")
