"""Kang board read from observations: bundled stills (through the vision pipeline) and synthetic poses."""

import json
from pathlib import Path

import pytest

from referee.kang.board import Geometry, place_token, read_board
from referee.observation import Observation, PiecePose

ROOT = Path(__file__).resolve().parent.parent / "samples"
SAMPLES = sorted((ROOT / "kang").glob("*.jpg")) + sorted((ROOT / "kang-straddle").glob("*.jpg"))


def _pose(name, x, y, sigma=0.5):
    return PiecePose(name, (), x, y, 0.0, 4.0, sigma)


def _truth_place(p, geo):
    return place_token(_pose(p["name"], p["x_mm"], p["y_mm"], 0.0), "s", geo).where


@pytest.mark.parametrize("image", SAMPLES, ids=[f"{p.parent.name}/{p.stem}" for p in SAMPLES])
def test_every_seen_kangaroo_is_on_its_true_square(image):
    from calibration.camera import CameraModel
    from vision.imageio import load_image
    from vision.pipeline import observe

    stem = image.with_suffix("")
    truth = json.loads(Path(f"{stem}.truth.json").read_text())
    obs = observe(load_image(image), CameraModel.load(f"{stem}.camera.json"), game="kang")
    read = read_board(obs)
    geo = Geometry.from_catalog()
    true_place = {p["name"]: _truth_place(p, geo) for p in truth["pieces"]
                  if p["name"].startswith(("kang/small", "kang/medium", "kang/large"))}
    assert len(true_place) == 12
    wrong = {p.name: (p.where, true_place[p.name]) for p in read.places if p.where != true_place[p.name]}
    assert wrong == {}
    # tokens not seen are the ones a hand covers, and then the board says it cannot be judged
    assert len(read.places) + len(read.missing) == 12
    straddlers = [n for n, w in true_place.items() if w == "straddling"]
    assert read.complete == (not read.missing and not straddlers)
    if image.parent.name == "kang-straddle":  # these stills are there for their straddlers
        assert len(straddlers) == 2 and all(p.where == "straddling" for p in read.places if p.name in straddlers)
        assert all(len(p.candidates) >= 2 for p in read.places if p.where == "straddling")


def test_straddler_is_reported_not_snapped():
    geo = Geometry.from_catalog()
    a = geo.square_mm
    on_line = place_token(_pose("kang/small-1", 0.0 + 1.0, -a / 2), "s", geo)  # on the c/d border, row 3
    assert on_line.where == "straddling" and set(on_line.candidates) == {"c3", "d3"}
    corner = place_token(_pose("kang/small-1", 0.5, 0.5), "s", geo)
    assert corner.where == "straddling" and set(corner.candidates) == {"c3", "d3", "c4", "d4"}
    centred = place_token(_pose("kang/small-1", -a / 2 + 2.0, a / 2 - 2.0), "s", geo)
    assert centred.where == "c4"
    # a wider sigma widens the band of doubt
    near = place_token(_pose("kang/small-1", -a / 2 + 12.0, a / 2, 0.5), "s", geo)
    assert near.where == "c4"
    assert place_token(_pose("kang/small-1", -a / 2 + 12.0, a / 2, 5.0), "s", geo).where == "straddling"


def test_off_board_and_zones():
    geo = Geometry.from_catalog()
    half = geo.half_extent_mm
    assert place_token(_pose("kang/large-1", 0.0, -half - 25), "l", geo).where == "zone A"
    assert place_token(_pose("kang/large-1", 40.0, half + 25), "l", geo).where == "zone B"
    assert place_token(_pose("kang/large-1", half + 30, 0.0), "l", geo).where == "off board"
    assert place_token(_pose("kang/large-1", 0.0, -geo.rows * geo.square_mm / 2 - 25), "l", geo).where == "rim"
    obs = Observation((_pose("kang/large-1", half + 30, 0.0),), game="kang")
    read = read_board(obs)
    assert not read.complete and len(read.missing) == 11
    assert any("off the board and outside both start zones" in p for p in read.problems())
