"""`refcam measure tornado-boats` (SPEC section 4, boat line-up): each boat's sticker offset
along its heading from photos of the boats against the start gate, the limits it refuses
beyond, photos averaged, and a measured catalog every command takes with --catalog."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from dataclasses import replace

import pytest

from referee.catalog import default_catalog, load_user_catalog
from referee.observation import Observation, PiecePose
from referee.tornado.lineup.boats import (BoatReading, LineupError, combine, measure_boats, read_lineup,
                                         sigma_against_gate_mm)

# SPEC section 2: gate 40 mm deep, its line through its centre; boat 34 mm long around its deck
# centre. A square boat touching the gate's straight back side has its deck centre here:
TOUCHING_X = -40 / 2 - 34 / 2


def _boat(k: int, x: float, y: float, theta: float = 0.0, sigma: float = 0.1) -> PiecePose:
    return PiecePose(f"tornado/boat-{k}", (199 + k,), x, y, theta, 5.0, math.hypot(sigma, 0.5), 1.0,
                     placement_sigma_mm=0.5, placement_sigma_along_mm=0.5, placement_sigma_deg=1.0)


def _lineup(*boats: PiecePose) -> Observation:
    gate = PiecePose("tornado/start-gate", (260, 261), 0.0, 0.0, 0.0, 1.0, 0.35, 0.15, placement_sigma_mm=0.35,
                     placement_sigma_along_mm=0.35, placement_sigma_deg=0.15)
    return Observation((gate,) + boats, frame={"anchor": "tornado/start-gate"}, game="tornado")


def test_a_square_boat_reads_its_sticker_offset_along_its_heading():
    # the sticker 0.8 mm forward of its place: the camera puts the deck centre 0.8 mm forward
    readings, refused = read_lineup(_lineup(_boat(2, TOUCHING_X + 0.8, -50.0), _boat(4, TOUCHING_X - 0.3, 50.0)),
                                    default_catalog(), "a.jpg")
    assert refused == []
    got = {r.name: r for r in readings}
    assert got["tornado/boat-2"].offset_mm == pytest.approx(0.8, abs=0.01)
    assert got["tornado/boat-4"].offset_mm == pytest.approx(-0.3, abs=0.01)
    assert got["tornado/boat-2"].sigma_mm == pytest.approx(0.1, abs=1e-3)  # square: sideways placement adds nothing
    (one,) = combine([got["tornado/boat-2"]])
    # 50 mm from the gate's middle, the gate's own tilt tolerance (0.15 degrees) moves it 0.13 mm; the
    # boat's sticker may sit turned 1 degree on it, and the heading read from it moves the nose's reach
    # (11 cos t + 2 |sin t| + 6 for this 34 x 16 mm boat with 6 mm corners) by 11 (cos 1° - 1) + 2 sin 1°
    # (the catalog's outline is a 96-gon: its corners' reach within 0.002 mm of the arcs')
    turned = 11 * (math.cos(math.radians(1.0)) - 1) + 2 * math.sin(math.radians(1.0))
    assert turned == pytest.approx(0.0332, abs=1e-4)
    assert one.sigma_mm == pytest.approx(math.hypot(0.1, turned, 50 * math.radians(0.15)), abs=2e-3)


def test_a_turned_boat_touches_with_its_front_corner():
    # turned 4 degrees, a 34 x 16 mm boat with 6 mm corners reaches 11 cos 4 + 2 sin 4 + 6 ahead of its centre
    turn = 4.0
    reach = 11 * math.cos(math.radians(turn)) + 2 * math.sin(math.radians(turn)) + 6
    (r,), _ = read_lineup(_lineup(_boat(3, -20 - reach, 0.0, turn)), default_catalog(), "a.jpg")
    assert r.offset_mm == pytest.approx(0.0, abs=0.02) and r.turn_deg == pytest.approx(turn)
    assert r.sigma_mm > 0.1  # a sideways offset now reads partly along the gate


@pytest.mark.parametrize("offset, turn, refused", [
    (4.9, 0.0, ""), (5.1, 0.0, "reads 5.1 mm into the gate's straight side (at most 5 mm off touching)"),
    (-5.1, 0.0, "reads 5.1 mm short of"), (0.0, 4.9, ""), (0.0, -5.1, "is turned -5.1° from square to the gate"),
])
def test_the_line_up_limits(offset, turn, refused):
    reach = 11 * math.cos(math.radians(turn)) + 2 * abs(math.sin(math.radians(turn))) + 6
    x = -20 - reach + offset * math.cos(math.radians(turn))
    readings, refusals = read_lineup(_lineup(_boat(5, x, 10.0, turn)), default_catalog(), "b.jpg")
    if refused:
        assert readings == [] and len(refusals) == 1 and refusals[0].startswith("b.jpg: boat-5 ")
        assert refused in refusals[0]
    else:
        assert refusals == [] and readings[0].offset_mm == pytest.approx(offset, abs=0.02)


def test_a_photo_without_gate_or_boats_is_no_line_up():
    with pytest.raises(LineupError, match="the start gate is not in view"):
        read_lineup(Observation((_boat(1, 0, 0),), game="tornado"), default_catalog(), "c.jpg")
    with pytest.raises(LineupError, match="no boat in view"):
        read_lineup(_lineup(), default_catalog(), "c.jpg")
    with pytest.raises(LineupError, match="no boat could be measured: d.jpg: boat-1 is turned"):
        measure_boats([("d.jpg", _lineup(_boat(1, TOUCHING_X, 0, 9.0)))], default_catalog())


def test_photos_average_and_disagreeing_photos_widen_sigma():
    agree = combine([BoatReading("tornado/boat-1", 0.5, 0.2, 0.0), BoatReading("tornado/boat-1", 0.3, 0.2, 0.0)])
    assert agree[0].offset_mm == pytest.approx(0.4) and agree[0].sigma_mm == pytest.approx(0.2 / math.sqrt(2))
    apart = combine([BoatReading("tornado/boat-1", 1.5, 0.2, 0.0), BoatReading("tornado/boat-1", 0.3, 0.2, 0.0)])
    # scatter 0.6 mm from the mean at sigma 0.2: chi2 = 2 * 9 / 1 = 18, sigma x sqrt(18)
    assert apart[0].sigma_mm == pytest.approx(0.2 / math.sqrt(2) * math.sqrt(18))


def test_the_measured_catalog_moves_the_sticker_and_keeps_everything_else(tmp_path):
    got = measure_boats([("a.jpg", _lineup(_boat(2, TOUCHING_X + 0.8, 0.0)))], default_catalog())
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(got["catalog"]))
    mine = load_user_catalog(path)
    assert mine.sticker(201).x_mm == pytest.approx(0.8, abs=0.01) and mine.sticker(200).x_mm == 0.0
    placed = mine.piece("tornado/boat-2").placement
    # its own reading's 0.1 mm, its sticker's turn's 0.033 mm (above), and the gate's own 0.35 mm that every
    # boat of the line-up shares
    assert placed.measured and placed.shared_mm == 0.35 and placed.sigma_mm == 0.5
    assert placed.sigma_along_mm == pytest.approx(math.hypot(0.1, 0.033, 0.35), abs=2e-3)
    assert mine.piece("tornado/boat-1").placement.measured is False


def _refcam(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "webui.cli", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture(scope="module")
def lineup_photo(tmp_path_factory):
    """A rendered line-up of a hand-stuck copy, with its true camera file and the copy's catalog."""
    from synth.handstuck import hand_stuck_catalog, lineup_scene, write_photos

    copy = hand_stuck_catalog(7)
    (image,), camera = write_photos([lineup_scene(11)], tmp_path_factory.mktemp("lineup"), copy, "lineup")
    return image, camera, copy


def test_refcam_measure_on_a_rendered_line_up(lineup_photo, tmp_path):
    image, camera, copy = lineup_photo
    out = tmp_path / "my-catalog.json"
    run = _refcam("measure", "tornado-boats", str(image), "--camera-file", str(camera), "--out", str(out), "--json")
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert len(doc["boats"]) == 6 and doc["refused"] == []
    for name, m in doc["boats"].items():
        true_offset = copy.piece(name).sticker("main").x_mm
        # the gate's own hand-stuck error is shared by every boat: allow it beside the boat's sigma
        gate_x = sum(copy.piece("tornado/start-gate").sticker(s).x_mm for s in ("left", "right")) / 2
        assert abs(m["offset_mm"] - (true_offset - gate_x)) < 3 * m["sigma_mm"] + 0.05, (name, m, true_offset)
    observed = _refcam("observe", str(image), "--camera-file", str(camera), "--catalog", str(out), "--json")
    assert observed.returncode == 0, observed.stderr
    boat = next(p for p in json.loads(observed.stdout)["pieces"] if p["name"] == "tornado/boat-1")
    # the boat's own reading and, beside it, the gate's share (0.35 mm) that cancels only between boats
    assert boat["placement_shared_mm"] == 0.35
    assert boat["placement_sigma_along_mm"] == pytest.approx(
        math.hypot(doc["boats"]["tornado/boat-1"]["sigma_mm"], 0.35), abs=2e-3)
    text = _refcam("measure", "tornado-boats", str(image), "--camera-file", str(camera), "--out", str(out))
    assert "correction" in text.stdout and "boat-3" in text.stdout and f"wrote {out}" in text.stdout


@pytest.mark.parametrize("args, message", [
    (["measure", "tornado-boats", "missing.jpg", "--out", "x.json"], "missing.jpg"),
    (["measure", "tornado-boats", "samples/kang/004.jpg", "--out", "x.json"], "no tornado stickers"),
    (["measure", "tornado-boats", "samples/tornado/001.jpg", "--out", "x.txt"], "is a .json file"),
    (["measure", "kang-boats", "samples/tornado/001.jpg", "--out", "x.json"], "invalid choice"),
    # refcam measure tornado-finish (tests/test_measure_finish.py) takes its bad inputs the same way
    (["measure", "tornado-finish", "missing.jpg", "--out", "x.json"], "missing.jpg"),
    # the bundled game photo: no boat stands behind its finish line
    (["measure", "tornado-finish", "samples/tornado/001.jpg", "--out", "x.json"],
     "the finish line needs two measured boats touching it or more: 001.jpg: boat-2 reads 350.5 mm short of"),
])
def test_bad_inputs_are_one_line_and_exit_2(args, message, tmp_path):
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    args = [str(repo / a) if a.startswith("samples/") else a for a in args]
    run = _refcam(*args, cwd=tmp_path)
    assert run.returncode == 2 and message in run.stderr and run.stderr.count("\n") == 1, run.stderr
    assert not (tmp_path / "x.json").exists()


def test_the_line_ups_shared_term_counts_as_far_as_it_moves_two_boats_differently():
    """Both boats were measured against one gate whose stickers sit 0.35 mm (sigma) off its straight
    side: each boat alone carries it (a crossing), a pair heading alike in a straight does not (the
    one shift moves both measures alike), and in a curve it counts by 0.35 x (1/rho_a - 1/rho_b)."""
    from types import SimpleNamespace

    from referee.tornado.course import BoundaryLine
    from referee.tornado.ranking import Measure, Racer, _difference_sigma

    def boat(name, x, y, shared):
        return Racer(name, 4.0, 0, Measure("distance_mm", 0.0, 0.2), (x, y), math.hypot(0.2, shared),
                     math.hypot(0.1, shared), lineup_shared_mm=shared)

    line = BoundaryLine(name="finish line", kind="gate", origin=(500.0, 0.0), along=(0.0, 1.0), forward=(1.0, 0.0),
                        half_length=150.0, sigma0=0.0, s2=150.0, sigma2=0.0, sigma_dir=0.0)
    straight = SimpleNamespace(zones=(SimpleNamespace(kind="straight", exit=line),), finished_zone=1, camera_field=None)
    a, b = boat("a", 400.0, 20.0, 0.35), boat("b", 402.0, -20.0, 0.35)
    assert _difference_sigma(straight, 0, a, b) == pytest.approx(math.hypot(0.2, 0.2))
    # measured in different ways (one not by a line-up): nothing is taken as shared
    assert _difference_sigma(straight, 0, a, boat("b", 402.0, -20.0, 0.0)) == pytest.approx(
        math.hypot(math.hypot(0.2, 0.35), 0.2))
    curve = SimpleNamespace(zones=(SimpleNamespace(kind="curve", vertex=(0.0, 0.0), sigma_vertex=0.0),),
                            finished_zone=1, camera_field=None)
    near, far = boat("a", 100.0, 0.0, 0.35), boat("b", 0.0, 300.0, 0.35)
    own = math.hypot(0.2 / 100.0, 0.2 / 300.0)
    assert _difference_sigma(curve, 0, near, far) == pytest.approx(
        math.degrees(math.hypot(own, 0.35 / 100.0 - 0.35 / 300.0)))


def _looking_down(height_mm: float) -> list[list[float]]:
    """A camera straight above the gate's middle at height_mm, focal length 1000 px: game mm -> pixels."""
    return [[1000.0, 0.0, 0.0, 0.0], [0.0, 1000.0, 0.0, 0.0], [0.0, 0.0, -1.0, height_mm]]


@pytest.mark.parametrize("moved_height, expected_camera_mm", [
    (1000.0, 0.0),  # a camera moved nowhere (any shift or turn of it moves the gate and the boat alike)
    # 10 mm higher: a point at height z, x mm out, reads x (1010 - z) / (1000 - z); the boat's sticker at
    # z = 5, 37 mm behind the gate's line, moves 37 * 10 / 995 mm against it; the gate's stickers, on its line, not
    (1010.0, 37 * 10 / 995),
])
def test_a_boats_reading_counts_the_cameras_error_against_the_gate_not_its_own_share(moved_height,
                                                                                     expected_camera_mm):
    boat = replace(_boat(1, -37.0, -50.0, sigma=0.1), sigma_camera_mm=0.08)
    obs = _lineup(boat)
    obs = replace(obs, frame={"anchor": "tornado/start-gate",
                              "camera_field": {"camera": _looking_down(1000.0), "moved": [_looking_down(moved_height)]}})
    got = sigma_against_gate_mm(obs, boat, obs.piece("tornado/start-gate"), default_catalog(), (-37.0, -50.0))
    own = math.sqrt(0.1 ** 2 - 0.08 ** 2)  # the boat's measurement without its camera share
    assert got == pytest.approx(math.hypot(own, expected_camera_mm), abs=1e-4)
    # without a field (an older observation), the whole measurement sigma, as before
    assert sigma_against_gate_mm(_lineup(boat), boat, obs.piece("tornado/start-gate"), default_catalog(),
                                 (-37.0, -50.0)) == pytest.approx(0.1, abs=1e-6)


@pytest.mark.parametrize("turn", [3.0, -4.0, 4.9])
def test_a_turned_boats_sideways_placement_reads_along_the_gate_by_tan_turn(turn):
    """A boat turned t from square: its sticker's sideways placement (0.5 mm sd) reads along the
    gate's normal by 0.5 tan t, added in quadrature to the measurement's 0.1 mm: at 3 deg that is
    hypot(0.1, 0.0262) = 0.1034 mm (worked by hand; a square boat keeps 0.1)."""
    reach = 11 * math.cos(math.radians(turn)) + 2 * abs(math.sin(math.radians(turn))) + 6
    (r,), _ = read_lineup(_lineup(_boat(3, -20 - reach, 0.0, turn)), default_catalog(), "a.jpg")
    assert r.sigma_mm == pytest.approx(math.hypot(0.1, 0.5 * math.tan(math.radians(abs(turn)))), abs=2e-4)
    assert r.sigma_mm - 0.1 > 0.003  # the term is there, not lost in rounding
