"""The equidistance band uses the uncertainty of the difference: a boundary line's
error shared by two boats cancels where it is the same for both (SPEC section 3)."""

import math

from referee.tornado.course import BoundaryLine
from referee.tornado.ranking import curve_difference_sigma, straight_difference_sigma, within_band


def _line(sigma_offset=5.0, sigma_dir=math.radians(3)):
    # a gate line along +y through the origin; boats travel toward +x
    return BoundaryLine(name="curve 1 entry", kind="gate", origin=(0.0, 0.0), along=(0.0, 1.0), forward=(1.0, 0.0),
                        half_length=150.0, sigma0=sigma_offset, s2=300.0, sigma2=sigma_offset, sigma_dir=sigma_dir)


def test_side_by_side_boats_share_the_whole_line_error():
    line = _line()
    s = straight_difference_sigma(line, (-200.0, 40.0), 0.3, (-203.0, 40.0), 0.4)
    assert math.isclose(s, 0.5)  # the line's 5 mm offset and 3 degrees do not enter
    assert not within_band(3.0, s, 0.0)  # 3 mm apart is a confident call with 0.3 / 0.4 mm boats


def test_boats_apart_along_the_line_keep_the_tilt_term():
    line = _line(sigma_dir=math.radians(1))
    s = straight_difference_sigma(line, (-200.0, -100.0), 0.3, (-200.0, 100.0), 0.4)
    tilt = 200.0 * math.radians(1)
    assert math.isclose(s, math.sqrt(0.3 ** 2 + 0.4 ** 2 + tilt ** 2))
    # never smaller than the boats' own uncertainty, never larger than the independent sum
    independent = math.hypot(math.hypot(0.3, line.sigma_at(-100.0)), math.hypot(0.4, line.sigma_at(100.0)))
    assert math.hypot(0.3, 0.4) <= s <= independent


def test_independent_measures_reduce_to_the_spec_formula():
    # 2 * sqrt(0.5^2 + 0.5^2) = 1.414
    assert within_band(1.4, 0.5, 0.5) and not within_band(1.42, 0.5, 0.5)


def test_curve_vertex_error_cancels_for_boats_on_one_ray():
    # same direction from the vertex: a vertex shift turns both rays, by different amounts
    same_ray = curve_difference_sigma((0.0, 0.0), 2.0, (200.0, 0.0), 0.0, (400.0, 0.0), 0.0)
    assert math.isclose(same_ray, math.degrees(2.0 * (1 / 200 - 1 / 400)))
    # the same point: the vertex error cancels completely
    assert curve_difference_sigma((0.0, 0.0), 2.0, (300.0, 10.0), 0.0, (300.0, 10.0), 0.0) == 0.0
    # boats' own errors over their distance to the vertex
    own = curve_difference_sigma((0.0, 0.0), 0.0, (300.0, 0.0), 0.6, (0.0, 300.0), 0.8)
    assert math.isclose(own, math.degrees(math.hypot(0.6, 0.8) / 300.0))
