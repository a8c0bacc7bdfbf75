"""Boundaries of the Tornado ranking, completeness and zone rules that a small slip in the code
would move without any other test noticing: each test pins the one comparison or term, with
the answer worked out by hand from SPEC section 3 and the rulebook."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from referee.tornado import ranking
from referee.tornado.course import BoundaryLine, build_course
from referee.tornado.course_spec import load_course
from referee.tornado.dispute import completeness
from referee.tornado.ranking import CANNOT_TELL, EQUIDISTANT, Call, Measure, Racer, _difference_sigma, within_band
from referee.tornado.zones import locate
from tests.test_tornado_referee import _obs, _pose


# ---------------------------------------------------------------- When Equidistant (SPEC section 3)
# Equidistant means |delta| < 2 sigma_delta, strictly: at exactly the band the difference is
# measured, and the call is confident.
@pytest.mark.parametrize("delta, equal", [(1.999, True), (2.0, False), (-2.0, False), (-1.999, True)])
def test_equidistant_band_is_strict_at_its_edge(delta, equal):
    assert within_band(delta, 1.0, 0.0) is equal


# A boat whose movement space is within the measurement of its zone's exit line is weighed on
# both readings (crossed and not). If one reading calls the pair equidistant and the other puts
# one boat ahead, the readings disagree: "cannot tell", never a confident order.
def test_readings_equidistant_and_ahead_give_cannot_tell(monkeypatch):
    line = Measure("distance_mm", 10.0, 0.5)
    a = Racer("tornado/boat-1", 1.0, 0, line, (0.0, 0.0), 0.5, next_zone=line, doubt="boat-1 at the line")
    b = Racer("tornado/boat-2", 2.0, 0, line, (0.0, 0.0), 0.5)
    readings = iter([Call(a.name, b.name, EQUIDISTANT, 0.1, 0.7, "distance_mm"),
                     Call(a.name, b.name, "zone", 1.0, 0.0, "zone")])
    monkeypatch.setattr(ranking, "_reading_call", lambda *args: next(readings))
    call = ranking.compare(None, a, b)
    assert call.verdict == CANNOT_TELL and "disagree" in call.note
    # both readings putting boat-1 ahead: the order stands
    readings = iter([Call(a.name, b.name, "ahead", 3.0, 0.7, "distance_mm"),
                     Call(a.name, b.name, "zone", 1.0, 0.0, "zone")])
    assert ranking.compare(None, a, b).verdict == "ahead"


# ---------------------------------------------------------------- the line-up's shared term
# Two boats measured in one line-up share its term, signed along each boat's own heading. In a
# straight zone one shift of +0.35 mm on boat a and -0.35 mm on boat b (they head opposite ways
# to the measure) moves their difference by 0.7 mm: sigma_delta = hypot(0.2, 0.2, 0.7).
def _boat(name, x, y, shared):
    return Racer(name, 4.0, 0, Measure("distance_mm", 0.0, 0.2), (x, y), math.hypot(0.2, shared),
                 math.hypot(0.1, shared), lineup_shared_mm=shared)


STRAIGHT = SimpleNamespace(zones=(SimpleNamespace(kind="straight", exit=BoundaryLine(
    name="finish line", kind="gate", origin=(500.0, 0.0), along=(0.0, 1.0), forward=(1.0, 0.0), half_length=150.0,
    sigma0=0.0, s2=150.0, sigma2=0.0, sigma_dir=0.0)),), finished_zone=1, camera_field=None)


def test_line_up_term_of_two_boats_counts_by_how_differently_it_moves_them_in_a_straight():
    a, b = _boat("a", 400.0, 20.0, 0.35), _boat("b", 402.0, -20.0, -0.35)
    assert _difference_sigma(STRAIGHT, 0, a, b) == pytest.approx(math.sqrt(0.2 ** 2 + 0.2 ** 2 + 0.7 ** 2))


def test_measurement_only_drops_the_line_up_term_with_the_rest_of_the_placement():
    a = _boat("a", 400.0, 20.0, 0.35)
    bare = a.measurement_only()
    assert bare.lineup_shared_mm == 0.0 and bare.placement_mm == 0.0
    assert bare.sigma_mm == pytest.approx(math.sqrt(0.2 ** 2 + 0.35 ** 2 - 0.1 ** 2 - 0.35 ** 2))
    b = _boat("b", 402.0, -20.0, -0.35).measurement_only()
    # as if the stickers sat where the catalog says: no line-up, no placement term left
    assert _difference_sigma(STRAIGHT, 0, bare, b) == pytest.approx(math.hypot(bare.sigma_mm, b.sigma_mm))


# ---------------------------------------------------------------- Ranking Phase: every racing boat has a place
# boat-3's racing cards lie on the table, so boat-3 is racing; its token is not in view (under a
# hand). With no --boats and no history the ranking of boat-1 and boat-2 is not complete, and
# boat-3 is named.
def test_a_boat_whose_cards_are_in_view_but_not_its_token_makes_the_ranking_incomplete():
    obs = _obs("tornado-circuit", {1: (200, 30, 0), 2: (150, -30, 0)}, [_pose("tornado/card-3-11", 75, 90)])
    complete, notes = completeness(obs, (), (), (), history=False)
    assert complete is False and any("boat-3" in n for n in notes)
    # the same table without boat-3's card: the boats in play are not known, nothing is claimed
    complete, _ = completeness(_obs("tornado-circuit", {1: (200, 30, 0), 2: (150, -30, 0)}), (), (), (), False)
    assert complete is None


# ---------------------------------------------------------------- zones: the history's minimum zone is inclusive
# Just behind Tornado Circuit's start gate a boat may stand at the start or past the finish line
# (zone 5). A history proving it reached zone 5 settles it there: min_zone counts itself.
@pytest.mark.parametrize("min_zone, zone", [(0, None), (4, 5), (5, 5)])
def test_min_zone_from_the_history_is_inclusive(min_zone, zone):
    course = build_course(load_course("tornado-circuit"), _obs("tornado-circuit"))
    assert locate(course, (-20.0, 40.0), min_zone=min_zone).zone == zone
