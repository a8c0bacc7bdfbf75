"""The course file's nominal layout standing in for course pieces out of view (the live
page's camera may frame only part of the course). Seen pieces always win; every piece
taken from the layout is named in a warning with its wide sigma.
"""

from __future__ import annotations

import math
from dataclasses import replace

from referee.catalog import Catalog
from referee.observation import Observation, PiecePose

from . import geometry as g
from .course_spec import CARD_TO_MARKER_TOLERANCE_MM, CURVE_CARD_PREFIX, FINISH_LINE, MARKER_PREFIX, START_GATE, \
    CourseSpec, CurveSpec
from .layout import layout_poses

# How far the real pieces may lie from the course card's nominal layout.
NOMINAL_SIGMA_MM = 15.0
NOMINAL_SIGMA_DEG = 3.0


def fill_from_layout(spec: CourseSpec, obs: Observation, catalog: Catalog) -> tuple[Observation, list[str], set]:
    """Complete the course from the course file's layout where pieces are out of view.

    Seen pieces always win: a curve marker out of view is placed at the apex of its
    curve cards when they are seen (the apex lies under the marker), else at its
    nominal place; a curve card out of view is laid from the (seen or nominal)
    marker along the nominal direction of the line it stands for.
    """
    try:
        nominal = {p.name: p for p in layout_poses(spec, NOMINAL_SIGMA_MM, catalog)}
    except Exception:  # noqa: BLE001 - a layout that cannot place pieces simply gives no fallback
        return obs, [], set()
    added, warnings = [], []
    if obs.piece(START_GATE) is None:
        # Without the start gate the poses are not in the game frame: fit the layout
        # to the course pieces that are seen, then place the gate from it.
        fitted = _fit_layout(nominal, obs)
        if fitted is None:
            return obs, [], set()
        nominal, rms, n = fitted
        added.append(nominal[START_GATE])
        warnings.append(f"{START_GATE} is not in view: the course file's layout, fitted to {n} pieces seen "
                        f"(rms {rms:.0f} mm), places it (+-{math.hypot(NOMINAL_SIGMA_MM, rms):.0f} mm); positions "
                        "are not in the start-gate frame")
    if obs.piece(FINISH_LINE) is None and FINISH_LINE in nominal:
        added.append(nominal[FINISH_LINE])
        warnings.append(f"{FINISH_LINE} is not in view: the course file's nominal place stands in for it "
                        f"(+-{NOMINAL_SIGMA_MM:.0f} mm)")
    seen_cards = [p for p in obs.pieces if p.name.startswith(CURVE_CARD_PREFIX)]
    used_names = {p.name for p in obs.pieces}
    free = [p.name for p in catalog.pieces(family="tornado/curve-card") if p.name not in used_names]
    for c in spec.curves:
        notes = _fill_curve(c, nominal, obs, seen_cards, free, added)
        if notes:
            warnings.append(f"curve {c.marker} is not all in view: {'; '.join(notes)} from the course file "
                            f"(+-{NOMINAL_SIGMA_MM:.0f} mm, +-{NOMINAL_SIGMA_DEG:.0f} deg)")
    if not added:
        return obs, [], set()
    return replace(obs, pieces=obs.pieces + tuple(added)), warnings, {p.name for p in added}



def _fill_curve(c: CurveSpec, nominal: dict[str, PiecePose], obs: Observation, seen_cards: list[PiecePose],
                free: list[str], added: list[PiecePose]) -> list[str]:
    """One curve's marker and cards out of view, from the layout (appended to ``added``;
    ``free`` lends unused curve-card names); returns notes saying what was assumed."""
    marker = f"{MARKER_PREFIX}{c.marker}"
    if marker not in nominal:
        return []
    nominal_v = (nominal[marker].x_mm, nominal[marker].y_mm)
    nominal_rays = [p.theta_deg for p in nominal.values() if p.name.startswith(CURVE_CARD_PREFIX)
                    and g.dist((p.x_mm, p.y_mm), nominal_v) < 1e-6]
    seen_marker = obs.piece(marker)
    # the layout lists a curve's entry card before its exit card (layout.layout_poses)
    nominal_entry = nominal_rays[0] if nominal_rays else None
    centre = (seen_marker.x_mm, seen_marker.y_mm) if seen_marker else nominal_v
    reach = CARD_TO_MARKER_TOLERANCE_MM if seen_marker else 2 * CARD_TO_MARKER_TOLERANCE_MM
    here = [p for p in seen_cards if g.dist((p.x_mm, p.y_mm), centre) <= reach]
    if seen_marker is not None and len(here) >= 2:
        return []
    notes = []
    if seen_marker is None:
        if here:
            ax = sum(p.x_mm for p in here) / len(here)
            ay = sum(p.y_mm for p in here) / len(here)
            sig = min(p.sigma_mm for p in here)
            vertex_pose = PiecePose(marker, (), ax, ay, 0.0, nominal[marker].z_mm, sig)
            notes.append(f"{marker} is placed at its curve cards' apex")
        else:
            vertex_pose = nominal[marker]
            notes.append(f"{marker} takes its nominal place")
        added.append(vertex_pose)
    else:
        vertex_pose = seen_marker
    # the lines not seen: the nominal ray whose direction no seen card takes
    missing_rays = list(nominal_rays)
    for p in here:
        if missing_rays:
            missing_rays.remove(min(missing_rays, key=lambda a: abs(g.wrap180(a - p.theta_deg))))
    for ang in missing_rays:
        if not free:
            break
        name = free.pop(0)
        face = "left-turn" if c.turn == "left" else "right-turn"
        added.append(PiecePose(name, (), vertex_pose.x_mm, vertex_pose.y_mm, ang, 0.3, vertex_pose.sigma_mm,
                               face=face))
        role = "entry" if nominal_entry is not None and abs(g.wrap180(ang - nominal_entry)) < 1e-6 else "exit"
        notes.append(f"its {role} curve card takes its nominal direction {ang:.0f} deg")
    return notes

def _fit_layout(nominal: dict[str, PiecePose], obs: Observation) -> tuple[dict, float, int] | None:
    """The layout moved rigidly onto the observation's frame, from the seen course
    pieces (curve markers, finish line); None with too little to fit.

    Returns (moved poses with sigma widened by the fit's rms, rms mm, pieces used).
    """
    pairs = [((q.x_mm, q.y_mm), (p.x_mm, p.y_mm)) for name, q in nominal.items()
             if (name.startswith(MARKER_PREFIX) or name == FINISH_LINE) and (p := obs.piece(name)) is not None]
    if not pairs:
        return None
    ca = (sum(a[0] for a, _ in pairs) / len(pairs), sum(a[1] for a, _ in pairs) / len(pairs))
    cb = (sum(b[0] for _, b in pairs) / len(pairs), sum(b[1] for _, b in pairs) / len(pairs))
    if len(pairs) >= 2:
        sxx = sum(g.dot(g.sub(a, ca), g.sub(b, cb)) for a, b in pairs)
        sxy = sum(g.cross(g.sub(a, ca), g.sub(b, cb)) for a, b in pairs)
        if math.hypot(sxx, sxy) < 1e-6:
            return None
        rot = math.degrees(math.atan2(sxy, sxx))
    else:
        finish = obs.piece(FINISH_LINE)
        if finish is not None and FINISH_LINE in nominal:
            rot = finish.theta_deg - nominal[FINISH_LINE].theta_deg
        else:
            rot = _turn_from_curve_cards(nominal, obs, pairs[0])
            if rot is None:
                return None  # one marker alone does not give the turn
    shift = g.sub(cb, g.rotate(ca, rot))

    def move(p: PiecePose, sigma: float) -> PiecePose:
        x, y = g.add(g.rotate((p.x_mm, p.y_mm), rot), shift)
        return PiecePose(p.name, p.marker_ids, x, y, p.theta_deg + rot, p.z_mm, sigma, p.sigma_theta_deg, p.face)

    rms = math.sqrt(sum(g.dist(g.add(g.rotate(a, rot), shift), b) ** 2 for a, b in pairs) / len(pairs))
    if rms > 4 * NOMINAL_SIGMA_MM:
        return None  # the pieces seen are not laid out as the course file says
    sigma = math.hypot(NOMINAL_SIGMA_MM, rms)
    return {n: move(p, sigma) for n, p in nominal.items()}, rms, len(pairs)


def _turn_from_curve_cards(nominal: dict[str, PiecePose], obs: Observation, pair) -> float | None:
    """The layout's turn from one seen curve: its two cards' directions against the
    nominal entry and exit directions (None when the pairing is ambiguous, as for a
    180-degree curve)."""
    (nv, sv) = pair
    rays = [p.theta_deg for n, p in nominal.items() if n.startswith(CURVE_CARD_PREFIX)
            and g.dist((p.x_mm, p.y_mm), nv) < 1e-6]
    seen = [p.theta_deg for p in obs.pieces if p.name.startswith(CURVE_CARD_PREFIX)
            and g.dist((p.x_mm, p.y_mm), sv) <= CARD_TO_MARKER_TOLERANCE_MM]
    if len(rays) != 2 or len(seen) != 2:
        return None
    options = []
    for a, b in ((rays[0], rays[1]), (rays[1], rays[0])):
        d1, d2 = g.wrap180(seen[0] - a), g.wrap180(seen[1] - b)
        options.append((abs(g.wrap180(d1 - d2)), d1 + g.wrap180(d2 - d1) / 2))
    options.sort()
    if options[1][0] - options[0][0] < 30.0:
        return None
    return options[0][1]

