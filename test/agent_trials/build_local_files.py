"""The local files of the files trial (files_task.md): a figure and a 50 MB binary, made afresh each round.

usage: python test/agent_trials/build_local_files.py DIR
Writes DIR/amr_counts.png (a bar chart whose content the agent must describe: the values below) and
DIR/reads.bin (50 MiB of random bytes); prints the binary's sha256 for the check after the trial
(the dataset's bytes must equal the file's). Nothing here is shown to the agent but the two files.
"""
import hashlib
import os
import sys
from pathlib import Path

from PIL import Image, ImageDraw

#: What the figure shows: AMR genes found per isolate (the trial's check of the agent's description).
COUNTS = {"A": 3, "B": 7, "C": 1, "D": 5}


def draw_figure(path: Path) -> None:
    width, height, left, bottom = 640, 420, 70, 360
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    draw.text((180, 15), "AMR genes per isolate", fill="black")
    draw.line((left, 40, left, bottom), fill="black", width=2)
    draw.line((left, bottom, width - 30, bottom), fill="black", width=2)
    for tick in range(0, 9):
        y = bottom - tick * 38
        draw.line((left - 6, y, left, y), fill="black")
        draw.text((left - 25, y - 6), str(tick), fill="black")
    colours = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e"]
    for index, (isolate, count) in enumerate(COUNTS.items()):
        x = left + 40 + index * 130
        draw.rectangle((x, bottom - count * 38, x + 80, bottom), fill=colours[index], outline="black")
        draw.text((x + 30, bottom + 10), f"isolate {isolate}", fill="black")
    draw.text((width // 2 - 40, bottom + 35), "isolate", fill="black")
    image.save(path)


def main(directory: str) -> None:
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    draw_figure(folder / "amr_counts.png")
    binary = folder / "reads.bin"
    digest = hashlib.sha256()
    with open(binary, "wb") as out:
        for _ in range(50):
            chunk = os.urandom(1 << 20)
            digest.update(chunk)
            out.write(chunk)
    print(f"{binary} sha256={digest.hexdigest()} bytes={binary.stat().st_size}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
