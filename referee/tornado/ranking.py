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
Two boats measured to the same boundary line share that line's error, which cancels in
their difference; so the band uses the difference's own standard uncertainty (the
boats' own sigmas plus only the part of the line's error that differs between them).
With independent measures this is exactly 2 * sqrt(sigma1^2 + sigma2^2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from . import geometry as g
from .course import Course
from .rules import short_name

EQUIDISTANT = "equidistant within measurement"
CANNOT_TELL = "cannot tell"  # a line crossing within the measurement leaves the pair's order open
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


def within_band(delta: float, sigma_a: float, sigma_b: float, sigma_shared: float = 0.0) -> bool:
    """Rule "When Equidistant" as refcam reads it (SPEC section 3).

    sigma_a, sigma_b: what is each boat's own; sigma_shared: the part of the common
    reference's error that does not cancel in the difference.
    """
    return abs(delta) < BAND_SIGMAS * math.sqrt(sigma_a ** 2 + sigma_b ** 2 + sigma_shared ** 2)


def straight_difference_sigma(line, p: g.Point, sigma_p: float, q: g.Point, sigma_q: float,
                              sigma_direction_rad: float | None = None) -> float:
    """Standard uncertainty of the difference of two distances to one boundary line (mm).

    The line's offset error is common and cancels; its direction error (the line's own, or
    sigma_direction_rad when given) tilts the line, which moves the two feet apart by
    (s_p - s_q) times the angle.
    """
    sd = line.sigma_direction_rad if sigma_direction_rad is None else sigma_direction_rad
    tilt = (line.along_coord(p) - line.along_coord(q)) * sd
    return math.sqrt(sigma_p ** 2 + sigma_q ** 2 + tilt ** 2)


def curve_difference_sigma(vertex: g.Point, sigma_vertex: float, p: g.Point, sigma_p: float,
                           q: g.Point, sigma_q: float) -> float:
    """Standard uncertainty of the difference of two angles at one curve marker (degrees).

    The exit line's direction error is common and cancels. A vertex shift d turns the
    ray to a point at distance rho by (d . n) / rho, n normal to the ray; the two boats'
    turns differ by d . (n_p / rho_p - n_q / rho_q).
    """
    def normal_over_rho(x: g.Point) -> tuple[float, float, float]:
        dx, dy = x[0] - vertex[0], x[1] - vertex[1]
        rho2 = max(dx * dx + dy * dy, 1.0)
        return -dy / rho2, dx / rho2, math.sqrt(rho2)

    npx, npy, rho_p = normal_over_rho(p)
    nqx, nqy, rho_q = normal_over_rho(q)
    shared = sigma_vertex * math.hypot(npx - nqx, npy - nqy)
    return math.degrees(math.sqrt((sigma_p / rho_p) ** 2 + (sigma_q / rho_q) ** 2 + shared ** 2))


def measure_direction_deg(course: Course, zone: int, p: g.Point) -> float:
    """The table direction in which a boat's position moves its measure: across the boundary
    line it is measured to (straight zone, past the finish), across the ray from the curve
    marker (curve zone). A sticker stuck off along the boat matters there, one stuck off
    sideways hardly (SPEC section 2, placement tolerance)."""
    if zone != course.finished_zone and course.zones[zone].kind == "curve":
        v = course.zones[zone].vertex
        return math.degrees(math.atan2(p[1] - v[1], p[0] - v[0])) + 90.0
    line = course.finish if zone == course.finished_zone else course.zones[zone].exit
    return g.angle_deg(line.forward)


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
            offset = z.sector_offset_deg(p)
            if offset > (z.sweep_deg + 360.0) / 2:
                # Still behind the entry ray, counted in the curve because its movement
                # space touches that ray (Judging Line Crossings): the angle grows past the sweep.
                offset -= 360.0
            value = z.sweep_deg - offset
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
    verdict: str  # "ahead", EQUIDISTANT, "zone" (different zones) or CANNOT_TELL
    delta: float = 0.0
    sigma: float = 0.0
    kind: str = ""
    note: str = ""  # a line crossing within the measurement: the readings weighed, in words
    # set when the pair is equidistant only because of how the stickers were stuck: the band
    # (measure units) that the placement tolerance alone gives; 0 otherwise
    placement_band: float = 0.0

    def to_json(self) -> dict:
        d = {"ahead": self.ahead, "behind": self.behind, "verdict": self.verdict, "delta": round(self.delta, 3),
             "sigma": round(self.sigma, 3), "kind": self.kind}
        if self.note:
            d["note"] = self.note
        if self.placement_band:
            d["placement_band"] = round(self.placement_band, 3)
        return d


@dataclass(frozen=True)
class Racer:
    """What the ordering needs to know of one located boat."""

    name: str
    weight: float
    zone: int
    measure: Measure
    position: g.Point
    sigma_mm: float  # along the direction its measure moves, stickers' placement included
    placement_mm: float = 0.0  # the stickers' placement term of sigma_mm
    # Judging Line Crossings too close to call: its measure had its movement space crossed
    # its zone's exit line (it would be in the next zone), and that doubt in words.
    next_zone: Measure | None = None
    doubt: str = ""
    # the part of sigma_mm the camera's pose gives it (PiecePose.sigma_camera_mm): one smooth field
    # over the table (Course.camera_field), or, without it, differing between two places by at most
    # camera_gradient (mm per mm) apart
    camera_mm: float = 0.0
    camera_gradient: float = 0.0
    z_mm: float = 0.0  # the height its sticker was read at, where the camera's field moves it
    # the line-up's shared term of its placement (PiecePose.placement_shared_mm) toward its measure,
    # signed: one shift of every boat measured in that line-up, each along its own heading
    lineup_shared_mm: float = 0.0

    def readings(self) -> list[tuple[int, Measure]]:
        """(zone, measure) on each reading of its crossing: counted where its reference point
        is, and, when the crossing is too close to call, one zone on."""
        out = [(self.zone, self.measure)]
        return out + [(self.zone + 1, self.next_zone)] if self.next_zone is not None else out

    def measurement_only(self) -> "Racer":
        """The same boat as if its stickers sat exactly where the catalog says."""
        return replace(self, sigma_mm=math.sqrt(max(0.0, self.sigma_mm ** 2 - self.placement_mm ** 2)),
                       placement_mm=0.0, lineup_shared_mm=0.0)


def compare(course: Course, a: Racer, b: Racer) -> Call:
    """Compare two located boats (a listed first only for a stable output).

    Tokens are in Different Zones: the zone nearer the finish is ahead, however close
    the two boats stand. A boat whose movement space is within the measurement of its
    zone's exit line (Judging Line Crossings too close to call) is weighed on both
    readings, crossed and not: when they agree the order stands and says so; when they
    do not, the pair is CANNOT_TELL, never a confident order (SPEC section 3)."""
    calls = [_reading_call(course, a, za, ma, b, zb, mb) for za, ma in a.readings() for zb, mb in b.readings()]
    base = calls[0]
    if len(calls) == 1:
        return base
    doubts = "; ".join(r.doubt for r in (a, b) if r.doubt)
    if all(c.verdict != EQUIDISTANT for c in calls) and len({c.ahead for c in calls}) == 1:
        return replace(base, note=f"{doubts}: {short_name(base.ahead)} is ahead on every reading")
    outcomes = sorted({_outcome(c) for c in calls})
    return Call(base.ahead, base.behind, CANNOT_TELL, base.delta, base.sigma, base.kind,
                note=f"{doubts}: the readings disagree ({'; '.join(outcomes)})")


def _reading_call(course: Course, a: Racer, za: int, ma: Measure, b: Racer, zb: int, mb: Measure) -> Call:
    """The call between a in zone za and b in zone zb (Ranking Phase)."""
    if za != zb:
        first, second = (a, b) if za > zb else (b, a)
        return Call(first.name, second.name, "zone", float(abs(za - zb)), 0.0, "zone")
    delta = ma.value - mb.value
    comb = _difference_sigma(course, za, a, b)
    first, second = (a, b) if delta <= 0 else (b, a)
    if not within_band(delta, comb, 0.0):
        return Call(first.name, second.name, "ahead", abs(delta), comb, ma.kind)
    limit = 0.0  # equidistant only because of how the stickers were stuck: say so (SPEC section 2)
    if not within_band(delta, _difference_sigma(course, za, a.measurement_only(), b.measurement_only()), 0.0):
        limit = BAND_SIGMAS * _placement_difference(course, za, a, b)
    return Call(first.name, second.name, EQUIDISTANT, abs(delta), comb, ma.kind, placement_band=limit)


def _outcome(c: Call) -> str:
    if c.verdict == EQUIDISTANT:
        return f"{short_name(c.ahead)} and {short_name(c.behind)} {EQUIDISTANT}"
    return f"{short_name(c.ahead)} ahead" + (" by zone" if c.verdict == "zone" else "")


def _placement_difference(course: Course, zone: int, a: Racer, b: Racer) -> float:
    """The part of a.measure - b.measure's uncertainty that the stickers' placement alone gives
    (mm, or degrees at the curve marker)."""
    if zone != course.finished_zone and course.zones[zone].kind == "curve":
        v = course.zones[zone].vertex
        return math.degrees(math.hypot(a.placement_mm / max(g.dist(a.position, v), 1.0),
                                       b.placement_mm / max(g.dist(b.position, v), 1.0)))
    return math.hypot(a.placement_mm, b.placement_mm)


def placement_warning(call: Call) -> str:
    """SPEC section 2: a pair that only the stickers' placement keeps from a confident call, in words."""
    unit = " mm" if call.kind == "distance_mm" else "°"
    a, b = short_name(call.ahead), short_name(call.behind)
    return (f"{a} and {b}: {call.delta:.1f}{unit} apart; the stickers' placement alone allows "
            f"±{call.placement_band:.1f}{unit}: measure your boats (`refcam measure tornado-boats`) to call this")


def _difference_sigma(course: Course, zone: int, a: Racer, b: Racer) -> float:
    """Uncertainty of the difference of a's and b's measures, both in ``zone``; the camera's share
    of the two boats' sigmas, and of the line or marker they are measured from, counts only as far
    as it differs between their places, and never more than if those shares were independent, as
    every other term is."""
    field_apart = camera_field_difference(course, zone, a, b)
    a, b, lineup = _lineup_shared(a, b)
    own_a, own_b, apart_mm = camera_shared(a, b)
    if zone != course.finished_zone and course.zones[zone].kind == "curve":
        z = course.zones[zone]
        # with the field, the marker's camera share is in field_apart: the rest of its sigma moves it alone
        cam_v = min(z.vertex_camera_mm, z.sigma_vertex) if field_apart is not None else 0.0
        own = curve_difference_sigma(z.vertex, math.sqrt(z.sigma_vertex ** 2 - cam_v ** 2), a.position, own_a,
                                     b.position, own_b)
        rho_a, rho_b = (max(g.dist(r.position, z.vertex), 1.0) for r in (a, b))
        apart = apart_mm / min(rho_a, rho_b) if field_apart is None else field_apart
        independent = math.hypot(a.camera_mm / rho_a, b.camera_mm / rho_b,
                                 math.radians(curve_difference_sigma(z.vertex, cam_v, a.position, 0.0, b.position, 0.0)))
        shift = lineup[0] / rho_a - lineup[1] / rho_b
        return math.hypot(own, math.degrees(min(apart, independent)), math.degrees(shift))
    line = course.finish if zone == course.finished_zone else course.zones[zone].exit
    own_dir, cam_dir = line.direction_sigma_split() if field_apart is not None else (None, 0.0)
    own = straight_difference_sigma(line, a.position, own_a, b.position, own_b, own_dir)
    apart = apart_mm if field_apart is None else field_apart
    independent = math.hypot(a.camera_mm, b.camera_mm,
                             (line.along_coord(a.position) - line.along_coord(b.position)) * cam_dir)
    return math.hypot(own, min(apart, independent), lineup[0] - lineup[1])


def _lineup_shared(a: Racer, b: Racer) -> tuple[Racer, Racer, tuple[float, float]]:
    """Two boats measured in one line-up share its term (Racer.lineup_shared_mm): taken out of each
    boat's sigma and returned apart, as each boat's signed part, so that the call counts only how
    differently the one shift moves their measures. Boats without it keep their sigma whole."""
    if not (a.lineup_shared_mm and b.lineup_shared_mm):
        return a, b, (0.0, 0.0)
    out = tuple(replace(r, sigma_mm=math.sqrt(max(0.0, r.sigma_mm ** 2 - r.lineup_shared_mm ** 2)),
                        placement_mm=math.sqrt(max(0.0, r.placement_mm ** 2 - r.lineup_shared_mm ** 2)))
                for r in (a, b))
    return out[0], out[1], (a.lineup_shared_mm, b.lineup_shared_mm)


def camera_field_difference(course: Course, zone: int, a: Racer, b: Racer) -> float | None:
    """How far the camera's error can move a's measure against b's (mm in a straight zone, radians
    at the marker in a curve), from its field (referee.camera_field): both boats and the line or
    marker they are measured from are moved by the same field, one direction at a time, and what
    changes the difference of the two measures is summed in squares. None when there is no field,
    a boat has no camera share, or the line or marker was not read by the camera (nominal)."""
    field = course.camera_field
    if field is None or not (a.camera_mm and b.camera_mm):
        return None
    shift_a, shift_b = field.shifts(*a.position, a.z_mm), field.shifts(*b.position, b.z_mm)
    if zone != course.finished_zone and course.zones[zone].kind == "curve":
        z = course.zones[zone]
        if z.vertex_z_mm is None:
            return None
        at_vertex = field.shifts(*z.vertex, z.vertex_z_mm)
        turn_a, turn_b = (_turn_per_mm(r.position, z.vertex) for r in (a, b))
        terms = [g.dot(turn_a, g.sub(fa, fv)) - g.dot(turn_b, g.sub(fb, fv))
                 for fa, fb, fv in zip(shift_a, shift_b, at_vertex)]
    else:
        line = course.finish if zone == course.finished_zone else course.zones[zone].exit
        if line.heights_mm is None:
            return None
        ends = field.shifts(*line.origin, line.heights_mm[0]), field.shifts(*line.point_at(line.s2), line.heights_mm[1])
        # the line is where its two points are: a boat's foot on it moves as they do, weighted by where it falls
        t = (line.along_coord(a.position) - line.along_coord(b.position)) / line.s2
        terms = [g.dot(line.forward, g.sub(fa, fb)) - t * g.dot(line.forward, g.sub(f2, f0))
                 for fa, fb, f0, f2 in zip(shift_a, shift_b, *ends)]
    return math.sqrt(sum(v * v for v in terms))


def _turn_per_mm(p: g.Point, vertex: g.Point) -> g.Point:
    """How a shift of p turns it about vertex: the unit normal to the ray over the distance (rad/mm)."""
    dx, dy = p[0] - vertex[0], p[1] - vertex[1]
    rho2 = max(dx * dx + dy * dy, 1.0)
    return (-dy / rho2, dx / rho2)


def camera_shared(a: Racer, b: Racer) -> tuple[float, float, float]:
    """(a's sigma without its camera share, b's likewise, how far the camera's error can differ
    between their places, mm: camera_gradient, the field's steepest change over the table, times
    their distance). A boat without a camera share keeps its sigma and shares nothing."""
    if not (a.camera_mm and b.camera_mm):
        return a.sigma_mm, b.sigma_mm, 0.0
    own_a, own_b = (math.sqrt(max(0.0, r.sigma_mm ** 2 - r.camera_mm ** 2)) for r in (a, b))
    return own_a, own_b, max(a.camera_gradient, b.camera_gradient) * g.dist(a.position, b.position)
