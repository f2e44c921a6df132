"""Recordings with known words for the audio tests and bench/ingest/transcription_wer.py: espeak-ng
(Debian's, `make espeak`) reads sentences aloud with silence around them, and ffmpeg turns the wav
into the other formats a phone or a recorder writes."""

from __future__ import annotations

import io
import subprocess
import tempfile
import wave
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# Of espeak-ng's voices, the one PocketSphinx's model hears best (bench/ingest/transcription_wer.py).
VOICE = "en-us+f2"
# Each format as its usual application writes it: m4a is AAC, ogg Vorbis.
FORMATS = {
    "wav": [],
    "mp3": ["-c:a", "libmp3lame", "-q:a", "4"],
    "ogg": ["-c:a", "libvorbis", "-q:a", "4"],
    "flac": ["-c:a", "flac"],
    "m4a": ["-c:a", "aac", "-b:a", "96k"],
}


@dataclass(frozen=True)
class Speech:
    wav: bytes
    starts: list[float]  # where each sentence begins, in seconds
    seconds: float  # the whole recording's length


def spoken_wav(
    sentences: Sequence[str], *, lead: float = 0.0, pause: float = 1.5, voice: str = VOICE, speed: int = 150
) -> Speech:
    """A mono wav (espeak-ng's 22,050 Hz) of the sentences, ``pause`` seconds of silence between
    them and ``lead`` before the first, as a memo starts after the record button is pressed."""
    rate = 22_050
    spoken: list[bytes] = []
    with tempfile.TemporaryDirectory(prefix="speech-") as directory:
        path = Path(directory) / "sentence.wav"
        for sentence in sentences:
            subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", str(path), sentence], check=True)
            with wave.open(str(path)) as sound:
                rate = sound.getframerate()
                spoken.append(sound.readframes(sound.getnframes()))
    samples = b"\0\0" * int(rate * lead)
    starts = []
    for index, frames in enumerate(spoken):
        if index:
            samples += b"\0\0" * int(rate * pause)
        starts.append(len(samples) / 2 / rate)
        samples += frames
    out = io.BytesIO()
    with wave.open(out, "wb") as memo:
        memo.setnchannels(1)
        memo.setsampwidth(2)
        memo.setframerate(rate)
        memo.writeframes(samples)
    return Speech(wav=out.getvalue(), starts=starts, seconds=len(samples) / 2 / rate)


def converted(wav: bytes, audio_format: str) -> bytes:
    """The wav re-encoded by ffmpeg as ``audio_format`` (a key of ``FORMATS``)."""
    if audio_format == "wav":
        return wav
    with tempfile.TemporaryDirectory(prefix="speech-") as directory:
        source, target = Path(directory) / "in.wav", Path(directory) / f"out.{audio_format}"
        source.write_bytes(wav)
        subprocess.run(
            ["ffmpeg", "-nostdin", "-v", "error", "-i", str(source), *FORMATS[audio_format], str(target)],
            check=True,
        )
        return target.read_bytes()


def streamed_webm(wav: bytes) -> bytes:
    """The wav as Opus in WebM written to a pipe, as a browser's recorder streams it: no length in its header."""
    return subprocess.run(
        ["ffmpeg", "-nostdin", "-v", "error", "-f", "wav", "-i", "pipe:0", "-c:a", "libopus", "-f", "webm", "pipe:1"],
        input=wav,
        capture_output=True,
        check=True,
    ).stdout
