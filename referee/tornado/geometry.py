"""Small plane-geometry helpers on plain (x, y) tuples, in mm and degrees.

Pure Python so the referee stays free of numpy/cv2; shapely is used where
polygons are needed (cards, table).
"""

from __future__ import annotations

import math

Point = tuple[float, float]


def add(a: Point, b: Point) -> Point:
    return (a[0] + b[0], a[1] + b[1])


def sub(a: Point, b: Point) -> Point:
    return (a[0] - b[0], a[1] - b[1])


def scale(a: Point, k: float) -> Point:
    return (a[0] * k, a[1] * k)


def dot(a: Point, b: Point) -> float:
    return a[0] * b[0] + a[1] * b[1]


def cross(a: Point, b: Point) -> float:
    return a[0] * b[1] - a[1] * b[0]


def norm(a: Point) -> float:
    return math.hypot(a[0], a[1])


def dist(a: Point, b: Point) -> float:
    return math.hypot(a[0] - b[0], a[1] - b[1])


def unit(a: Point) -> Point:
    n = norm(a)
    if n == 0:
        raise ZeroDivisionError("zero-length direction")
    return (a[0] / n, a[1] / n)


def direction(deg: float) -> Point:
    r = math.radians(deg)
    return (math.cos(r), math.sin(r))


def angle_deg(a: Point) -> float:
    return math.degrees(math.atan2(a[1], a[0]))


def rotate(a: Point, deg: float) -> Point:
    c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
    return (c * a[0] - s * a[1], s * a[0] + c * a[1])


def wrap360(deg: float) -> float:
    """Angle in [0, 360)."""
    d = math.fmod(deg, 360.0)
    if d < 0:
        d += 360.0
    if d >= 360.0:  # fmod of a tiny negative can round up to 360
        d = 0.0
    return d


def wrap180(deg: float) -> float:
    """Angle in [-180, 180)."""
    return wrap360(deg + 180.0) - 180.0


def to_world(origin: Point, theta_deg: float, local: Point) -> Point:
    """A point given in a piece frame (origin, heading theta) expressed in the game frame."""
    return add(origin, rotate(local, theta_deg))


def to_local(origin: Point, theta_deg: float, world: Point) -> Point:
    return rotate(sub(world, origin), -theta_deg)


def point_segment_distance(p: Point, a: Point, b: Point) -> float:
    ab = sub(b, a)
    L2 = dot(ab, ab)
    if L2 == 0:
        return dist(p, a)
    t = max(0.0, min(1.0, dot(sub(p, a), ab) / L2))
    return dist(p, add(a, scale(ab, t)))


def line_intersection(p: Point, u: Point, q: Point, v: Point) -> tuple[float, float] | None:
    """Parameters (a, b) with p + a*u == q + b*v, or None when the lines are parallel."""
    den = cross(u, v)
    if abs(den) < 1e-12:
        return None
    w = sub(q, p)
    return (cross(w, v) / den, cross(w, u) / den)
