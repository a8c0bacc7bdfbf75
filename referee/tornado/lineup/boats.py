"""`refcam measure tornado-boats`: each boat's sticker placement along its heading, measured
from photos of the boats lined up against the start gate (SPEC section 4, boat line-up).

Why along the heading: a boat's single sticker cannot show its own offset, and a boat's
deck centre decides every Tornado call (Ranking Phase distances and angles, Judging Line
Crossings), mostly along its heading. The start gate gives a physical reference: a boat
whose nose touches the gate's straight long side has its deck centre exactly half a boat
(plus the gate's half-depth) behind the gate's line, so the sticker's offset along the
heading is where the sticker says the deck centre is, less where it must be.

What is shared: every boat of a photo is measured against the same gate, whose own
stickers were stuck by hand too. Their offset along the gate's +x is the same for all boats:
the catalog records it apart (shared_gate_sigma_mm), and the catalog loader adds it to each
boat's along-heading tolerance (a boat against a line feels it whole), while a pair's call
counts only how differently it moves the two measures (referee.tornado.ranking).
Their tilt (the gate's heading tolerance) is not: it moves a boat by its distance from the
gate's middle times the tilt, so that term is in each boat's sigma, and it does not average
over photos of the same gate. Boats close together at the middle of the gate keep it small.

Plain Python on observations and catalog data (no cv2).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Sequence

from referee.camera_field import CameraField
from referee.catalog import (ALONG_GATE_KEY, GATE_TAKEN_OFF_KEY, GATE_TERMS_KEY, READING_SIGMA_KEY,
                             SHARED_LINEUP_KEY, Catalog, piece_entries)
from referee.errors import InvalidInputError
from referee.observation import Observation, PiecePose

from .. import geometry as g
from ..cards import BOAT_PREFIX
from ..course_spec import START_GATE

# SPEC section 4: a boat farther than this from touching the gate, or turned more than this
# from square to it, is refused (a line-up that is not one measures the player, not the sticker).
LINEUP_LIMIT_MM = 5.0
LINEUP_LIMIT_DEG = 5.0
MEASURED_BY = "refcam measure tornado-boats"
# How far the start gate's frame may stand differently in the boats' line-up photo and in the course
# line-up's photos, beyond what the course fit's sigma says: the plane fit places a gate whose stickers were
# stuck by hand against them a little differently with other pieces in view. Set on the hand-stuck tuning
# seeds 1000-1039 (tests.bench.handstuck): the measured boats' errors within 1 sigma were 59.6 % with
# none, 67.5 % with 0.03 mm (within 2 sigma 95.4 -> 97.1 %).
LINEUPS_APART_MM = 0.03


class LineupError(InvalidInputError):
    """A photo that is not a boat line-up against the start gate."""


@dataclass(frozen=True)
class BoatReading:
    """One boat in one photo: its sticker's offset along its heading (mm, + = the sticker sits
    forward of its catalog place), that reading's sigma, and its turn from square (degrees)."""

    name: str
    offset_mm: float
    sigma_mm: float
    turn_deg: float
    along_gate_mm: float = 0.0  # where along the gate it stood, from the gate's middle
    gate_tilt_rad: float = 0.0  # the gate's own heading tolerance (its stickers' placement)
    # how far the boat's sticker's own turn on it (its tolerance) moves the reading: the boat's heading is
    # read from its sticker, and where its nose reaches depends on that heading (the same in every photo)
    sticker_turn_mm: float = 0.0


@dataclass(frozen=True)
class BoatMeasure:
    """A boat's offset over every photo that read it (inverse-variance mean)."""

    name: str
    offset_mm: float
    sigma_mm: float
    turn_deg: float
    photos: int
    along_gate_mm: float = 0.0  # its mean place along the gate, from the gate's middle
    reading_sigma_mm: float = 0.0  # sigma_mm without the gate's tilt term (the photos' own)

    def to_json(self) -> dict:
        return {"offset_mm": round(self.offset_mm, 3), "sigma_mm": round(self.sigma_mm, 3),
                "turn_deg": round(self.turn_deg, 2), "photos": self.photos}


def _front_reach(catalog: Catalog, boat: str, turn_deg: float) -> float:
    """How far the boat's outline reaches ahead of its reference point along the gate's +x,
    for a boat turned turn_deg (its footprint's support in that direction)."""
    c, s = math.cos(math.radians(turn_deg)), math.sin(math.radians(turn_deg))
    return max(x * c - y * s for x, y in catalog.piece(boat).footprint_polygon(96))


def gate_back_side(catalog: Catalog, line: str = START_GATE) -> tuple[float, float]:
    """(x of the gate's straight long side behind its line, half the gate's length), gate frame mm:
    what every line-up (boats, course pieces) touches; line: the start gate or the finish line."""
    fp = catalog.piece(line).footprint
    depth, length = (float(v) for v in fp["size_mm"])
    cx = float(fp.get("centre_mm", (0.0, 0.0))[0])
    return cx - depth / 2, length / 2


def off_touching(reading_mm: float, remedy: str) -> str:
    """SPEC section 4: why a piece reading reading_mm (+ into the gate) off touching the gate's straight
    side is refused, and what to do (remedy); '' within LINEUP_LIMIT_MM."""
    if abs(reading_mm) <= LINEUP_LIMIT_MM:
        return ""
    where = "short of" if reading_mm < 0 else "into"
    return (f"reads {abs(reading_mm):.1f} mm {where} the gate's straight side (at most {LINEUP_LIMIT_MM:g} mm "
            f"off touching): {remedy}")


def gate_in_view(obs: Observation, label: str, lay_out: str, line: str = START_GATE) -> PiecePose:
    """The start gate (or line: the finish line) of a line-up photo; LineupError saying how to lay out
    the pieces when it is not in view."""
    gate = obs.piece(line)
    if gate is None:
        raise LineupError(f"{label}: the {line.split('/')[-1].replace('-', ' ')} is not in view: lay it flat on "
                          f"the table in the picture, {lay_out}")
    return gate


def sigma_against_gate_mm(obs: Observation, pose: PiecePose, gate: PiecePose, catalog: Catalog,
                          point: g.Point) -> float:
    """The measurement's sigma of a reading of pose against the gate's line, across the gate, at point
    (game frame mm, where pose's sticker was read). The camera's error moves the piece and the gate's
    stickers as one smooth field (referee.camera_field), so what it does to the reading is the field at
    the piece less the field on the gate's line there (the line through the gate's stickers in view),
    one direction at a time; the piece's own camera share (sigma_camera_mm) is replaced by that. The
    frame's term stays: the gate is the frame's anchor, so its own noise is the reading's. Without a
    field, a camera share, or two gate stickers apart in view, the piece's whole measurement sigma."""
    field = CameraField.from_frame(obs.frame)
    ends = {(st.x_mm, st.y_mm) for st in map(catalog.sticker, gate.marker_ids) if st is not None}
    if field is None or not pose.sigma_camera_mm or len(ends) < 2:
        return pose.measure_sigma_mm
    (ax, ay), (bx, by) = min(ends, key=lambda e: e[1]), max(ends, key=lambda e: e[1])
    a, b = (g.to_world((gate.x_mm, gate.y_mm), gate.theta_deg, e) for e in ((ax, ay), (bx, by)))
    along = g.sub(b, a)
    t = g.dot(g.sub(point, a), along) / g.dot(along, along)  # where the piece falls along the gate's line
    across = g.direction(gate.theta_deg)
    moved = zip(field.shifts(*point, pose.z_mm), field.shifts(*a, gate.z_mm), field.shifts(*b, gate.z_mm))
    relative = math.sqrt(sum(g.dot(across, g.sub(fp, g.add(g.scale(fa, 1 - t), g.scale(fb, t)))) ** 2
                             for fp, fa, fb in moved))
    own = math.sqrt(max(0.0, pose.measure_sigma_mm ** 2 - pose.sigma_camera_mm ** 2))
    return math.hypot(own, relative)


def read_lineup(obs: Observation, catalog: Catalog, label: str,
                line: str = START_GATE) -> tuple[list[BoatReading], list[str]]:
    """The boats of one line-up photo against the start gate (or line: the finish line): (readings,
    refusals). Raises LineupError when the photo shows no such gate or no boat."""
    gate = gate_in_view(obs, label, "the boats behind it with their noses touching its straight side", line)
    boats = [p for p in obs.pieces if p.name.startswith(BOAT_PREFIX)]
    if not boats:
        raise LineupError(f"{label}: no boat in view: stand the boats behind the "
                          f"{line.split('/')[-1].replace('-', ' ')}")
    back_x, half_length = gate_back_side(catalog, line)
    readings, refusals = [], []
    for b in boats:
        sigma = sigma_against_gate_mm(obs, b, gate, catalog, (b.x_mm, b.y_mm))
        reading, why = _read_boat(b, gate, catalog, back_x, half_length, sigma)
        if why:
            refusals.append(f"{label}: {b.name.split('/')[-1]} {why}")
        else:
            readings.append(reading)
    return readings, refusals


def _read_boat(b: PiecePose, gate: PiecePose, catalog: Catalog, back_x: float,
               half_length: float, measure_sigma_mm: float) -> tuple[BoatReading | None, str]:
    """One boat against the gate: its reading, or why it is refused (SPEC section 4 limits);
    measure_sigma_mm: its pose's sigma against the gate (sigma_against_gate_mm)."""
    x, y = g.to_local((gate.x_mm, gate.y_mm), gate.theta_deg, (b.x_mm, b.y_mm))
    turn = g.wrap180(b.theta_deg - gate.theta_deg)
    if abs(turn) > LINEUP_LIMIT_DEG:
        return None, (f"is turned {turn:+.1f}° from square to the gate (at most {LINEUP_LIMIT_DEG:g}°): "
                      "set it heading straight across the gate")
    if abs(y) > half_length:
        return None, "stands beside the gate's end, not behind it: move it behind the gate"
    # nose where the sticker says, less where touching puts it, along the boat's heading
    offset = (x + _front_reach(catalog, b.name, turn) - back_x) / math.cos(math.radians(turn))
    why = off_touching(offset, "push its nose against the gate")
    if why:
        return None, why
    # a sticker stuck off sideways reads along the gate when the boat is turned
    sigma = math.hypot(measure_sigma_mm, b.placement_sigma_mm * abs(math.tan(math.radians(turn))))
    reach = _front_reach(catalog, b.name, turn)
    turned = max(abs(_front_reach(catalog, b.name, turn + k * b.placement_sigma_deg) - reach) for k in (-1, 1))
    return BoatReading(b.name, offset, sigma, turn, y, math.radians(gate.placement_sigma_deg),
                       turned / math.cos(math.radians(turn))), ""


def combine(readings: Sequence[BoatReading]) -> list[BoatMeasure]:
    """Per boat, the inverse-variance mean over photos; where photos disagree by more than
    their sigmas say, sigma grows with their scatter (a Birge ratio), never shrinks. The boat's
    sticker's turn on it is the same in every photo, and so is the gate's tilt: their terms (the
    sticker's, and the boat's mean place along the gate times the tilt tolerance) are added after
    averaging."""
    by_boat: dict[str, list[BoatReading]] = {}
    for r in readings:
        by_boat.setdefault(r.name, []).append(r)
    out = []
    for name in sorted(by_boat):
        rs = by_boat[name]
        w = [1.0 / max(r.sigma_mm, 1e-6) ** 2 for r in rs]
        mean = sum(wi * r.offset_mm for wi, r in zip(w, rs)) / sum(w)
        sigma = 1.0 / math.sqrt(sum(w))
        if len(rs) > 1:
            chi2 = sum(wi * (r.offset_mm - mean) ** 2 for wi, r in zip(w, rs)) / (len(rs) - 1)
            sigma *= max(1.0, math.sqrt(chi2))
        along = sum(wi * r.along_gate_mm for wi, r in zip(w, rs)) / sum(w)
        tilt = max(r.gate_tilt_rad for r in rs)
        own = math.hypot(sigma, max(r.sticker_turn_mm for r in rs))  # the sticker's turn does not average either
        out.append(BoatMeasure(name, mean, math.hypot(own, along * tilt), sum(r.turn_deg for r in rs) / len(rs),
                               len(rs), along, own))
    return out


def measured_catalog(base: Catalog, measures: Sequence[BoatMeasure]) -> dict:
    """The base catalog's data with each measured boat's sticker moved by its offset along
    the boat's +x and that measurement's sigma as its along-heading placement tolerance."""
    data = copy.deepcopy(base.data)
    entries = piece_entries(data)
    shared = base.piece(START_GATE).placement.sigma_along_mm
    for m in measures:
        entry = entries[m.name]
        entry["slots"] = {st.slot: {"xy_mm": [round(st.x_mm + m.offset_mm, 3), round(st.y_mm, 3)],
                                    "rot_deg": st.rot_deg} for st in base.piece(m.name).stickers}
        entry["placement_sigma_along_mm"] = round(max(m.sigma_mm, 0.001), 3)
        entry["measured"] = {"by": MEASURED_BY, "offset_mm": round(m.offset_mm, 3), "photos": m.photos,
                             SHARED_LINEUP_KEY: shared, ALONG_GATE_KEY: round(m.along_gate_mm, 1),
                             READING_SIGMA_KEY: round(max(m.reading_sigma_mm, 0.001), 3),
                             "note": "offset along the boat's heading, added to its sticker's place; the gate's "
                                     "own placement error is shared by every boat measured against it"}
    boats_on_measured_gate(data)  # the course measured first: its gate's terms come off at once
    return data


def boats_on_measured_gate(data: dict) -> None:
    """Correct, in catalog data, every boat measured against the start gate by the gate's own offset and
    turn once those are measured (`refcam measure tornado-course` solves them and records them in the
    gate's entry, GATE_TERMS_KEY), whichever of the two was measured first. Each boat read its offset
    plus the gate's offset plus the gate's turn times its place along the gate: both come off, and its
    tolerance keeps its photos' own sigma and the measured turn's over its place, in place of the
    gate's catalog tolerance; the shared term becomes the measured offset's sigma, with
    LINEUPS_APART_MM. A boat corrected before (the course measured again) trades the terms taken off
    then for these; a boat measured by an older refcam (no place along the gate recorded) is left as
    it is."""
    entries = piece_entries(data)
    gate = entries[START_GATE].get("measured") if START_GATE in entries else None
    terms = gate.get(GATE_TERMS_KEY) if isinstance(gate, dict) else None
    if not isinstance(terms, dict):
        return
    offset, turn = float(terms["offset_mm"]), math.radians(float(terms["turn_deg"]))
    for entry in entries.values():
        record = entry.get("measured")
        if not (isinstance(record, dict) and record.get("by") == MEASURED_BY and ALONG_GATE_KEY in record
                and READING_SIGMA_KEY in record):
            continue
        along = float(record[ALONG_GATE_KEY])
        before = record.get(GATE_TAKEN_OFF_KEY) or {"offset_mm": 0.0, "turn_deg": 0.0}
        shift = offset + turn * along - (before["offset_mm"] + math.radians(before["turn_deg"]) * along)
        for slot in entry["slots"].values():
            slot["xy_mm"][0] = round(slot["xy_mm"][0] - shift, 3)
        turn_term = along * math.radians(float(terms["turn_sigma_deg"]))
        entry["placement_sigma_along_mm"] = round(max(math.hypot(float(record[READING_SIGMA_KEY]), turn_term),
                                                      0.001), 3)
        record["offset_mm"] = round(float(record["offset_mm"]) - shift, 3)
        record[SHARED_LINEUP_KEY] = round(math.hypot(float(terms["offset_sigma_mm"]), LINEUPS_APART_MM), 3)
        record[GATE_TAKEN_OFF_KEY] = {"offset_mm": float(terms["offset_mm"]), "turn_deg": float(terms["turn_deg"])}


def measure_boats(observations: Sequence[tuple[str, Observation]], catalog: Catalog) -> dict:
    """Every photo's line-up read and combined: {"boats": [BoatMeasure], "refusals": [...],
    "catalog": the measured catalog data}. A photo whose every boat is refused still counts
    its refusals; when no boat at all could be measured, LineupError names the reasons."""
    readings, refusals = [], []
    for label, obs in observations:
        got, refused = read_lineup(obs, catalog, label)
        readings += got
        refusals += refused
    if not readings:
        raise LineupError("no boat could be measured: " + "; ".join(refusals))
    measures = combine(readings)
    return {"boats": measures, "refusals": refusals, "catalog": measured_catalog(catalog, measures)}
