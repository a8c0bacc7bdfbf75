"""Test helpers (no tests here) for the Tornado referee: courses with a known truth, built independently
of referee.tornado (own geometry), jittered within stated uncertainties.

A course here is a list of truth zones: straight zones (path A -> B, the next
boundary line given as point + direction) and curve zones (vertex, entry angle,
turn, sweep, radius). Positions sampled in a zone come with their true measure.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass

from referee.catalog import default_catalog
from referee.observation import Observation, PiecePose

CURVE_STICKER_MM = 120.0  # catalog: curve card sticker 120 mm out on the boundary line


def _dir(deg):
    return (math.cos(math.radians(deg)), math.sin(math.radians(deg)))


@dataclass
class TruthZone:
    kind: str  # straight / curve
    a: tuple = None  # straight: path start
    b: tuple = None  # straight: path end
    line_point: tuple = None  # straight: a point of the next boundary line
    line_dir: tuple = None  # straight: the next boundary line's direction
    vertex: tuple = None
    entry_deg: float = 0.0
    turn: int = 1
    sweep: float = 0.0
    radius: float = 250.0


@dataclass
class TruthCourse:
    doc: dict  # the course file document
    zones: list
    start: tuple  # (x, y, theta)
    finish: tuple
    curves: list  # (marker, vertex, entry_deg, exit_deg, turn)


def course_from_layout(doc: dict) -> TruthCourse:
    """Truth zones of a course document whose layout follows the course path at curve_radius_mm."""
    lay = doc["layout"]
    r = float(lay.get("curve_radius_mm", 250))
    start = tuple(float(v) for v in lay["start-gate"])
    finish = tuple(float(v) for v in lay["finish-line"])
    zones, curves = [], []
    pos = start[:2]
    for step in doc["sequence"][1:-1]:
        cv = lay["curves"][str(step["marker"])]
        v = tuple(float(x) for x in cv["vertex"])
        turn = 1 if step["turn"] == "left" else -1
        e, x = float(cv["entry_deg"]), float(cv["exit_deg"])
        sweep = ((turn * (x - e)) % 360.0)
        entry_pt = (v[0] + r * _dir(e)[0], v[1] + r * _dir(e)[1])
        zones.append(TruthZone("straight", a=pos, b=entry_pt, line_point=v, line_dir=_dir(e)))
        zones.append(TruthZone("curve", vertex=v, entry_deg=e, turn=turn, sweep=sweep, radius=r))
        curves.append((step["marker"], v, e, x, turn))
        pos = (v[0] + r * _dir(x)[0], v[1] + r * _dir(x)[1])
    zones.append(TruthZone("straight", a=pos, b=finish[:2], line_point=finish[:2], line_dir=_dir(finish[2] + 90)))
    return TruthCourse(doc, zones, start, finish, curves)


def random_course(rng: random.Random) -> TruthCourse:
    """A random custom course: 0-3 curves of 60-180 degrees, straights of 300-700 mm."""
    n = rng.randint(0, 3)
    markers = rng.sample([1, 2, 3], n)
    pos, h = (0.0, 0.0), 0.0
    seq, curves_lay = [{"kind": "start-gate"}], {}
    r = rng.uniform(200, 300)
    last_turn = None
    for m in markers:
        length = rng.uniform(300, 700)
        turn = -last_turn if last_turn and rng.random() < 0.7 else rng.choice([1, -1])
        last_turn = turn
        sweep = rng.choice([60.0, 90.0, 90.0, 120.0, 180.0])
        e_pt = (pos[0] + length * _dir(h)[0], pos[1] + length * _dir(h)[1])
        v = (e_pt[0] + r * _dir(h + turn * 90)[0], e_pt[1] + r * _dir(h + turn * 90)[1])
        entry = h - turn * 90
        exit_ = entry + turn * sweep
        curves_lay[str(m)] = {"vertex": list(v), "entry_deg": entry, "exit_deg": exit_}
        seq.append({"kind": "curve", "marker": m, "turn": "left" if turn > 0 else "right"})
        h += turn * sweep
        pos = (v[0] + r * _dir(exit_)[0], v[1] + r * _dir(exit_)[1])
    lf = rng.uniform(350, 700)
    fin = (pos[0] + lf * _dir(h)[0], pos[1] + lf * _dir(h)[1], h)
    seq.append({"kind": "finish-line"})
    doc = {"id": f"custom-{rng.randrange(10**6)}", "name": "random custom course", "sequence": seq,
           "layout": {"track_width_mm": 300, "curve_radius_mm": r, "start-gate": [0, 0, 0], "finish-line": list(fin),
                      "curves": curves_lay}}
    return course_from_layout(doc)


def self_clearance_ok(tc: TruthCourse, min_gap: float = 600.0) -> bool:
    """Non-neighbouring parts of the course path stay min_gap apart (else the track crosses itself)."""
    from shapely.geometry import LineString

    parts = []
    for z in tc.zones:
        if z.kind == "straight":
            parts.append(LineString([z.a, z.b]))
        else:
            pts = [(z.vertex[0] + z.radius * _dir(z.entry_deg + z.turn * z.sweep * i / 12)[0],
                    z.vertex[1] + z.radius * _dir(z.entry_deg + z.turn * z.sweep * i / 12)[1]) for i in range(13)]
            parts.append(LineString(pts))
    for i in range(len(parts)):
        for j in range(i + 2, len(parts)):
            if parts[i].distance(parts[j]) < min_gap:
                return False
    return True


def _jitter(rng, p, radius):
    a, r = rng.uniform(0, 2 * math.pi), radius * math.sqrt(rng.random())
    return (p[0] + r * math.cos(a), p[1] + r * math.sin(a))


def _pose(name, x, y, th, sigma, sigma_th=0.0, face=None):
    cat = default_catalog()
    spec = cat.piece(name)
    ids = tuple(s.marker_id for s in spec.stickers if face is None or s.face == face)
    return PiecePose(name=name, marker_ids=ids, x_mm=x, y_mm=y, theta_deg=th, z_mm=spec.stickers[0].top_z_mm,
                     sigma_mm=sigma, sigma_theta_deg=sigma_th, face=face)


def course_pieces(tc: TruthCourse, rng: random.Random, sigma: float, jitter: float) -> list[PiecePose]:
    """Course pieces, each point moved by at most `jitter` (mm); reported sigma `sigma`."""
    out = []
    sig_th = math.degrees(2 * sigma / 300.0)
    for name, (x, y, th) in (("tornado/start-gate", tc.start), ("tornado/finish-line", tc.finish)):
        jx, jy = _jitter(rng, (x, y), jitter)
        out.append(_pose(name, jx, jy, th + rng.uniform(-0.5, 0.5) * sig_th * jitter / max(sigma, 1e-9), sigma, sig_th))
    cards = list(range(1, 7))
    rng.shuffle(cards)  # card ids must not matter
    for marker, v, e, x, turn in tc.curves:
        vj = _jitter(rng, v, jitter)
        out.append(_pose(f"tornado/curve-marker-{marker}", vj[0], vj[1], rng.uniform(-180, 180), sigma))
        face = "left-turn" if turn > 0 else "right-turn"
        rays = [e, x]
        rng.shuffle(rays)  # nor the order the cards are listed in
        for ang in rays:
            s = _jitter(rng, (v[0] + CURVE_STICKER_MM * _dir(ang)[0], v[1] + CURVE_STICKER_MM * _dir(ang)[1]), jitter)
            th = math.degrees(math.atan2(s[1] - v[1], s[0] - v[0]))
            apex = (s[0] - CURVE_STICKER_MM * _dir(th)[0], s[1] - CURVE_STICKER_MM * _dir(th)[1])
            out.append(_pose(f"tornado/curve-card-{cards.pop()}", apex[0], apex[1], th, sigma, face=face))
    return out


def true_measure(z: TruthZone, p) -> float:
    if z.kind == "straight":
        dx, dy = p[0] - z.line_point[0], p[1] - z.line_point[1]
        return abs(z.line_dir[0] * dy - z.line_dir[1] * dx)
    phi = math.degrees(math.atan2(p[1] - z.vertex[1], p[0] - z.vertex[0]))
    off = (z.turn * (phi - z.entry_deg)) % 360.0
    return z.sweep - off


def sample_in_zone(tc: TruthCourse, k: int, rng: random.Random, u: float, lateral: float):
    """A point in zone k: u in [0, 1] along it, lateral mm off the path (+ left)."""
    z = tc.zones[k]
    if z.kind == "straight":
        ax, ay = z.a
        bx, by = z.b
        L = math.hypot(bx - ax, by - ay)
        tx, ty = (bx - ax) / L, (by - ay) / L
        return (ax + u * (bx - ax) - lateral * ty, ay + u * (by - ay) + lateral * tx)
    ang = z.entry_deg + z.turn * z.sweep * u
    rho = z.radius - z.turn * lateral
    return (z.vertex[0] + rho * _dir(ang)[0], z.vertex[1] + rho * _dir(ang)[1])


def observation(pieces: list[PiecePose]) -> Observation:
    return Observation(pieces=tuple(pieces), frame={"anchor": "tornado/start-gate"}, game="tornado")


def boat_pose(name, p, heading, sigma, rng=None, jitter=0.0):
    q = _jitter(rng, p, jitter) if rng and jitter else p
    return _pose(name, q[0], q[1], heading, sigma)


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f)
