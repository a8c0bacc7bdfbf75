"""Judging Line Crossings by the movement space, not the boat's centre point.

Rulebook, Ranking Phase / Judging Line Crossings: a token has crossed a boundary line
as soon as any of the white lines bounding the movement space it stands on touches
that line, however slightly. So what decides is the most forward point of the space's
outline, not where the token's reference point lies: with a card laid at an angle the
two can disagree near a line, and only the space gives the rulebook's answer.

When no racing card lies under the boat (a start-gate token, a card out of view) the
boat footprint stands in for the space. Every call carries its uncertainty: within
BAND_SIGMAS standard uncertainties of contact refcam says "too close to call".

Pure functions on plain values; the game step and the rank document call them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from referee.catalog import Catalog

from . import geometry as g
from .cards import Card, Space, StandingOn, boat_outline
from .ranking import BAND_SIGMAS

TOO_CLOSE = "too close to call"


def space_extent(card: Card, space: Space) -> tuple[float, float]:
    """The movement space along its card's centre line, (rear x, front x) in the card frame.

    The catalog gives each space's centre and its front bracket; the space is taken as
    symmetric about its centre (rear = 2 * centre - bracket), which matches how the
    brackets of consecutive spaces abut on every catalog card kind.
    """
    centre_x = card.local(space.centre)[0]
    return 2.0 * centre_x - space.bracket_x, space.bracket_x


def space_outline(card: Card, space: Space) -> tuple[g.Point, ...]:
    """The white-line rectangle of one movement space in the game frame: from its rear
    line to its front bracket, across the card's full width."""
    rear, front = space_extent(card, space)
    w = card.width / 2.0
    return tuple(card.local_to_world(q) for q in ((rear, -w), (front, -w), (front, w), (rear, w)))


@dataclass(frozen=True)
class LineCrossing:
    """Whether a movement space (or footprint) has crossed one boundary line.

    crossed: True, False or "too close to call". margin_mm: how far the space's most
    forward point lies past the line (+ past, - short of it); sigma: the standard
    uncertainty of that margin; band: the margin inside which refcam makes no call.
    basis: what stood in for the space (for the reasons shown to players).
    """

    line: str
    crossed: bool | str
    margin_mm: float
    sigma: float
    band: float
    basis: str
    tip: g.Point

    def to_json(self) -> dict:
        return {"line": self.line, "crossed": self.crossed, "margin_mm": round(self.margin_mm, 3),
                "sigma": round(self.sigma, 3), "band": round(self.band, 3), "basis": self.basis,
                "tip": [round(self.tip[0], 2), round(self.tip[1], 2)]}


def crossing_of_outline(line, outline: tuple[g.Point, ...], sigma_outline: float, basis: str,
                        band_sigmas: float = BAND_SIGMAS) -> LineCrossing:
    """Judging Line Crossings for any outline: contact (margin >= 0) is a crossing.

    The margin's uncertainty combines the outline's own (card or boat pose) with the
    line's position at the point of closest approach.
    """
    past = [line.signed(q) for q in outline]
    margin = max(past)
    tip = outline[past.index(margin)]
    sigma = math.hypot(sigma_outline, line.sigma_at(line.along_coord(tip)))
    band = band_sigmas * sigma
    if margin >= band:
        crossed: bool | str = True
    elif margin <= -band:
        crossed = False
    else:
        crossed = TOO_CLOSE
    return LineCrossing(line.name, crossed, margin, sigma, band, basis, tip)


def boat_line_crossing(line, boat, on: StandingOn | None, catalog: Catalog | None = None,
                       band_sigmas: float = BAND_SIGMAS) -> LineCrossing:
    """Judging Line Crossings for one boat: the movement space under it from the card it
    stands on, else its footprint (no card under it)."""
    if on is not None:
        outline = space_outline(on.card, on.space)
        rear, front = space_extent(on.card, on.space)
        sigma = max(on.card.sigma_at(rear), on.card.sigma_at(front))
        basis = f"movement space {on.space.index + 1} of {on.card.name}"
    else:
        outline = boat_outline(boat, catalog)
        reach = max(g.norm(g.sub(q, (boat.x_mm, boat.y_mm))) for q in outline)
        sigma = math.hypot(boat.sigma_mm, reach * math.radians(boat.sigma_theta_deg))
        basis = "boat footprint (no racing card under it)"
    return crossing_of_outline(line, outline, sigma, basis, band_sigmas)


def zone_by_crossing(zone: int, exit_crossing: LineCrossing | None, last_zone: int) -> tuple[int, bool]:
    """The zone a boat counts in once its space's contact with its zone's exit line is
    judged (Judging Line Crossings): (zone, uncertain).

    A space touching the exit line puts the boat in the next zone; contact within the
    band leaves it where its reference point is, marked uncertain, so its order against
    boats across the line is "too close to call" rather than a confident call.
    """
    if exit_crossing is None or zone >= last_zone:
        return zone, False
    if exit_crossing.crossed is True:
        return zone + 1, False
    return zone, exit_crossing.crossed == TOO_CLOSE


def zone_after_crossing(course, zone: int, boat, on: StandingOn | None,
                        catalog: Catalog | None = None) -> tuple[int, bool, LineCrossing | None]:
    """The zone a located boat counts in once Judging Line Crossings is applied to the
    exit line of the zone its reference point is in: (zone, uncertain, the call).

    Only beside the physical line (a curve ray is not extended back through its marker
    for this), and not for the last zone, whose exit is the finish line (finish.py).
    """
    if zone is None or zone >= len(course.zones) - 1:
        return zone, False, None
    line = course.zones[zone].exit
    if not line.on_track_side((boat.x_mm, boat.y_mm), course.track_width):
        return zone, False, None
    call = boat_line_crossing(line, boat, on, catalog)
    new_zone, uncertain = zone_by_crossing(zone, call, len(course.zones) - 1)
    return new_zone, uncertain, call
