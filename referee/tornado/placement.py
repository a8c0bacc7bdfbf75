"""Where a racing card may go: the placement methods, obstacles, covered edges.

Each check is a pure function on laid cards (referee.tornado.cards.Card) and plain
points, and returns the breaches it finds, each naming the rulebook section it
applies. The rules, in our own words:

- Placing Racing Cards, Method 1 (Accelerate): a card continues the previous one edge
  to edge, on the same centre line.
- Method 2 (Curve): a card turns only by starting on one of the previous card's
  diagonal lines, at that line's angle, centre lines still meeting.
- Method 3 (Coming Out the Starting Gate): the first card of a race continues the line
  from the boat's own start-gate space.
- Avoid Obstacles: only when an obstacle (another boat, a curve marker, a gate's folded
  edge) is in the way may a card be slid sideways, by less than its own width, and it
  must still touch the previous card. No card may lie over an obstacle; other racing
  cards and course tools are not obstacles.
- Unavailable Card Placement: when the previous card's front edge and diagonal lines
  are all wholly covered by other players' cards, the next card starts at the token,
  its centre line through the token, in any direction.

How closely "aligned" must hold is catalog data (referee/data/tornado-placement.json):
the measurement's own band plus a slack for cards laid by hand.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache

from shapely.geometry import LineString, Polygon
from shapely.ops import unary_union

from referee.catalog import DATA_DIR

from . import geometry as g
from .cards import RULE_TURN, Card, too_sharp_turn, too_sharp_words

SECTION_METHODS = "Racing Card Placement Methods"
SECTION_METHOD_1 = "Racing Card Placement Methods, Method 1: Accelerate"
SECTION_METHOD_2 = "Racing Card Placement Methods, Method 2: Curve"
SECTION_METHOD_3 = "Racing Card Placement Methods, Method 3: Coming Out the Starting Gate"
SECTION_OBSTACLES = "Avoid Obstacles"
SECTION_UNAVAILABLE = "Unavailable Card Placement"
SECTION_TURN = RULE_TURN.section
# the sections of the rules on where a card may go (what a boat breaks by laying a card)
PLACEMENT_SECTIONS = ("Racing Card", "Avoid", "Unavailable", SECTION_TURN)


@lru_cache(maxsize=1)
def tolerances() -> dict:
    """The alignment slacks from the data file (see its note)."""
    return json.loads((DATA_DIR / "tornado-placement.json").read_text())


@dataclass(frozen=True)
class Breach:
    """One placement rule broken: which section, what happened, which cards."""

    section: str
    summary: str
    cards: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"section": self.section, "summary": self.summary, "cards": list(self.cards)}


@dataclass(frozen=True)
class Attachment:
    """A place the next card may start: its rear-edge centre and its heading.

    heading None: any direction (Unavailable Card Placement, from the token).
    """

    how: str
    point: g.Point
    heading: float | None
    section: str


def rear_centre(card: Card) -> g.Point:
    return card.local_to_world((-card.length / 2.0, 0.0))


def _covered(segment: tuple[g.Point, g.Point], covering: list[Polygon]) -> bool:
    """Wholly under other players' cards (Overlapping Player Cards); a sliver still showing keeps it usable."""
    if not covering:
        return False
    return unary_union(covering).buffer(0.01).contains(LineString(segment))


def attachments(prev: Card, covering: list[Polygon] = ()) -> list[Attachment]:
    """Where a card may continue ``prev``: its front edge (Method 1) and each diagonal
    line (Method 2), leaving out those wholly covered by other players' cards."""
    out = []
    w = prev.width / 2.0
    front = (prev.local_to_world((prev.length / 2.0, -w)), prev.local_to_world((prev.length / 2.0, w)))
    if not _covered(front, list(covering)):
        out.append(Attachment("its front edge", prev.local_to_world((prev.length / 2.0, 0.0)), prev.theta,
                              SECTION_METHOD_1))
    for diag in prev.diagonals:
        x, turn = float(diag["x"]), float(diag["angle_deg"])
        across = g.direction(turn + 90.0)
        half = w / max(abs(math.cos(math.radians(turn))), 1e-6)
        seg = (prev.local_to_world(g.add((x, 0.0), g.scale(across, -half))),
               prev.local_to_world(g.add((x, 0.0), g.scale(across, half))))
        if not _covered(seg, list(covering)):
            out.append(Attachment(f"its diagonal line at {turn:+.0f} deg", prev.local_to_world((x, 0.0)),
                                  prev.theta + turn, SECTION_METHOD_2))
    return out


def gate_attachment(gate_line, boat_start: g.Point, gate_half_depth: float) -> Attachment:
    """Method 3: the line from the boat's own gate space, leaving the gate's front edge."""
    foot = gate_line.point_at(gate_line.along_coord(boat_start))
    return Attachment("the boat's start-gate space", g.add(foot, g.scale(gate_line.forward, gate_half_depth)),
                      g.angle_deg(gate_line.forward), SECTION_METHOD_3)


def _offset(card: Card, at: Attachment) -> tuple[float, float, float]:
    """(along, lateral, turn): the card's rear-edge centre in the attachment's frame and
    how far its heading differs from the attachment's."""
    along, lateral = g.to_local(at.point, at.heading, rear_centre(card))
    return along, lateral, g.wrap180(card.theta - at.heading)


def _band(card: Card, prev_sigma_mm: float, prev_sigma_deg: float) -> tuple[float, float]:
    tol = tolerances()
    k = float(tol["band_sigmas"])
    mm = k * math.hypot(card.pose.sigma_mm, prev_sigma_mm) + float(tol["alignment_slack_mm"])
    deg = k * math.hypot(card.pose.sigma_theta_deg, prev_sigma_deg) + float(tol["alignment_slack_deg"])
    return mm, deg


def aligned_outline(card: Card, at: Attachment) -> Polygon:
    """Where the card would lie placed exactly at the attachment (for the obstacle test)."""
    L, w = card.length, card.width / 2.0
    return Polygon([g.to_world(at.point, at.heading, q) for q in ((0.0, -w), (L, -w), (L, w), (0.0, w))])


@dataclass(frozen=True)
class Anchor:
    """What a card is laid after: the previous card, or the start gate (Method 3)."""

    name: str
    theta: float
    sigma_mm: float
    sigma_deg: float
    outline: Polygon


def anchor_of(card: Card) -> Anchor:
    return Anchor(card.name, card.theta, card.pose.sigma_mm, card.pose.sigma_theta_deg, card.polygon())


def anchor_of_gate(gate_line, gate_half_depth: float) -> Anchor:
    a, b = gate_line.point_at(-gate_line.half_length), gate_line.point_at(gate_line.half_length)
    return Anchor("the start gate", g.angle_deg(gate_line.forward), gate_line.sigma0,
                  math.degrees(gate_line.sigma_direction_rad), LineString([a, b]).buffer(gate_half_depth))


def check_follows(prev: Card, card: Card, obstacles: list[tuple[str, Polygon]] = (),
                  covering: list[Polygon] = ()) -> list[Breach]:
    """Methods 1-2 and Avoid Obstacles for one card laid after ``prev``.

    Accepted: the card's rear-edge centre sits on an attachment (centre lines connect),
    its heading equals the attachment's; or it is slid sideways by less than its width
    because the aligned place would lie over an obstacle, still touching ``prev``.
    """
    options = attachments(prev, covering)
    if not options:
        return [Breach(SECTION_UNAVAILABLE, f"{prev.name} has no free front edge or diagonal line: "
                       f"{card.name} must start at the token", (card.name,))]
    return check_against(anchor_of(prev), card, options, obstacles)


def check_against(prev: Anchor, card: Card, options: list[Attachment], obstacles: list[tuple[str, Polygon]] = (),
                  extra_gap_mm: float = 0.0) -> list[Breach]:
    """The card against the best-fitting of ``options`` (see check_follows)."""
    tol_mm, tol_deg = _band(card, prev.sigma_mm, prev.sigma_deg)
    scored = []
    for at in options:
        along, lateral, turn = _offset(card, at)
        scored.append((abs(turn) / tol_deg + max(abs(along) - extra_gap_mm, 0.0) / tol_mm
                       + abs(lateral) / card.width, at, along, lateral, turn))
    _, at, along, lateral, turn = min(scored, key=lambda s: s[0])
    if abs(turn) > tol_deg:
        angles = ", ".join(f"{g.wrap180(a.heading - prev.theta):+.0f}" for a in options)
        return [Breach(SECTION_METHOD_2 if at.section != SECTION_METHOD_3 else SECTION_METHOD_3,
                       f"{card.name} turns {g.wrap180(card.theta - prev.theta):+.0f} deg from "
                       f"{prev.name}; a card turns only along a diagonal line, at its angle "
                       f"(turns available: {angles} deg)", (card.name,))]
    if abs(along) > tol_mm + extra_gap_mm:
        what = "a gap of" if along > 0 else "an overlap of"
        return [Breach(at.section, f"{card.name} does not meet {prev.name} at {at.how} "
                       f"({what} {abs(along):.1f} mm)", (card.name,))]
    if abs(lateral) <= tol_mm:
        return []
    slack = float(tolerances()["obstacle_overlap_slack_mm"])
    blocked = [name for name, poly in obstacles if aligned_outline(card, at).buffer(-slack).intersects(poly)]
    if not blocked:
        return [Breach(at.section, f"{card.name}'s centre line misses the one it continues ({prev.name}, "
                       f"{at.how}) by {abs(lateral):.1f} mm, and no obstacle is in the way", (card.name,))]
    if abs(lateral) >= card.width - tol_mm or card.polygon().distance(prev.outline) > tol_mm:
        return [Breach(SECTION_OBSTACLES, f"{card.name} is shifted {abs(lateral):.1f} mm around {blocked[0]}: "
                       f"more than a card's width ({card.width:.0f} mm), or it no longer touches {prev.name}",
                       (card.name,))]
    return []


def check_first_card(card: Card, gate_line, boat_start: g.Point, gate_half_depth: float,
                     obstacles: list[tuple[str, Polygon]] = ()) -> list[Breach]:
    """Method 3: the first card of the race lines up with the boat's own gate space
    (a small gap at the gate's folded edge allowed, see the data file)."""
    at = gate_attachment(gate_line, boat_start, gate_half_depth)
    gap = float(tolerances()["gate_gap_mm"])
    return check_against(anchor_of_gate(gate_line, gate_half_depth), card, [at], obstacles, extra_gap_mm=gap)


def check_obstacles(card: Card, obstacles: list[tuple[str, Polygon]]) -> list[Breach]:
    """Avoid Obstacles: no card lies over another boat, a curve marker or a gate's folded edge."""
    slack = float(tolerances()["obstacle_overlap_slack_mm"]) + 2.0 * card.pose.sigma_mm
    inner = card.polygon().buffer(-slack)
    return [Breach(SECTION_OBSTACLES, f"{card.name} lies over {name}, an obstacle", (card.name,))
            for name, poly in obstacles if inner.intersects(poly)]


def check_from_token(card: Card, token: g.Point, token_half_length: float) -> list[Breach]:
    """Unavailable Card Placement: the card's centre line runs through the token and the
    card starts at it; any direction."""
    tol = 2.0 * card.pose.sigma_mm + float(tolerances()["alignment_slack_mm"])
    x, y = card.local(token)
    rear = -card.length / 2.0
    if abs(y) > tol:
        return [Breach(SECTION_UNAVAILABLE, f"{card.name}'s centre line misses the token by {abs(y):.1f} mm",
                       (card.name,))]
    if not rear - token_half_length - tol <= x <= rear + token_half_length + tol:
        return [Breach(SECTION_UNAVAILABLE, f"{card.name} does not start at the token "
                       f"({abs(x - rear):.0f} mm from its rear edge)", (card.name,))]
    return []


def check_card(prev: Card | None, card: Card, *, obstacles: list[tuple[str, Polygon]] = (),
               covering: list[Polygon] = (), token: g.Point | None = None, token_half_length: float = 17.0,
               gate_line=None, boat_start: g.Point | None = None, gate_half_depth: float = 20.0) -> list[Breach]:
    """Every placement rule for one card: the method that applies, then obstacles.

    prev None: the race's first card (Method 3, needs gate_line and boat_start). A prev
    whose front edge and diagonal lines are all covered: Unavailable Card Placement
    (needs the token's position).
    """
    turn = too_sharp_turn(prev, card) if prev is not None else None
    if turn is not None:
        # no placement method allows it, so the FAQ's limit is the breach to name
        return [Breach(SECTION_TURN, too_sharp_words(prev, card, turn), (card.name,))] + check_obstacles(card, obstacles)
    if prev is None:
        if gate_line is None or boat_start is None:
            out = []
        else:
            out = check_first_card(card, gate_line, boat_start, gate_half_depth, obstacles)
    elif not attachments(prev, covering) and token is not None:
        out = check_from_token(card, token, token_half_length)
    else:
        out = check_follows(prev, card, obstacles, covering)
    return out + check_obstacles(card, obstacles)


def obstacles_in(obs, boat: str, catalog=None) -> list[tuple[str, Polygon]]:
    """Avoid Obstacles / FAQ: what a card of ``boat`` may not lie over: the other boats,
    the curve markers, and the folded edges at both ends of the start gate and the
    finish line (the parts of the gate beyond the ends of its line). Racing cards and
    course tools are not obstacles."""
    from shapely.geometry import Point as SPoint

    from referee.catalog import default_catalog

    from .cards import BOAT_PREFIX, boat_outline

    catalog = catalog or default_catalog()
    out: list[tuple[str, Polygon]] = []
    for p in obs.pieces:
        if p.name.startswith(BOAT_PREFIX) and p.name != boat:
            out.append((p.name, Polygon(boat_outline(p, catalog))))
        elif p.name.startswith("tornado/curve-marker-"):
            radius = float(catalog.piece(p.name).footprint["diameter_mm"]) / 2.0
            out.append((p.name, SPoint(p.x_mm, p.y_mm).buffer(radius)))
        elif p.name in ("tornado/start-gate", "tornado/finish-line"):
            spec = catalog.piece(p.name)
            depth, length = (float(v) for v in spec.footprint["size_mm"])
            half_line = abs(spec.sticker("left").y_mm)
            for side in (1.0, -1.0):
                corners = [(-depth / 2, side * half_line), (depth / 2, side * half_line),
                           (depth / 2, side * length / 2), (-depth / 2, side * length / 2)]
                out.append((f"the folded edge of {p.name.split('/')[-1]}",
                            Polygon([g.to_world((p.x_mm, p.y_mm), p.theta_deg, q) for q in corners])))
    return out
