"""Hand-stuck copies for the renderer (synth/handstuck.py): one copy is the same in every
picture, its stickers sit off their catalog places by about the asked sigma, and the line-up
scene stands each boat with its nose on the gate's straight side."""

from __future__ import annotations

import math

import numpy as np
import pytest

from referee.catalog import default_catalog
from synth.handstuck import HAND_SIGMA_DEG, HAND_SIGMA_MM, hand_stuck_catalog, lineup_pieces


def test_a_copy_is_the_same_in_every_picture_and_copies_differ():
    a, b, other = hand_stuck_catalog(5), hand_stuck_catalog(5), hand_stuck_catalog(6)
    assert a.sticker(203) == b.sticker(203)
    assert a.sticker(203) != other.sticker(203)


def test_stickers_sit_off_by_about_the_asked_sigma():
    nominal, copy = default_catalog(), hand_stuck_catalog(11)
    dx = np.array([copy.sticker(s.marker_id).x_mm - s.x_mm for s in nominal.stickers()])
    dr = np.array([copy.sticker(s.marker_id).rot_deg - s.rot_deg for s in nominal.stickers()])
    # ~400 stickers: the sample sd lies within 10 % of the asked one
    assert abs(dx.std() / HAND_SIGMA_MM - 1) < 0.1 and abs(dr.std() / HAND_SIGMA_DEG - 1) < 0.1
    # the ids, sizes and heights are the protocol's
    assert copy.known_ids() == nominal.known_ids() and copy.sticker(260).size_mm == 30


def test_single_only_keeps_pieces_with_several_stickers_exact_and_draws_the_same_singles():
    nominal, full, single = default_catalog(), hand_stuck_catalog(3), hand_stuck_catalog(3, single_only=True)
    for several in (260, 261, 100, 300, 10):  # gate, river tile, racing card, Kang board
        assert single.sticker(several) == nominal.sticker(several)
    for alone in (200, 240, 20, 32, 140):  # boat, curve card, a Kang token's two faces, a pawn
        assert single.sticker(alone) == full.sticker(alone) != nominal.sticker(alone)


@pytest.mark.parametrize("seed", [1, 2])
def test_line_up_boats_touch_the_gate_with_their_nose(seed):
    catalog = default_catalog()
    pieces = lineup_pieces(np.random.default_rng(seed), catalog, ["tornado/boat-1", "tornado/boat-5"])
    for p in pieces[1:]:
        # the 34 x 16 mm boat, corners of 6 mm, turned t: it reaches 11 cos t + 2 |sin t| + 6 ahead
        t = math.radians(p["theta_deg"])
        nose = p["x_mm"] + 11 * math.cos(t) + 2 * abs(math.sin(t)) + 6
        assert nose == pytest.approx(-20.0, abs=0.01) and abs(p["theta_deg"]) <= 2.0


@pytest.mark.parametrize("seed", [1, 2])
def test_course_line_up_pieces_touch_the_gate_and_every_card_face_shows_once(seed):
    from synth.handstuck import COURSE_LINEUP_PHOTOS, course_lineup_pieces
    from synth.scenes import piece_outline

    catalog = default_catalog()
    rng = np.random.default_rng(seed)
    faces, turns = [], {}
    for photo in range(COURSE_LINEUP_PHOTOS):
        pieces = course_lineup_pieces(rng, catalog, photo)
        for p in pieces[1:]:
            # the gate is 40 mm deep around its line: its straight back side is x = -20, 330 mm long
            if "curve-marker" in p["name"]:
                # a disc of 40 mm touching it: centre 20 mm behind the side, within the gate's length
                assert p["x_mm"] == pytest.approx(-40.0) and abs(p["y_mm"]) < 165 - 20
                turns.setdefault(p["name"], []).append(p["theta_deg"])
            else:
                # flush: the edge along the gate (theta +-90), the apex within the gate's length, the 30 mm
                # sticker 120 mm out wholly past the gate's end and its own 30 mm end sticker (165 + 15 mm)
                outline = piece_outline(catalog, p)  # the wedge lies behind the gate, its edge on the side
                assert outline[:, 0].max() == pytest.approx(-20.0, abs=1e-9), p
                assert abs(p["theta_deg"]) == 90.0 and abs(p["y_mm"]) < 165
                assert abs(p["y_mm"]) + 120 - 15 > 165 + 15
                faces.append((p["name"], p["face"]))
        assert len({p["name"] for p in pieces}) == len(pieces)
    assert len(faces) == len(set(faces)) == 12  # six cards, two faces each, each once
    for name, ts in turns.items():
        # a quarter turn further each photo, give or take 15 degrees
        steps = [((b - a) % 360) for a, b in zip(ts, ts[1:])]
        assert all(60 <= s <= 120 for s in steps), (name, ts)
