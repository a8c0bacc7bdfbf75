"""Crossing the finish line (rulebook, Crossing the Finish Line; SPEC section 3).

A boat has crossed once the white bracket at the front of the movement space it
stands on touches or passes the finish line, and only within the line's segment
between its two ends: passing beside the segment does not count. Without the card
under the boat, its footprint stands in for the movement space. The touch decision
carries the same 2-sigma band as the ranking: inside it refcam says "too close to call".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from referee.catalog import Catalog
from referee.observation import PiecePose

from . import geometry as g
from .cards import StandingOn, boat_outline
from .course import Course
from .ranking import BAND_SIGMAS

TOO_CLOSE = "too close to call"


@dataclass(frozen=True)
class FinishCall:
    """crossed: True, False or "too close to call".

    margin_mm: how far the front (bracket or footprint) reaches past the finish
    line (+ past); lateral_mm: how far inside the segment's ends that reach is
    (+ inside); sigma: the combined standard uncertainty of both.
    """

    crossed: bool | str
    margin_mm: float
    lateral_mm: float
    sigma: float
    basis: str
    front: tuple[g.Point, ...]

    def to_json(self) -> dict:
        return {"crossed": self.crossed, "margin_mm": round(self.margin_mm, 3), "lateral_mm": round(self.lateral_mm, 3),
                "sigma": round(self.sigma, 3), "basis": self.basis}


def finish_call(course: Course, boat: PiecePose, on: StandingOn | None, catalog: Catalog | None = None) -> FinishCall:
    line = course.finish
    if on is not None:
        a, b = on.space.bracket
        front = tuple(g.add(a, g.scale(g.sub(b, a), i / 8)) for i in range(9))
        sigma_front = on.card.sigma_at(on.space.bracket_x)
        basis = f"front bracket of space {on.space.index + 1} on {on.card.name}"
    else:
        front = boat_outline(boat, catalog)
        half_len = max(g.to_local((boat.x_mm, boat.y_mm), boat.theta_deg, q)[0] for q in front)
        sigma_front = math.hypot(boat.sigma_mm, half_len * math.radians(boat.sigma_theta_deg))
        basis = "boat footprint (no racing card under it)"
    past = [line.signed(q) for q in front]
    margin = max(past)
    tip = front[past.index(margin)]
    sigma = math.hypot(sigma_front, line.sigma_at(line.along_coord(tip)))
    band = BAND_SIGMAS * sigma
    # the part of the front that reaches the line (within the band), along the line
    reach = [line.along_coord(q) for q, d in zip(front, past) if d >= min(margin, 0.0) - band] or [line.along_coord(tip)]
    lo, hi = min(reach), max(reach)
    gap = 0.0 if lo <= 0.0 <= hi else min(abs(lo), abs(hi))
    lateral = line.half_length - gap
    if margin >= band and lateral >= band:
        crossed: bool | str = True
    elif margin < -band or lateral < -band:
        crossed = False
    else:
        crossed = TOO_CLOSE
    return FinishCall(crossed, margin, lateral, sigma, basis, front)
