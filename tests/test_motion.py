"""One "moved" for every referee (referee/motion.py): `tornado check` and the live Tornado
referee count the same boat as moved, and a reading's noise is never a move."""

import pytest

from referee import motion
from referee.observation import PiecePose
from tests.test_tornado_check import GATE, run_check
from tests.tornado_pieces import observation, pose


def _at(x: float, y: float = 0.0, theta: float = 0.0, sigma: float = 0.3, sigma_deg: float = 0.5) -> PiecePose:
    return PiecePose(name="tornado/boat-1", marker_ids=(), x_mm=x, y_mm=y, theta_deg=theta, z_mm=0.0,
                     sigma_mm=sigma, sigma_theta_deg=sigma_deg)


@pytest.mark.parametrize("shift, sigma, expected", [
    (4.9, 0.3, False),  # under the floor: a re-read or a nudge, not a move
    (5.1, 0.3, True),
    (7.0, 1.5, False),  # 4 x hypot(1.5, 1.5) = 8.5 mm: inside two blurred readings' noise
    (9.0, 1.5, True),
])
def test_a_piece_moved_beyond_the_floor_and_its_combined_sigma(shift, sigma, expected):
    assert motion.moved(_at(0.0, sigma=sigma), _at(shift, sigma=sigma)) is expected


def test_turns_wrap_and_need_the_turn_floor():
    assert motion.turn_deg(_at(0, theta=175.0), _at(0, theta=-175.0)) == pytest.approx(10.0)
    assert not motion.turned(_at(0, theta=175.0), _at(0, theta=-176.0))
    assert motion.turned(_at(0, theta=175.0), _at(0, theta=-170.0))


@pytest.mark.parametrize("shift, is_mover", [(4.0, False), (6.0, True)])
def test_tornado_check_and_the_live_referee_agree_on_a_small_shift(tmp_path, shift, is_mover):
    """A boat shifted 4 mm between two views is a nudge to both; 6 mm is a move to both (the
    check once counted 3 mm as a move while the live referee needed 5)."""
    from referee.tornado.referee import TornadoReferee

    before = observation(GATE, pose("tornado/boat-1", 300, 50), pose("tornado/boat-2", 300, -50))
    after = observation(GATE, pose("tornado/boat-1", 300 + shift, 50), pose("tornado/boat-2", 300, -50))
    checked = "tornado/boat-1" in run_check(tmp_path, before, after)["movers"]
    referee = TornadoReferee()
    referee.observe_stable(before, 0.0)
    rulings = referee.observe_stable(after, 1.0)
    acted = any("boat-1" in r.summary for r in rulings if r.kind != "warning")
    assert checked is is_mover and acted is is_mover, [r.summary for r in rulings]
