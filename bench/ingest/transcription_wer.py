"""Word error rate of the offline transcriber (PocketSphinx, the way the indexer runs it:
``apps/library/parsing/speech.py``) on recordings made here: espeak-ng reads everyday voice-memo
sentences aloud, ffmpeg decodes them as the indexer does, and white noise is added at a few
signal-to-noise ratios. Printed per voice and noise level: WER (jiwer: substitutions, deletions
and insertions over the reference words, after lowercasing and dropping punctuation) and how many
seconds of recording are transcribed per second; then the machine's CPU (lscpu).

    make bench-audio                                    # or:
    .venv/bin/python bench/ingest/transcription_wer.py --voices en-us+f2 --snr clean 10 -v
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a file

from bench.ingest.common import django_without_database

django_without_database()

import jiwer  # noqa: E402

from apps.library.parsing.ffmpeg import pcm_decode  # noqa: E402
from apps.library.parsing.speech import pcm_transcribe  # noqa: E402
from tests.support.speech import spoken_wav  # noqa: E402

SENTENCES = [
    "The plumber is coming on Tuesday to fix the boiler in the basement.",
    "Remember to buy milk, eggs and bread on the way home.",
    "The dentist appointment moved to the end of March.",
    "Call the insurance company about the broken window.",
    "Pick up the children from school at half past three.",
    "The meeting with the bank has been moved to Friday morning.",
    "Send the signed contract back to the landlord this week.",
    "The car needs new tyres before the winter.",
    "Ask the neighbours to water the plants while we are away.",
    "Book a table for four people at the Italian restaurant.",
    "The electricity bill was much higher than last month.",
    "Renew the passport before the summer holiday.",
    "The library books are due back on Monday.",
    "Tell the accountant that the receipts are in the blue folder.",
    "We need to paint the kitchen walls a lighter colour.",
    "The gardener will cut the hedge next weekend.",
    "Check whether the train tickets can still be refunded.",
    "Mum's birthday present should arrive before Thursday.",
    "The washing machine makes a loud noise when it spins.",
    "Write down the questions for the doctor before the visit.",
    "The roof leaked again after the storm last night.",
    "Cancel the gym membership at the end of the month.",
    "The new sofa will be delivered between nine and noon.",
    "Remind me to back up the photos from the old phone.",
    "The school trip costs twenty pounds and needs a signed form.",
    "Order more coffee beans and a new water filter.",
    "The heating should be serviced once a year.",
    "Our flight leaves early in the morning from the north terminal.",
    "Put the spare key under the flower pot by the door.",
    "Compare the offers from the three moving companies.",
]
NOISE_LEVELS = {"clean": None, "20": 20.0, "10": 10.0, "5": 5.0}  # SNR in dB
_NORMALISE = jiwer.Compose(
    [
        jiwer.ToLowerCase(),
        jiwer.SubstituteRegexes({r"'s\b": "s", r"[^\w\s]": " "}),
        jiwer.RemoveMultipleSpaces(),
        jiwer.Strip(),
        jiwer.ReduceToListOfListOfWords(),
    ]
)


def recording(sentence: str, voice: str) -> np.ndarray:
    """The sentence as the indexer hears it: espeak-ng's wav through ffmpeg to 16 kHz mono PCM."""
    wav = spoken_wav([sentence], lead=0.3, voice=voice).wav
    with tempfile.TemporaryDirectory(prefix="wer-") as directory:
        path = Path(directory) / "memo.wav"
        path.write_bytes(wav)
        pcm = pcm_decode(path, seconds=60)
    return np.frombuffer(pcm, dtype=np.int16).astype(np.float64)


def with_noise(samples: np.ndarray, snr_db: float | None, rng: np.random.Generator) -> bytes:
    if snr_db is not None:
        # Against the speech's power only: leading silence and pauses would flatter it.
        speech = samples[np.abs(samples) > 0.02 * np.abs(samples).max()]
        noise_power = np.mean(speech**2) / 10 ** (snr_db / 10)
        samples = samples + rng.normal(0.0, np.sqrt(noise_power), samples.shape)
    return np.clip(samples, -32768, 32767).astype(np.int16).tobytes()


def cpu_model() -> str:
    output = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
    match = re.search(r"^Model name:\s*(.+)$", output, re.MULTILINE)
    return match.group(1).strip() if match else "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--voices", nargs="+", default=["en-us+f2", "en-us"], help="espeak-ng voices")
    parser.add_argument("--snr", nargs="+", default=list(NOISE_LEVELS), choices=list(NOISE_LEVELS))
    parser.add_argument("--sentences", type=int, default=len(SENTENCES))
    parser.add_argument("-v", "--verbose", action="store_true", help="print each transcript")
    args = parser.parse_args()
    sentences = SENTENCES[: args.sentences]
    pcm_transcribe(b"\0\0" * 16_000)  # loads the model outside the timings
    print(f"{len(sentences)} sentences per voice; white noise at the given SNR; PocketSphinx 5 en-us")
    print(f"{'voice':<12} {'noise':>8} {'WER':>7} {'audio s':>8} {'x real time':>12}")
    for voice in args.voices:
        recordings = [recording(sentence, voice) for sentence in sentences]
        audio_seconds = sum(len(samples) for samples in recordings) / 16_000
        for level in args.snr:
            rng = np.random.default_rng(39)
            hypotheses = []
            started = time.perf_counter()
            for samples in recordings:
                lines = pcm_transcribe(with_noise(samples, NOISE_LEVELS[level], rng))
                hypotheses.append(" ".join(line.text for line in lines))
            seconds = time.perf_counter() - started
            wer = jiwer.wer(sentences, hypotheses, reference_transform=_NORMALISE, hypothesis_transform=_NORMALISE)
            label = "clean" if level == "clean" else f"{level} dB"
            print(
                f"{voice:<12} {label:>8} {wer:>7.1%} {audio_seconds:>8.0f} {audio_seconds / seconds:>12.1f}", flush=True
            )
            if args.verbose:
                for reference, hypothesis in zip(sentences, hypotheses, strict=True):
                    print(f"    {reference}\n    -> {hypothesis}")
    print(f"CPU (lscpu): {cpu_model()}")


if __name__ == "__main__":
    main()
