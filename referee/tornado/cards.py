"""Racing cards on the table: their shape and movement spaces (catalog racing-card
kinds), which card a boat stands on, and the placement checks across a round.

Each violation names the rule and cites its rulebook section.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from shapely.geometry import Point as SPoint
from shapely.geometry import Polygon

from referee.catalog import Catalog, default_catalog
from referee.game import RuleRef
from referee.observation import Observation, PiecePose

from . import geometry as g
from .rules import rule

CARD_PREFIX = "tornado/card-"
BOAT_PREFIX = "tornado/boat-"
TABLE_CORNERS = ("table/corner-1", "table/corner-2", "table/corner-3", "table/corner-4")
# Not in the catalog: the white circle of a movement space's boat symbol, which
# decides whether a space is covered (Overlapping Player Cards). Assumed radius.
WHITE_CIRCLE_RADIUS_MM = 5.0
# Cards turning by at most this much more than a right angle are still accepted,
# to absorb the pose uncertainty of hand-laid cards (FAQ, turning back on itself).
MAX_TURN_DEG = 90.0
# Not in the rulebook: how far the first card may start from the gate's outline (the
# gate's folded edge is not a crisp line), beyond the measurement's own uncertainty.
GATE_GAP_MM = 5.0


@dataclass(frozen=True)
class Space:
    """One movement space: its centre and the white bracket at its front (game frame)."""

    index: int
    centre: g.Point
    bracket: tuple[g.Point, g.Point]  # the bracket's two ends, across the card
    bracket_x: float  # in the card frame


@dataclass(frozen=True)
class Card:
    """A racing card as laid: pose, outline (game frame), movement spaces, sigma."""

    name: str
    deck: int
    kind: str
    pose: PiecePose
    outline: tuple[g.Point, ...]
    spaces: tuple[Space, ...]
    length: float
    width: float
    diagonals: tuple[dict, ...] = field(default=(), hash=False, compare=False)

    @property
    def centre(self) -> g.Point:
        return (self.pose.x_mm, self.pose.y_mm)

    @property
    def theta(self) -> float:
        return self.pose.theta_deg

    @property
    def boat(self) -> str:
        # Player Setup: each boat comes with its own 20-card racing deck, deck d = boat d.
        return f"{BOAT_PREFIX}{self.deck}"

    def polygon(self) -> Polygon:
        return Polygon(self.outline)

    def local(self, p: g.Point) -> g.Point:
        return g.to_local(self.centre, self.theta, p)

    def local_to_world(self, q: g.Point) -> g.Point:
        return g.to_world(self.centre, self.theta, q)

    def sigma_at(self, local_x: float) -> float:
        """Position uncertainty of a point local_x along the card's centre line."""
        sth = math.radians(self.pose.sigma_theta_deg) if self.pose.sigma_theta_deg > 0 else \
            2 * self.pose.sigma_mm / (2 * 41.0)
        return math.hypot(self.pose.sigma_mm, local_x * sth)


def card_from_pose(pose: PiecePose, catalog: Catalog | None = None) -> Card:
    catalog = catalog or default_catalog()
    spec = catalog.piece(pose.name)
    kind_name = spec.attrs.get("kind", "straight-1")
    kind = catalog.racing_card_kind(kind_name)
    length, width = (float(v) for v in spec.footprint["size_mm"])
    c, th = (pose.x_mm, pose.y_mm), pose.theta_deg
    outline = tuple(g.to_world(c, th, q) for q in
                    ((-length / 2, -width / 2), (length / 2, -width / 2), (length / 2, width / 2), (-length / 2, width / 2)))
    spaces = []
    for i, sp in enumerate(kind["spaces"]):
        bx = float(sp["bracket_x"])
        # The bracket is drawn across the card: taken as the card's full width (assumption).
        spaces.append(Space(i, g.to_world(c, th, (float(sp["centre_x"]), 0.0)),
                            (g.to_world(c, th, (bx, -width / 2)), g.to_world(c, th, (bx, width / 2))), bx))
    return Card(name=pose.name, deck=int(spec.attrs.get("deck", 0)), kind=kind_name, pose=pose, outline=outline,
                spaces=tuple(spaces), length=length, width=width, diagonals=tuple(kind.get("diagonals", ())))


def cards_in(obs: Observation, catalog: Catalog | None = None) -> list[Card]:
    return [card_from_pose(p, catalog) for p in obs.pieces if p.name.startswith(CARD_PREFIX)]


def boat_outline(pose: PiecePose, catalog: Catalog | None = None) -> tuple[g.Point, ...]:
    """The boat footprint (catalog rounded rectangle, long axis = heading) in the game frame."""
    catalog = catalog or default_catalog()
    spec = catalog.piece(pose.name)
    return tuple(g.to_world((pose.x_mm, pose.y_mm), pose.theta_deg, q) for q in spec.footprint_polygon(24))


@dataclass(frozen=True)
class StandingOn:
    card: Card
    space: Space


def card_under(boat: PiecePose, cards: list[Card], covered: set | None = None) -> StandingOn | None:
    """The card (and space) the boat stands on: its reference point on the card,
    nearest an uncovered space centre; None without a card under it."""
    p = (boat.x_mm, boat.y_mm)
    best = None
    for card in cards:
        lx, ly = card.local(p)
        if abs(lx) > card.length / 2 or abs(ly) > card.width / 2:
            continue
        for sp in card.spaces:
            if covered and (card.name, sp.index) in covered:
                continue
            d = g.dist(p, sp.centre)
            if best is None or d < best[0]:
                best = (d, StandingOn(card, sp))
    return best[1] if best else None


def covered_spaces(cards_bottom_to_top: list[Card]) -> set[tuple[str, int]]:
    """Spaces whose white circle is wholly under a card laid later (Overlapping Player Cards)."""
    # each card's polygon made once, and only a card whose bounding box holds the circle's is asked
    # (a polygon that contains the circle holds its box): a race's 120 cards are 7000 pairs
    polygons = [card.polygon() for card in cards_bottom_to_top]
    boxes = [p.bounds for p in polygons]
    out = set()
    for i, card in enumerate(cards_bottom_to_top):
        for sp in card.spaces:
            circle = SPoint(sp.centre).buffer(WHITE_CIRCLE_RADIUS_MM)
            x0, y0, x1, y1 = circle.bounds
            if any(b[0] <= x0 and b[1] <= y0 and x1 <= b[2] and y1 <= b[3] and polygons[j].contains(circle)
                   for j, b in enumerate(boxes[i + 1:], i + 1)):
                out.add((card.name, sp.index))
    return out


def table_polygon(obs: Observation) -> Polygon | None:
    """The table top from its four corner stickers (ids 0-3), or None if any is missing."""
    pts = []
    for name in TABLE_CORNERS:
        p = obs.piece(name)
        if p is None:
            return None
        pts.append((p.x_mm, p.y_mm))
    poly = Polygon(pts)
    if not poly.is_valid:
        poly = poly.convex_hull
    return poly


@dataclass(frozen=True)
class Violation:
    """A broken placement rule: what, whose, which rule (rulebook section)."""

    boat: str
    rule: RuleRef
    summary: str
    eliminates: bool = False
    cards: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"boat": self.boat, "rule": str(self.rule), "summary": self.summary, "eliminates": self.eliminates,
                "cards": list(self.cards)}


RULE_PLACEMENT = rule("Racing Card Placement Methods")
RULE_TOUCHING = rule("Avoid Obstacles (cards must touch)")
RULE_TURN = rule("FAQ (no turn of more than 90 degrees)")
RULE_LIMIT = rule("Racing Card Limitation")
RULE_BOOST = rule("Boosting")
RULE_OUT = rule("Out of Bounds")
RULE_TOKEN = rule("Player Token Placement")


def check_turn(boat: str, before: PiecePose, after: PiecePose, start_gate: PiecePose | None = None,
               old_cards: list[Card] = (), new_cards: list[Card] = (), boosted: bool = False,
               table: Polygon | None = None, gate_outline: Polygon | None = None,
               catalog: Catalog | None = None, sigma_band: float = 2.0, tip: Card | None = None,
               ordered: bool = False, check_limit: bool = True, check_token: bool = True) -> list[Violation]:
    """Check one boat's turn: the cards it laid (``new_cards``, in the order laid,
    known from its deck) on top of ``old_cards`` and its move from ``before`` to ``after``.

    tip: the card the new chain continues (default: the card the boat stood on, or
    the start gate); ordered: ``new_cards`` are already in chain order (else sorted
    by distance from the boat); check_limit / check_token: run the Racing Card
    Limitation and Player Token Placement checks (the live referee counts spaces
    along the boat's whole route itself).
    """
    catalog = catalog or default_catalog()
    out: list[Violation] = []
    all_cards = list(old_cards) + list(new_cards)
    covered = covered_spaces(all_cards)
    start_on = card_under(before, list(old_cards), covered)

    # Chain of the new cards, from the card the boat stood on (or the start gate).
    prev_card = tip if tip is not None else (start_on.card if start_on else None)
    chain = list(new_cards) if ordered else sorted(new_cards, key=lambda c: g.dist(c.centre, (before.x_mm, before.y_mm)))
    out += _chain_faults(boat, chain, prev_card, gate_outline, sigma_band)

    # Racing Card Limitation / Boosting: up to 3 spaces a round, 4 with the boost;
    # covered spaces do not exist (Overlapping Player Cards).
    limit = 4 if boosted else 3
    ahead = 0
    if start_on is not None:
        ahead += sum(1 for sp in start_on.card.spaces
                     if sp.index > start_on.space.index and (start_on.card.name, sp.index) not in covered)
    ahead += sum(1 for c in new_cards for sp in c.spaces if (c.name, sp.index) not in covered)
    if check_limit and new_cards and ahead > limit:
        out.append(Violation(boat, RULE_BOOST if boosted else RULE_LIMIT,
                             f"the cards laid give {ahead} movement spaces this round (at most {limit})",
                             cards=tuple(c.name for c in new_cards)))

    if table is not None:
        out += _off_table(boat, new_cards, table, sigma_band)

    fault = token_placement_fault(boat, after, all_cards, covered, catalog, sigma_band) if check_token else None
    return out + ([fault] if fault is not None else [])


def token_placement_fault(boat: str, after: PiecePose, cards: list[Card], covered: set, catalog: Catalog,
                          sigma_band: float = 2.0) -> Violation | None:
    """Player Token Placement, the one rule function every command uses: a token ending its
    move must lie wholly behind the white bracket at the front of the space it stands on.
    Its front (the farthest point of its outline along the card) beyond the bracket by more
    than sigma_band combined sigmas of the token and the card is a violation; None when it
    is behind, within the measurement, or on no card seen."""
    end_on = card_under(after, cards, covered)
    if end_on is None:
        return None
    front = max(end_on.card.local(q)[0] for q in boat_outline(after, catalog))
    over = front - end_on.space.bracket_x
    band = sigma_band * math.hypot(after.sigma_mm, end_on.card.sigma_at(end_on.space.bracket_x))
    if over <= band:
        return None
    return Violation(boat, RULE_TOKEN, f"{boat} overlaps the white bracket of space {end_on.space.index + 1} on "
                     f"{end_on.card.name} by {over:.1f} mm", cards=(end_on.card.name,))


def too_sharp_turn(prev: Card, card: Card, sigma_band: float = 2.0) -> float | None:
    """FAQ (adopted by SPEC section 3): no card turns more than a right angle from the card
    before it, whichever way it was placed (Unavailable Card Placement's "any direction"
    included). The turn in degrees when it is beyond 90 by more than the measurement, else None.
    The one rule function the live referee and `tornado check` use (placement.check_card)."""
    turn = abs(g.wrap180(card.theta - prev.theta))
    tol_deg = sigma_band * math.hypot(card.pose.sigma_theta_deg, prev.pose.sigma_theta_deg)
    return turn if turn > MAX_TURN_DEG + tol_deg else None


def too_sharp_words(prev: Card, card: Card, turn: float) -> str:
    return (f"{card.name.split('/', 1)[-1]} turns {turn:.0f} degrees from {prev.name.split('/', 1)[-1]} "
            f"(at most {MAX_TURN_DEG:.0f})")


def _chain_faults(boat: str, chain: list[Card], prev_card: Card | None, gate_outline: Polygon | None,
                  sigma_band: float) -> list[Violation]:
    """Each new card against the one before it (or the start gate)."""
    out: list[Violation] = []
    for card in chain:
        tol = sigma_band * math.hypot(card.pose.sigma_mm, prev_card.pose.sigma_mm if prev_card else 0.0) + 0.5
        if prev_card is not None:
            # Placing Racing Cards / Avoid Obstacles: each card touches the one before it.
            if card.polygon().distance(prev_card.polygon()) > tol:
                out.append(Violation(boat, RULE_TOUCHING,
                                     f"{card.name} does not touch {prev_card.name} "
                                     f"(gap {card.polygon().distance(prev_card.polygon()):.1f} mm)", cards=(card.name,)))
            turn = too_sharp_turn(prev_card, card, sigma_band)
            if turn is not None:
                out.append(Violation(boat, RULE_TURN, too_sharp_words(prev_card, card, turn), cards=(card.name,)))
        elif gate_outline is not None:
            # Coming Out the Starting Gate: the first card lines up with the boat's gate
            # space. The rule asks for alignment, not a touch as between racing cards,
            # so a small gap at the folded gate edge is allowed.
            gap = card.polygon().distance(gate_outline)
            if gap > tol + GATE_GAP_MM:
                out.append(Violation(boat, RULE_PLACEMENT, f"{card.name}, the first card, does not start at the start "
                                     f"gate (gap {gap:.1f} mm)", cards=(card.name,)))
        prev_card = card
    return out


def _off_table(boat: str, new_cards: list[Card], table: Polygon, sigma_band: float) -> list[Violation]:
    """Out of Bounds: a card hanging even slightly off the table eliminates its boat."""
    out: list[Violation] = []
    for c in new_cards:
        outside = c.polygon().difference(table)
        if outside.is_empty:
            continue
        depth = max((table.exterior.distance(SPoint(q)) for q in c.outline
                     if not table.contains(SPoint(q))), default=0.0)
        if depth > sigma_band * c.pose.sigma_mm:
            out.append(Violation(boat, RULE_OUT, f"{c.name} hangs {depth:.1f} mm off the table; "
                                 f"{boat} is eliminated", eliminates=True, cards=(c.name,)))
    return out
