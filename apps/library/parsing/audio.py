"""Voice memos and other recordings (wav, mp3, m4a, ogg, flac; webm from a browser's recorder)
indexed as their transcript.

ffmpeg reads the file (``ffmpeg.py``) and a transcriber writes down what is said (``speech.py``).
Each transcript line starts with its time (``[0:42] ...``) and opens a segment placed at that
second, so a chunk's location holds ``time`` (where it starts, ``time_end`` where its last line
does): a citation says "at 0:42", and the document page plays the original from there.

A recording longer than its transcriber manages within the file's time budget (or than
``TRANSCRIPTION_MAX_SECONDS``) is skipped with its length, read from its header before anything
is decoded (or, for a streamed recording without one, by decoding up to just past the limit);
decoding stops at the limit all the same, for a header that understates it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path, PurePosixPath

from django.conf import settings
from django.utils.translation import gettext_noop

from apps.core.stored_messages import StoredMessage
from apps.library.parsing.base import ParsedDocument, TextBuilder, UnsupportedDocument
from apps.library.parsing.ffmpeg import PCM_BYTES_PER_SECOND, audio_duration, ffmpeg_available, pcm_decode
from apps.library.parsing.speech import Transcriber, TranscriptLine, transcriber_for
from apps.llm.sources import clock_time

AUDIO_TYPES = (
    "audio/wav",
    "audio/x-wav",
    "audio/wave",
    "audio/vnd.wave",
    "audio/mpeg",
    "audio/mp3",
    "audio/mp4",
    "audio/x-m4a",
    "audio/m4a",
    "audio/aac",
    "audio/ogg",
    "audio/opus",
    "audio/flac",
    "audio/x-flac",
    "audio/webm",
)
# Named for every machine: a system without mime.types may not know these.
AUDIO_EXTENSIONS = {
    ".wav": "audio/wav",
    ".mp3": "audio/mpeg",
    ".m4a": "audio/mp4",
    ".ogg": "audio/ogg",
    ".oga": "audio/ogg",
    ".opus": "audio/ogg",
    ".flac": "audio/flac",
    ".weba": "audio/webm",
}


def parse_audio(data: bytes, name: str) -> ParsedDocument:
    transcriber = transcriber_for(settings.TRANSCRIPTION_PROVIDER)
    ffmpeg_available()
    limit = float(settings.TRANSCRIPTION_MAX_SECONDS) or transcriber.max_seconds()
    with tempfile.TemporaryDirectory(prefix="audio-") as directory:
        # The suffix helps ffmpeg tell raw streams (an .aac without a container) apart.
        source = Path(directory) / f"recording{PurePosixPath(name).suffix.lower()[:8]}"
        source.write_bytes(data)
        duration = audio_duration(source)
        if duration is not None and duration > limit:
            length = StoredMessage(
                gettext_noop("%(duration)s long, more than %(limit)s"),
                duration=clock_time(duration),
                limit=clock_time(limit),
            )
            raise UnsupportedDocument(_too_long(length=length, transcriber=transcriber))
        # No length in the header (a browser's streamed recording): decoding tells, up to just past the limit.
        if duration is None and len(pcm_decode(source, seconds=limit + 1)) > limit * PCM_BYTES_PER_SECOND:
            raise UnsupportedDocument(
                _too_long(
                    length=StoredMessage(gettext_noop("longer than %(limit)s"), limit=clock_time(limit)),
                    transcriber=transcriber,
                )
            )
        lines = transcriber.transcribe(source=source, seconds=limit)
    if not lines:
        raise UnsupportedDocument(gettext_noop("no speech recognised in the recording"))
    return transcript_document(lines)


def transcript_document(lines: list[TranscriptLine]) -> ParsedDocument:
    builder = TextBuilder()
    for line in lines:
        builder.mark(place=(("time", int(line.start)),))
        builder.add(f"[{clock_time(line.start)}] {line.text}\n")
    return builder.build()


def _too_long(*, length: str, transcriber: Transcriber) -> StoredMessage:
    if settings.TRANSCRIPTION_MAX_SECONDS:
        why = StoredMessage(gettext_noop("the limit (TRANSCRIPTION_MAX_SECONDS)"))
    else:
        why = StoredMessage(
            gettext_noop("what %(transcriber)s transcription fits in the file's INDEX_FILE_TIME_BUDGET_SECONDS"),
            transcriber=transcriber.label,
        )
    return StoredMessage(gettext_noop("recording is %(length)s, %(why)s"), length=length, why=why)
