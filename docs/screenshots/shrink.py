"""Shrinks the README's pictures: each PNG under the given folders (the tour's by default) becomes a
palette image of 256 colours, saved optimized. A screen of flat interface colours keeps its look,
at about a third of the size; a picture already shrunk is left as it is. Usage, from the checkout:

    .venv/bin/python docs/screenshots/shrink.py [folder ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

from PIL import Image

TOUR = Path(__file__).resolve().parent / "tour"
COLOURS = 256


def shrink(path: Path) -> None:
    with Image.open(path) as image:
        if image.mode == "P":
            return
        # Octree keeps small runs of one colour (text, icons) better than median cut, and is faster;
        # no dithering, which would speckle flat backgrounds and grow the file.
        small = image.convert("RGB").quantize(
            colors=COLOURS, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE
        )
    small.save(path, optimize=True)


def main(folders: list[Path]) -> int:
    pictures = sorted(picture for folder in folders for picture in folder.rglob("*.png"))
    for picture in pictures:
        shrink(picture)
    total = sum(picture.stat().st_size for picture in pictures)
    sys.stdout.write(f"{len(pictures)} pictures, {total / 1_000_000:.2f} MB\n")
    return 0


if __name__ == "__main__":
    sys.exit(main([Path(argument) for argument in sys.argv[1:]] or [TOUR]))
