"""`refcam measure tornado-course` (SPEC section 4, course line-up): each curve marker's sticker
offset from marker discs touching the start gate's straight side at several turns, each curve
card face's sticker offset across its edge and turn from cards flush along that side, the
limits it refuses beyond, the gate's own offset solved out, and a measured catalog every
command takes with --catalog."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from referee.catalog import Catalog, default_catalog, load_user_catalog
from referee.errors import CatalogError, InvalidInputError
from referee.observation import Observation, PiecePose
from referee.tornado.lineup.boats import LineupError, measure_boats
from referee.tornado.lineup.course import measure_course
from tests.test_measure_boats import _refcam  # `refcam ...` in a subprocess

# SPEC section 2 / catalog: the gate is 40 mm deep around its line, so its straight back side is
# x = -20; a curve marker is a 40 mm disc (touching: centre at x = -40); a curve card's sticker sits
# 120 mm out along its edge from the apex.
SIDE_X, MARKER_X, CARD_OUT = -20.0, -40.0, 120.0


def _pose(name: str, ids: tuple, x: float, y: float, theta: float, sigma: float = 0.05) -> PiecePose:
    return PiecePose(name, ids, x, y, theta, 1.0, math.hypot(sigma, 0.5), math.hypot(0.05, 1.0),
                     placement_sigma_mm=0.5, placement_sigma_along_mm=0.5, placement_sigma_deg=1.0)


def _marker(k: int, sticker_x: float, y: float, turn: float) -> PiecePose:
    """Marker k whose sticker centre the photo sees at (sticker_x, y), its sticker turned `turn`."""
    return _pose(f"tornado/curve-marker-{k}", (229 + k,), sticker_x, y, turn)


def _card(k: int, face_id: int, sticker: tuple, heading: float) -> PiecePose:
    """Curve card k showing sticker face_id, seen at `sticker` with heading `heading`: its pose is the
    sticker's less the catalog's 120 mm out along +x."""
    c, s = math.cos(math.radians(heading)), math.sin(math.radians(heading))
    return _pose(f"tornado/curve-card-{k}", (face_id,), sticker[0] - CARD_OUT * c, sticker[1] - CARD_OUT * s, heading)


def _photo(*pieces: PiecePose) -> Observation:
    gate = PiecePose("tornado/start-gate", (260, 261), 0.0, 0.0, 0.0, 1.0, 0.35, 0.15, placement_sigma_mm=0.35,
                     placement_sigma_along_mm=0.35, placement_sigma_deg=0.15)
    return Observation((gate,) + pieces, frame={"anchor": "tornado/start-gate"}, game="tornado")


def _three_turns(gate_offset: float = 0.3):
    # marker 1's sticker sits at (0.6, -0.4) mm in its frame; every reading is 0.3 mm further +x
    # (the gate's own stickers stuck off). Worked by hand, x of the sticker centre:
    # turn 0: -40 + 0.6 + 0.3; turn 90: -40 - (-0.4) + 0.3; turn 180: -40 - 0.6 + 0.3; turn 270: -40 - 0.4 + 0.3
    xs = {0: -39.1, 90: -39.3, 180: -40.3, 270: -40.1}
    return [(f"p{t}.jpg", _photo(_marker(1, x - 0.3 + gate_offset, 0.0, t))) for t, x in xs.items()]


def test_quarter_turns_recover_a_marker_sticker_and_the_gate_offset():
    got = measure_course(_three_turns(), default_catalog())
    (m,) = got["markers"]
    assert (m.x_mm, m.y_mm) == (pytest.approx(0.6, abs=0.02), pytest.approx(-0.4, abs=0.02))
    assert got["gate"]["offset_mm"] == pytest.approx(0.3, abs=0.02)
    assert m.sigma_x_mm < 0.1 and m.sigma_y_mm < 0.1 and got["refusals"] == []


@pytest.mark.parametrize("turns, refused", [
    ((0.0,), "curve-marker-2 was seen at one turn only"),
    ((0.0, 180.0), "lies turned alike in every photo (0° apart"),  # a half turn reads the same axis
    ((0.0, 29.0), "lies turned alike in every photo (29° apart"),
    ((0.0, 31.0), ""),
])
def test_a_marker_needs_turns_at_least_30_degrees_apart(turns, refused):
    photos = [(f"p{t}.jpg", _photo(_marker(2, MARKER_X, 0.0, t), _card(1, 240, (SIDE_X, 208.0), 90.0)))
              for t in turns]
    got = measure_course(photos, default_catalog())
    if refused:
        assert got["markers"] == [] and len(got["refusals"]) == 1 and refused in got["refusals"][0]
        assert "take another photo with it turned a quarter turn" in got["refusals"][0]
    else:
        assert [m.name for m in got["markers"]] == ["tornado/curve-marker-2"] and got["refusals"] == []


@pytest.mark.parametrize("off, refused", [(4.9, ""), (5.1, "reads 5.1 mm into the gate's straight side"),
                                          (-5.1, "reads 5.1 mm short of the gate's straight side")])
def test_a_marker_more_than_5_mm_off_touching_is_refused(off, refused):
    photos = [(f"p{t}.jpg", _photo(_marker(3, MARKER_X + (off if t == 0 else 0.0), 0.0, t))) for t in (0, 90, 180)]
    got = measure_course(photos, default_catalog())
    if refused:
        assert len(got["refusals"]) == 1 and got["refusals"][0].startswith("p0.jpg: curve-marker-3 ")
        assert refused in got["refusals"][0] and [abs(t) for t in got["markers"][0].turns_deg] == [90.0, 180.0]
    else:
        assert got["refusals"] == [] and len(got["markers"][0].turns_deg) == 3


def test_a_card_flush_along_the_gate_reads_its_sticker_across_the_edge_and_its_turn():
    # card 1, left-turn face (id 240), its edge along the gate's +y: the card's +y points to the gate's -x,
    # so a sticker 0.5 mm toward the card's -y sits at x = -19.5; turned 0.8 degrees on the card.
    # card 4, left-turn face (id 246), edge along -y: its +y points to the gate's +x: +0.3 mm -> x = -19.7
    got = measure_course([("a.jpg", _photo(_card(1, 240, (SIDE_X + 0.5, 208.0), 90.8),
                                           _card(4, 246, (SIDE_X + 0.3, -210.0), -90.0 - 0.6)))],
                         default_catalog())
    faces = {(f.name, f.slot): f for f in got["cards"]}
    one, four = faces[("tornado/curve-card-1", "left-turn")], faces[("tornado/curve-card-4", "left-turn")]
    assert (one.across_mm, one.turn_deg) == (pytest.approx(-0.5, abs=1e-6), pytest.approx(0.8, abs=1e-6))
    assert (four.across_mm, four.turn_deg) == (pytest.approx(0.3, abs=1e-6), pytest.approx(-0.6, abs=1e-6))
    # one photo without markers cannot tell the gate's own offset and turn: their tolerance stays in sigma
    assert one.sigma_mm > 0.35


@pytest.mark.parametrize("off, turn, refused", [
    (4.9, 0.0, ""), (5.1, 0.0, "reads 5.1 mm into the gate's straight side"),
    (0.0, 4.9, ""), (0.0, -5.1, "is turned -5.1° from the gate (at most 5°)"),
])
def test_a_card_more_than_5_mm_or_5_degrees_off_the_gate_is_refused(off, turn, refused):
    photo = _photo(_card(2, 242, (SIDE_X + off, 208.0), 90.0 + turn), _marker(1, MARKER_X, 0.0, 0.0))
    if refused:
        with pytest.raises(LineupError, match="no curve marker or curve card could be measured") as err:
            measure_course([("b.jpg", photo)], default_catalog())
        assert f"b.jpg: curve-card-2 (left-turn face) {refused}" in str(err.value)
    else:
        (face,) = measure_course([("b.jpg", photo)], default_catalog())["cards"]
        assert face.across_mm == pytest.approx(-off, abs=1e-6) and face.turn_deg == pytest.approx(turn, abs=1e-6)


def test_photos_without_gate_or_course_pieces_are_no_line_up():
    with pytest.raises(LineupError, match="c.jpg: the start gate is not in view"):
        measure_course([("c.jpg", Observation((_marker(1, 0, 0, 0),), game="tornado"))], default_catalog())
    with pytest.raises(LineupError, match="c.jpg: no curve marker or curve card in view"):
        measure_course([("c.jpg", _photo())], default_catalog())


def _both_faces_and_markers():
    """Marker 1 at four turns (as _three_turns, gate offset 0), marker 2 (its sticker in place) 55 mm
    along the gate, whose readings tell the gate's own turn, and card 3's two faces, one a photo:
    left-turn (id 244, a top card: wedge toward +y, edge along the gate's +y) and right-turn (id 245:
    mirrored, edge along -y)."""
    photos = [(label, _photo(*obs.pieces[1:], _marker(2, MARKER_X, 55.0, t)))
              for (label, obs), t in zip(_three_turns(0.0), (0, 90, 180, 270))]
    photos[0] = ("p0.jpg", _photo(*photos[0][1].pieces[1:], _card(3, 244, (SIDE_X - 0.4, 210.0), 90.5)))
    photos[1] = ("p90.jpg", _photo(*photos[1][1].pieces[1:], _card(3, 245, (SIDE_X + 0.2, -205.0), -90.0 - 1.0)))
    return photos


def test_the_measured_catalog_round_trips_and_builds_on_a_base(tmp_path):
    got = measure_course(_both_faces_and_markers(), default_catalog())
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(got["catalog"]))
    mine = load_user_catalog(path)
    assert (mine.sticker(230).x_mm, mine.sticker(230).y_mm) == (pytest.approx(0.6, abs=0.02),
                                                                pytest.approx(-0.4, abs=0.02))
    marker = mine.piece("tornado/curve-marker-1").placement
    assert marker.measured and marker.sigma_mm < 0.1 and marker.sigma_along_mm < 0.1
    assert (mine.sticker(244).x_mm, mine.sticker(244).y_mm) == (120.0, pytest.approx(0.4, abs=0.01))
    assert mine.sticker(244).rot_deg == pytest.approx(0.5, abs=0.01) and mine.sticker(244).face == "left-turn"
    assert (mine.sticker(245).y_mm, mine.sticker(245).rot_deg) == (pytest.approx(0.2, abs=0.01),
                                                                    pytest.approx(-1.0, abs=0.01))
    card = mine.piece("tornado/curve-card-3").placement
    # across the edge and the turn: both faces measured; along the edge: the default, not measured
    assert card.measured and card.sigma_mm < 0.5 and card.sigma_deg < 1.0 and card.sigma_along_mm == 0.5
    assert mine.piece("tornado/curve-marker-3").placement.measured is False
    # the boats measured on it keep the course, and the course measured again keeps the boats
    touching = -20 - 34 / 2
    boat = PiecePose("tornado/boat-2", (201,), touching + 0.8, 0.0, 0.0, 5.0, math.hypot(0.1, 0.5), 1.0,
                     placement_sigma_mm=0.5, placement_sigma_along_mm=0.5, placement_sigma_deg=1.0)
    both = Catalog(measure_boats([("l.jpg", _photo(boat))], mine)["catalog"], "boats on course")
    assert both.sticker(244).y_mm == mine.sticker(244).y_mm and both.sticker(201).x_mm == pytest.approx(0.8, abs=0.01)
    again = Catalog(measure_course(_three_turns(0.0), both)["catalog"], "course on boats")
    assert again.sticker(201).x_mm == both.sticker(201).x_mm and again.sticker(244).y_mm == mine.sticker(244).y_mm
    assert again.piece("tornado/curve-card-3").placement == card  # a face measured before stays measured


def test_the_boundary_line_runs_along_the_card_edge_where_the_sticker_sits_off_it():
    from referee.tornado.course import _card_sticker_point

    got = measure_course(_both_faces_and_markers(), default_catalog())
    mine = Catalog(got["catalog"], "mine")
    # card 3's left-turn sticker sits 0.4 mm toward the card's +y and is turned 0.5 degrees: a game photo
    # of the card with its apex at the origin and its edge along +x sees the sticker at (120, 0.4) heading 0.5
    seen = _pose("tornado/curve-card-3", (244,), 0.0, 0.0, 0.0)
    sticker = mine.sticker(244)
    theta = 0.5 - sticker.rot_deg
    c, s = math.cos(math.radians(theta)), math.sin(math.radians(theta))
    apex = (120.0 - (c * sticker.x_mm - s * sticker.y_mm), 0.4 - (s * sticker.x_mm + c * sticker.y_mm))
    point = _card_sticker_point(_pose("tornado/curve-card-3", (244,), apex[0], apex[1], theta), mine)
    assert point == (pytest.approx(120.0, abs=0.02), pytest.approx(0.0, abs=0.02))
    assert _card_sticker_point(seen, default_catalog()) == (pytest.approx(120.0), pytest.approx(0.0))


@pytest.fixture(scope="module")
def course_photos(tmp_path_factory):
    """The course line-up photos of a hand-stuck copy, with their true camera file and the copy's catalog."""
    from synth.handstuck import COURSE_LINEUP_PHOTOS, course_lineup_scene, hand_stuck_catalog, write_photos

    copy = hand_stuck_catalog(7)
    images, camera = write_photos([course_lineup_scene(11, k) for k in range(COURSE_LINEUP_PHOTOS)],
                                  tmp_path_factory.mktemp("course"), copy, "course")
    return images, camera, copy


def test_refcam_measure_course_recovers_a_hand_stuck_copy(course_photos, tmp_path):
    images, camera, copy = course_photos
    out = tmp_path / "my-catalog.json"
    run = _refcam("measure", "tornado-course", *images, "--camera-file", str(camera), "--out", str(out), "--json")
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert len(doc["markers"]) == 3 and doc["refused"] == []
    for name, m in doc["markers"].items():
        # the copy's sticker offset, in the frame of the sticker as it is turned on the marker
        st = copy.piece(name).stickers[0]
        r = math.radians(st.rot_deg)
        true = (st.x_mm * math.cos(r) + st.y_mm * math.sin(r), -st.x_mm * math.sin(r) + st.y_mm * math.cos(r))
        assert abs(m["x_mm"] - true[0]) < 3 * m["sigma_x_mm"] and abs(m["y_mm"] - true[1]) < 3 * m["sigma_y_mm"]
        assert m["sigma_x_mm"] < 0.2 and m["sigma_y_mm"] < 0.2 and m["photos"] == len(images)
    faces = [(name, slot, f) for name, per in doc["curve_cards"].items() for slot, f in per.items()]
    assert len(faces) == 12
    for name, slot, f in faces:
        st = copy.piece(name).sticker(slot)
        assert abs(f["across_mm"] - st.y_mm) < 3 * f["sigma_mm"], (name, slot, f, st)
        assert abs(f["turn_deg"] - st.rot_deg) < 3 * f["sigma_deg"], (name, slot, f, st)
    observed = _refcam("observe", images[0], "--camera-file", str(camera), "--catalog", str(out), "--json")
    assert observed.returncode == 0, observed.stderr
    marker = next(p for p in json.loads(observed.stdout)["pieces"] if p["name"] == "tornado/curve-marker-1")
    assert marker["placement_sigma_along_mm"] == pytest.approx(doc["markers"]["tornado/curve-marker-1"]["sigma_x_mm"],
                                                               abs=1e-3)
    text = _refcam("measure", "tornado-course", *images[:2], "--camera-file", str(camera), "--out", str(out))
    assert text.returncode == 0 and "curve-marker-2" in text.stdout and "across the edge" in text.stdout
    assert f"wrote {out}" in text.stdout


@pytest.mark.parametrize("args, message", [
    (["missing.jpg"], "missing.jpg"),
    (["samples/kang/004.jpg"], "no tornado stickers"),
    (["samples/tornado/001.jpg"], "no curve marker or curve card could be measured: 001.jpg: curve-card-"),
    (["course-1.jpg", "--out", "x.txt"], "is a .json file"),
])
def test_bad_inputs_are_one_line_and_exit_2(args, message, tmp_path, course_photos):
    repo = Path(__file__).resolve().parents[1]
    images, _, _ = course_photos
    args = [str(repo / a) if a.startswith("samples/") else a for a in args]
    args = [images[0] if a == "course-1.jpg" else a for a in args]
    if "--out" not in args:
        args += ["--out", "x.json"]
    run = _refcam("measure", "tornado-course", *args, cwd=tmp_path)
    assert run.returncode == 2 and message in run.stderr and run.stderr.count("\n") == 1, run.stderr
    assert not (tmp_path / "x.json").exists()


def test_a_boat_line_up_is_no_course_line_up(tmp_path):
    from synth.handstuck import lineup_scene, write_photos

    (image,), _ = write_photos([lineup_scene(3, ["tornado/boat-1"])], tmp_path, default_catalog(), "boats")
    run = _refcam("measure", "tornado-course", image, "--out", str(tmp_path / "x.json"))
    assert run.returncode == 2 and "boats-1.jpg: no curve marker or curve card in view" in run.stderr
    assert run.stderr.count("\n") == 1 and issubclass(LineupError, InvalidInputError)


def test_the_course_line_up_takes_the_gates_own_offset_and_turn_off_the_boats_measured_against_it():
    # The gate's stickers sit so that every reading against it is 0.3 mm + 0.002 rad times its place along
    # the gate further +x. Worked by hand: boat-2 (sticker 0.8 mm forward) stands at y = -50 and reads
    # 0.8 + 0.3 - 0.1 = 1.0; boat-4 (0.3 mm back) at y = +50 reads -0.3 + 0.3 + 0.1 = 0.1.
    gate_offset, gate_turn = 0.3, 0.002
    touching = -20 - 34 / 2

    def boat(k: int, reads: float, y: float) -> PiecePose:
        return PiecePose(f"tornado/boat-{k}", (199 + k,), touching + reads, y, 0.0, 5.0, math.hypot(0.05, 0.5), 1.0,
                         placement_sigma_mm=0.5, placement_sigma_along_mm=0.5, placement_sigma_deg=1.0)

    boats = Catalog(measure_boats([("l.jpg", _photo(boat(2, 1.0, -50.0), boat(4, 0.1, 50.0)))],
                                  default_catalog())["catalog"], "boats")
    assert boats.sticker(201).x_mm == pytest.approx(1.0, abs=0.01)  # the gate's terms are still in it
    before = boats.piece("tornado/boat-2").placement
    # three markers at y = -55, 0, 55, each seen at four quarter turns, every reading with the gate's terms
    offsets = {1: (0.6, -0.4), 2: (-0.2, 0.3), 3: (0.1, 0.5)}
    photos = []
    for turn in (0, 90, 180, 270):
        c, s = math.cos(math.radians(turn)), math.sin(math.radians(turn))
        photos.append((f"c{turn}.jpg", _photo(*(
            _marker(k, -40 + c * sx - s * sy + gate_offset + gate_turn * y, y, turn)
            for k, (sx, sy), y in ((k, offsets[k], y) for k, y in zip((1, 2, 3), (-55.0, 0.0, 55.0)))))))
    got = measure_course(photos, boats)
    assert got["gate"]["offset_mm"] == pytest.approx(gate_offset, abs=0.02)
    assert math.radians(got["gate"]["turn_deg"]) == pytest.approx(gate_turn, abs=2e-4)
    both = Catalog(got["catalog"], "boats and course")
    assert both.sticker(201).x_mm == pytest.approx(0.8, abs=0.03)
    assert both.sticker(203).x_mm == pytest.approx(-0.3, abs=0.03)
    after = both.piece("tornado/boat-2").placement
    # the gate's catalog tolerance (0.35 mm shared, 0.15 degrees over 50 mm) gives way to what was measured
    assert after.shared_mm < 0.1 < before.shared_mm and after.sigma_along_mm < before.sigma_along_mm
    # measured once: the course measured again does not take the gate's terms off a second time
    again = Catalog(measure_course(photos, both)["catalog"], "again")
    assert again.sticker(201).x_mm == both.sticker(201).x_mm
    # the other order: the course first, then the boats on its catalog, corrected at once
    course_first = Catalog(measure_course(photos, default_catalog())["catalog"], "course")
    boats_after = Catalog(measure_boats([("l.jpg", _photo(boat(2, 1.0, -50.0), boat(4, 0.1, 50.0)))],
                                        course_first)["catalog"], "boats after")
    assert boats_after.sticker(201).x_mm == pytest.approx(both.sticker(201).x_mm, abs=1e-3)


@pytest.mark.parametrize("terms, message", [
    ({"offset_mm": "0.3", "offset_sigma_mm": 0.02, "turn_deg": 0.1, "turn_sigma_deg": 0.01},
     "tornado/start-gate measured gate_terms offset_mm must be a number, not '0.3'"),
    ({"offset_mm": 0.3, "offset_sigma_mm": -0.02, "turn_deg": 0.1, "turn_sigma_deg": 0.01},
     "tornado/start-gate measured gate_terms offset_sigma_mm must be a number of 0 or more, not -0.02"),
    ({"offset_mm": 0.3, "offset_sigma_mm": 0.02, "turn_deg": 0.1}, "turn_sigma_deg must be a number of 0 or more, not None"),
    (["0.3"], "tornado/start-gate measured gate_terms offset_mm must be a number, not None"),
])
def test_a_hand_edited_gate_measure_is_refused_naming_the_field(terms, message, tmp_path):
    data = measure_course(_three_turns(), default_catalog())["catalog"]
    gate = next(p for fam in data["families"] for p in fam["pieces"] if p["name"] == "tornado/start-gate")
    gate["measured"]["gate_terms"] = terms
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data))
    with pytest.raises(CatalogError, match=re.escape(message)):
        load_user_catalog(path)


@pytest.mark.parametrize("key, value, message", [
    ("along_gate_mm", "left", "tornado/boat-2 measured along_gate_mm must be a number, not 'left'"),
    ("sigma_reading_mm", -0.1, "tornado/boat-2 measured sigma_reading_mm must be a number of 0 or more, not -0.1"),
    ("gate_taken_off", {"offset_mm": 0.3}, "tornado/boat-2 measured gate_taken_off turn_deg must be a number, not None"),
])
def test_a_hand_edited_boat_measure_is_refused_naming_the_field(key, value, message, tmp_path):
    touching = -20 - 34 / 2
    boat = PiecePose("tornado/boat-2", (201,), touching + 0.8, 0.0, 0.0, 5.0, math.hypot(0.1, 0.5), 1.0,
                     placement_sigma_mm=0.5, placement_sigma_along_mm=0.5, placement_sigma_deg=1.0)
    data = measure_boats([("l.jpg", _photo(boat))], default_catalog())["catalog"]
    entry = next(p for fam in data["families"] for p in fam["pieces"] if p["name"] == "tornado/boat-2")
    entry["measured"][key] = value
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data))
    with pytest.raises(CatalogError, match=re.escape(message)):
        load_user_catalog(path)
