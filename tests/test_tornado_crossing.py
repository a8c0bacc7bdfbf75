"""Judging Line Crossings by the movement space (referee/tornado/crossing.py)."""

import math

from referee.tornado.cards import StandingOn, card_under
from referee.tornado.crossing import TOO_CLOSE, boat_line_crossing, space_extent, space_outline, zone_by_crossing
from tests.tornado_pieces import card, line_across, pose


def _standing(c, boat):
    on = card_under(boat, [c])
    assert isinstance(on, StandingOn)
    return on


def test_space_extent_spans_rear_line_to_front_bracket():
    c = card(1, "straight-3", 0, 0)
    assert [space_extent(c, s) for s in c.spaces] == [(-54.0, -18.0), (-18.0, 18.0), (18.0, 54.0)]


def test_angled_space_touching_the_line_has_crossed_though_the_boat_centre_is_short():
    # Judging Line Crossings: a card laid at 30 deg puts a corner of the space on the
    # line while the boat's reference point is still 20 mm short of it.
    c = card(1, "straight-1", 80, 0, theta=30)
    boat = pose("tornado/boat-1", 80, 0, 30)
    call = boat_line_crossing(line_across(100), boat, _standing(c, boat))
    assert call.crossed is True and call.margin_mm > 5
    assert "movement space 1" in call.basis
    assert line_across(100).signed((boat.x_mm, boat.y_mm)) < -19


def test_square_space_short_of_the_line_has_not_crossed():
    c = card(1, "straight-1", 70, 0)
    boat = pose("tornado/boat-1", 70, 0)
    call = boat_line_crossing(line_across(100), boat, _standing(c, boat))
    assert call.crossed is False and round(call.margin_mm, 6) == -12.0


def test_contact_within_measurement_is_too_close_to_call():
    c = card(1, "straight-1", 81.5, 0, sigma=0.8)
    boat = pose("tornado/boat-1", 81.5, 0, sigma=0.8)
    call = boat_line_crossing(line_across(100, sigma=0.8), boat, _standing(c, boat))
    assert call.crossed == TOO_CLOSE and abs(call.margin_mm) < call.band


def test_boat_footprint_stands_in_without_a_card():
    boat = pose("tornado/boat-2", 90, 0)  # footprint 34 mm long: its bow reaches x = 107
    call = boat_line_crossing(line_across(100), boat, None)
    assert call.crossed is True and "footprint" in call.basis


def test_space_outline_is_the_card_width_wide():
    c = card(1, "straight-1", 0, 0)
    xs = sorted({round(p[1], 6) for p in space_outline(c, c.spaces[0])})
    assert xs == [-30.0, 30.0]


def test_zone_follows_the_space_and_uncertain_contact_stays_marked():
    c = card(1, "straight-1", 80, 0, theta=30)
    boat = pose("tornado/boat-1", 80, 0, 30)
    crossed = boat_line_crossing(line_across(100), boat, _standing(c, boat))
    assert zone_by_crossing(2, crossed, last_zone=4) == (3, False)
    square = card(1, "straight-1", 81.9, 0, sigma=0.8)
    b2 = pose("tornado/boat-1", 81.9, 0, sigma=0.8)
    close = boat_line_crossing(line_across(100, sigma=0.8), b2, _standing(square, b2))
    assert zone_by_crossing(2, close, last_zone=4) == (2, True)
    assert zone_by_crossing(4, crossed, last_zone=4) == (4, False)


def test_zone_after_crossing_moves_a_boat_whose_space_touches_the_exit_line():
    from referee.tornado.course_spec import load_course
    from referee.tornado.crossing import zone_after_crossing
    from referee.tornado.layout import layout_observation
    from referee.tornado.course import build_course

    spec = load_course("splashway")
    course = build_course(spec, layout_observation(spec))
    entry = course.zones[0].exit  # curve 1's entry ray, the start straight's exit
    # a boat 20 mm short of the line, on a card turned 30 deg whose space's corner reaches it
    foot = entry.point_at(250.0)
    back = (foot[0] - 20 * entry.forward[0], foot[1] - 20 * entry.forward[1])
    heading = math.degrees(math.atan2(entry.forward[1], entry.forward[0]))
    c = card(1, "straight-1", back[0], back[1], theta=heading + 30)
    boat = pose("tornado/boat-1", back[0], back[1], heading + 30)
    zone, uncertain, call = zone_after_crossing(course, 0, boat, _standing(c, boat))
    assert (zone, uncertain, call.crossed) == (1, False, True)
    far = (foot[0] - 28 * entry.forward[0], foot[1] - 28 * entry.forward[1])
    square = card(1, "straight-1", far[0], far[1], theta=heading)
    b2 = pose("tornado/boat-1", far[0], far[1], heading)
    assert zone_after_crossing(course, 0, b2, _standing(square, b2))[:2] == (0, False)
