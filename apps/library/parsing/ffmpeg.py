"""Debian's ffmpeg (``make audio``) reads every audio format for the transcribers: its duration
(ffprobe), 16 kHz mono PCM for PocketSphinx, a small Opus file for OpenAI's upload.

Each is a subprocess on a file on disk (an m4a's index may sit at its end, which a pipe cannot seek
to), given what is left of the file's time budget: a hostile file that hangs the decoder costs that
file only.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

from django.utils.translation import gettext_noop

from apps.core.stored_messages import StoredMessage
from apps.library.budget import budget_check, budget_remaining
from apps.library.parsing.base import ParseError, UnsupportedDocument

SAMPLE_RATE = 16_000  # what the speech models take: 16 kHz, mono, 16-bit little-endian samples
PCM_BYTES_PER_SECOND = SAMPLE_RATE * 2
# Speech at this bitrate is as clear to a recogniser as the original and makes an hour about 11 MB.
OPUS_BITRATE = 24_000
# "[mp3 @ 0x55eb3fb05800] " before a demuxer's message.
_ADDRESS = re.compile(r"^\[[^\]]* @ 0x[0-9a-f]+\]\s*")


def ffmpeg_available() -> None:
    """Raises ``UnsupportedDocument`` with what to install when ffmpeg or ffprobe is missing."""
    missing = [program for program in ("ffmpeg", "ffprobe") if shutil.which(program) is None]
    if missing:
        if len(missing) == 1:
            raise UnsupportedDocument(
                gettext_noop("audio needs %(program)s, which is not installed (run `make audio`)"), program=missing[0]
            )
        raise UnsupportedDocument(
            gettext_noop("audio needs ffmpeg and ffprobe, which are not installed (run `make audio`)")
        )


def audio_duration(source: Path) -> float | None:
    """Seconds of sound the file's header announces (None when it does not say); raises
    ``ParseError`` for a file that is not audio ffmpeg can read."""
    output = _run(
        [
            "ffprobe",
            "-v",
            "error",
            "-select_streams",
            "a:0",
            "-show_entries",
            "stream=index,duration:format=duration",
            "-of",
            "json",
            str(source),
        ],
        source=source,
        stage=StoredMessage(gettext_noop("reading the audio")),
    )
    try:
        info = json.loads(output or b"{}")
    except ValueError as exc:
        raise ParseError(gettext_noop("unreadable audio: ffprobe gave no description of it")) from exc
    streams = info.get("streams") or []
    if not streams:
        raise ParseError(gettext_noop("no sound to transcribe: the file has no audio stream"))
    for value in (streams[0].get("duration"), (info.get("format") or {}).get("duration")):
        try:
            return float(str(value))
        except ValueError:  # "N/A", or absent (None)
            continue
    return None


def pcm_decode(source: Path, *, seconds: float) -> bytes:
    """The first ``seconds`` of the first audio stream as 16 kHz mono 16-bit PCM."""
    output = ["-f", "s16le", "pipe:1"]
    return _run(
        _ffmpeg(source, seconds, output), source=source, stage=StoredMessage(gettext_noop("decoding the audio"))
    )


def opus_encode(source: Path, *, seconds: float) -> bytes:
    """The first ``seconds`` as mono Opus in an Ogg file, at a speech bitrate."""
    output = ["-c:a", "libopus", "-b:a", str(OPUS_BITRATE), "-f", "ogg", "pipe:1"]
    return _run(
        _ffmpeg(source, seconds, output), source=source, stage=StoredMessage(gettext_noop("encoding the audio"))
    )


def _ffmpeg(source: Path, seconds: float, output: list[str]) -> list[str]:
    reading = ["-nostdin", "-v", "error", "-i", str(source), "-map", "0:a:0", "-t", f"{seconds:.3f}"]
    return ["ffmpeg", *reading, "-ac", "1", "-ar", str(SAMPLE_RATE), *output]


def _run(command: list[str], *, source: Path, stage: str) -> bytes:
    try:
        result = subprocess.run(command, capture_output=True, timeout=max(1.0, budget_remaining()), check=False)
    except subprocess.TimeoutExpired as exc:
        budget_check(stage)  # says how big the file was and that it ran out of time
        raise ParseError(gettext_noop("%(stage)s took too long"), stage=stage) from exc
    except OSError as exc:  # the program vanished or could not start
        raise ParseError(gettext_noop("%(stage)s failed: %(reason)s"), stage=stage, reason=exc) from exc
    if result.returncode != 0:
        raise ParseError(
            gettext_noop("unreadable audio: damaged, or not a recording (ffmpeg: %(reason)s)"),
            reason=_reason(result.stderr, source),
        )
    return result.stdout


def _reason(stderr: bytes, source: Path) -> str:
    """ffmpeg's last two complaints, without the temporary file's path and the demuxer's address."""
    text = stderr.decode("utf-8", "replace").replace(f"{source}: ", "").replace(str(source), "the file")
    lines = [_ADDRESS.sub("", line).strip() for line in text.splitlines()]
    last = list(dict.fromkeys(line for line in lines if line))[-2:]
    return "; ".join(last)[:300] or "no reason given"
