"""`refcam measure tornado-finish` (SPEC section 4, finish line-up): where the finish line's own stickers
sit across it, from the measured boats touching its straight side; the limits it refuses beyond, the
measured catalog and its refusals."""

from __future__ import annotations

import json
import math

import pytest

from referee.catalog import Catalog, default_catalog, load_user_catalog
from referee.observation import Observation, PiecePose
from referee.tornado.lineup.boats import BoatMeasure, LineupError, measured_catalog
from referee.tornado.lineup.finish import measure_finish
from tests.test_measure_boats import _refcam  # its bad inputs are tested there, with tornado-boats'

FINISH = "tornado/finish-line"
# SPEC section 2: gate 40 mm deep, its line through its centre; boat 34 mm long around its deck centre
TOUCHING_X = -40 / 2 - 34 / 2
READING_SIGMA = 0.05  # each boat's own measured sticker (its photos' sigma)


def _measured_boats(ks=range(1, 7)) -> Catalog:
    """The default catalog with boats ks measured exactly in place (offset 0) against the start gate's middle."""
    measures = [BoatMeasure(f"tornado/boat-{k}", 0.0, READING_SIGMA, 0.0, 1, 0.0, READING_SIGMA) for k in ks]
    return Catalog(measured_catalog(default_catalog(), measures), "boats measured")


def _finish_lineup(offset_mm: float, tan_turn: float, ys, sigma: float = 0.05) -> Observation:
    """The finish line whose stickers sit offset_mm forward at its middle and tan_turn mm further per mm
    toward its left end: the camera reads its pose there (the line through its stickers). Each boat truly
    touches the true line's straight side at y, its own sticker in place."""
    theta = -math.degrees(math.atan(tan_turn))  # the stickers' line: its +y turned toward +x
    line = PiecePose(FINISH, (262, 263), offset_mm, 0.0, theta, 1.0, 0.05, 0.02)
    boats = tuple(PiecePose(f"tornado/boat-{k}", (199 + k,), TOUCHING_X, y, 0.0, 5.0, sigma, 0.5)
                  for k, y in enumerate(ys, start=1))
    return Observation((line,) + boats, frame={"anchor": FINISH}, game="tornado")


def test_boats_touching_the_line_read_its_stickers_offset_and_turn():
    ys = (-125.0, -75.0, -25.0, 25.0, 75.0, 125.0)
    got = measure_finish([("f.jpg", _finish_lineup(0.4, math.tan(math.radians(0.12)), ys))], _measured_boats())
    f = got["finish"]
    assert got["refusals"] == [] and got["boats"] == 6
    # (the boats stand square to the true line, which the reading takes for 0.12° off square to the stickers'
    # line: a boat's front corner then reaches 2 sin 0.12° = 0.004 mm further, alike for all)
    assert f["offset_mm"] == pytest.approx(0.4, abs=6e-3) and f["turn_deg"] == pytest.approx(0.12, abs=2e-3)
    # worked out by hand: each reading's sigma is the photo's 0.05 mm and the boat's own 0.05 mm; the start
    # gate's offset, which every boat was measured against (its tolerance across it, 0.35 mm, the boats' shared
    # term), cannot be told from the finish line's and comes along whole; its turn does not reach these boats
    # (each stood at the start gate's middle). So does the photo's own reading of the line, which every boat is
    # read against: 0.05 mm across it and 0.02° of heading (the pose above). Symmetric places: the offset and
    # the turn come apart.
    each = math.hypot(0.05, READING_SIGMA)
    assert f["offset_sigma_mm"] == pytest.approx(math.sqrt(each ** 2 / 6 + 0.35 ** 2 + 0.05 ** 2), rel=1e-3)
    turn = math.hypot(each / math.sqrt(sum(y * y for y in ys)), math.radians(0.02))
    assert f["turn_sigma_deg"] == pytest.approx(math.degrees(turn), rel=1e-3)


def test_the_measured_catalog_moves_the_stickers_across_the_line(tmp_path):
    tan_turn = math.tan(math.radians(-0.2))
    got = measure_finish([("f.jpg", _finish_lineup(-0.3, tan_turn, (-120.0, 0.0, 120.0)))], _measured_boats())
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(got["catalog"]))
    mine = load_user_catalog(path)
    spec, nominal = mine.piece(FINISH), default_catalog().piece(FINISH)
    for slot in ("left", "right"):  # at y = +150 and -150: the offset and the turn there
        st = spec.sticker(slot)
        assert st.x_mm == pytest.approx(-0.3 + tan_turn * st.y_mm, abs=1e-2)  # 0.007: the corner's reach, above
        assert st.y_mm == nominal.sticker(slot).y_mm and st.rot_deg == nominal.sticker(slot).rot_deg
    placed = spec.placement
    # its heading's tolerance is the fit's; across it and along it the catalog's stay
    assert placed.measured and placed.sigma_mm == nominal.placement.sigma_mm
    assert placed.sigma_along_mm == nominal.placement.sigma_along_mm
    assert placed.sigma_deg == pytest.approx(got["finish"]["turn_sigma_deg"], abs=1e-4)
    # the start gate and the boats are as they were
    assert mine.piece("tornado/start-gate").stickers == default_catalog().piece("tornado/start-gate").stickers
    assert mine.piece("tornado/boat-3").placement == _measured_boats().piece("tornado/boat-3").placement


def test_boats_not_measured_are_left_out_with_the_reason():
    obs = _finish_lineup(0.0, 0.0, (-120.0, 0.0, 120.0))
    got = measure_finish([("f.jpg", obs)], _measured_boats(ks=(1, 3)))
    assert got["boats"] == 2 and len(got["refusals"]) == 1
    assert got["refusals"][0].startswith("f.jpg: boat-2 is not measured in this catalog")
    assert "refcam measure tornado-boats" in got["refusals"][0]
    with pytest.raises(LineupError, match="two measured boats touching it or more: f.jpg: boat-1 is not measured"):
        measure_finish([("f.jpg", obs)], default_catalog())


@pytest.mark.parametrize("ys, refused", [((-30.0, 29.0), "stood 59 mm apart"), ((-30.0, 30.0), "")])
def test_the_boats_must_stand_apart_along_the_line_to_tell_its_turn(ys, refused):
    obs = _finish_lineup(0.0, 0.0, ys)
    if refused:
        with pytest.raises(LineupError, match=refused + r".*spread them along its whole length"):
            measure_finish([("f.jpg", obs)], _measured_boats())
    else:
        assert measure_finish([("f.jpg", obs)], _measured_boats())["boats"] == 2


def test_a_photo_without_the_finish_line_is_no_finish_line_up():
    obs = _finish_lineup(0.0, 0.0, (-120.0, 0.0, 120.0))
    no_line = Observation(tuple(p for p in obs.pieces if p.name != FINISH), frame={}, game="tornado")
    with pytest.raises(LineupError, match="g.jpg: the finish line is not in view"):
        measure_finish([("g.jpg", no_line)], _measured_boats())


def test_refcam_measure_tornado_finish_on_a_rendered_line_up(tmp_path):
    """A hand-stuck copy: its boats measured from their line-up photo, then its finish line from the
    boats behind it; the measured stickers land where the copy's are, within 2 sigma."""
    from synth.handstuck import finish_lineup_scene, hand_stuck_catalog, lineup_scene, write_photos

    copy = hand_stuck_catalog(3)
    (tmp_path / "boats").mkdir()
    (tmp_path / "finish").mkdir()
    (boats_photo,), boats_camera = write_photos([lineup_scene(5)], tmp_path / "boats", copy, "lineup")
    (finish_photo,), camera = write_photos([finish_lineup_scene(6)], tmp_path / "finish", copy, "lineup")
    boats, finish = tmp_path / "boats.json", tmp_path / "finish.json"
    run = _refcam("measure", "tornado-boats", str(boats_photo), "--camera-file", str(boats_camera), "--out",
                  str(boats))
    assert run.returncode == 0, run.stderr
    run = _refcam("measure", "tornado-finish", str(finish_photo), "--camera-file", str(camera), "--catalog",
                  str(boats), "--out", str(finish), "--json")
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert doc["boat_readings"] == 6 and doc["refused"] == []
    spec = load_user_catalog(finish).piece(FINISH)
    left, right = (copy.piece(FINISH).sticker(s) for s in ("left", "right"))
    true_deg = math.degrees(math.atan2(left.x_mm - right.x_mm, left.y_mm - right.y_mm))
    assert abs(doc["finish_line"]["turn_deg"] - true_deg) < 2 * doc["finish_line"]["turn_sigma_deg"]
    assert spec.placement.sigma_deg == pytest.approx(doc["finish_line"]["turn_sigma_deg"], abs=1e-3)
    text = _refcam("measure", "tornado-finish", str(finish_photo), "--camera-file", str(camera), "--catalog",
                   str(boats), "--out", str(tmp_path / "again.json"))
    assert "finish line, from 6 boat readings" in text.stdout
