"""`refcam measure tornado-finish`: where the finish line's own stickers sit across it, measured from
photos of the measured boats standing with their noses touching its straight long side (SPEC
section 4, finish line-up).

Why this piece: the finish line is drawn through its two stickers (Course Details, the goal
gate; SPEC section 2), so where they were stuck across the line shifts it, and how far apart
across it they were stuck turns it. A turned line moves two boats side by side in the last
straight by their distance apart along it times the turn: with the catalog's 0.15 degree tolerance,
0.5 mm for boats 200 mm apart, which decides close calls on their own.

How: the boats' own stickers are measured already (`refcam measure tornado-boats`, and the start
gate's terms taken off by `refcam measure tornado-course`), so a boat touching the finish line
reads, along its heading, only where the line's stickers sit across it at the boat's place:
reading(y) = -(offset + turn * y), y along the line from its middle, less what each boat's own
measurement still carries from the start gate it was measured against (that gate's offset, and its
turn times where the boat stood along it: solved for alongside, their sigmas as priors, so the
finish line's terms carry them where they cannot be told apart; and so is the photo's own reading
of the line, which every boat of it is read against). One weighted fit over every boat of every
photo gives the offset and the turn; its scatter beyond the readings' sigmas widens both (a Birge
ratio), never shrinks them. Each sticker then moves across the line by what the fit says at its
own place, and the turn's sigma becomes the finish line's heading tolerance. Its tolerance across
itself stays the catalog's: a photo whose only flat piece is the line places the line against its
stickers within 0.1-0.3 mm (tuning tables: the plane fit lets hand-stuck stickers sit a little off
their layout, and the frame is the layout), more than the fit's sigma says; that offset moves two
boats alike, so the turn is what decides a call.

Plain Python on observations and catalog data (no cv2).
"""

from __future__ import annotations

import copy
import math
from typing import Sequence

from referee.catalog import ALONG_GATE_KEY, GATE_TERMS_KEY, READING_SIGMA_KEY, Catalog, piece_entries
from referee.observation import Observation, PiecePose

from .boats import BoatReading, LineupError, read_lineup
from .course import Row, solve
from ..course_spec import FINISH_LINE, START_GATE

MEASURED_BY = "refcam measure tornado-finish"
OFFSET, TURN = "finish offset", "finish turn"
# what the boats carry from the start gate they were measured against, solved for alongside with its
# sigma as their prior: its offset and turn (less what `refcam measure tornado-course` took off)
START_OFFSET, START_TURN = "start gate offset", "start gate turn"
# the boats must stand this far apart along the line (mm, the farthest two) for its turn to be measured;
# spread along its whole length (six boats 5 cm apart) they stand about four times that apart
MIN_SPREAD_MM = 60.0


def _start_gate_priors(catalog: Catalog, shared_mm: float) -> list[Row]:
    """The start gate's offset and turn as every boat's measurement still carries them: the measured
    terms' sigmas once `refcam measure tornado-course` took them off, else the gate's tolerance (the
    offset's is the boats' shared term, shared_mm)."""
    record = piece_entries(catalog.data)[START_GATE].get("measured")
    terms = record.get(GATE_TERMS_KEY) if isinstance(record, dict) else None
    turn_deg = float(terms["turn_sigma_deg"]) if isinstance(terms, dict) else catalog.piece(START_GATE).placement.sigma_deg
    return [Row({START_OFFSET: 1.0}, 0.0, max(shared_mm, 1e-3)), Row({START_TURN: 1.0}, 0.0, math.radians(max(turn_deg, 1e-3)))]


def _boat_row(reading: BoatReading, catalog: Catalog, entries: dict) -> tuple[Row | None, str]:
    """One boat's reading as a row of the fit, or why it is left out. Its own sticker is measured, so it
    reads the line's stickers at its place, less its measurement's error: the photos' own sigma, and the
    start gate's offset and turn at where it stood along the start gate (solved for alongside)."""
    placement = catalog.piece(reading.name).placement
    record = entries[reading.name].get("measured")
    if not placement.measured or not isinstance(record, dict):
        return None, (f"{reading.name.split('/')[-1]} is not measured in this catalog: its own sticker's place "
                      "would read as the line's (measure the boats first: refcam measure tornado-boats)")
    own = float(record.get(READING_SIGMA_KEY, math.sqrt(max(0.0, placement.sigma_along_mm ** 2 - placement.shared_mm ** 2))))
    along_start = float(record.get(ALONG_GATE_KEY, 0.0))
    return Row({OFFSET: -1.0, TURN: -reading.along_gate_mm, START_OFFSET: -1.0, START_TURN: -along_start},
               reading.offset_mm, math.hypot(reading.sigma_mm, own)), ""


def _line_read_priors(line: PiecePose, photo: int) -> tuple[Row, Row]:
    """Where the photo read the finish line itself is uncertain by its measurement's own sigma (its corners'
    noise, across it and of its heading): every boat of the photo is read against that one reading, so it
    shifts and turns them all alike. Its two unknowns, per photo, with those sigmas as priors."""
    return (Row({(photo, "shift"): 1.0}, 0.0, max(line.measure_sigma_mm, 1e-3)),
            Row({(photo, "turn"): 1.0}, 0.0, math.radians(max(line.measure_sigma_theta_deg, 1e-3))))


def read_finish_lineup(observations: Sequence[tuple[str, Observation]],
                       catalog: Catalog) -> tuple[list[Row], list[float], list[str]]:
    """(fit rows, the priors of the start gate's and of each photo's reading of the line among them; each
    boat's place along the finish line; refusals) over every photo."""
    entries = piece_entries(catalog.data)
    rows, places, shared, refusals = [], [], 0.0, []
    for photo, (label, obs) in enumerate(observations):
        readings, refused = read_lineup(obs, catalog, label, FINISH_LINE)
        refusals += refused
        used = 0
        for r in readings:
            row, why = _boat_row(r, catalog, entries)
            if row is None:
                refusals.append(f"{label}: {why}")
                continue
            rows.append(Row({**row.coeffs, (photo, "shift"): -1.0, (photo, "turn"): -r.along_gate_mm},
                            row.value, row.sigma))
            places.append(r.along_gate_mm)
            shared = max(shared, catalog.piece(r.name).placement.shared_mm)
            used += 1
        rows += _line_read_priors(obs.piece(FINISH_LINE), photo) if used else ()
    return rows + (_start_gate_priors(catalog, shared) if rows else []), places, refusals


def fit_finish(rows: Sequence[Row], places: Sequence[float], refusals: Sequence[str]) -> dict:
    """{offset_mm, offset_sigma_mm, turn_deg, turn_sigma_deg}: where the line's stickers sit across it at
    its middle (+ forward) and their turn (the offset grows by its tangent per mm toward the line's left
    end, +y), from the rows; LineupError when too few boats were read, or they stood too close together
    to tell the turn."""
    if len(places) < 2:
        raise LineupError("the finish line needs two measured boats touching it or more: "
                          + ("; ".join(refusals) or "none was read"))
    spread = max(places) - min(places)
    if spread < MIN_SPREAD_MM:
        raise LineupError(f"the boats stood {spread:.0f} mm apart along the finish line at most (at least "
                          f"{MIN_SPREAD_MM:g} mm needed to tell its turn): spread them along its whole length")
    value, sigma = solve(rows)
    return {"offset_mm": value[OFFSET], "offset_sigma_mm": sigma[OFFSET],
            "turn_deg": math.degrees(value[TURN]), "turn_sigma_deg": math.degrees(sigma[TURN])}


def measured_finish_catalog(base: Catalog, terms: dict, photos: int) -> dict:
    """The base catalog's data with the finish line's stickers where the fit says they sit across it,
    and the turn's sigma as its heading tolerance (across it, the base's tolerance stays)."""
    data = copy.deepcopy(base.data)
    entry = piece_entries(data)[FINISH_LINE]
    turn = math.radians(terms["turn_deg"])
    entry["slots"] = {st.slot: {"xy_mm": [round(st.x_mm + terms["offset_mm"] + turn * st.y_mm, 3), round(st.y_mm, 3)],
                                "rot_deg": st.rot_deg} for st in base.piece(FINISH_LINE).stickers}
    entry["placement_sigma_along_mm"] = round(base.piece(FINISH_LINE).placement.sigma_along_mm, 3)  # kept: above
    entry["placement_sigma_deg"] = round(max(terms["turn_sigma_deg"], 0.001), 4)
    entry["measured"] = {"by": MEASURED_BY, "photos": photos, **{k: round(v, 4) for k, v in terms.items()},
                         "note": "its stickers' offset across the line at its middle (+ forward) and their turn, "
                                 "added to their places; its heading's tolerance is the fit's, across it the catalog's"}
    return data


def measure_finish(observations: Sequence[tuple[str, Observation]], catalog: Catalog) -> dict:
    """Every photo's boats read against the finish line and fitted: {"finish": fit_finish's terms,
    "boats": readings used, "refusals", "catalog": the measured catalog data}."""
    rows, places, refusals = read_finish_lineup(observations, catalog)
    terms = fit_finish(rows, places, refusals)
    return {"finish": terms, "boats": len(places), "refusals": refusals,
            "catalog": measured_finish_catalog(catalog, terms, len(observations))}
