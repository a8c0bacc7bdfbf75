"""The frame's own term of sigma (PiecePose.sigma_frame_mm): the anchor's error moves every piece
of a picture alike, so it counts against the game frame and cancels between pieces.

Truth is the render's: each piece's error in the game frame, and the difference of two pieces'
errors, against the sigma meant for each (sigma_mm; within_frame().sigma_mm)."""

from __future__ import annotations

import itertools
import math

import pytest

from referee.errors import InvalidInputError
from referee.observation import Observation, PiecePose


def test_within_frame_takes_the_frame_term_out_in_quadrature():
    p = PiecePose("tornado/boat-1", (200,), 500.0, 300.0, 0.0, 20.0, sigma_mm=5.0, sigma_theta_deg=1.0,
                  sigma_frame_mm=4.0, sigma_frame_theta_deg=0.6, placement_sigma_mm=0.5)
    q = p.within_frame()
    assert q.sigma_mm == pytest.approx(3.0) and q.sigma_theta_deg == pytest.approx(0.8)
    assert q.sigma_frame_mm == 0.0 and q.within_frame() == q
    # the placement term is the piece's own: it stays whole
    assert q.placement_sigma_mm == 0.5 and q.measure_sigma_mm == pytest.approx(math.sqrt(3.0 ** 2 - 0.5 ** 2))
    obs = Observation(pieces=(p,), frame={"kind": "piece"})
    assert obs.within_frame().pieces == (q,)


def test_the_frame_term_survives_json_and_a_negative_one_is_refused():
    p = PiecePose("tornado/boat-1", (200,), 1.0, 2.0, 0.0, 20.0, sigma_mm=2.0, sigma_frame_mm=1.5,
                  sigma_frame_theta_deg=0.2)
    back = PiecePose.from_json(p.to_json())
    assert back.sigma_frame_mm == 1.5 and back.sigma_frame_theta_deg == 0.2
    with pytest.raises(InvalidInputError, match="sigma_frame_mm"):
        PiecePose.from_json(p.to_json() | {"sigma_frame_mm": -1})


@pytest.fixture(scope="module")
def hand_stuck_one_sticker_gate():
    """Tuning table 1001 read with the nominal catalog: a copy whose stickers were stuck by hand, the
    start gate showing one sticker, so the frame is turned by where that sticker sits (about 1 degree:
    every piece 8-14 mm off in the game frame, all the same way)."""
    from synth.handstuck import hand_stuck_catalog
    from synth.render import render_scene
    from synth.scenes import build_scene
    from tests.bench.accuracy import camera_of
    from vision.pipeline import observe

    copy = hand_stuck_catalog(1001)
    image, truth = render_scene(build_scene("tornado", 1001, "1080p", close_call=True), True, catalog=copy)
    return observe(image, camera_of(truth), game="tornado"), {p["name"]: p for p in truth["pieces"]}


def test_a_turned_frame_is_in_the_frame_term_and_cancels_between_pieces(hand_stuck_one_sticker_gate):
    obs, truth = hand_stuck_one_sticker_gate
    far = [p for p in obs.pieces if p.name != obs.frame["anchor"] and math.hypot(p.x_mm, p.y_mm) > 400]
    assert len(far) >= 6
    for p in far:
        t = truth[p.name]
        err = math.hypot(p.x_mm - t["x_mm"], p.y_mm - t["y_mm"])
        assert err > 5.0 and err < 3 * p.measure_sigma_mm  # honest in the game frame, because of the frame term
        assert p.sigma_frame_mm > 0.8 * p.measure_sigma_mm
    # between two pieces the turn cancels: their errors' difference against the sigma without it
    worst = 0.0
    for a, b in itertools.combinations(far, 2):
        ta, tb = truth[a.name], truth[b.name]
        if math.hypot(a.x_mm - b.x_mm, a.y_mm - b.y_mm) > 150:  # the turn's lever arm differs farther apart
            continue
        ra, rb = a.within_frame(), b.within_frame()
        sigma = math.hypot(ra.sigma_mm, rb.sigma_mm)
        for axis in ("x_mm", "y_mm"):
            diff = (getattr(a, axis) - ta[axis]) - (getattr(b, axis) - tb[axis])
            worst = max(worst, abs(diff) / sigma)
    # 3 sigma, widened by how much more loosely this copy was stuck (synth/handstuck.py: 0.6 mm per
    # sticker) than the catalog's default tolerance it is read with says (boats 0.5 mm): a pair of
    # boats is mostly its two stickers' placement (boat-5 and boat-6 here, 2.8 mm apart in x)
    from referee.catalog import default_catalog
    from synth.handstuck import HAND_SIGMA_MM

    assert 0.0 < worst < 3.0 * HAND_SIGMA_MM / default_catalog().piece("tornado/boat-1").placement.sigma_mm
    assert max(p.within_frame().sigma_mm for p in far) < 0.5 * min(p.sigma_mm for p in far)


def _with_extra(obs: Observation, extra_mm: float, as_frame: bool) -> Observation:
    from dataclasses import replace

    return replace(obs, pieces=tuple(replace(
        p, sigma_mm=math.hypot(p.sigma_mm, extra_mm),
        sigma_frame_mm=math.hypot(p.sigma_frame_mm, extra_mm) if as_frame else p.sigma_frame_mm) for p in obs.pieces))


def test_tornado_calls_leave_the_frame_term_out():
    """A picture whose frame is 30 mm less certain rules exactly as before; 30 mm more of the pieces'
    own uncertainty does not (the control: the test would notice the term being counted)."""
    import json
    from pathlib import Path

    from referee.tornado.standings import TornadoGame, assess
    from calibration.camera import CameraModel
    from vision.imageio import load_image
    from vision.pipeline import observe

    folder = Path(__file__).resolve().parents[1] / "samples" / "tornado"
    truth = json.loads((folder / "000.truth.json").read_text())
    obs = observe(load_image(folder / "000.jpg"), CameraModel.from_json(truth["camera"], "truth"), game="tornado")
    game = TornadoGame.make(truth.get("course") or "tornado-circuit")

    def calls(o):
        return [(c.ahead, c.behind, c.verdict) for c in assess(game, o, nominal_fallback=True).calls]

    base = calls(obs)
    assert any(v == "ahead" for _, _, v in base)
    assert calls(_with_extra(obs, 30.0, as_frame=True)) == base
    assert calls(_with_extra(obs, 30.0, as_frame=False)) != base


def test_camera_share_counts_only_as_far_as_it_differs_between_two_boats():
    from types import SimpleNamespace

    from referee.tornado.course import BoundaryLine
    from referee.tornado.ranking import (Measure, Racer, _difference_sigma, camera_shared, curve_difference_sigma,
                                         straight_difference_sigma)

    def boat(name, x, sigma, camera, gradient=0.002):
        return Racer(name, 4.0, 1, Measure("distance_mm", 0.0, sigma), (x, 0.0), sigma, 0.0,
                     camera_mm=camera, camera_gradient=gradient)

    # 0.8 mm boats, 0.6 of it the camera's, 30 mm apart: the shares differ by 0.002 * 30 = 0.06 mm
    own_a, own_b, shared = camera_shared(boat("a", 0.0, 1.0, 0.6), boat("b", 30.0, 1.0, 0.6))
    assert own_a == pytest.approx(0.8) and own_b == pytest.approx(0.8) and shared == pytest.approx(0.06)
    # far apart it counts as if the two shares were independent (_difference_sigma): the sigmas
    # without sharing, in a straight and in a curve where the boats stand at different radii
    far_a, far_b = boat("a", 0.0, 1.0, 0.6), boat("b", 1e6, 1.0, 0.6)
    assert camera_shared(far_a, far_b)[2] == pytest.approx(2000.0)
    line = BoundaryLine(name="curve 1 entry", kind="gate", origin=(0.0, 0.0), along=(1.0, 0.0), forward=(0.0, 1.0),
                        half_length=150.0, sigma0=0.0, s2=300.0, sigma2=0.0, sigma_dir=0.0)
    straight = SimpleNamespace(zones=(SimpleNamespace(kind="straight", exit=line),), finished_zone=1, camera_field=None)
    assert _difference_sigma(straight, 0, far_a, far_b) == pytest.approx(
        straight_difference_sigma(line, (0.0, 0.0), 1.0, (1e6, 0.0), 1.0))
    curve = SimpleNamespace(zones=(SimpleNamespace(kind="curve", vertex=(0.0, 0.0), sigma_vertex=0.0),),
                            finished_zone=1, camera_field=None)
    near, far = boat("a", 100.0, 1.0, 0.6, gradient=0.05), boat("b", 400.0, 1.0, 0.6, gradient=0.05)
    assert _difference_sigma(curve, 0, near, far) == pytest.approx(
        curve_difference_sigma((0.0, 0.0), 0.0, (100.0, 0.0), 1.0, (400.0, 0.0), 1.0))
    # a boat without a camera share (fitted with the plane, or an old observation): nothing is shared
    assert camera_shared(boat("a", 0.0, 1.0, 0.0), boat("b", 30.0, 1.0, 0.6)) == (1.0, 1.0, 0.0)


@pytest.fixture(scope="module")
def hand_stuck_measured_curve():
    """Tuning table 1017 with its boats measured from one line-up photo: the hand-stuck course pieces
    tilt the plane fit, so every boat is 1.5-2 mm off in the game frame, all about the same way."""
    from tests.bench.handstuck import measured_close_call

    obs, truth = measured_close_call(1017)
    return obs, {p["name"]: p for p in truth["pieces"]}


def test_boats_share_the_camera_term_and_their_differences_stay_within_it(hand_stuck_measured_curve):
    from referee.tornado.ranking import Measure, Racer, camera_shared

    obs, truth = hand_stuck_measured_curve
    gradient = obs.frame["camera_field_gradient"]
    boats = [p.within_frame() for p in obs.pieces if p.name.startswith("tornado/boat-")]
    assert len(boats) >= 3 and 0 < gradient < 0.01
    for b in boats:
        t = truth[b.name]
        assert math.hypot(b.x_mm - t["x_mm"], b.y_mm - t["y_mm"]) > 1.0  # off together, through the camera
        assert b.sigma_camera_mm > 0.5 * b.measure_sigma_mm
    for a, b in itertools.combinations(boats, 2):
        ra, rb = (Racer(p.name, 4.0, 1, Measure("distance_mm", 0.0, p.sigma_mm), (p.x_mm, p.y_mm), p.sigma_mm,
                        camera_mm=p.sigma_camera_mm, camera_gradient=gradient) for p in (a, b))
        own_a, own_b, shared = camera_shared(ra, rb)
        sigma = math.sqrt(own_a ** 2 + own_b ** 2 + shared ** 2)
        assert sigma < 0.85 * math.hypot(a.sigma_mm, b.sigma_mm)
        for axis in ("x_mm", "y_mm"):
            diff = (getattr(a, axis) - truth[a.name][axis]) - (getattr(b, axis) - truth[b.name][axis])
            assert abs(diff) < 3 * sigma


def test_course_pieces_the_plane_fit_places_share_the_camera_term_too(hand_stuck_measured_curve):
    """The curve markers are read by the plane fit, through the same camera as the boats: on this
    hand-stuck copy most of their measurement's sigma is the camera's (the other stickers' placement
    widens it), and a boat's error against a marker's (the vertex its angle is measured at) stays
    within the pair's sigma with that share counted once, as far as it can differ between them.
    (A curve card's apex is not compared: its line is drawn through its sticker, not its apex.)"""
    from referee.tornado.ranking import Measure, Racer, camera_shared

    obs, truth = hand_stuck_measured_curve
    gradient = obs.frame["camera_field_gradient"]
    pieces = [p.within_frame() for p in obs.pieces]
    markers = [p for p in pieces if p.name.startswith("tornado/curve-marker")]
    boats = [p for p in pieces if p.name.startswith("tornado/boat-")]
    assert markers and len(boats) >= 3
    for p in markers + [p for p in pieces if p.name.startswith("tornado/curve-card")]:
        assert 0.5 * p.measure_sigma_mm < p.sigma_camera_mm <= p.measure_sigma_mm + 1e-9, p.name
    for boat, marker in itertools.product(boats, markers):
        ra, rb = (Racer(p.name, 4.0, 1, Measure("distance_mm", 0.0, p.sigma_mm), (p.x_mm, p.y_mm), p.sigma_mm,
                        camera_mm=p.sigma_camera_mm, camera_gradient=gradient) for p in (boat, marker))
        own_a, own_b, shared = camera_shared(ra, rb)
        sigma = math.sqrt(own_a ** 2 + own_b ** 2 + shared ** 2)
        for axis in ("x_mm", "y_mm"):
            diff = (getattr(boat, axis) - truth[boat.name][axis]) - (getattr(marker, axis) - truth[marker.name][axis])
            assert abs(diff) < 3 * sigma, f"{boat.name} / {marker.name} {axis}: off {diff:.2f} mm, sigma {sigma:.2f}"


def test_with_exact_stickers_the_plane_fits_pieces_claim_no_camera_share():
    """Only what a hand-stuck copy adds to the camera moves a course piece through the field: with
    every sticker in place the plane fit uses no placement prior, so each piece it places keeps its
    whole sigma as its own (the camera's share with it: counted once more, as refcam always did),
    while the boats, fitted on their own, still carry theirs."""
    from referee.catalog import default_catalog
    from synth.render import render_scene
    from synth.scenes import build_scene
    from tests.bench.handstuck import _observe, without_placement_term

    image, truth = render_scene(build_scene("tornado", 1017, "1080p", close_call=True), True,
                                catalog=default_catalog())
    obs = _observe(image, truth, without_placement_term(default_catalog()), "tornado")
    course = [p for p in obs.pieces if p.name.startswith(("tornado/curve-", "tornado/finish", "tornado/card-"))]
    boats = [p for p in obs.pieces if p.name.startswith("tornado/boat-")]
    assert course and boats
    assert all(p.sigma_camera_mm == 0.0 for p in course)
    assert all(p.sigma_camera_mm > 0.0 for p in boats)
