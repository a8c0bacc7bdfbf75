"""`refcam measure tornado-course`: the curve markers' and curve cards' sticker placement,
measured from photos of them laid against the start gate (SPEC section 4, course line-up).

Why these pieces: a curve zone's angles are taken at the curve marker, so its sticker's offset
moves the vertex; a boundary line runs from the marker through the point of the curve card's
edge where its sticker sits, so that sticker's offset across the edge tilts the line (SPEC
section 2). The start gate's straight long side is the physical reference, as for the boats:
* a curve marker lying with its disc edge touching that side has its centre one radius (plus
  the gate's half-depth) behind the gate's line. Where its sticker reads, less that, is the
  sticker's offset in the marker's frame along the gate's +x: one linear equation on the
  offset's two components, through the marker's turn. Photos with the marker turned (a quarter
  turn each) give the other component; one turn alone cannot, and is refused.
* a curve card lying with its boundary edge flush along that side has the edge exactly on it:
  its sticker's distance from the side is its offset across the edge, and its turn from the
  gate's direction is the sticker's turn on the card. Which face is up decides which sticker
  is read; the card's offset along its edge is not measured (it moves the point along the line).

What is shared: the gate's own stickers were stuck by hand too. Their offset across the gate
(g) and their turn (rho) shift every reading of the copy alike (by g + rho times the place along
the gate) and are no part of any piece, so they are solved for with the pieces, from the
catalog's tolerance as a prior: every reading of every photo enters one weighted least-squares
fit, whose scatter beyond the readings' sigmas widens every sigma (a Birge ratio), never shrinks it.

Plain Python on observations and catalog data (no cv2).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Sequence

from referee.catalog import GATE_TERMS, GATE_TERMS_KEY, Catalog, StickerSpec, piece_entries
from referee.observation import Observation, PiecePose

from .. import geometry as g
from .boats import (LINEUP_LIMIT_DEG, LineupError, boats_on_measured_gate, gate_back_side, gate_in_view,
                          off_touching, sigma_against_gate_mm)
from ..course_spec import CURVE_CARD_PREFIX, START_GATE

MARKER_PREFIX = "tornado/curve-marker-"
MEASURED_BY = "refcam measure tornado-course"
# a marker's turns must span at least this (modulo a half turn: a half turn reads the same axis)
# for both components of its offset to be told apart; a quarter turn is best
MIN_TURNS_APART_DEG = 30.0
GATE_OFFSET, GATE_TURN = "gate offset", "gate turn"  # the gate's own unknowns
LAY_OUT = ("each curve marker's disc touching its straight side and each curve card's edge lying flush along it "
           "(refcam measure tornado-course --help)")


@dataclass(frozen=True)
class Row:
    """One linear equation of the fit: sum(coeffs[u] * u) = value, with standard uncertainty sigma."""

    coeffs: dict
    value: float
    sigma: float


@dataclass(frozen=True)
class MarkerMeasure:
    """A marker's sticker centre in the marker's frame (mm, from the disc centre) and its sigmas."""

    name: str
    x_mm: float
    y_mm: float
    sigma_x_mm: float
    sigma_y_mm: float
    turns_deg: tuple[float, ...]

    def to_json(self) -> dict:
        return {"x_mm": round(self.x_mm, 3), "y_mm": round(self.y_mm, 3), "sigma_x_mm": round(self.sigma_x_mm, 3),
                "sigma_y_mm": round(self.sigma_y_mm, 3), "photos": len(self.turns_deg),
                "turns_deg": [round(t, 1) for t in self.turns_deg]}


@dataclass(frozen=True)
class CardFaceMeasure:
    """One face's sticker on a curve card: its offset across the boundary edge (mm, + toward the
    card's +y) and its turn on the card (degrees), with their sigmas."""

    name: str
    slot: str
    across_mm: float
    sigma_mm: float
    turn_deg: float
    sigma_deg: float
    photos: int

    def to_json(self) -> dict:
        return {"across_mm": round(self.across_mm, 3), "sigma_mm": round(self.sigma_mm, 3),
                "turn_deg": round(self.turn_deg, 3), "sigma_deg": round(self.sigma_deg, 3), "photos": self.photos}


@dataclass
class _Readings:
    rows: list = field(default_factory=list)
    marker_turns: dict = field(default_factory=dict)  # marker name -> [turn (deg)] of its accepted readings
    card_photos: dict = field(default_factory=dict)  # (card, slot) -> photos that read it
    refusals: list = field(default_factory=list)


def _sticker_seen(pose: PiecePose, catalog: Catalog) -> tuple[StickerSpec, g.Point]:
    """The piece's (single, showing) sticker and its centre in the game frame."""
    st = next(catalog.sticker(m) for m in pose.marker_ids if catalog.sticker(m) is not None)
    return st, g.to_world((pose.x_mm, pose.y_mm), pose.theta_deg, (st.x_mm, st.y_mm))


def _sticker_in_gate(pose: PiecePose, gate: PiecePose, catalog: Catalog) -> tuple[StickerSpec, g.Point, float]:
    """The piece's (single, showing) sticker, and its centre and heading in the gate's frame: what the
    photo saw, whatever the catalog in use says about where the sticker sits on the piece."""
    st, centre = _sticker_seen(pose, catalog)
    return (st, g.to_local((gate.x_mm, gate.y_mm), gate.theta_deg, centre),
            g.wrap180(pose.theta_deg + st.rot_deg - gate.theta_deg))


def _read_marker(pose: PiecePose, gate: PiecePose, catalog: Catalog, into: _Readings, label: str,
                 sigma_mm: float) -> None:
    """A curve marker touching the gate: sticker x - touching x = cos(t) sx - sin(t) sy (+ the gate's terms);
    sigma_mm: the reading's (boats.sigma_against_gate_mm)."""
    back_x, half_length = gate_back_side(catalog)
    _, (x, y), _ = _sticker_in_gate(pose, gate, catalog)
    radius = float(catalog.piece(pose.name).footprint["diameter_mm"]) / 2
    b = x - (back_x - radius)
    short = pose.name.split("/")[-1]
    why = off_touching(b, "push its disc against the gate")
    if abs(y) > half_length:
        why = "lies beside the gate's end, not behind it: move it behind the gate"
    if why:
        into.refusals.append(f"{label}: {short} {why}")
        return
    # the marker's frame is its sticker's, less the catalog's turn of it: the pose's heading
    t = math.radians(g.wrap180(pose.theta_deg - gate.theta_deg))
    into.rows.append(Row({(pose.name, "x"): math.cos(t), (pose.name, "y"): -math.sin(t), GATE_OFFSET: 1.0,
                          GATE_TURN: y}, b, max(sigma_mm, 1e-3)))
    into.marker_turns.setdefault(pose.name, []).append(math.degrees(t))


def _read_card(pose: PiecePose, gate: PiecePose, catalog: Catalog, into: _Readings, label: str,
               sigma_mm: float) -> None:
    """A curve card flush along the gate, its edge along the gate's +y (side +1) or -y (side -1):
    sticker x - the side's x = -side * (offset across the edge); sticker turn - side * 90 = its turn on the
    card. sigma_mm: the reading's across the gate (boats.sigma_against_gate_mm)."""
    back_x, half_length = gate_back_side(catalog)
    st, (x, y), heading = _sticker_in_gate(pose, gate, catalog)
    side = 1.0 if heading > 0 else -1.0
    turn = g.wrap180(heading - 90.0 * side)
    short = f"{pose.name.split('/')[-1]} ({st.face or st.slot} face)"
    b = x - back_x
    why = off_touching(b, "lay its edge against the gate")
    if abs(turn) > LINEUP_LIMIT_DEG:
        why = (f"is turned {turn:+.1f}° from the gate (at most {LINEUP_LIMIT_DEG:g}°): lay its straight edge "
               "along the gate's straight side")
    elif abs(y - side * st.x_mm) > half_length:
        why = "has its apex past the gate's end: slide it back until its edge runs along the gate"
    if why:
        into.refusals.append(f"{label}: {short} {why}")
        return
    key = (pose.name, st.slot)
    into.rows.append(Row({key + ("across",): -side, GATE_OFFSET: 1.0, GATE_TURN: y}, b, max(sigma_mm, 1e-3)))
    # the photo's frame turned by the gate's turn turns every heading back by it
    into.rows.append(Row({key + ("turn",): 1.0, GATE_TURN: -1.0}, math.radians(turn),
                         math.radians(max(pose.measure_sigma_theta_deg, 1e-3))))
    into.card_photos[key] = into.card_photos.get(key, 0) + 1


def read_course_lineup(obs: Observation, catalog: Catalog, label: str, into: _Readings) -> None:
    """The course pieces of one line-up photo, read into `into`. LineupError when the photo shows
    no start gate or no curve marker or card."""
    gate = gate_in_view(obs, label, LAY_OUT)
    pieces = [p for p in obs.pieces if p.name.startswith((MARKER_PREFIX, CURVE_CARD_PREFIX))]
    if not pieces:
        raise LineupError(f"{label}: no curve marker or curve card in view: lay them against the start gate, "
                          + LAY_OUT.split(" (")[0].replace("each ", "", 1))
    for p in pieces:
        sigma = sigma_against_gate_mm(obs, p, gate, catalog, _sticker_seen(p, catalog)[1])
        (_read_marker if p.name.startswith(MARKER_PREFIX) else _read_card)(p, gate, catalog, into, label, sigma)


def _turns_apart_deg(turns: Sequence[float]) -> float:
    """The widest angle between two of a marker's turns, modulo a half turn (0 to 90 degrees)."""
    return max((abs(g.wrap180(2 * (a - b))) / 2 for a in turns for b in turns), default=0.0)


def _refuse_unseparable(readings: _Readings) -> None:
    """Drop the rows of a marker whose turns cannot tell its offset's two components apart, with a reason."""
    for name, turns in sorted(readings.marker_turns.items()):
        apart = _turns_apart_deg(turns)
        if apart >= MIN_TURNS_APART_DEG:
            continue
        seen = ("was seen at one turn only" if len(turns) == 1 else
                f"lies turned alike in every photo ({apart:.0f}° apart at most, modulo a half turn; at least "
                f"{MIN_TURNS_APART_DEG:g}° needed)")
        readings.refusals.append(f"{name.split('/')[-1]} {seen}: one turn measures its sticker along one axis "
                                 "only: take another photo with it turned a quarter turn")
        readings.rows = [r for r in readings.rows if not any(isinstance(k, tuple) and k[0] == name for k in r.coeffs)]
        del readings.marker_turns[name]


def _invert(m: list[list[float]]) -> list[list[float]]:
    """The inverse of a small symmetric positive-definite matrix (Gauss-Jordan, partial pivoting)."""
    n = len(m)
    a = [row[:] + [1.0 if i == j else 0.0 for j in range(n)] for i, row in enumerate(m)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        if abs(a[pivot][col]) < 1e-15:
            raise LineupError("the line-up photos leave a sticker's placement undetermined")
        a[col], a[pivot] = a[pivot], a[col]
        p = a[col][col]
        a[col] = [v / p for v in a[col]]
        for r in range(n):
            if r != col and a[r][col]:
                f = a[r][col]
                a[r] = [v - f * w for v, w in zip(a[r], a[col])]
    return [row[n:] for row in a]


def solve(rows: Sequence[Row]) -> tuple[dict, dict]:
    """Weighted least squares over rows: (value, sigma) per unknown. Where the residuals scatter more
    than the rows' sigmas say (chi2 per degree of freedom above 1), every sigma grows by its root."""
    names = sorted({k for r in rows for k in r.coeffs}, key=str)
    index = {k: i for i, k in enumerate(names)}
    n = len(names)
    normal = [[0.0] * n for _ in range(n)]
    rhs = [0.0] * n
    for r in rows:
        w = 1.0 / r.sigma ** 2
        for ki, ci in r.coeffs.items():
            rhs[index[ki]] += w * ci * r.value
            for kj, cj in r.coeffs.items():
                normal[index[ki]][index[kj]] += w * ci * cj
    cov = _invert(normal)
    x = [sum(cov[i][j] * rhs[j] for j in range(n)) for i in range(n)]
    chi2 = sum((r.value - sum(c * x[index[k]] for k, c in r.coeffs.items())) ** 2 / r.sigma ** 2 for r in rows)
    dof = len(rows) - n
    birge = max(1.0, math.sqrt(chi2 / dof)) if dof > 0 else 1.0
    return ({k: x[index[k]] for k in names}, {k: birge * math.sqrt(max(cov[index[k]][index[k]], 0.0)) for k in names})


def combine(readings: _Readings, catalog: Catalog) -> tuple[list[MarkerMeasure], list[CardFaceMeasure], dict]:
    """Every reading in one fit with the gate's own offset and turn (the catalog's tolerance as their
    prior): the markers' and card faces' measures, and the gate's terms {offset_mm, turn_deg}."""
    gate = catalog.piece("tornado/start-gate").placement
    priors = [Row({GATE_OFFSET: 1.0}, 0.0, max(gate.sigma_along_mm, 1e-3)),
              Row({GATE_TURN: 1.0}, 0.0, math.radians(max(gate.sigma_deg, 1e-3)))]
    value, sigma = solve(list(readings.rows) + priors)
    markers = [MarkerMeasure(name, value[(name, "x")], value[(name, "y")], sigma[(name, "x")], sigma[(name, "y")],
                             tuple(turns)) for name, turns in sorted(readings.marker_turns.items())]
    faces = [CardFaceMeasure(name, slot, value[(name, slot, "across")], sigma[(name, slot, "across")],
                             math.degrees(value[(name, slot, "turn")]), math.degrees(sigma[(name, slot, "turn")]), n)
             for (name, slot), n in sorted(readings.card_photos.items())]
    return markers, faces, {"offset_mm": value[GATE_OFFSET], "turn_deg": math.degrees(value[GATE_TURN]),
                            "offset_sigma_mm": sigma[GATE_OFFSET], "turn_sigma_deg": math.degrees(sigma[GATE_TURN])}


def _measured_note(entry: dict) -> dict:
    """The piece entry's note of what this command measured before (a --catalog BASE), or a new one."""
    note = entry.get("measured")
    if not isinstance(note, dict) or note.get("by") != MEASURED_BY:
        note = {"by": MEASURED_BY}
    return note


def _write_marker(entry: dict, base: Catalog, m: MarkerMeasure) -> None:
    st = base.piece(m.name).stickers[0]
    entry["slots"] = {st.slot: {"xy_mm": [round(m.x_mm, 3), round(m.y_mm, 3)], "rot_deg": st.rot_deg}}
    # the marker's +x is its sticker's: along it the x component, across it the y component
    entry["placement_sigma_along_mm"] = round(max(m.sigma_x_mm, 0.001), 3)
    entry["placement_sigma_mm"] = round(max(m.sigma_y_mm, 0.001), 3)
    entry["measured"] = {"by": MEASURED_BY, "sticker_mm": [round(m.x_mm, 3), round(m.y_mm, 3)],
                         "photos": len(m.turns_deg),
                         "note": "the sticker's centre from the disc centre, in the marker's frame; the curve's "
                                 "vertex is the disc centre"}


def _write_card(entry: dict, base: Catalog, name: str, faces: Sequence[CardFaceMeasure]) -> None:
    """The measured faces' stickers moved across the edge and turned; the piece's tolerance across its
    edge and of its turn is its worst face's (a face never measured keeps the base tolerance), along the
    edge the base's (not measured: it moves the boundary point along the line, not off it)."""
    spec = base.piece(name)
    note = _measured_note(entry)
    measured = dict(note.get("faces", {}))
    slots = dict(entry.get("slots", {}))
    for f in faces:
        st = spec.sticker(f.slot)
        slots[f.slot] = dict(slots.get(f.slot, {}), xy_mm=[round(st.x_mm, 3), round(f.across_mm, 3)],
                             rot_deg=round(f.turn_deg, 3))
        if st.face:
            slots[f.slot]["face"] = st.face
        measured[f.slot] = {"across_mm": round(f.across_mm, 3), "sigma_mm": round(max(f.sigma_mm, 0.001), 3),
                            "turn_deg": round(f.turn_deg, 3), "sigma_deg": round(max(f.sigma_deg, 0.001), 3),
                            "photos": f.photos}
    entry["slots"] = slots
    default = base.family(spec.family)
    worst = [measured.get(st.slot, {"sigma_mm": float(default["placement_sigma_mm"]),
                                    "sigma_deg": float(default["placement_sigma_deg"])}) for st in spec.stickers]
    entry["placement_sigma_mm"] = max(w["sigma_mm"] for w in worst)
    entry["placement_sigma_deg"] = max(w["sigma_deg"] for w in worst)
    entry["placement_sigma_along_mm"] = spec.placement.sigma_along_mm
    entry["measured"] = dict(note, faces=measured,
                             note="per face: its sticker's offset across the boundary edge (+ toward the card's +y) "
                                  "and its turn on the card; the offset along the edge is not measured")


def measured_course_catalog(base: Catalog, markers: Sequence[MarkerMeasure], faces: Sequence[CardFaceMeasure],
                            gate: dict | None = None) -> dict:
    """The base catalog's data with each measured marker's and card face's sticker where it was measured
    to sit, and the measurement's sigma as the piece's placement tolerance (SPEC section 2); with the
    gate's own terms (combine), the boats the base measured against the same gate corrected by them."""
    data = copy.deepcopy(base.data)
    entries = piece_entries(data)
    if gate is not None:
        entries[START_GATE]["measured"] = {
            "by": MEASURED_BY, GATE_TERMS_KEY: {k: round(gate[k], 4) for k in GATE_TERMS},
            "note": "its own stickers' offset across it and turn, as every line-up reading against it carries them"}
        boats_on_measured_gate(data)
    for m in markers:
        _write_marker(entries[m.name], base, m)
    by_card: dict[str, list[CardFaceMeasure]] = {}
    for f in faces:
        by_card.setdefault(f.name, []).append(f)
    for name, got in by_card.items():
        _write_card(entries[name], base, name, got)
    return data


def measure_course(observations: Sequence[tuple[str, Observation]], catalog: Catalog) -> dict:
    """Every photo's course line-up read and fitted: {"markers", "cards", "gate", "refusals", "catalog"}.
    When no piece at all could be measured, LineupError names the reasons."""
    readings = _Readings()
    for label, obs in observations:
        read_course_lineup(obs, catalog, label, readings)
    _refuse_unseparable(readings)
    if not readings.rows:
        raise LineupError("no curve marker or curve card could be measured: " + "; ".join(readings.refusals))
    markers, faces, gate = combine(readings, catalog)
    return {"markers": markers, "cards": faces, "gate": gate, "refusals": readings.refusals,
            "catalog": measured_course_catalog(catalog, markers, faces, gate)}
