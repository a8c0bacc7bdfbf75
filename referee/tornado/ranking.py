"""Ranking Phase: how far each boat has come, with its uncertainty, and the order.

Rulebook, Ranking Phase:
- Tokens are in Different Zones: the zone nearer the finish ranks higher.
- Tokens are in the Same Zone: in a straight zone compare the straight-line
  (perpendicular) distance to the next boundary line; in a curve zone compare the
  angle at the curve marker between the token and the next boundary line. The
  smaller one is ahead.
- When Equidistant / First Round Ranking: equal distances go to the lower boat weight.
SPEC section 3: refcam calls two measures equal when they differ by less than
2 * sqrt(sigma1^2 + sigma2^2) and then never makes a confident call between them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import geometry as g
from .course import Course

EQUIDISTANT = "equidistant within measurement"
# SPEC section 3: the band is two combined standard uncertainties wide.
BAND_SIGMAS = 2.0


@dataclass(frozen=True)
class Measure:
    """How far a boat still has to go in its zone: distance_mm or angle_deg, with sigma."""

    kind: str  # "distance_mm" or "angle_deg"
    value: float
    sigma: float
    line: str = ""  # the boundary line it is measured to
    foot: g.Point | None = None  # straight: the foot of the perpendicular on the line

    def to_json(self) -> dict:
        return {"kind": self.kind, "value": round(self.value, 3), "sigma": round(self.sigma, 3), "to": self.line}


def within_band(delta: float, sigma_a: float, sigma_b: float) -> bool:
    """Rule "When Equidistant" as refcam reads it (SPEC section 3)."""
    return abs(delta) < BAND_SIGMAS * math.hypot(sigma_a, sigma_b)


def measure(course: Course, zone: int, p: g.Point, sigma_boat: float) -> Measure:
    """The Ranking Phase measure of a point in a zone.

    Straight zone (Judging Distance in a Straight Zone): the perpendicular distance
    to the next boundary line, extended; sigma from the boat and the line's two
    defining points. Curve zone (Judging Distance in a Curve Zone): the angle at
    the curve marker from the boat round to the exit line; sigma from the boat and
    marker positions over the distance to the vertex, plus the exit line's direction.
    Past the finish line: the (negative) distance to the finish line.
    """
    if zone == course.finished_zone:
        line = course.finish
    else:
        z = course.zones[zone]
        if z.kind == "curve":
            rho = g.dist(p, z.vertex)
            value = z.sweep_deg - z.sector_offset_deg(p)
            pos = math.hypot(sigma_boat, z.sigma_vertex) / max(rho, 1.0)
            sigma = math.degrees(math.hypot(pos, z.exit.sigma_direction_rad))
            return Measure("angle_deg", value, sigma, z.exit.name)
        line = z.exit
    s = line.along_coord(p)
    return Measure("distance_mm", -line.signed(p), math.hypot(sigma_boat, line.sigma_at(s)), line.name,
                   foot=line.point_at(s))


@dataclass(frozen=True)
class Call:
    """One pairwise comparison: which of two boats is ahead, or that it cannot be told."""

    ahead: str
    behind: str
    verdict: str  # "ahead", EQUIDISTANT, or "zone" (different zones)
    delta: float = 0.0
    sigma: float = 0.0
    kind: str = ""

    def to_json(self) -> dict:
        return {"ahead": self.ahead, "behind": self.behind, "verdict": self.verdict, "delta": round(self.delta, 3),
                "sigma": round(self.sigma, 3), "kind": self.kind}


@dataclass(frozen=True)
class Racer:
    """What the ordering needs to know of one located boat."""

    name: str
    weight: float
    zone: int
    measure: Measure
    position: g.Point
    sigma_mm: float


def compare(course: Course, a: Racer, b: Racer) -> Call:
    """Compare two located boats (a listed first only for a stable output)."""
    if a.zone == b.zone:
        delta = a.measure.value - b.measure.value
        comb = math.hypot(a.measure.sigma, b.measure.sigma)
        first, second = (a, b) if delta <= 0 else (b, a)
        verdict = EQUIDISTANT if within_band(delta, a.measure.sigma, b.measure.sigma) else "ahead"
        return Call(first.name, second.name, verdict, abs(delta), comb, a.measure.kind)
    first, second = (a, b) if a.zone > b.zone else (b, a)
    if first.zone == second.zone + 1 and second.zone < len(course.zones):
        # Boats on either side of the same boundary line: a line crossing within the
        # measurement's own uncertainty is no confident call either (SPEC section 3).
        line = course.zones[second.zone].exit
        d_first, d_second = -line.signed(first.position), -line.signed(second.position)
        s_first = math.hypot(first.sigma_mm, line.sigma_at(line.along_coord(first.position)))
        s_second = math.hypot(second.sigma_mm, line.sigma_at(line.along_coord(second.position)))
        delta = d_second - d_first
        if within_band(delta, s_first, s_second):
            return Call(first.name, second.name, EQUIDISTANT, abs(delta), math.hypot(s_first, s_second), "distance_mm")
    return Call(first.name, second.name, "zone", float(first.zone - second.zone), 0.0, "zone")


@dataclass(frozen=True)
class Ordering:
    order: tuple[str, ...]
    calls: tuple[Call, ...]
    equidistant: dict  # name -> tuple of names it is equidistant with


def order_racers(course: Course, racers: list[Racer], all_equal: bool = False) -> Ordering:
    """Order located boats, first place first.

    Confident calls are never overturned; among boats that no remaining boat is
    confidently ahead of (these are pairwise equidistant), the lower weight goes
    first (When Equidistant). all_equal: every boat is on the start gate at the
    first round, so weight alone decides (First Round Ranking).
    """
    calls: list[Call] = []
    ahead_of: dict[str, set[str]] = {r.name: set() for r in racers}  # who is confidently ahead of a boat
    equi: dict[str, list[str]] = {r.name: [] for r in racers}
    for i, a in enumerate(racers):
        for b in racers[i + 1:]:
            if all_equal:
                c = Call(a.name, b.name, EQUIDISTANT, 0.0, 0.0, "start gate")
            else:
                c = compare(course, a, b)
            calls.append(c)
            if c.verdict == EQUIDISTANT:
                equi[a.name].append(b.name)
                equi[b.name].append(a.name)
            else:
                ahead_of[c.behind].add(c.ahead)
    by_name = {r.name: r for r in racers}
    placed: list[str] = []
    remaining = set(by_name)
    while remaining:
        free = [n for n in remaining if not (ahead_of[n] & remaining)]
        if not free:  # cannot happen with a consistent measure; fall back to the zone/measure order
            free = list(remaining)
        best = min(free, key=lambda n: (by_name[n].weight, -by_name[n].zone, by_name[n].measure.value, n))
        placed.append(best)
        remaining.remove(best)
    return Ordering(tuple(placed), tuple(calls), {k: tuple(sorted(v)) for k, v in equi.items()})
