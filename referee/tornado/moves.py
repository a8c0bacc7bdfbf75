"""Each boat's own route of racing cards: whose cards were laid, and how far a boat moved.

The live referee sees the table only at rest, and under load two boats' turns can
fall into one stable state. So nothing here assumes one mover per state:

- Whose card: a new card goes to the boat whose route it continues (Racing Card
  Placement Methods: it touches the boat's front-most card, or the start gate for
  a boat's first card, with the centre lines about connected; Avoid Obstacles
  allows a shift within the card's width) and whose deck colour it has (Player
  Setup: every player races with one boat's 20-card deck for the whole game).
  Which deck is whose is learned from the cards each boat stands on or lays out of
  the start gate, never assumed from the numbers.
- How far: movement spaces are counted along the boat's own route, in the order
  its cards were laid, leaving out covered spaces (Overlapping Player Cards).

Pure functions on Cards and poses, plus the small Routes memory the referee keeps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from shapely.geometry import Point as SPoint

from referee.observation import PiecePose

from . import geometry as g
from .cards import BOAT_PREFIX, Card, Space, card_under
from .course import BoundaryLine

# A card continues a route when its rear centre lies within the card's width (the
# lateral shift Avoid Obstacles allows) plus this margin of a continuation point, and
# its outline comes within this gap of the route's front card. Generous on purpose:
# attribution only decides whose card it is; check_turn then judges the placement.
ATTRIBUTION_SLACK_MM = 20.0
# Before the route's first card the boat stands on the start gate.
BEFORE_ROUTE = -1


@dataclass
class Routes:
    """Each boat's racing cards in the order laid, and which deck colour is whose."""

    cards: dict[str, list[str]] = field(default_factory=dict)
    deck_owner: dict[int, str] = field(default_factory=dict)

    def clone(self) -> "Routes":
        return Routes({k: list(v) for k, v in self.cards.items()}, dict(self.deck_owner))

    def owner(self, card_name: str) -> str | None:
        return next((b for b, names in self.cards.items() if card_name in names), None)

    def deck_of(self, boat: str) -> int | None:
        return next((d for d, b in self.deck_owner.items() if b == boat), None)

    def add(self, boat: str, card: Card) -> None:
        """Put a card at the front of a boat's route; learn its deck if neither is known yet."""
        names = self.cards.setdefault(boat, [])
        if card.name not in names:
            names.append(card.name)
        if card.deck not in self.deck_owner and self.deck_of(boat) is None:
            self.deck_owner[card.deck] = boat

    def route(self, boat: str, visible: dict[str, Card]) -> list[Card]:
        """The boat's cards still on the table, rear first (picked-up cards drop out)."""
        return [visible[n] for n in self.cards.get(boat, []) if n in visible]


# ---------------------------------------------------------------- attribution
def continuation_points(tip: Card) -> list[g.Point]:
    """Where the next card's rear centre goes: the front edge (Accelerate) or a
    diagonal placement line (Curve), on the card's centre line."""
    pts = [tip.local_to_world((tip.length / 2, 0.0))]
    pts += [tip.local_to_world((float(d["x"]), 0.0)) for d in tip.diagonals]
    return pts


def rear_centre(card: Card) -> g.Point:
    return card.local_to_world((-card.length / 2, 0.0))


def gate_point(start: BoundaryLine, gate_depth_mm: float, boat: PiecePose) -> g.Point:
    """Coming Out the Starting Gate: the first card starts at the gate's front edge,
    on the line coming from the boat's space."""
    p = start.point_at(start.along_coord((boat.x_mm, boat.y_mm)))
    return g.add(p, g.scale(start.forward, gate_depth_mm / 2))


@dataclass(frozen=True)
class Tip:
    """Where a boat's route continues: its front-most card, or the start gate (point)."""

    card: Card | None = None
    gate: g.Point | None = None


def boat_number(boat: str) -> int | None:
    tail = boat[len(BOAT_PREFIX):] if boat.startswith(BOAT_PREFIX) else ""
    return int(tail) if tail.isdigit() else None


def continuation_score(boat: str, tip: Tip, card: Card, routes: Routes, lands: bool = False) -> float | None:
    """How well ``card`` continues ``boat``'s route (lower is better), or None if it cannot.

    lands: the boat ended its move on this card (a strong hint it is its own).
    """
    owner = routes.deck_owner.get(card.deck)
    own_deck = routes.deck_of(boat)
    if owner is not None and owner != boat:
        return None  # another player's deck colour
    if owner is None and own_deck is not None:
        return None  # this player races with another deck
    if tip.card is not None:
        if card.polygon().distance(tip.card.polygon()) > ATTRIBUTION_SLACK_MM:
            return None
        points = continuation_points(tip.card)
    elif tip.gate is not None:
        points = [tip.gate]
    else:
        return None
    d = min(g.dist(rear_centre(card), p) for p in points)
    if d > card.width + ATTRIBUTION_SLACK_MM:
        return None
    score = d
    if owner == boat:
        score -= 1000.0
    elif boat_number(boat) == card.deck:
        score -= 1.0  # the usual pairing (deck d with boat d) only breaks ties
    if lands:
        score -= 50.0
    return score


def attribute(new_cards: list[Card], tips: dict[str, Tip], routes: Routes,
              after: dict[str, PiecePose] | None = None) -> tuple[dict[str, list[Card]], list[Card]]:
    """Split newly laid cards into per-boat chains (each in the order laid).

    tips: each boat's route tip before these cards; after: where boats stand now.
    Greedy, best continuation first, each chain growing from its new front card.
    Cards of a known deck that continue nobody's route still go to the deck's owner
    (check_turn then finds what is wrong with them); the rest are returned unassigned.
    """
    after = after or {}
    tips = dict(tips)
    routes = routes.clone()  # decks learned from the first assignments steer the rest
    chains: dict[str, list[Card]] = {}
    left = list(new_cards)
    while left:
        best = None
        for boat, tip in tips.items():
            pose = after.get(boat)
            for c in left:
                lands = pose is not None and _inside(c, (pose.x_mm, pose.y_mm))
                s = continuation_score(boat, tip, c, routes, lands)
                if s is not None and (best is None or (s, boat, c.name) < (best[0], best[1], best[2].name)):
                    best = (s, boat, c)
        if best is None:
            break
        _, boat, c = best
        chains.setdefault(boat, []).append(c)
        routes.add(boat, c)
        tips[boat] = Tip(card=c)
        left.remove(c)
    unassigned = []
    for c in left:
        owner = routes.deck_owner.get(c.deck)
        if owner is not None:
            chains.setdefault(owner, []).append(c)
        else:
            unassigned.append(c)
    return chains, unassigned


def _inside(card: Card, p: g.Point) -> bool:
    lx, ly = card.local(p)
    return abs(lx) <= card.length / 2 and abs(ly) <= card.width / 2


def route_order(cards: list[Card]) -> list[Card]:
    """One boat's cards in route order. Each card after the first starts where it touches
    the one before it (Placing Racing Cards), so the first is the card whose rear edge
    touches none of the others, and each next one is the card whose rear edge lies
    nearest the current card."""
    left = list(cards)
    if len(left) < 2:
        return left

    def rear_gap(c: Card, others: list[Card]) -> float:
        rear = SPoint(c.local_to_world((-c.length / 2 + 1.0, 0.0)))
        return min((o.polygon().distance(rear) for o in others if o is not c), default=math.inf)

    first = max(left, key=lambda c: (rear_gap(c, left), c.name))
    out = [first]
    left.remove(first)
    while left:
        here = out[-1].polygon()
        nxt = min(left, key=lambda c: (here.distance(SPoint(c.local_to_world((-c.length / 2 + 1.0, 0.0)))), c.name))
        out.append(nxt)
        left.remove(nxt)
    return out


# ---------------------------------------------------------------- counting spaces
def route_spaces(route: list[Card], covered: set) -> list[tuple[Card, Space]]:
    """The boat's movement spaces in order along its route, covered ones left out."""
    return [(c, sp) for c in route for sp in c.spaces if (c.name, sp.index) not in covered]


def index_of(seq: list[tuple[Card, Space]], card_name: str, space_index: int) -> int | None:
    return next((i for i, (c, sp) in enumerate(seq) if c.name == card_name and sp.index == space_index), None)


@dataclass(frozen=True)
class Place:
    """Where a boat stands on its route: a space index in the route's sequence, or why not known."""

    index: int | None
    card: str | None = None
    space: int | None = None
    why: str = ""

    @property
    def known(self) -> bool:
        return self.index is not None

    def describe(self) -> str:
        if self.index == BEFORE_ROUTE:
            return "the start gate"
        if self.card:
            return f"space {self.space + 1} of {self.card.split('/', 1)[1]}"
        return "an unknown place"


def place_on_route(boat: PiecePose, route: list[Card], covered: set, all_cards: list[Card],
                   on_gate: bool) -> Place:
    """Where the boat stands along its own route."""
    seq = route_spaces(route, covered)
    on = card_under(boat, route, covered)
    if on is not None:
        i = index_of(seq, on.card.name, on.space.index)
        return Place(i, on.card.name, on.space.index)
    other = card_under(boat, all_cards, covered)
    if other is not None:
        return Place(None, other.card.name, other.space.index,
                     f"it stands on {other.card.name}, which is not on its own route")
    if on_gate:
        return Place(BEFORE_ROUTE)  # a token never returns to the gate: it has not set out yet
    return Place(None, why="it stands on no racing card seen")
