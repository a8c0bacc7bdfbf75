"""Stickers stuck by hand (SPEC section 2, placement tolerance): the catalog declares it per
family, every observed pose carries it as a term of its own, and a Tornado pair that only the
placement keeps from a confident call says so in words."""

from __future__ import annotations

import json
import math

import pytest

from referee.catalog import DEFAULT_CATALOG_PATH, Catalog, default_catalog, load_user_catalog
from referee.errors import CatalogError
from referee.observation import Observation, PiecePose
from referee.tornado import geometry as g
from referee.tornado.course import build_course
from referee.tornado.course_spec import load_course
from referee.tornado.layout import layout_poses
from referee.tornado.ranking import EQUIDISTANT
from referee.tornado.standings import TornadoGame, assess

MEASURE_MM = 0.15  # a sharp picture's own sigma for a boat


def test_single_hand_stuck_stickers_get_the_defaults_and_multi_sticker_pieces_less():
    catalog = default_catalog()
    boat = catalog.piece("tornado/boat-3").placement
    assert (boat.sigma_mm, boat.sigma_along_mm, boat.sigma_deg, boat.measured) == (0.5, 0.5, 1.0, False)
    for several in ("tornado/start-gate", "tornado/card-2-05", "kayak/tile-4", "kang/board"):
        p = catalog.piece(several).placement
        assert 0 < p.sigma_mm < 0.5 and 0 < p.sigma_deg < 1.0, several


@pytest.mark.parametrize("value, shown", [("a", "'a'"), (-0.1, "-0.1"), (True, "True")])
def test_a_bad_tolerance_is_refused_naming_its_field(tmp_path, value, shown):
    data = json.loads(DEFAULT_CATALOG_PATH.read_text())
    boat = next(f for f in data["families"] if f["family"] == "tornado/boat")
    boat["placement_sigma_deg"] = value
    path = tmp_path / "my.json"
    path.write_text(json.dumps(data))
    with pytest.raises(CatalogError, match=r"tornado/boat placement_sigma_deg must be a number of 0 or more, not "
                                           + shown):
        load_user_catalog(path)


@pytest.mark.parametrize("value, shown", [("lots", "'lots'"), (-1, "-1$"), (None, "None"), ([0.3], r"\[0.3\]"),
                                          (True, "True")])
def test_a_bad_shared_line_up_term_is_refused_quoting_it(tmp_path, value, shown):
    data = json.loads(DEFAULT_CATALOG_PATH.read_text())
    boat = next(f for f in data["families"] if f["family"] == "tornado/boat")["pieces"][0]
    boat.update(placement_sigma_along_mm=0.1, measured={"by": "refcam measure tornado-boats",
                                                        "shared_gate_sigma_mm": value})
    path = tmp_path / "my.json"
    path.write_text(json.dumps(data))
    with pytest.raises(CatalogError, match=r"tornado/boat-1 measured shared_gate_sigma_mm must be a number of 0 or "
                                           r"more, not " + shown):
        load_user_catalog(path)


def test_a_copy_without_tolerances_gets_the_packaged_ones_not_zero(tmp_path):
    data = json.loads(DEFAULT_CATALOG_PATH.read_text())
    for fam in data["families"]:
        fam.pop("placement_sigma_mm"), fam.pop("placement_sigma_deg")
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    assert load_user_catalog(path).piece("tornado/boat-1").placement.sigma_mm == 0.5


def test_a_piece_may_carry_its_own_measured_place_and_tolerance(tmp_path):
    data = json.loads(DEFAULT_CATALOG_PATH.read_text())
    boat = next(f for f in data["families"] if f["family"] == "tornado/boat")
    boat["pieces"][1].update({"slots": {"main": {"xy_mm": [0.7, 0.0], "rot_deg": 0}}, "placement_sigma_along_mm": 0.08})
    path = tmp_path / "measured.json"
    path.write_text(json.dumps(data))
    catalog = load_user_catalog(path)
    assert catalog.sticker(201).x_mm == 0.7 and catalog.sticker(200).x_mm == 0.0
    p = catalog.piece("tornado/boat-2").placement
    assert (p.sigma_along_mm, p.sigma_mm, p.measured) == (0.08, 0.5, True)
    assert "slots" not in catalog.piece("tornado/boat-2").attrs


def test_pose_json_shows_both_terms_and_reads_back():
    pose = PiecePose("tornado/boat-1", (200,), 10.0, 20.0, 0.0, 5.0, math.hypot(0.3, 0.5), math.hypot(0.2, 1.0),
                     placement_sigma_mm=0.5, placement_sigma_along_mm=0.5, placement_sigma_deg=1.0)
    d = pose.to_json()
    assert d["sigma_measure_mm"] == 0.3 and d["placement_sigma_mm"] == 0.5 and d["sigma_measure_theta_deg"] == 0.2
    assert PiecePose.from_json(d).measure_sigma_mm == pytest.approx(0.3, abs=1e-3)
    # measured along the boat: across-heading directions keep the default, along it the measurement
    measured = PiecePose("tornado/boat-1", (200,), 0, 0, 90.0, 5, 0.5, 1.0, placement_sigma_mm=0.5,
                         placement_sigma_along_mm=0.05, placement_sigma_deg=1.0)
    assert measured.placement_toward_mm(90.0) == pytest.approx(0.05)
    assert measured.placement_toward_mm(0.0) == pytest.approx(0.5)


def _boats_apart(delta_mm: float, along_mm: float = 0.5):
    """Two boats in the first straight of Tornado Circuit, side by side, boat-4 delta_mm nearer
    the zone's exit line than boat-2 (worked out from the line, not from the ranking)."""
    spec = load_course("tornado-circuit")
    course_pieces = layout_poses(spec, sigma_mm=0.05)
    course = build_course(spec, Observation(tuple(course_pieces), game="tornado"))
    exit_line = course.zones[0].exit
    heading = g.angle_deg(exit_line.forward)
    # 150 mm out along the curve's entry ray from its marker, 150 mm short of it
    start = g.add(g.add(exit_line.origin, g.scale(exit_line.along, 150.0)), g.scale(exit_line.forward, -150.0))
    p2 = g.add(start, g.scale(exit_line.along, -30.0))
    p4 = g.add(g.add(start, g.scale(exit_line.along, 30.0)), g.scale(exit_line.forward, delta_mm))
    boats = [PiecePose(f"tornado/boat-{k}", (199 + k,), x, y, heading, 5.0,
                       math.hypot(MEASURE_MM, max(0.5, along_mm)), math.hypot(0.3, 1.0),
                       placement_sigma_mm=0.5, placement_sigma_along_mm=along_mm, placement_sigma_deg=1.0)
             for k, (x, y) in ((2, p2), (4, p4))]
    return assess(TornadoGame.make(spec), Observation(tuple(course_pieces + boats), game="tornado"))


def test_a_pair_apart_only_by_placement_says_so_and_names_the_cure():
    # band with placement: 2 * sqrt(2) * hypot(0.15, 0.5) = 1.48 mm; without: 2 * sqrt(2) * 0.15 = 0.42 mm
    got = _boats_apart(0.9)
    (call,) = got.calls
    assert call.verdict == EQUIDISTANT and call.placement_band == pytest.approx(2 * math.sqrt(2) * 0.5)
    assert ("boat-4 and boat-2: 0.9 mm apart; the stickers' placement alone allows ±1.4 mm: measure your boats "
            "(`refcam measure tornado-boats`) to call this") in got.warnings


@pytest.mark.parametrize("delta, verdict, warned", [
    (1.47, EQUIDISTANT, True),  # last inside the band with placement
    (1.49, "ahead", False),  # first outside it: a confident call, nothing to warn
    # the measurement's own band: 2 * sqrt(2 * 0.15^2 + tilt^2) = 0.432 mm, tilt = the exit line's
    # direction error (its two 0.05 mm pieces 120 mm apart) over the boats' 60 mm along it
    (0.42, EQUIDISTANT, False),  # inside the measurement's own band: placement is not what limits it
    (0.44, EQUIDISTANT, True),  # first outside it
])
def test_the_warning_boundaries(delta, verdict, warned):
    got = _boats_apart(delta)
    (call,) = got.calls
    assert call.verdict == verdict
    assert any("placement alone" in w for w in got.warnings) is warned


def test_measured_boats_are_called_where_the_default_tolerance_could_not():
    # measured along the boat to 0.05 mm: 2 * sqrt(2) * hypot(0.15, 0.05) = 0.45 mm
    got = _boats_apart(0.9, along_mm=0.05)
    (call,) = got.calls
    assert call.verdict == "ahead" and call.ahead == "tornado/boat-4"
    assert not any("placement alone" in w for w in got.warnings)


def test_a_piece_seen_by_fewer_stickers_carries_what_they_leave_unmeasured():
    """A gate's 0.35 mm and 0.15 degree average its two end stickers, 300 mm apart. Seen by one end,
    its pose is that sticker's (0.35 x sqrt 2 = 0.49 mm, and the one-sticker turn of 2 degrees per mm
    of it, 0.99 degree), and that turn swings the gate's centre 150 mm away by 2.59 mm across its
    line (along the gate's +x, the way boats travel); a river tile likewise; a boat has one sticker
    and a measured piece its measured term whatever shows; a measured finish line (where its two stickers
    sit together) keeps it only while both show."""
    from types import SimpleNamespace

    from vision.pipeline import placement_seen

    cat = default_catalog()
    gate = cat.piece("tornado/finish-line")
    left, right = (gate.sticker(s).marker_id for s in ("left", "right"))
    both = placement_seen(gate, [SimpleNamespace(marker_id=left), SimpleNamespace(marker_id=right)])
    assert both == gate.placement
    one = placement_seen(gate, [SimpleNamespace(marker_id=right)])
    one_mm = 0.35 * math.sqrt(2)
    swing = 150.0 * math.radians(2.0 * one_mm)
    assert one.sigma_deg == pytest.approx(2.0 * one_mm)
    assert one.sigma_along_mm == pytest.approx(math.hypot(one_mm, swing), rel=1e-3)
    assert one.sigma_mm == pytest.approx(one_mm, rel=0.02)  # the sticker sits on the gate's line
    boat = cat.piece("tornado/boat-1")
    assert placement_seen(boat, [SimpleNamespace(marker_id=boat.stickers[0].marker_id)]) == boat.placement
    data = json.loads(json.dumps(cat.data))
    entry = next(p for fam in data["families"] for p in fam["pieces"] if p["name"] == "tornado/finish-line")
    entry.update(placement_sigma_along_mm=0.05, placement_sigma_deg=0.03)
    measured = Catalog(data, "finish measured").piece("tornado/finish-line")
    assert measured.placement.measured
    assert placement_seen(measured, [SimpleNamespace(marker_id=left), SimpleNamespace(marker_id=right)]) == \
        measured.placement
    # one end alone: its own turn, never measured, swings the line as before
    assert placement_seen(measured, [SimpleNamespace(marker_id=right)]) == one
