"""The test oracle's own geometry (tests/tornado_oracle.py), checked by hand: the benches and
sample tests score refcam's Tornado rulings against it, so it must be right where they meet."""

from __future__ import annotations

import pytest

from tests import tornado_oracle as oracle


@pytest.mark.parametrize("theta", [0.0, 13.0, 45.0, 90.0, 137.0])
@pytest.mark.parametrize("forward", [0.0, 30.0, 90.0, 200.0])
def test_the_boat_outline_reaches_a_gate_line_as_its_support_says(theta, forward):
    cat = oracle._catalog()
    boat = {"x_mm": 10.0, "y_mm": -5.0, "theta_deg": theta}
    line = oracle.Line("gate", (0.0, 0.0), oracle._dir(forward))
    support = line.past((10.0, -5.0)) + oracle._boat_support(boat, line.forward, cat)
    assert line.reach(oracle._boat_outline(boat, cat)) == pytest.approx(support, abs=0.01)


def test_a_curve_line_is_a_ray_from_its_apex():
    """A 180-degree curve: the exit ray runs from the marker at (0, 0) toward -y, on the same line
    (x = 0) as the entry ray toward +y. A boat 34 x 16 mm heading +x at (5, 200), straddling x = 0
    by 12 mm behind the exit's apex, has not touched the exit; the same boat at (5, -200) has."""
    cat = oracle._catalog()
    exit_ray = oracle.Line("curve 1 exit", (0.0, 0.0), (-1.0, 0.0), ray=(0.0, -1.0))
    behind = {"x_mm": 5.0, "y_mm": 200.0, "theta_deg": 0.0}
    beyond = {"x_mm": 5.0, "y_mm": -200.0, "theta_deg": 0.0}
    assert exit_ray.reach(oracle._boat_outline(behind, cat)) < -150.0
    # past the line by the boat's rear half-length less its 5 mm offset: 17 - 5 = 12 mm
    assert exit_ray.reach(oracle._boat_outline(beyond, cat)) == pytest.approx(12.0, abs=0.01)
    # a boat across the apex itself touches it
    across = {"x_mm": 5.0, "y_mm": 3.0, "theta_deg": 0.0}
    assert exit_ray.reach(oracle._boat_outline(across, cat)) == pytest.approx(12.0, abs=0.3)
