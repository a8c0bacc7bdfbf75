"""The equidistance band uses the uncertainty of the difference: a boundary line's
error shared by two boats cancels where it is the same for both (SPEC section 3)."""

import math

import pytest

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


def test_a_gate_line_counts_its_place_across_and_its_heading_apart():
    """A start gate or finish line: its pose's sigma across the line at its middle, and its heading's;
    a shift does not turn it, so a pair's tilt term is the heading's alone, and both ends are alike
    (for this pose the two-point model it replaces gave 0.55 mm at one end and 0.91 mm at the other,
    and counted the middle's place in a pair's tilt too)."""
    from referee.catalog import default_catalog
    from referee.observation import PiecePose
    from referee.tornado.course import _gate_line

    # the catalog's tolerance (0.35 mm, 0.15 degree) and a measurement of 0.1 mm and 0.05 degree
    pose = PiecePose("tornado/finish-line", (262, 263), 900.0, 40.0, 90.0, 1.0, math.hypot(0.1, 0.35),
                     math.hypot(0.05, 0.15), placement_sigma_mm=0.35, placement_sigma_along_mm=0.35,
                     placement_sigma_deg=0.15)
    line = _gate_line(pose, "finish line", default_catalog(), set())
    heading = math.radians(math.hypot(0.05, 0.15))
    assert line.sigma0 == pytest.approx(math.hypot(0.1, 0.35), abs=1e-9)
    assert line.sigma_direction_rad == pytest.approx(heading, abs=1e-12)
    for s in (-150.0, 150.0):
        assert line.sigma_at(s) == pytest.approx(math.hypot(line.sigma0, 150.0 * heading), abs=1e-9)
    # two boats 200 mm apart along it, each 0.2 mm: only the heading tilts their difference
    p, q = line.point_at(-100.0), line.point_at(100.0)
    assert straight_difference_sigma(line, p, 0.2, q, 0.2) == pytest.approx(
        math.sqrt(0.2 ** 2 + 0.2 ** 2 + (200.0 * heading) ** 2), abs=1e-9)
    # a measured tolerance across the line (its +x), tighter than along it: the line takes the one across
    measured = PiecePose("tornado/finish-line", (262, 263), 900.0, 40.0, 90.0, 1.0, math.hypot(0.1, 0.35),
                         0.05, placement_sigma_mm=0.35, placement_sigma_along_mm=0.05, placement_sigma_deg=0.0)
    assert _gate_line(measured, "finish line", default_catalog(), set()).sigma0 == pytest.approx(
        math.hypot(0.1, 0.05), abs=1e-9)
