"""Which course is on the table, from the pieces in view (when `--course` is not given).

Rulebook, Variant Courses / Additional Course Setup: each course card fixes which curve
markers are used, which way each curve turns (the curve cards' face), and where the
start gate, finish line and curves stand. A course fits the observation when nothing
seen contradicts it:

- every curve marker seen is one the course uses;
- the curve cards at a marker show the face of that curve's turn, and two of them
  open by the course's angle;
- the seen markers and finish line stand where the course card puts them, measured in
  the start-gate frame when the gate is seen, else after the best rigid fit of the
  seen pieces to the layout.

Players build courses by eye from a picture, so positions need only agree within
POSITION_TOLERANCE_MM (catalog-free: a property of the course cards, stated here).
When exactly one course fits it is used, with a warning saying why; otherwise refcam
lists the courses that fit and asks for `--course`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from referee.observation import Observation

from . import geometry as g
from .course_spec import CARD_TO_MARKER_TOLERANCE_MM, CURVE_CARD_PREFIX, FINISH_LINE, MARKER_PREFIX, START_GATE, \
    CourseSpec, course_ids, load_course
from .errors import CourseFileError, CourseNotIdentifiedError

# How far a hand-built course may stand from its course card's layout.
POSITION_TOLERANCE_MM = 120.0
# How far a hand-laid curve card's direction may differ from the layout's.
ANGLE_TOLERANCE_DEG = 25.0


@dataclass(frozen=True)
class CourseFit:
    """One course against the observation: fits or not, and the reasons."""

    course: str
    fits: bool
    checks: tuple[str, ...]  # what was compared and agreed (the evidence for the course)
    against: tuple[str, ...]  # what contradicts it (empty when it fits)

    def to_json(self) -> dict:
        return {"course": self.course, "fits": self.fits, "checks": list(self.checks), "against": list(self.against)}


def _marker_number(name: str) -> int:
    return int(name.rsplit("-", 1)[1])


def _cards_at(obs: Observation, x: float, y: float) -> list:
    return [p for p in obs.pieces if p.name.startswith(CURVE_CARD_PREFIX)
            and g.dist((p.x_mm, p.y_mm), (x, y)) <= CARD_TO_MARKER_TOLERANCE_MM]


def _check_curves(spec: CourseSpec, obs: Observation, checks: list, against: list) -> None:
    turns = {c.marker: c.turn for c in spec.curves}
    for p in obs.pieces:
        if not p.name.startswith(MARKER_PREFIX):
            continue
        m = _marker_number(p.name)
        if m not in turns:
            against.append(f"curve marker {m} is in view; {spec.id} uses markers "
                           f"{', '.join(str(k) for k in turns) or 'none'}")
            continue
        checks.append(f"curve marker {m} is used")
        cards = _cards_at(obs, p.x_mm, p.y_mm)
        for card in cards:
            if card.face in ("left-turn", "right-turn"):
                if card.face != f"{turns[m]}-turn":
                    against.append(f"{card.name} at marker {m} shows its {card.face} face; {spec.id} turns "
                                   f"{turns[m]} there")
                else:
                    checks.append(f"marker {m} turns {turns[m]}")
        lay = spec.layout.get("curves", {}).get(str(m))
        if len(cards) == 2 and lay:
            want = abs(g.wrap180(float(lay["exit_deg"]) - float(lay["entry_deg"])))
            seen = abs(g.wrap180(cards[0].theta_deg - cards[1].theta_deg))
            if abs(seen - want) > ANGLE_TOLERANCE_DEG:
                against.append(f"the curve at marker {m} opens {seen:.0f} deg; {spec.id}'s opens {want:.0f} deg")
            else:
                checks.append(f"the curve at marker {m} opens {seen:.0f} deg")
    faces = {p.face for p in obs.pieces if p.name.startswith(CURVE_CARD_PREFIX) and p.face}
    wanted = {f"{c.turn}-turn" for c in spec.curves}
    for face in sorted(faces - wanted):
        against.append(f"a curve card shows its {face} face; {spec.id} has no such curve")


def _layout_points(spec: CourseSpec) -> dict[str, tuple[float, float, float]]:
    lay = spec.layout
    out = {}
    for key, name in (("start-gate", START_GATE), ("finish-line", FINISH_LINE)):
        if key in lay:
            out[name] = tuple(float(v) for v in lay[key])
    for c in spec.curves:
        v = lay.get("curves", {}).get(str(c.marker))
        if v:
            out[f"{MARKER_PREFIX}{c.marker}"] = (float(v["vertex"][0]), float(v["vertex"][1]), 0.0)
    return out


def _check_positions(spec: CourseSpec, obs: Observation, checks: list, against: list) -> None:
    nominal = _layout_points(spec)
    seen = {n: obs.piece(n) for n in nominal if obs.piece(n) is not None}
    if START_GATE in seen and obs.frame.get("anchor") in (None, START_GATE):
        pairs = [(n, nominal[n][:2], (p.x_mm, p.y_mm)) for n, p in seen.items() if n != START_GATE]
        frame = "in the start-gate frame"
    else:
        pairs = _fitted(nominal, seen)
        frame = "after fitting the layout to them"
    for name, want, got in pairs:
        off = g.dist(want, got)
        short = name.split("/")[-1]
        if off > POSITION_TOLERANCE_MM:
            against.append(f"{short} stands {off:.0f} mm from {spec.id}'s place for it ({frame})")
        else:
            checks.append(f"{short} where {spec.id} puts it ({off:.0f} mm, {frame})")
    finish = seen.get(FINISH_LINE)
    if finish is not None and START_GATE in seen and FINISH_LINE in nominal:
        turn = abs(g.wrap180(finish.theta_deg - seen[START_GATE].theta_deg - nominal[FINISH_LINE][2]))
        if turn > ANGLE_TOLERANCE_DEG:
            against.append(f"the finish line faces {turn:.0f} deg away from {spec.id}'s direction")


def _fitted(nominal: dict, seen: dict) -> list:
    """Seen course pieces against the layout moved rigidly onto them (needs two pieces)."""
    names = [n for n in seen if n != START_GATE]
    if len(names) < 2:
        return []
    a = [nominal[n][:2] for n in names]
    b = [(seen[n].x_mm, seen[n].y_mm) for n in names]
    ca = (sum(p[0] for p in a) / len(a), sum(p[1] for p in a) / len(a))
    cb = (sum(p[0] for p in b) / len(b), sum(p[1] for p in b) / len(b))
    sxx = sum(g.dot(g.sub(p, ca), g.sub(q, cb)) for p, q in zip(a, b))
    sxy = sum(g.cross(g.sub(p, ca), g.sub(q, cb)) for p, q in zip(a, b))
    rot = math.degrees(math.atan2(sxy, sxx))
    return [(n, g.add(g.rotate(g.sub(p, ca), rot), cb), q) for n, p, q in zip(names, a, b)]


def fit_course(spec: CourseSpec, obs: Observation) -> CourseFit:
    """The course against the pieces in view; a course file whose layout is not numbers is refused."""
    checks: list[str] = []
    against: list[str] = []
    try:
        _check_curves(spec, obs, checks, against)
        _check_positions(spec, obs, checks, against)
    except (TypeError, ValueError, KeyError, IndexError, AttributeError):
        raise CourseFileError(f"course {spec.id!r}: its layout's places are not all numbers (start-gate, "
                              "finish-line: [x, y, deg]; curves: vertex [x, y], entry_deg, exit_deg)") from None
    return CourseFit(spec.id, not against, tuple(dict.fromkeys(checks)), tuple(against))


def identify_course(obs: Observation, candidates: list[str] | None = None) -> list[CourseFit]:
    """Every packaged course (or ``candidates``) against the observation, fitting ones first."""
    fits = [fit_course(load_course(cid), obs) for cid in (candidates or course_ids())]
    return sorted(fits, key=lambda f: (not f.fits, -len(f.checks), f.course))


def choose_course(obs: Observation, candidates: list[str] | None = None) -> tuple[CourseSpec, str]:
    """The one course that fits, with a warning saying how it was chosen; refuses with
    the list of fitting courses when the pieces in view fit several (or none)."""
    fits = identify_course(obs, candidates)
    good = [f for f in fits if f.fits]
    if len(good) == 1:
        f = good[0]
        others = "; ".join(f"{x.course}: {x.against[0]}" for x in fits if not x.fits)
        return load_course(f.course), (f"no --course given: the pieces in view fit only {f.course} "
                                       f"({'; '.join(f.checks) or 'nothing contradicts it'})"
                                       + (f"; ruled out {others}" if others else ""))
    if good:
        raise CourseNotIdentifiedError(f"no --course given and the pieces in view fit {len(good)} courses: "
                                       f"{', '.join(f.course for f in good)}; which one is it? pass --course")
    raise CourseNotIdentifiedError("no --course given and the pieces in view fit no known course ("
                                   + "; ".join(f"{f.course}: {f.against[0]}" for f in fits)
                                   + "); pass --course with a course file")
