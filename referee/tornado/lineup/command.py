"""`refcam measure tornado-boats IMAGE...`, `refcam measure tornado-course IMAGE...` and `refcam measure
tornado-finish IMAGE...`: the boats', the course pieces' and the finish line's sticker placement from
line-up photos (boats.py, course.py, finish.py beside it), as the text and
JSON the command line prints."""

from __future__ import annotations

from typing import Sequence

from referee.catalog import Catalog
from referee.game import Measurement
from referee.observation import Observation

from .boats import LINEUP_LIMIT_DEG, LINEUP_LIMIT_MM, measure_boats
from .course import MIN_TURNS_APART_DEG, measure_course
from .finish import MIN_SPREAD_MM, measure_finish


def _verdict(what: str, refusals: Sequence[str]) -> str:
    """The first line a player reads: what was measured, and what was refused."""
    refused = f"; {len(refusals)} refused (below)" if refusals else ""
    return f"Measured: {what}{refused}."


def _measure(observations: Sequence[tuple[str, Observation]], catalog: Catalog) -> dict:
    got = measure_boats(observations, catalog)
    sigmas = [m.sigma_mm for m in got["boats"]]
    lines = [_verdict(f"{len(sigmas)} boat sticker{'s' * (len(sigmas) != 1)} of your copy along the boat, "
                      f"sigma {min(sigmas):.2f}-{max(sigmas):.2f} mm", got["refusals"]),
             f"{'boat':<8} {'correction':>11} {'sigma':>7} {'turn':>7} photos"]
    for m in got["boats"]:
        lines.append(f"{m.name.split('/')[-1]:<8} {m.offset_mm:+8.2f} mm {m.sigma_mm:5.2f} mm "
                     f"{m.turn_deg:+6.1f}° {m.photos:>6}")
    lines.append("correction: how far forward (+) of its catalog place each boat's sticker sits, along the boat")
    lines += [f"refused: {r}" for r in got["refusals"]]
    doc = {"boats": {m.name: m.to_json() for m in got["boats"]}, "refused": got["refusals"],
           "limits": {"off_gate_mm": LINEUP_LIMIT_MM, "turn_deg": LINEUP_LIMIT_DEG}}
    return {"catalog": got["catalog"], "lines": lines, "json": doc}


def _measure_course(observations: Sequence[tuple[str, Observation]], catalog: Catalog) -> dict:
    got = measure_course(observations, catalog)
    lines = [_verdict(f"{len(got['markers'])} curve marker{'s' * (len(got['markers']) != 1)} and "
                      f"{len(got['cards'])} curve-card face{'s' * (len(got['cards']) != 1)} of your copy",
                      got["refusals"])]
    if got["markers"]:
        lines.append(f"{'marker':<16} {'sticker x, y from the disc centre':>34} {'sigma x, y':>15} photos")
        for m in got["markers"]:
            lines.append(f"{m.name.split('/')[-1]:<16} {m.x_mm:+14.2f} mm {m.y_mm:+8.2f} mm {'':>7}"
                         f"{m.sigma_x_mm:5.2f} {m.sigma_y_mm:5.2f} mm {len(m.turns_deg):>4}")
    if got["cards"]:
        lines.append(f"{'curve card face':<26} {'across the edge':>16} {'sigma':>7} {'turn':>8} {'sigma':>6} photos")
        for f in got["cards"]:
            lines.append(f"{f.name.split('/')[-1] + ' ' + f.slot:<26} {f.across_mm:+13.2f} mm {f.sigma_mm:5.2f} mm "
                         f"{f.turn_deg:+7.2f}° {f.sigma_deg:5.2f}° {f.photos:>4}")
    lines.append(f"the gate's own stickers, solved for alongside: offset {got['gate']['offset_mm']:+.2f} mm across it, "
                 f"turn {got['gate']['turn_deg']:+.3f}°")
    lines.append("correction: where each sticker sits on its piece, in the piece's frame (the marker's: its sticker's "
                 "heading; the card's: +x along its boundary edge from the apex)")
    lines += [f"refused: {r}" for r in got["refusals"]]
    doc = {"markers": {m.name: m.to_json() for m in got["markers"]},
           "curve_cards": {name: {f.slot: f.to_json() for f in got["cards"] if f.name == name}
                           for name in sorted({f.name for f in got["cards"]})},
           "gate": {k: round(v, 4) for k, v in got["gate"].items()}, "refused": got["refusals"],
           "limits": {"off_gate_mm": LINEUP_LIMIT_MM, "turn_deg": LINEUP_LIMIT_DEG,
                      "marker_turns_apart_deg": MIN_TURNS_APART_DEG}}
    return {"catalog": got["catalog"], "lines": lines, "json": doc}


def _measure_finish(observations: Sequence[tuple[str, Observation]], catalog: Catalog) -> dict:
    got = measure_finish(observations, catalog)
    f = got["finish"]
    lines = [_verdict(f"where your copy's finish-line stickers sit, from {got['boats']} boat readings", got["refusals"]),
             f"finish line, from {got['boats']} boat readings: its stickers sit {f['offset_mm']:+.2f} mm "
             f"+- {f['offset_sigma_mm']:.2f} across it (+ forward), turned {f['turn_deg']:+.3f}° +- {f['turn_sigma_deg']:.3f}°",
             "correction: each sticker moved across the line by that offset and turn at its place; the line's "
             "heading tolerance becomes the turn's sigma, across it the catalog's stays (one photo places the line "
             "against its stickers only that well)"]
    lines += [f"refused: {r}" for r in got["refusals"]]
    doc = {"finish_line": {k: round(v, 4) for k, v in f.items()}, "boat_readings": got["boats"],
           "refused": got["refusals"],
           "limits": {"off_gate_mm": LINEUP_LIMIT_MM, "turn_deg": LINEUP_LIMIT_DEG, "min_spread_mm": MIN_SPREAD_MM}}
    return {"catalog": got["catalog"], "lines": lines, "json": doc}


BOATS = Measurement(
    name="tornado-boats",
    help="the Tornado boats' sticker placement along their heading, from photos of the boats standing behind "
         "the start gate with their noses touching its straight side",
    measure=_measure)


COURSE = Measurement(
    name="tornado-course",
    help="the Tornado curve markers' and curve cards' sticker placement, from photos of them against the start "
         "gate's straight side (the side the boats' noses touch): each marker's disc touching it, turned a quarter "
         "turn further in each photo (three turns or more: two tell its sticker's place, a third the gate's own "
         "offset apart); in each photo a curve card at each end of that side, behind the gate, its boundary edge "
         "(the straight edge its sticker is on) flush along the side and its sticker past the gate's end, every "
         "card face up once (six photos in all)",
    measure=_measure_course)


FINISH = Measurement(
    name="tornado-finish",
    help="where the Tornado finish line's own stickers sit across it, from photos of the boats, measured first "
         "(--catalog: what tornado-boats, then tornado-course, wrote), standing behind the finish line with their "
         "noses touching its straight side, spread along its whole length",
    measure=_measure_finish)
