"""When a piece has moved between two stable states: one definition for every referee.

A piece re-read from the same place shifts by its measurement noise; a piece a player
moved shifts by far more. It counts as moved when its centre shifted by more than
MOVE_FLOOR_MM and by more than MOVE_SIGMAS times the combined sigma of the two readings
(so a blurred or far reading needs a larger shift), or, where the turn matters, turned by
more than TURN_FLOOR_DEG and MOVE_SIGMAS times the combined sigma of the two headings.
The vision tracker's own "moved" (vision/tracking.py) is finer on purpose: it decides when
the table is calm, frame to frame, not what a player did between stable states.
"""

from __future__ import annotations

import math

from .observation import PiecePose

MOVE_FLOOR_MM = 5.0
MOVE_SIGMAS = 4.0
TURN_FLOOR_DEG = 10.0


def shift_mm(a: PiecePose, b: PiecePose) -> float:
    return math.hypot(b.x_mm - a.x_mm, b.y_mm - a.y_mm)


def turn_deg(a: PiecePose, b: PiecePose) -> float:
    """b's heading minus a's, in [-180, 180)."""
    return (b.theta_deg - a.theta_deg + 180.0) % 360.0 - 180.0


def moved(a: PiecePose, b: PiecePose) -> bool:
    """True when the piece's centre moved from a to b beyond the measurement (see above)."""
    return shift_mm(a, b) > max(MOVE_FLOOR_MM, MOVE_SIGMAS * math.hypot(a.sigma_mm, b.sigma_mm))


def turned(a: PiecePose, b: PiecePose) -> bool:
    """True when the piece turned from a to b beyond the measurement (see above)."""
    tol = max(TURN_FLOOR_DEG, MOVE_SIGMAS * math.hypot(a.sigma_theta_deg, b.sigma_theta_deg))
    return abs(turn_deg(a, b)) > tol
