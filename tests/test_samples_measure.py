"""The bundled line-up photos (samples/tornado-measure/, `make samples`): a newcomer runs the three
`refcam measure` commands on them in their order, and each measures the copy the photos show."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from referee.catalog import Catalog

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples" / "tornado-measure"
BOATS = [f"tornado/boat-{k}" for k in range(1, 7)]


def _measure(kind: str, folder: str, catalog: Path, out: Path, first: bool = False) -> dict:
    images = sorted(str(p) for p in (SAMPLES / folder).glob("*.jpg"))
    args = [sys.executable, "-m", "webui.cli", "measure", kind, *images,
            "--camera-file", str(SAMPLES / folder / "camera.json"), "--out", str(out), "--json"]
    if not first:
        args += ["--catalog", str(catalog)]
    run = subprocess.run(args, capture_output=True, text=True, cwd=REPO, timeout=300)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    if not (SAMPLES / "truth-catalog.json").is_file():
        pytest.skip("samples/tornado-measure is not generated (make samples)")
    out = tmp_path_factory.mktemp("measure") / "my-catalog.json"
    boats = _measure("tornado-boats", "boats", out, out, first=True)
    course = _measure("tornado-course", "course", out, out)
    finish = _measure("tornado-finish", "finish", out, out)
    truth = Catalog(json.loads((SAMPLES / "truth-catalog.json").read_text()), "truth")
    return boats, course, finish, truth


def test_the_boats_photo_measures_every_boat_of_the_copy(measured):
    boats, _, _, truth = measured
    assert sorted(boats["boats"]) == BOATS and boats["refused"] == []
    gate = truth.piece("tornado/start-gate")
    gate_x = sum(gate.sticker(s).x_mm for s in ("left", "right")) / 2
    for name, m in boats["boats"].items():
        true_offset = truth.piece(name).sticker("main").x_mm - gate_x
        # the gate's own hand-stuck offset is shared by every boat: allowed beside each boat's sigma
        assert abs(m["offset_mm"] - true_offset) < 3 * m["sigma_mm"] + 0.05, (name, m, true_offset)


def test_the_course_photos_find_each_markers_sticker_on_its_disc(measured):
    _, course, _, truth = measured
    assert course["refused"] == [] and len(course["markers"]) == 3
    for name, m in course["markers"].items():
        sticker = truth.piece(name).sticker("main")
        assert abs(m["x_mm"] - sticker.x_mm) < 3 * m["sigma_x_mm"] + 0.05, (name, m, sticker.x_mm)
        assert abs(m["y_mm"] - sticker.y_mm) < 3 * m["sigma_y_mm"] + 0.05, (name, m, sticker.y_mm)


def test_the_finish_photo_reads_the_line_from_every_measured_boat(measured):
    _, _, finish, _ = measured
    assert finish["refused"] == [] and finish["boat_readings"] == 6
    assert finish["finish_line"]["turn_sigma_deg"] < 0.15  # tighter than the line's default tolerance
