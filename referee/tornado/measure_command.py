"""`refcam measure tornado-boats IMAGE...`: the boats' sticker placement from line-up photos
(referee/tornado/boat_lineup.py), as the text and JSON the command line prints."""

from __future__ import annotations

from typing import Sequence

from referee.catalog import Catalog
from referee.game import Measurement
from referee.observation import Observation

from .boat_lineup import LINEUP_LIMIT_DEG, LINEUP_LIMIT_MM, measure_boats


def _measure(observations: Sequence[tuple[str, Observation]], catalog: Catalog) -> dict:
    got = measure_boats(observations, catalog)
    lines = [f"{'boat':<8} {'correction':>11} {'sigma':>7} {'turn':>7} photos"]
    for m in got["boats"]:
        lines.append(f"{m.name.split('/')[-1]:<8} {m.offset_mm:+8.2f} mm {m.sigma_mm:5.2f} mm "
                     f"{m.turn_deg:+6.1f}° {m.photos:>6}")
    lines.append("correction: how far forward (+) of its catalog place each boat's sticker sits, along the boat")
    lines += [f"refused: {r}" for r in got["refusals"]]
    doc = {"boats": {m.name: m.to_json() for m in got["boats"]}, "refused": got["refusals"],
           "limits": {"off_gate_mm": LINEUP_LIMIT_MM, "turn_deg": LINEUP_LIMIT_DEG}}
    return {"catalog": got["catalog"], "lines": lines, "json": doc}


BOATS = Measurement(
    name="tornado-boats",
    help="the Tornado boats' sticker placement along their heading, from photos of the boats standing behind "
         "the start gate with their noses touching its straight side",
    measure=_measure)
