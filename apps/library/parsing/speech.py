"""Speech to text with times, by ``TRANSCRIPTION_PROVIDER``: ``local`` is PocketSphinx (its wheel
carries the US English model: offline, one core), ``openai`` is OpenAI's transcription API through
the real SDK (``verbose_json`` segments), metered like every other OpenAI call.

PocketSphinx decodes each stretch of speech its voice activity detector finds as one utterance
and reports every word's start; the words become lines of at most ``LINE_SECONDS``, each with its
start time. ``bench/ingest/transcription_wer.py`` measures its word error rate and speed.
"""

from __future__ import annotations

import functools
import io
import logging
import re
import threading
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Protocol

from django.conf import settings
from django.db import DatabaseError
from django.utils.translation import gettext_noop

from apps.core.stored_messages import StoredMessage
from apps.library.budget import budget_check, budget_remaining
from apps.library.parsing.base import ParseError, UnsupportedDocument
from apps.library.parsing.ffmpeg import OPUS_BITRATE, SAMPLE_RATE, opus_encode, pcm_decode
from apps.llm.types import Usage
from apps.llm.usage import usage_record
from apps.llm.usage_context import current_usage_context

logger = logging.getLogger(__name__)

# A transcript line spans at most this much speech, so a time in the text is never far from its words.
LINE_SECONDS = 15.0
# Local transcription may spend this share of what the file has left of its time budget (as OCR
# does), leaving the rest to embed the transcript.
TRANSCRIPTION_SHARE_OF_FILE_BUDGET = 2 / 3
# Seconds of recording PocketSphinx transcribes per second on one core of this project's machines
# (bench/ingest/transcription_wer.py prints it: 1.5 for clean speech on a busy 2-core AMD EPYC; noisy
# speech is slower, and the budget check stops a recording that overruns).
LOCAL_AUDIO_SECONDS_PER_SECOND = 1.5
# OpenAI takes files up to 25 MB: what fits at the upload's Opus bitrate, less a margin for the container.
OPENAI_UPLOAD_MAX_BYTES = 25 * 1024 * 1024
OPENAI_MAX_SECONDS = 0.9 * OPENAI_UPLOAD_MAX_BYTES * 8 / OPUS_BITRATE
_MARGIN_SECONDS = 0.4
# The model's fillers (<s>, <sil>, [NOISE]...) are no words; "read(2)" is a second pronunciation.
_FILLER = re.compile(r"^[<\[].*[>\]]$")
_ALTERNATE = re.compile(r"\(\d+\)$")


@dataclass(frozen=True)
class TranscriptLine:
    start: float  # seconds from the start of the recording
    text: str


class Transcriber(Protocol):
    label: str

    def max_seconds(self) -> float:
        """The longest recording it can transcribe within the file's time budget."""
        ...

    def transcribe(self, *, source: Path, seconds: float) -> list[TranscriptLine]:
        """The transcript of the first ``seconds`` of the recording at ``source``."""
        ...


def transcriber_for(provider: str) -> Transcriber:
    """The configured transcriber; ``UnsupportedDocument`` says why audio is skipped when there is none."""
    if provider == "local":
        return LocalTranscriber()
    if provider == "openai":
        if not (settings.OPENAI_API_KEY or settings.OPENAI_BASE_URL):
            raise UnsupportedDocument(gettext_noop("TRANSCRIPTION_PROVIDER is openai, but OPENAI_API_KEY is not set"))
        return OpenAITranscriber()
    if provider == "off":
        raise UnsupportedDocument(gettext_noop("audio transcription is turned off (TRANSCRIPTION_PROVIDER=off)"))
    raise UnsupportedDocument(
        gettext_noop("unknown TRANSCRIPTION_PROVIDER %(provider)s (local, openai or off)"), provider=repr(provider)
    )


class LocalTranscriber:
    label = "local"

    def max_seconds(self) -> float:
        return TRANSCRIPTION_SHARE_OF_FILE_BUDGET * budget_remaining() * LOCAL_AUDIO_SECONDS_PER_SECOND

    def transcribe(self, *, source: Path, seconds: float) -> list[TranscriptLine]:
        pcm = pcm_decode(source, seconds=seconds)
        if not pcm:
            raise ParseError(gettext_noop("unreadable audio: ffmpeg decoded no sound from it"))
        return pcm_transcribe(pcm)


_decoder_lock = threading.Lock()


@functools.cache
def _decoder() -> Any:
    from pocketsphinx import Decoder

    # Loading the model takes most of a second: once per process.
    return Decoder(samprate=SAMPLE_RATE, loglevel="FATAL")


def pcm_transcribe(pcm: bytes) -> list[TranscriptLine]:
    """PocketSphinx's transcript of 16 kHz mono PCM, a line per stretch of speech (or per ``LINE_SECONDS``)."""
    from pocketsphinx import Segmenter

    lines: list[TranscriptLine] = []
    with _decoder_lock:  # one decoder per process; a worker prepares one file at a time anyway
        decoder = _decoder()
        frames_per_second = float(decoder.config["frate"])
        end = 0.0
        for region in Segmenter(sample_rate=SAMPLE_RATE).segment(io.BytesIO(pcm)):
            budget_check(StoredMessage(gettext_noop("transcribing")))
            # The detector notices speech a little late and ends it early: a margin keeps the
            # first and last sounds, without which the words at either end are misheard (never
            # reaching back into the previous stretch, whose words would be heard twice).
            start = max(end, region.start_time - _MARGIN_SECONDS)
            end = region.end_time + _MARGIN_SECONDS
            decoder.start_utt()
            decoder.process_raw(pcm[_sample_byte(start) : _sample_byte(end)], full_utt=True)
            decoder.end_utt()
            words = [
                (start + part.start_frame / frames_per_second, _ALTERNATE.sub("", part.word))
                for part in decoder.seg()
                if not _FILLER.match(part.word)
            ]
            lines.extend(_lines(words))
    return lines


def _sample_byte(seconds: float) -> int:
    return int(seconds * SAMPLE_RATE) * 2


def _lines(words: list[tuple[float, str]]) -> list[TranscriptLine]:
    lines: list[TranscriptLine] = []
    start = 0.0
    current: list[str] = []
    for at, word in words:
        if current and at - start > LINE_SECONDS:
            lines.append(TranscriptLine(start=start, text=" ".join(current)))
            current = []
        if not current:
            start = at
        current.append(word)
    if current:
        lines.append(TranscriptLine(start=start, text=" ".join(current)))
    return lines


class OpenAITranscriber:
    label = "OpenAI"

    def max_seconds(self) -> float:
        return OPENAI_MAX_SECONDS

    def transcribe(self, *, source: Path, seconds: float) -> list[TranscriptLine]:
        import openai

        audio = opus_encode(source, seconds=seconds)
        if not audio:
            raise ParseError(gettext_noop("unreadable audio: ffmpeg decoded no sound from it"))
        client = openai.OpenAI(
            api_key=settings.OPENAI_API_KEY or None,
            base_url=settings.OPENAI_BASE_URL or None,
            timeout=max(1.0, budget_remaining()),
            max_retries=settings.LLM_MAX_RETRIES,
        )
        try:
            response = client.audio.transcriptions.create(
                model=settings.OPENAI_TRANSCRIPTION_MODEL,
                file=("recording.ogg", audio, "audio/ogg"),
                response_format="verbose_json",
                timestamp_granularities=["segment"],
            )
        except openai.APIStatusError as exc:
            raise ParseError(
                gettext_noop("transcription by OpenAI failed: %(reason)s"), reason=f"{exc.status_code} {_message(exc)}"
            ) from exc
        except openai.APIError as exc:  # no answer: a timeout, a refused connection
            raise ParseError(gettext_noop("transcription by OpenAI failed: %(reason)s"), reason=exc.message) from exc
        usage = response.usage
        _usage_record(seconds=usage.seconds if usage is not None else response.duration)
        segments = response.segments or []
        if not segments and response.text.strip():
            return [TranscriptLine(start=0.0, text=response.text.strip())]
        return [TranscriptLine(start=part.start, text=part.text.strip()) for part in segments if part.text.strip()]


def _message(exc: Any) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error", body)
    return str(error.get("message") if isinstance(error, dict) and error.get("message") else exc.message)[:300]


def _usage_record(*, seconds: float) -> None:
    """The call's minutes for whom the current usage context names (the folder's owner while indexing)."""
    context = current_usage_context()
    if context is None:
        return
    per_minute = Decimal(str(settings.OPENAI_TRANSCRIPTION_USD_PER_MINUTE))
    cost = (Decimal(str(seconds)) / 60 * per_minute).quantize(Decimal("0.00000001"))
    try:
        usage_record(
            context=context, provider="openai", model=settings.OPENAI_TRANSCRIPTION_MODEL, usage=Usage(), cost=cost
        )
    except DatabaseError:
        # The transcript is already paid for and made: losing its record beats losing it.
        logger.exception("usage of a transcription call not recorded")
