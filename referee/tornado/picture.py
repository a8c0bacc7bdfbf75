"""Tornado Splash drawn as shapes (game-frame mm): the course on the live view, and the
photo finish that explains a ranking ("Settle it", `refcam rank --annotate`).

Only plain values here (referee.game.Shape); webui draws them without knowing the game.
"""

from __future__ import annotations

import textwrap

from referee.catalog import default_catalog
from referee.game import Explanation, Shape
from referee.observation import PiecePose
from referee.rulings import sigma_text

from . import geometry as g
from .course import Course
from .dispute import pair_panel_lines
from .rules import short_name
from .standings import RankResult
from .turns import hidden_boat_note, short_why

ZONE_ROLES = 6  # zone colours cycle through roles "zone-1" .. "zone-6"
BOAT_ROLES = 6  # boat k is drawn in role "player-k"
EXTEND_MM = 4000.0  # a boundary line counts as endless: the photo finish draws this much of it
BOAT_RING_MM = 17.0
FOCUS_MARGIN_MM = 150.0  # around the boats in question: enough for their lines and labels


def zone_role(index: int) -> str:
    return f"zone-{index % ZONE_ROLES + 1}"


def boat_role(name: str) -> str:
    try:
        k = int(name.rsplit("-", 1)[1]) - 1
    except (IndexError, ValueError):
        k = 0
    return f"player-{k % BOAT_ROLES + 1}"


def zone_bands(course: Course) -> list[Shape]:
    """Each zone as the band of track width along its stretch of the course path."""
    out = []
    half = course.track_width / 2
    for z in course.zones:
        left, right = [], []
        for i, a in enumerate(z.path):
            b, c = z.path[min(i + 1, len(z.path) - 1)], z.path[max(i - 1, 0)]
            if g.dist(b, c) < 1e-6:
                continue
            n = g.rotate(g.unit(g.sub(b, c)), 90.0)
            left.append(g.add(a, g.scale(n, half)))
            right.append(g.add(a, g.scale(n, -half)))
        if len(left) >= 2:
            out.append(Shape("polygon", tuple(left + right[::-1]), role=zone_role(z.index), legend="zone"))
    return out


def course_shapes(course: Course) -> tuple[Shape, ...]:
    """The live view: zones (named) and each boundary line's physical stretch, the finish apart."""
    out = zone_bands(course)
    for z in course.zones:
        if z.path:
            out.append(Shape("label", (z.path[len(z.path) // 2],), role="info", text=z.name))
    tw = course.track_width
    for line in course.lines():
        o, a = line.origin, line.along
        if line.kind == "ray":
            seg = (o, g.add(o, g.scale(a, tw + 200.0)))
        else:
            seg = (g.add(o, g.scale(a, -(tw / 2 + 150.0))), g.add(o, g.scale(a, tw / 2 + 150.0)))
        finish = line is course.finish
        out.append(Shape("line", seg, role="finish" if finish else "boundary",
                         legend="finish line" if finish else "boundary line"))
    return tuple(out)


def piece_lines(pieces: list[PiecePose]) -> tuple[Shape, ...]:
    """Before any course was built: each curve card's boundary ray, the gate and the finish line."""
    cat = default_catalog()
    out = []
    for p in pieces:
        if p.name.startswith("tornado/curve-card-"):
            out.append(Shape("line", (_at(p, 0.0, 0.0), _at(p, 900.0, 0.0)), role="boundary", legend="boundary line"))
        elif p.name in ("tornado/start-gate", "tornado/finish-line"):
            half = float(cat.piece(p.name).footprint["size_mm"][1]) / 2
            finish = p.name == "tornado/finish-line"
            out.append(Shape("line", (_at(p, 0.0, -half), _at(p, 0.0, half)), role="finish" if finish else "grid",
                             legend="finish line" if finish else ""))
    return tuple(out)


def _at(p: PiecePose, x: float, y: float) -> g.Point:
    return g.to_world((p.x_mm, p.y_mm), p.theta_deg, (x, y))


# ---------------------------------------------------------------- the photo finish
def photo_finish(result: RankResult, extra_warnings=()) -> Explanation:
    """Zones, every boundary line extended without end with its physical part solid, the
    finish segment, each boat's measure with its sigma, and the ranking panel (with the
    numbers behind each adjacent pair). focus: the boats in question, so that a phone-width
    picture can show the crop large and the panel beside or below it."""
    shapes = []
    if result.course is not None:
        shapes += _course_measured(result.course)
    for b in result.boats:
        if b.position is not None:
            shapes += _boat_shapes(b, result.course)
    shapes += _equidistant_links(result)
    return Explanation(title=f"Photo finish - {result.course_id}", shapes=tuple(shapes), lines=tuple(panel_lines(result, extra_warnings)),
                       focus=_focus(result), measures=result.to_json())


def _course_measured(course: Course) -> list[Shape]:
    out = zone_bands(course)
    tw = course.track_width
    for z in course.zones:
        # the zone's name near the edge of its band, clear of the boats on the path
        i = len(z.path) // 2
        a, b = z.path[max(i - 1, 0)], z.path[min(i + 1, len(z.path) - 1)]
        mid = z.path[i] if len(z.path) > 2 else g.scale(g.add(z.path[0], z.path[-1]), 0.5)
        if g.dist(a, b) > 1e-6:
            mid = g.add(mid, g.scale(g.rotate(g.unit(g.sub(b, a)), -90.0), 0.4 * tw))
        out.append(Shape("label", (mid,), role="info", text=z.name))
    for line in course.lines():
        out.append(Shape("line", (line.point_at(-EXTEND_MM), line.point_at(EXTEND_MM)), role="extension",
                         legend="boundary line, extended without end"))
        if line.kind == "ray":
            out.append(Shape("line", (line.origin, line.point_at(tw + 150)), role="boundary", legend="boundary line"))
        elif line is not course.finish:
            out.append(Shape("line", (line.point_at(-line.half_length), line.point_at(line.half_length)),
                             role="boundary", legend="boundary line"))
    fin = course.finish
    a, b = fin.point_at(-fin.half_length), fin.point_at(fin.half_length)
    out += [Shape("line", (a, b), role="finish", legend="finish line"), Shape("label", (b,), role="finish", text="FINISH")]
    out += [Shape("circle", (z.vertex,), role="boundary", radius_mm=6.0) for z in course.zones if z.vertex]
    return out


def _boat_shapes(b, course: Course | None) -> list[Shape]:
    role = boat_role(b.name)
    out = []
    m = b.measure if b.finished is not True else None  # a finished boat has no distance to go
    if m is not None and course is not None:
        if m.kind == "distance_mm" and m.foot is not None:
            out.append(Shape("line", (b.position, m.foot), role=role))
            # the measure's label sits on the boat's other diagonal from its name tag, so the two never overlap
            out.append(Shape("label", (_measure_anchor(b.position),), role=role, text=f"{m.value:.1f} +-{sigma_text(m.sigma)} mm"))
        elif m.kind == "angle_deg" and b.zone_index is not None and b.zone_index < len(course.zones):
            z = course.zones[b.zone_index]
            rho = g.dist(b.position, z.vertex)
            start = g.angle_deg(g.sub(b.position, z.vertex))
            steps = max(2, int(abs(m.value) / 3))
            arc = tuple(g.add(z.vertex, g.scale(g.direction(start + z.turn * m.value * i / steps), rho))
                        for i in range(steps + 1))
            out += [Shape("polyline", arc, role=role), Shape("line", (z.vertex, b.position), role=role),
                    Shape("label", (_measure_anchor(b.position),), role=role, text=f"{m.value:.1f} +-{sigma_text(m.sigma)} deg")]
    if b.finish is not None:
        kind = "polyline" if b.standing_on is not None else "polygon"
        out.append(Shape(kind, tuple(b.finish.front), role="highlight", legend="finish-line reach"))
    tag = (str(b.rank) if b.rank is not None else "?") + " " + short_name(b.name)
    out += [Shape("circle", (b.position,), role=role, radius_mm=BOAT_RING_MM),
            Shape("label", (g.add(b.position, (BOAT_RING_MM, BOAT_RING_MM)),), role=role, text=tag)]
    return out


def _measure_anchor(p: g.Point) -> g.Point:
    """Opposite the name tag (which sits at +ring, +ring from the boat)."""
    return g.add(p, (-2.5 * BOAT_RING_MM, -2.0 * BOAT_RING_MM))


def _equidistant_links(result: RankResult) -> list[Shape]:
    pos = {b.name: b.position for b in result.boats if b.position is not None}
    out = []
    for c in result.calls:
        if c.verdict == "equidistant within measurement" and c.ahead in pos and c.behind in pos:
            a, b = pos[c.ahead], pos[c.behind]
            out += [Shape("line", (a, b), role="uncertain", legend=result.equal_words(c.ahead, c.behind)),
                    Shape("label", (g.scale(g.add(a, b), 0.5),), role="uncertain", text="=")]
    return out


def _focus(result: RankResult) -> tuple[float, float, float, float]:
    """The game-frame box worth enlarging: the boats in question and where their measures
    end, with a margin; the whole course when no boat is placed."""
    pts: list[g.Point] = []
    for b in result.boats:
        if b.position is not None:
            pts.append(b.position)
            if b.measure is not None and b.measure.foot is not None:
                pts.append(b.measure.foot)
    if pts:
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        return (min(xs) - FOCUS_MARGIN_MM, min(ys) - FOCUS_MARGIN_MM, max(xs) + FOCUS_MARGIN_MM,
                max(ys) + FOCUS_MARGIN_MM)
    course = result.course
    if course is not None:
        for z in course.zones:
            pts += list(z.path) + ([z.vertex] if z.vertex else [])
        for line in (course.finish, course.start):
            pts += [line.point_at(s) for s in (-line.half_length, line.half_length)]
    pts += [b.position for b in result.boats if b.position is not None]
    if not pts:
        pts = [(-500.0, -500.0), (500.0, 500.0)]
    margin = (course.track_width if course else 300.0) * 0.8
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    return (min(xs) - margin, min(ys) - margin, max(xs) + margin, max(ys) + margin)


PANEL_WIDTH = 46  # characters a line: a 390 px wide phone screen shows about this many


def panel_lines(result: RankResult, extra_warnings=()) -> list[str]:
    """The text beside the picture: the ranking, and why each boat is ahead of the next,
    every line short enough for a phone; warnings wrapped, never cut off."""
    rows = []
    if result.first_round:
        rows.append("first round: all on the start gate, by weight")
    for b in result.boats:
        rank = "-" if b.rank is None else str(b.rank)
        meas = ""
        if b.measure is not None and b.finished is not True:  # a finished boat has no distance to go
            unit = "mm" if b.measure.kind == "distance_mm" else "deg"
            meas = f"  {b.measure.value:.1f}+-{sigma_text(b.measure.sigma)} {unit}"
        fin = " FINISHED" if b.finished is True else (" finish: too close to call" if b.finished == "too close to call" else "")
        rows.append(f"{rank}. {short_name(b.name)}  w{b.weight:g}{meas}{fin}")
        where = b.zone or b.status
        if b.measure is not None and b.measure.line:
            where += f"  ({'distance' if b.measure.kind == 'distance_mm' else 'angle'} to {b.measure.line})"
        rows.append(f"     {where}")
        for n in b.equidistant_with:
            rows.append(f"     = {result.equal_words(b.name, n)} with {short_name(n)}: lower weight first")
    rows += pair_panel_lines(result.pairs) if result.pairs else _call_lines(result)
    if result.hand_size:
        rows.append("hand size: " + ", ".join(f"{short_name(k)} {v}" for k, v in result.hand_size.items()))
    rows += ["! " + w for w in list(result.warnings) + list(extra_warnings)]
    return _fit(rows)


def _fit(rows: list[str]) -> list[str]:
    """Every row at most PANEL_WIDTH characters: longer ones wrap under their own indent
    (nothing is cut off)."""
    out = []
    for row in rows:
        indent = " " * min(len(row) - len(row.lstrip(" !=")), 6)
        wrapped = textwrap.wrap(row, PANEL_WIDTH, subsequent_indent=indent + "  ") or [row]
        out += wrapped
    return out


def _call_lines(result: RankResult) -> list[str]:
    ranked = [b for b in result.boats if b.rank is not None and b.measure is not None]
    calls = {frozenset((c.ahead, c.behind)): c for c in result.calls}
    rows = []
    for a, b in zip(ranked, ranked[1:]):
        c = calls.get(frozenset((a.name, b.name)))
        if c is None:
            continue
        na, nb = short_name(a.name), short_name(b.name)
        unit = "deg" if c.kind == "angle_deg" else "mm"
        if c.verdict == "zone":
            rows.append(f"{na} before {nb}: zone nearer the finish")
        elif c.verdict == "ahead":
            rows.append(f"{na} before {nb}: {c.delta:.1f} {unit} apart > band {2 * c.sigma:.1f}")
        elif c.kind == "start gate":
            rows.append(f"{na} = {nb}: both on the start gate: lighter first")
        else:
            rows.append(f"{na} = {nb}: {c.delta:.1f} {unit} apart < band {2 * c.sigma:.1f}: lighter first")
    return rows


def hidden_boat_label(name: str, why: str) -> str:
    """A hidden boat's label, phone-short: what kept it from being read in a few words, or a hand?"""
    return hidden_boat_note(name, short_why(why) if why else "")


def hidden_boat_shapes(turnlog) -> tuple[Shape, ...]:
    """Ranking Phase: a boat out of sight stays drawn at its last stable position, flagged."""
    out = []
    for name in turnlog.hidden:
        p = turnlog.last_seen.get(name)
        if p is not None:
            at = (p.x_mm, p.y_mm)
            out += [Shape("circle", (at,), role="uncertain", radius_mm=BOAT_RING_MM, legend="boat not seen (last place)"),
                    Shape("label", (g.add(at, (BOAT_RING_MM, BOAT_RING_MM)),), role="uncertain",
                          text=hidden_boat_label(name, turnlog.why_hidden(name)))]
    return tuple(out)
