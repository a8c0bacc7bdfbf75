"""A player reads the verdict first: every command's first line says, in plain words, what it
found or ruled, before any table, notation or measurement."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
VERDICTS = ("Legal: ", "Illegal: ", "Cannot tell", "No change: ", "Read: ", "Board read: ", "River read: ",
            "Replayed: ", "No rulings: ", "Measured: ", "Ranking: ", "Calibrated")


def _first_line(*args: str) -> str:
    run = subprocess.run([sys.executable, "-m", "webui.cli", *args], capture_output=True, text=True, cwd=REPO,
                         timeout=600)
    assert run.returncode == 0, run.stderr
    return run.stdout.splitlines()[0]


CASES = {
    "observe": ("observe", "samples/kang/004.jpg", "--camera-file", "samples/kang/004.camera.json"),
    "kang state": ("kang", "state", "samples/kang/004.jpg"),
    "kang state, kangaroos not placed": ("kang", "state", "samples/kang-straddle/000.jpg"),
    "kang check": ("kang", "check", "start", "6/6/6/6/6/6 ssmmll ssmmll A 0-0 -"),
    "kayak state": ("kayak", "state", "samples/kayak/001.jpg"),
    "kayak check": ("kayak", "check", "0A 1@0.0.1", "0A/1A 1@1.0.1"),
    "rank": ("rank", "samples/tornado/001.jpg", "--course", "roundabout-river",
             "--camera-file", "samples/tornado/001.camera.json"),
    "replay": ("replay", "samples/sessions/kang", "--quick"),
    "measure": ("measure", "tornado-boats", "samples/tornado-measure/boats/boats-1.jpg",
                "--camera-file", "samples/tornado-measure/boats/camera.json"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_first_line_is_the_verdict(name, tmp_path):
    args = CASES[name]
    for arg in args:
        if arg.startswith("samples/") and not (REPO / arg).exists():
            pytest.skip(f"{arg} is not generated (make samples)")
    if args[0] == "measure":
        args = args + ("--out", str(tmp_path / "my-catalog.json"))
    first = _first_line(*args)
    assert first.startswith(VERDICTS), first
    assert not first.startswith(("before:", "river:", "game:", "piece", "rank ", "boat ")), first


def test_a_board_with_kangaroos_not_placed_says_so_first():
    if not (REPO / "samples/kang-straddle/000.jpg").exists():
        pytest.skip("samples/kang-straddle is not generated (make samples)")
    assert _first_line("kang", "state", "samples/kang-straddle/000.jpg").startswith("Cannot tell the whole board: ")
