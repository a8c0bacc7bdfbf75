"""Test helper (no tests here): the Ranking Phase worked out by hand from a sample's
ground truth, without referee.tornado's code.

tests/test_tornado_samples.py compares what refcam reads from a rendered still with
this. Everything here comes straight from the truth file (the true pose of every
piece), the course file (JSON, read directly) and the catalog's numbers (JSON, read
directly), in the plainest form of the rulebook's rules:

- Course Details: a straight zone runs from its entry line to the next boundary
  line; a curve zone is the sector at its curve marker between the two curve cards'
  edges. The boundary lines are where the pieces really lie in the truth (the
  rendered pieces sit a few mm off the course file's layout); a piece the scene
  does not hold comes from the layout, as the referee's fallback does.
- Which zone: inside a zone's lines and nearest that zone's part of the course path
  (lines extend without end, so far-away zones can also contain a point).
- Judging Line Crossings: a boat whose movement space (or footprint, with no card
  under it) touches its zone's exit line is in the next zone.
- Judging Distance: straight = perpendicular distance to the next boundary line;
  curve = angle at the curve marker round to the exit edge.
- When Equidistant: equal measures go to the lighter boat.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COURSES = ROOT / "referee" / "data" / "courses"
CATALOG = ROOT / "referee" / "data" / "catalog.json"

# A boat whose space/footprint is this close to touching a line is "too close to call"
# for any camera, whatever the referee's sigma says (mm).
TOUCH_RESOLUTION_MM = 0.5
# Two boats whose true measures differ by less than this are equal for any camera (mm;
# curve angles are turned into mm at the nearer boat's radius).
TIE_RESOLUTION_MM = 0.5
# Final Rankings: a boat that crossed is taken off at once, so past the finish line it
# stands at most about a racing card plus a boat length beyond it (mm).
FINISH_REACH_MM = 150.0


def _dir(deg: float) -> tuple[float, float]:
    return math.cos(math.radians(deg)), math.sin(math.radians(deg))


def _dot(a, b) -> float:
    return a[0] * b[0] + a[1] * b[1]


def _sub(a, b):
    return a[0] - b[0], a[1] - b[1]


def _wrap180(deg: float) -> float:
    return (deg + 180.0) % 360.0 - 180.0


@dataclass
class Line:
    """A boundary line through `point`; `forward` is the direction of travel across it."""

    name: str
    point: tuple
    forward: tuple
    # a curve card's line runs from its apex (point) along the card's edge, this way, without end
    # (SPEC section 2); None: a gate line, extended both ways
    ray: tuple | None = None

    def past(self, p) -> float:
        """How far p lies past the line (mm, + beyond it in the direction of travel)."""
        return _dot(_sub(p, self.point), self.forward)

    def reach(self, outline) -> float:
        """How far a convex outline (points around it, in order) reaches past the line where the
        line is: past its apex only, for a ray (a 180-degree curve's exit ray lies on the same line
        as its entry ray, on the other side of the marker). Below 0: no contact."""
        if self.ray is None:
            return max(self.past(q) for q in outline)
        dense = []
        for a, b in zip(outline, outline[1:] + outline[:1]):
            n = max(1, int(math.dist(a, b) / 0.25))
            dense += [(a[0] + (b[0] - a[0]) * k / n, a[1] + (b[1] - a[1]) * k / n) for k in range(n)]
        beyond = [q for q in dense if _dot(_sub(q, self.point), self.ray) >= 0.0]
        if not beyond:  # wholly behind the apex: as far from the line as from the apex
            return -min(math.dist(q, self.point) for q in dense)
        return max(self.past(q) for q in beyond)


@dataclass
class Zone:
    kind: str  # straight / curve
    entry: Line
    exit: Line
    path: list  # points of this zone's part of the course path (for "nearest the path")
    vertex: tuple = None  # curve only
    entry_deg: float = 0.0
    turn: int = 1
    sweep: float = 0.0

    def offset_deg(self, p) -> float:
        """Curve: how far round from the entry edge p lies, in the turning direction,
        in (sweep/2 - 180, sweep/2 + 180]: a point just behind the entry edge is slightly negative."""
        phi = math.degrees(math.atan2(p[1] - self.vertex[1], p[0] - self.vertex[0]))
        off = (self.turn * (phi - self.entry_deg)) % 360.0
        return off - 360.0 if off > self.sweep / 2 + 180.0 else off

    def contains(self, p, behind_ok: float = 0.0) -> bool:
        if self.kind == "curve":
            return 0.0 <= self.offset_deg(p) < self.sweep
        return self.entry.past(p) >= -behind_ok and self.exit.past(p) < 0.0

    def measure(self, p) -> float:
        """Judging Distance: mm to the exit line (straight) or degrees round to the exit edge (curve)."""
        if self.kind == "curve":
            return self.sweep - self.offset_deg(p)
        return -self.exit.past(p)

    def path_distance(self, p) -> float:
        return min(_segment_distance(p, a, b) for a, b in zip(self.path, self.path[1:]))


def _segment_distance(p, a, b) -> float:
    ab = _sub(b, a)
    t = max(0.0, min(1.0, _dot(_sub(p, a), ab) / max(_dot(ab, ab), 1e-12)))
    return math.dist(p, (a[0] + t * ab[0], a[1] + t * ab[1]))


@dataclass
class TrueCourse:
    course_id: str
    zones: list
    finish: Line
    finish_half_length: float
    track_width: float
    start_behind_ok: float
    notes: list = field(default_factory=list)

    @property
    def finished_zone(self) -> int:
        return len(self.zones)


def _catalog() -> dict:
    return json.loads(CATALOG.read_text())


def _family(cat: dict, family: str) -> dict:
    return next(f for f in cat["families"] if f["family"] == family)


def true_course(truth: dict) -> TrueCourse:
    """The course's zones from the true piece poses (the layout only for absent pieces and
    to tell a curve's entry card from its exit card)."""
    doc = json.loads((COURSES / f"{truth['course']}.json").read_text())
    lay = doc["layout"]
    radius = float(lay.get("curve_radius_mm", 250))
    width = float(lay.get("track_width_mm", 300))
    poses = {p["name"]: p for p in truth["pieces"]}
    notes = []

    def pose(name, nominal):
        if name in poses:
            p = poses[name]
            return (p["x_mm"], p["y_mm"]), p["theta_deg"]
        notes.append(f"{name} not in the scene: layout")
        return (float(nominal[0]), float(nominal[1])), float(nominal[2])

    start_xy, start_th = pose("tornado/start-gate", lay["start-gate"])
    finish_xy, finish_th = pose("tornado/finish-line", lay["finish-line"])
    start = Line("start gate", start_xy, _dir(start_th))
    finish = Line("finish line", finish_xy, _dir(finish_th))
    curve_cards = [p for n, p in poses.items() if n.startswith("tornado/curve-card-")]

    zones, entry, path_from = [], start, start_xy
    for step in doc["sequence"][1:-1]:
        m, turn = step["marker"], (1 if step["turn"] == "left" else -1)
        nominal = lay["curves"][str(m)]
        nv = nominal["vertex"]
        vertex, _ = pose(f"tornado/curve-marker-{m}", (nv[0], nv[1], 0.0))
        # the two curve cards lie with their apex at this marker; each edge is one boundary line
        rays = [c["theta_deg"] for c in curve_cards if math.dist((c["x_mm"], c["y_mm"]), vertex) < 40.0]

        def edge(nominal_deg, rays=rays, m=m):
            near = [r for r in rays if abs(_wrap180(r - nominal_deg)) < 30.0]
            if near:
                return min(near, key=lambda r: abs(_wrap180(r - nominal_deg)))
            notes.append(f"curve {m}: a card edge at {nominal_deg} deg not in the scene: layout")
            return float(nominal_deg)

        e, x = edge(float(nominal["entry_deg"])), edge(float(nominal["exit_deg"]))
        sweep = (turn * (x - e)) % 360.0
        entry_line = Line(f"curve {m} entry", vertex, _dir(e + turn * 90.0), ray=_dir(e))
        exit_line = Line(f"curve {m} exit", vertex, _dir(x + turn * 90.0), ray=_dir(x))
        into = (vertex[0] + radius * _dir(e)[0], vertex[1] + radius * _dir(e)[1])
        zones.append(Zone("straight", entry, entry_line, [path_from, into]))
        arc = [(vertex[0] + radius * _dir(e + turn * sweep * i / 24)[0],
                vertex[1] + radius * _dir(e + turn * sweep * i / 24)[1]) for i in range(25)]
        zones.append(Zone("curve", entry_line, exit_line, arc, vertex=vertex, entry_deg=e, turn=turn, sweep=sweep))
        entry, path_from = exit_line, arc[-1]
    zones.append(Zone("straight", entry, finish, [path_from, finish_xy]))

    cat = _catalog()
    gate = _family(cat, "tornado/gate")["footprint"]["size_mm"]
    boat = _family(cat, "tornado/boat")["footprint"]["size_mm"]
    # Determining Start Position: a boat on the gate may stand a little behind its line
    behind_ok = gate[0] / 2 + boat[0] / 2
    half_length = abs(_family(cat, "tornado/gate")["slots"]["left"]["xy_mm"][1])
    return TrueCourse(truth["course"], zones, finish, half_length, width, behind_ok, notes)


# ---------------------------------------------------------------- where a boat is
@dataclass
class TrueBoat:
    name: str
    point: tuple
    zone: int | None  # None: outside, ambiguous, or touching a line within resolution
    measure: float | None
    kind: str | None
    why: str
    contact_margin: float | None = None  # how far its space/footprint reaches past its zone's exit line
    radius: float | None = None  # curve: distance to the vertex (to turn degrees into mm)


def _boat_support(boat: dict, direction, cat: dict) -> float:
    """How far the boat's rounded-rectangle footprint reaches from its centre along `direction`."""
    fam = _family(cat, "tornado/boat")
    (length, width), r = fam["footprint"]["size_mm"], fam["footprint"].get("corner_radius_mm", 0.0)
    ax, ay = _dir(boat["theta_deg"])
    along, across = _dot(direction, (ax, ay)), _dot(direction, (-ay, ax))
    return (length / 2 - r) * abs(along) + (width / 2 - r) * abs(across) + r


def _space_under(boat: dict, truth: dict, cat: dict):
    """The movement space the boat stands on: (card pose, rear x, front x, half width) or None."""
    fam = _family(cat, "tornado/racing-card")
    kinds = {p["name"]: fam["kinds"][p["kind"]] for p in fam["pieces"]}
    length, width = fam["footprint"]["size_mm"]
    best = None
    for c in truth["pieces"]:
        if c["name"] not in kinds:
            continue
        ux, uy = _dir(c["theta_deg"])
        d = _sub((boat["x_mm"], boat["y_mm"]), (c["x_mm"], c["y_mm"]))
        lx, ly = _dot(d, (ux, uy)), _dot(d, (-uy, ux))
        if abs(lx) > length / 2 or abs(ly) > width / 2:
            continue
        for sp in kinds[c["name"]]["spaces"]:
            gap = math.hypot(lx - sp["centre_x"], ly)
            if best is None or gap < best[0]:
                best = (gap, c, 2 * sp["centre_x"] - sp["bracket_x"], sp["bracket_x"], width / 2)
    return best[1:] if best else None


def contact_margin(boat: dict, line: Line, truth: dict, cat: dict) -> float:
    """Judging Line Crossings: how far the boat's movement space (or its footprint when no
    card lies under it) reaches past `line` (mm; >= 0 is contact)."""
    under = _space_under(boat, truth, cat)
    if under is None:
        if line.ray is None:
            return line.past((boat["x_mm"], boat["y_mm"])) + _boat_support(boat, line.forward, cat)
        return line.reach(_boat_outline(boat, cat))
    card, rear, front, half = under
    ux, uy = _dir(card["theta_deg"])
    corners = [(card["x_mm"] + x * ux - y * uy, card["y_mm"] + x * uy + y * ux)
               for x, y in ((rear, -half), (front, -half), (front, half), (rear, half))]
    return line.reach(corners)


def _boat_outline(boat: dict, cat: dict) -> list:
    """The boat's rounded-rectangle footprint as points around it: each corner's quarter circle
    every 2 degrees (consecutive corners join along the straight sides)."""
    fam = _family(cat, "tornado/boat")
    (length, width), r = fam["footprint"]["size_mm"], fam["footprint"].get("corner_radius_mm", 0.0)
    ax, ay = _dir(boat["theta_deg"])
    out = []
    for k in range(180):
        cx, cy = _dir(2.0 * k + 1.0)
        x = math.copysign(length / 2 - r, cx) + r * cx
        y = math.copysign(width / 2 - r, cy) + r * cy
        out.append((boat["x_mm"] + x * ax - y * ay, boat["y_mm"] + x * ay + y * ax))
    return out


def locate_boat(course: TrueCourse, boat: dict, truth: dict, cat: dict | None = None) -> TrueBoat:
    cat = cat or _catalog()
    p = (boat["x_mm"], boat["y_mm"])
    cands = [k for k, z in enumerate(course.zones)
             if z.contains(p, course.start_behind_ok if k == 0 else 0.0)]
    if 0.0 <= course.finish.past(p) <= FINISH_REACH_MM:
        cands.append(course.finished_zone)

    def path_distance(k):
        if k == course.finished_zone:
            beside = abs(_dot(_sub(p, course.finish.point), (-course.finish.forward[1], course.finish.forward[0])))
            return course.finish.past(p) if beside <= course.finish_half_length else math.inf
        return course.zones[k].path_distance(p)

    near = sorted((path_distance(k), k) for k in cands if path_distance(k) <= course.track_width)
    if not near:
        return TrueBoat(boat["name"], p, None, None, None, "outside every zone")
    if len(near) > 1 and near[1][0] - near[0][0] < 50.0:
        return TrueBoat(boat["name"], p, None, None, None, f"ambiguous between zones {near[0][1]} and {near[1][1]}")
    k = near[0][1]
    why = "inside its lines, nearest its path"
    margin = None
    if k < len(course.zones) - 1:  # the last zone's exit is the finish line: a finish call, not a zone change
        margin = contact_margin(boat, course.zones[k].exit, truth, cat)
        if abs(margin) < TOUCH_RESOLUTION_MM:
            return TrueBoat(boat["name"], p, None, None, None, f"touches the {course.zones[k].exit.name} within "
                            f"{TOUCH_RESOLUTION_MM} mm", margin)
        if margin >= 0.0:
            k += 1
            why = f"its space touches the {course.zones[k - 1].exit.name} ({margin:.1f} mm)"
    if k == course.finished_zone:
        return TrueBoat(boat["name"], p, k, -course.finish.past(p), "finish", why, margin)
    z = course.zones[k]
    rho = math.dist(p, z.vertex) if z.kind == "curve" else None
    return TrueBoat(boat["name"], p, k, z.measure(p), z.kind, why, margin, rho)


def true_boats(truth: dict) -> tuple[TrueCourse, dict]:
    course = true_course(truth)
    cat = _catalog()
    boats = {p["name"]: locate_boat(course, p, truth, cat) for p in truth["pieces"]
             if p["name"].startswith("tornado/boat-")}
    return course, boats


def margin_mm(a: TrueBoat, b: TrueBoat) -> float:
    """How far apart two boats of one zone truly are by the zone's measure, in mm
    (a curve's angle at the nearer boat's radius)."""
    d = abs(a.measure - b.measure)
    if a.kind == "curve":
        return math.radians(d) * min(a.radius, b.radius)
    return d


def truly_ahead(a: TrueBoat, b: TrueBoat) -> bool:
    """a is further on: a later zone, or the same zone and less still to go."""
    return a.zone > b.zone or (a.zone == b.zone and a.measure < b.measure)


def default_weight(name: str) -> float:
    """Determining Start Position: boat k's card weighs k by default (catalog)."""
    return float(_catalog()["games"]["tornado"]["boat_weights_default"][name])


def finished(course: TrueCourse, truth_boat: TrueBoat, boat: dict, truth: dict) -> bool | None:
    """Crossing the Finish Line: only a boat on the final straight (or past the line) can
    have crossed; it has when its space reaches the line, beside the line's segment.
    None when its space is within resolution of touching."""
    last = len(course.zones) - 1
    if truth_boat.zone is None or truth_boat.zone < last:
        return False if truth_boat.zone is not None else None
    f = course.finish
    beside = abs(_dot(_sub(truth_boat.point, f.point), (-f.forward[1], f.forward[0]))) <= course.finish_half_length
    reach = contact_margin(boat, f, truth, _catalog())
    if abs(reach) < TOUCH_RESOLUTION_MM:
        return None
    return reach > 0.0 and beside


def line_gap(course: TrueCourse, front: TrueBoat, behind: TrueBoat) -> float:
    """Two boats in neighbouring zones: how far apart they stand across the line between
    those zones (mm, along the direction of travel)."""
    line = course.zones[behind.zone].exit if behind.zone < len(course.zones) else course.finish
    return line.past(front.point) - line.past(behind.point)
