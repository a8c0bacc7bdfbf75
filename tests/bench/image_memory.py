"""Peak memory of `refcam observe` on the largest pictures refcam accepts, against the
bundled 1920x1080 still measured in the same run (`make bench-memory`).

The largest accepted pictures sit just under vision.imageio's caps: 50 Mpx of 8-bit
colour (JPEG), 50 Mpx of 16-bit grey and the largest 16-bit colour PNG that fits the
decode budget. One just over a cap is refused before decoding; its peak is printed too.
Each run is a separate process; peak = the child's maximum resident set size.
"""

from __future__ import annotations

import argparse
import math
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

from vision.imageio import MAX_DECODE_BYTES, MAX_IMAGE_PIXELS

REPO = Path(__file__).resolve().parents[2]
STILL = REPO / "samples" / "tornado" / "001.jpg"


def peak_of(argv: list[str]) -> tuple[float, int, float, str]:
    """(peak MB, exit code, seconds, last stderr line) of one refcam run in a fresh process."""
    code = ("import resource, sys; from webui.cli import main; rc = main(sys.argv[1:]); "
            "sys.stderr.flush(); print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr); "
            "sys.exit(rc)")
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, cwd=REPO)
    seconds = time.monotonic() - t0
    lines = proc.stderr.strip().splitlines()
    peak_kb = int(lines[-1]) if lines and lines[-1].isdigit() else resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return peak_kb / 1024, proc.returncode, seconds, (lines[-2] if len(lines) > 1 else "")


def _table_like(width: int, height: int, channels: int, dtype) -> np.ndarray:
    """A smooth picture (a blown-up sample still), so the encoder is quick and the file small."""
    base = cv2.imread(str(STILL))
    big = cv2.resize(base, (width, height), interpolation=cv2.INTER_LINEAR)
    if channels == 1:
        big = cv2.cvtColor(big, cv2.COLOR_BGR2GRAY)
    if dtype == np.uint16:
        big = big.astype(np.uint16) * 257
    return big


def pictures(folder: Path) -> list[tuple[str, Path]]:
    side = int(math.sqrt(MAX_IMAGE_PIXELS / (4 / 3)))
    w8, h8 = side * 4 // 3 // 8 * 8, side // 8 * 8  # 4:3, just under the pixel cap
    rgb16_px = MAX_DECODE_BYTES // (6 + 3)  # 16-bit colour: decoded 6 bytes + the 8-bit 3 bytes per pixel
    s16 = int(math.sqrt(rgb16_px / (4 / 3)))
    w16, h16 = s16 * 4 // 3 // 8 * 8, s16 // 8 * 8
    out = []
    for name, (w, h, ch, dtype, ext) in {
        f"8-bit colour JPEG {w8}x{h8}": (w8, h8, 3, np.uint8, ".jpg"),
        f"16-bit grey PNG {w8}x{h8}": (w8, h8, 1, np.uint16, ".png"),
        f"16-bit colour PNG {w16}x{h16}": (w16, h16, 3, np.uint16, ".png"),
        f"16-bit colour PNG {w8}x{h8} (over the cap)": (w8, h8, 3, np.uint16, ".png"),
    }.items():
        path = folder / f"{len(out)}{ext}"
        params = [cv2.IMWRITE_PNG_COMPRESSION, 1] if ext == ".png" else [cv2.IMWRITE_JPEG_QUALITY, 90]
        assert cv2.imwrite(str(path), _table_like(w, h, ch, dtype), params)
        out.append((name, path))
    return out


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__).parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        base_mb, code, secs, _ = peak_of(["observe", str(STILL)])
        print(f"baseline: 1920x1080 sample still          peak {base_mb:7.0f} MB  {secs:5.1f} s  exit {code}")
        # made in a child process: a process's peak memory survives fork and exec, so the pictures
        # must never have been in this one
        made = subprocess.run([sys.executable, "-c", "import sys; from tests.bench.image_memory import pictures; "
                               "from pathlib import Path; [print(n + '|' + str(p)) for n, p in pictures(Path(sys.argv[1]))]",
                               tmp], capture_output=True, text=True, cwd=REPO, check=True)
        for line in made.stdout.splitlines():
            name, path = line.split("|", 1)
            mb, code, secs, last = peak_of(["observe", str(path)])
            verdict = "accepted" if code == 0 else f"exit {code}: {last[:90]}"
            print(f"{name:42s} peak {mb:7.0f} MB  x{mb / base_mb:5.1f} of baseline  {secs:5.1f} s  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
