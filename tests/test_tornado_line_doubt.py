"""A line crossing inside the measurement is never a confident order (issue 21 item 7).

Tornado Circuit's start straight ends at curve 1's entry line, x = 600 (travel +x). Boat-1
stands on a straight-1 card turned 45 deg at (x, 0); boat-2 stands square at (575, -100).
The truth, worked out from the catalog apart from the referee: a straight-1 card is 110 x 60 mm
and its one movement space runs to its bracket 18 mm ahead of the centre, across the card's
full width, so the space's forward corner lies 18 cos 45 + 30 sin 45 = 33.94 mm ahead of x:
it reaches x + 33.94 - 600 mm past the line (Judging Line Crossings: touching counts).
Boat-2's reference point is 25 mm short of the line and its 34 mm footprint ends 8 mm short.

- Tokens are in Different Zones: a space clearly past the line puts boat-1 in curve 1, ahead
  by zone, however close the two reference points are (x = 575: 8.9 mm past).
- A crossing within the measurement (a margin inside 2 sigma of it) may or may not have
  happened: boat-1 is ahead if it did, boat-2 (25 mm from the line against boat-1's 32) if not,
  so the pair is "cannot tell", never a confident order, and refcam says why.
"""

from __future__ import annotations

import math

import pytest

from referee.tornado.api import rank
from referee.tornado.course_spec import load_course
from referee.tornado.layout import layout_observation
from referee.tornado.ranking import CANNOT_TELL
from tests.tornado_pieces import card_name, pose

REACH = 18 * math.cos(math.radians(45)) + 30 * math.sin(math.radians(45))  # 33.94 mm
ENTRY_X = 600.0


def _rank(x: float, sigma: float = 0.3, boat2=(575, -100, 0)):
    obs = layout_observation(load_course("tornado-circuit"), {"tornado/boat-1": (x, 0, 45), "tornado/boat-2": boat2},
                             sigma_mm=sigma, extra=[pose(card_name(1, "straight-1"), x, 0, 45, sigma=sigma)])
    return rank(obs, course="tornado-circuit")


def _pair(res):
    (pair,) = res.pairs
    return pair


def test_space_clearly_past_the_line_orders_by_zone_not_equidistant():
    assert 575 + REACH - ENTRY_X == pytest.approx(8.94, abs=0.01)
    res = _rank(575)
    pair = _pair(res)
    assert (pair.ahead, pair.verdict) == ("tornado/boat-1", "zone")
    assert res.boat("tornado/boat-1").zone == "curve 1" and res.boat("tornado/boat-2").zone == "start straight"
    assert res.boat("tornado/boat-1").equidistant_with == ()


@pytest.mark.parametrize("x, sigma", [
    (566, 0.3),  # the space's corner on the line itself (-0.06 mm): no measurement can call it
    (568, 1.0),  # the case: 1.94 mm past, with a 1 mm card sigma the band is at least 2 mm
])
def test_crossing_within_the_measurement_makes_the_pair_cannot_tell(x, sigma):
    margin = x + REACH - ENTRY_X
    assert abs(margin) < 2 * sigma or abs(margin) < 0.1
    res = _rank(x, sigma)
    pair = _pair(res)
    assert pair.verdict == CANNOT_TELL and "readings disagree" in pair.reason and "curve 1 entry" in pair.reason
    assert "boat-1 ahead by zone" in pair.reason and "boat-2 ahead" in pair.reason
    assert any("cannot tell which is ahead" in w for w in res.warnings)
    assert res.ranking()[0] == "tornado/boat-1"  # no confident order: the lighter boat first


def test_clearly_short_of_the_line_ranks_by_distance():
    assert 550 + REACH - ENTRY_X < -15
    pair = _pair(_rank(550))
    assert (pair.ahead, pair.verdict) == ("tornado/boat-2", "ahead") and "every reading" not in pair.reason


def test_both_readings_agree_the_order_stands_and_says_so():
    # boat-2 far back (300 mm from the line): boat-1 is ahead whether or not it crossed
    pair = _pair(_rank(566, boat2=(300, -100, 0)))
    assert (pair.ahead, pair.verdict) == ("tornado/boat-1", "ahead")
    assert "boat-1 is ahead on every reading" in pair.reason
