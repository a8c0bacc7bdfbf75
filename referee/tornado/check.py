"""One Tornado Splash turn judged from two observations: `refcam tornado check BEFORE AFTER`.

Pure: two Observations in, a TurnReport out. What changed between them (boats moved,
racing cards laid, replaced or picked up, character cards flipped) is checked against
every rule a single turn can break, and each ruling names its rulebook section:

- Racing Card Placement Methods 1-3, Avoid Obstacles, Unavailable Card Placement
  (referee/tornado/placement.py), card by card in the order they continue the route;
- Player Token Movement / Racing Card Limitation / Boosting: spaces moved, 3 or 4 with
  the boost, the boost once a game;
- FAQ / Moving Less Than 3 Spaces: the token ends on its front-most card;
- Player Token Placement: the token ends wholly behind its space's white bracket (the
  live referee's own rule function, cards.token_placement_fault);
- Out of Bounds with the FAQ on replacing cards: a card off the table is pending until
  the token moves, then it eliminates;
- When Your Deck is Empty: cards come back from the rear of the route first;
- Action Phase: turns of several boats between the two views were seen together (in the
  round's turn order; which of two boats that both crossed placed first cannot be told), and
  a boat that moved more than one turn allows may have taken two (sequences.py);
- Crossing the Finish Line / Judging Line Crossings: by the movement space;
- Ranking Phase: a boat seen before but not after is named, not dropped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

from shapely.geometry import Point as SPoint

from referee.catalog import Catalog, default_catalog
from referee.motion import moved
from referee.observation import Observation, PiecePose, reasons_not_read
from referee.rulings import CANNOT_TELL as CANNOT_TELL_WORDS, ILLEGAL, LEGAL

from . import geometry as g
from .cards import (BOAT_PREFIX, RULE_TOKEN, Card, card_under, cards_in, covered_spaces, table_polygon,
                    token_placement_fault)
from .course import BoundaryLine
from .crossing import boat_line_crossing
from .moves import BEFORE_ROUTE, index_of, route_order, route_spaces
from .placement import Breach, check_card, obstacles_in
from .rules import headline, whose
from .sequences import MAX_TURNS, two_turn_splits
from .turns import (CANNOT_TELL, TurnCall, boost_call, space_limit, front_card_call, hidden_boat_warnings, move_length_call,
                    out_of_bounds_call, pickup_call, spaces_ahead_call)

GAME_TITLE = "Tornado Splash"
SECTION_TOKEN = RULE_TOKEN.section


@dataclass(frozen=True)
class Ruling:
    """One ruling of the check: whose, which rule, verdict (ok / violation / cannot tell)."""

    boat: str
    section: str
    verdict: str
    summary: str
    cards: tuple[str, ...] = ()

    @property
    def legal(self) -> bool | None:
        return {"ok": True, "violation": False}.get(self.verdict)

    @property
    def rule(self) -> str:
        return f"{GAME_TITLE}, {self.section}"

    def to_json(self) -> dict:
        return {"boat": self.boat, "rule": self.rule, "section": self.section, "verdict": self.verdict,
                "legal": self.legal, "summary": self.summary, "cards": list(self.cards)}


# What two photos cannot settle: each rule that needs the race's history (the live referee
# and `rank --history` have it), with what is missing. `tornado check` lists them as not judged.
NOT_JUDGED_WITHOUT_HISTORY = (
    "Tornado Splash, Action Phase (turn order: this round's ranking and which boats acted or passed "
    "before are not in two photos)",
    "Tornado Splash, Racing Card Limitation (spaces moved earlier in the same turn are not counted)",
    "Tornado Splash, Boosting (whether a face-down character card was flipped on an earlier turn or "
    "this one)",
    "Tornado Splash, Final Rankings (places follow the order of earlier crossings)",
)


@dataclass(frozen=True)
class TurnReport:
    movers: tuple[str, ...]
    rulings: tuple[Ruling, ...]
    warnings: tuple[str, ...] = ()
    crossings: dict = field(default_factory=dict)
    laid: tuple[str, ...] = ()  # racing cards laid (or moved) between the two views
    gone: tuple[str, ...] = ()  # racing cards no longer seen
    hidden: tuple[str, ...] = ()  # boats seen before and not read after
    hidden_why: tuple[tuple[str, str], ...] = ()  # (boat, what vision said kept it from being read): those it told

    @property
    def broken(self) -> list[Ruling]:
        return [r for r in self.rulings if r.verdict == "violation"]

    def headline(self) -> tuple[str, list[str]]:
        """The verdict a player reads first, and the other breaches, each one sentence: the first
        rule broken (Illegal), else what cannot be told (Cannot tell), else the move (Legal)."""
        broken = self.broken
        if broken:
            return (headline(ILLEGAL, whose(broken[0].boat, broken[0].summary), broken[0].section),
                    [headline(ILLEGAL, whose(r.boat, r.summary), r.section) for r in broken[1:]])
        unsure = [r for r in self.rulings if r.verdict == CANNOT_TELL]
        if unsure:
            return headline(CANNOT_TELL_WORDS, unsure[0].summary, unsure[0].section), []
        if self.hidden:
            # a boat not read may have moved where it was not seen: nothing about it is judged
            return headline(CANNOT_TELL_WORDS, not_read_unjudged(self.hidden, dict(self.hidden_why)),
                            "Ranking Phase"), []
        moves = [r for r in self.rulings if r.section == "Player Token Movement" and r.verdict == "ok"]
        if moves:
            return headline(LEGAL, "; ".join(r.summary for r in moves), moves[0].section), []
        placed = [r for r in self.rulings if r.verdict == "ok" and r.section.startswith("Racing Card Placement")]
        if placed:
            return headline(LEGAL, whose(placed[0].boat, placed[0].summary), placed[0].section), []
        if self.laid or self.gone:
            return headline(LEGAL, "the cards laid or picked up break no rule checked", None), []
        return headline(LEGAL, "nothing changed between the two tables", None), []

    def to_json(self) -> dict:
        first, more = self.headline()
        pieces = list(dict.fromkeys([r.boat for r in self.broken] + [c for r in self.broken for c in r.cards]))
        return {"game": "tornado", "headline": first, "breaches": more, "pieces": pieces,
                "movers": list(self.movers), "rulings": [r.to_json() for r in self.rulings],
                "broken": [f"{GAME_TITLE}, {r.section}" for r in self.broken],
                "cannot_tell": [r.summary for r in self.rulings if r.verdict == CANNOT_TELL],
                "crossings": dict(self.crossings), "warnings": list(self.warnings),
                "cards_laid": list(self.laid), "cards_gone": list(self.gone)}


def _from_call(boat: str, call: TurnCall) -> Ruling:
    return Ruling(boat, call.section, call.verdict, call.summary, call.cards)


def _from_breach(boat: str, breach: Breach) -> Ruling:
    return Ruling(boat, breach.section, "violation", breach.summary, breach.cards)


def boats_of(obs: Observation) -> dict[str, PiecePose]:
    return {p.name: p for p in obs.pieces if p.name.startswith(BOAT_PREFIX)}


def gate_line_of(pose: PiecePose, catalog: Catalog) -> BoundaryLine:
    """The start gate's line from its pose (SPEC section 2: stickers on the line's ends)."""
    spec = catalog.piece(pose.name)
    half = abs(spec.sticker("left").y_mm)
    return BoundaryLine(name=pose.name.split("/")[-1], kind="gate", origin=(pose.x_mm, pose.y_mm),
                        along=g.direction(pose.theta_deg + 90.0), forward=g.direction(pose.theta_deg),
                        half_length=half, sigma0=pose.sigma_mm, s2=half,
                        sigma2=math.hypot(pose.sigma_mm, half * math.radians(pose.sigma_theta_deg)))


@dataclass
class _Scene:
    """What the check reads of the two views."""

    before: Observation
    after: Observation
    catalog: Catalog
    cards_before: dict[str, Card]
    cards_after: dict[str, Card]
    gate: BoundaryLine | None
    deck_owner: Mapping[int, str]
    card_order: tuple[str, ...] = ()  # the cards in the order they were laid, where a history knows it

    def owner(self, card: Card) -> str:
        """Player Setup: one deck per player; as learned on the table, else deck d is boat d."""
        return self.deck_owner.get(card.deck, card.boat)

    def covered(self, boat: str) -> set:
        """Overlapping Player Cards: the spaces, of any player's card, wholly under a card laid
        later. The order the cards were laid comes from the history where it is given. Two photos
        alone do not show it: then the cards already down lie under those laid between the views,
        and ``boat``'s own older cards under other players' (a card laid over another player's
        route is the case the rule describes)."""
        cards = list(self.cards_after.values())
        if self.card_order:
            rank = {n: i for i, n in enumerate(self.card_order)}
            return covered_spaces(sorted(cards, key=lambda c: (rank.get(c.name, len(rank)), c.name)))
        old = [c for c in cards if c.name in self.cards_before]
        own = route_order([c for c in old if self.owner(c) == boat])
        others = sorted((c for c in old if self.owner(c) != boat), key=lambda c: c.name)
        new = [c for c in cards if c.name not in self.cards_before]
        return covered_spaces(own + others + route_order(new))


def _scene(before: Observation, after: Observation, catalog: Catalog, deck_owner: Mapping[int, str],
           card_order=()) -> _Scene:
    gate_pose = after.piece("tornado/start-gate") or before.piece("tornado/start-gate")
    return _Scene(before, after, catalog, {c.name: c for c in cards_in(before, catalog)},
                  {c.name: c for c in cards_in(after, catalog)},
                  gate_line_of(gate_pose, catalog) if gate_pose else None, dict(deck_owner), tuple(card_order))


def _changed_cards(sc: _Scene) -> tuple[list[Card], list[str]]:
    """Cards laid (or moved: a replaced card counts as laid again) and cards picked up."""
    laid = [c for n, c in sc.cards_after.items()
            if n not in sc.cards_before or moved(sc.cards_before[n].pose, c.pose)
            or abs(g.wrap180(sc.cards_before[n].theta - c.theta)) > 3.0]
    gone = [n for n in sc.cards_before if n not in sc.cards_after]
    return laid, gone


def _check_boat_cards(sc: _Scene, boat: str, laid: list[Card], old_route: list[Card]) -> list[Ruling]:
    """Placement of the cards ``boat`` laid, each continuing the route from its front-most card."""
    pose_before = boats_of(sc.before).get(boat) or boats_of(sc.after).get(boat)
    # the boat itself may be out of view: then only the card-to-card rules can be judged
    start = (pose_before.x_mm, pose_before.y_mm) if pose_before is not None else None
    kept = [c for c in old_route if c.name in sc.cards_after and c.name not in {x.name for x in laid}]
    prev = kept[-1] if kept else None
    others = [c.polygon() for n, c in sc.cards_after.items() if sc.owner(c) != boat]
    obstacles = obstacles_in(sc.after, boat, sc.catalog)
    out = []
    half_len = float(sc.catalog.piece(boat).footprint["size_mm"][0]) / 2.0
    gate_depth = float(sc.catalog.piece("tornado/start-gate").footprint["size_mm"][0]) / 2.0
    for card in _after(route_order(laid), prev):
        breaches = check_card(prev, card, obstacles=obstacles, covering=others, token=start,
                              token_half_length=half_len, gate_line=sc.gate, boat_start=start,
                              gate_half_depth=gate_depth)
        out += [_from_breach(boat, b) for b in breaches]
        if not breaches:
            out.append(Ruling(boat, "Racing Card Placement Methods", "ok", f"{card.name} is placed by the rules"))
        prev = card
    return out


def _after(laid: list[Card], prev: Card | None) -> list[Card]:
    """The laid cards in route order, the first being the one nearest the previous card."""
    if prev is None or len(laid) < 2:
        return laid
    rear = [SPoint(c.local_to_world((-c.length / 2 + 1.0, 0.0))) for c in laid]
    k = min(range(len(laid)), key=lambda i: prev.polygon().distance(rear[i]))
    return route_order(laid) if route_order(laid)[0] is laid[k] else [laid[k]] + route_order(laid[:k] + laid[k + 1:])


def _picked_up(sc: _Scene, boat: str, route: list[Card], gone: list[str]) -> list[str]:
    """Cards of ``boat`` taken back into the hand: those behind its token. A card gone from
    ahead of the token was replaced before the token moved (FAQ), not picked up."""
    mine = [n for n in gone if sc.owner(sc.cards_before[n]) == boat]
    token = boats_of(sc.before).get(boat)
    on = card_under(token, route, covered_spaces(route)) if token is not None else None
    if on is None:
        return []
    names = [c.name for c in route]
    return [n for n in mine if names.index(n) < names.index(on.card.name)]


def _place(pose: PiecePose | None, route: list[Card], seq, covered: set) -> int | None:
    """Where a token stands along its route's spaces (BEFORE_ROUTE: behind its first card,
    i.e. still at the gate or before the cards seen); None when it stands on none of them."""
    if pose is None:
        return BEFORE_ROUTE
    on = card_under(pose, route, covered)
    return index_of(seq, on.card.name, on.space.index) if on is not None else BEFORE_ROUTE


def _check_mover(sc: _Scene, boat: str, route: list[Card], laid: list[Card], others: int = 0) -> list[Ruling]:
    """Move length, spaces ahead, boost, front-most card for a boat whose token moved; spaces
    counted along its own route, every covered space left out (moves.route_spaces)."""
    k = boat.rsplit("-", 1)[1]
    char_b, char_a = sc.before.piece(f"tornado/character-{k}"), sc.after.piece(f"tornado/character-{k}")
    boosting, problem = boost_call(char_b.face if char_b else None, char_a.face if char_a else None, boat)
    out = [_from_call(boat, problem)] if problem else []
    after = boats_of(sc.after)[boat]
    before = boats_of(sc.before).get(boat)
    covered = sc.covered(boat)
    seq = route_spaces(route, covered)
    on = card_under(after, route, covered)
    start = _place(before, route, seq, covered)
    if on is None:
        out.append(Ruling(boat, "Player Token Movement", CANNOT_TELL, f"{boat}: no racing card seen under the token"))
    else:
        end = index_of(seq, on.card.name, on.space.index)
        call = move_length_call(boat, end - start, boosting)
        ahead = spaces_ahead_call(boat, len(seq) - 1 - start, boosting, [c.name for c in laid])
        if others and "violation" in (call.verdict, ahead.verdict):
            # other boats moved between the same two tables: two turns of this boat, seen together?
            in_order = [c for c in route if c.name in {x.name for x in laid}]
            call, ahead = _two_turns_call(boat, seq, start, end, in_order, boosting,
                                          call if call.verdict != "ok" else ahead, others)
        out.append(_from_call(boat, call))
        if ahead.verdict != "ok" and call.verdict == "ok":  # the same rule is said once
            out.append(_from_call(boat, ahead))
    out.append(_from_call(boat, front_card_call(boat, [c.name for c in route], on.card.name if on else None)))
    out.append(_token_placement(sc, boat, after, route))
    return out


def _two_turns_call(boat: str, seq, start: int, end: int, laid: list[Card], boosting: bool,
                    broken: TurnCall, others: int) -> tuple[TurnCall, TurnCall]:
    """More than one turn allows, while other boats moved too: two turns of this boat with theirs
    between (sequences.py). A legal split: each turn said, seen together; none: the breach
    stands, with the nearest split."""
    splits, nearest = two_turn_splits([c.name for c, _ in seq], start, end, [c.name for c in laid],
                                      space_limit(False), space_limit(boosting))
    short = boat.split("/")[-1]
    if splits and others + 2 > MAX_TURNS:
        why = TurnCall(CANNOT_TELL, "Racing Card Limitation", f"{short} moved {end - start} spaces, two turns' worth, "
                       f"while {others} other boats moved: more than {MAX_TURNS} turns lie between the two tables")
        return why, TurnCall("ok", "Racing Card Limitation", "")
    if splits:
        ways = ", or ".join(s.text() for s in splits)
        ok = TurnCall("ok", "Player Token Movement", f"{short} moved {end - start} spaces in two turns seen together "
                      f"with the other boats' ({ways})")
        return ok, TurnCall("ok", "Racing Card Limitation", ok.summary)
    why = (f"; no sequence of at most {MAX_TURNS} turns explains it" + (
        f" (nearest: two turns of {nearest.split.text()} spaces, {nearest.over} too many)" if nearest else ""))
    return TurnCall(broken.verdict, broken.section, broken.summary + why, broken.cards), \
        TurnCall("ok", "Racing Card Limitation", "")


def _token_placement(sc: _Scene, boat: str, after: PiecePose, route: list[Card]) -> Ruling:
    """Player Token Placement, by the same rule function as the live referee (cards.py)."""
    covered = sc.covered(boat)
    if card_under(after, route, covered) is None:
        return Ruling(boat, SECTION_TOKEN, CANNOT_TELL, f"{boat}: no racing card seen under the token, so its "
                      "place behind the white bracket cannot be judged")
    fault = token_placement_fault(boat, after, route, covered, sc.catalog)
    if fault is None:
        return Ruling(boat, SECTION_TOKEN, "ok", f"{boat} ends wholly behind the white bracket of its space")
    return Ruling(boat, SECTION_TOKEN, "violation", fault.summary, fault.cards)


def _hanging(sc: _Scene, cards: list[Card]) -> list[str]:
    table = table_polygon(sc.after)
    if table is None:
        return []
    out = []
    for c in cards:
        depth = max((table.exterior.distance(SPoint(q)) for q in c.outline if not table.contains(SPoint(q))),
                    default=0.0)
        if depth > 2.0 * c.pose.sigma_mm:
            out.append(c.name)
    return out


def _finish_line(obs: Observation, catalog: Catalog) -> BoundaryLine | None:
    pose = obs.piece("tornado/finish-line")
    return gate_line_of(pose, catalog) if pose else None


def _seen_together_call(movers: tuple[str, ...], crossings: dict) -> Ruling:
    """Action Phase: several boats took their turns between the two tables, seen together. Their
    order is the round's turn order, which two photos do not hold; it matters only for the
    places of boats that crossed the finish line (Final Rankings)."""
    names = " and ".join(m.split("/")[-1] for m in movers)
    crossed = [m.split("/")[-1] for m in movers if crossings.get(m, {}).get("crossed") is True]
    if len(crossed) > 1:
        return Ruling(movers[0], "Final Rankings", CANNOT_TELL, f"which of {' and '.join(crossed)} crossed the finish "
                      "line first: their turns were seen together, and their order (the round's ranking) is not in two "
                      "photos")
    return Ruling(movers[0], "Action Phase", "ok", f"{names} took their turns between the two tables, seen together, "
                  "in the round's turn order")


def _crossing_now(sc: _Scene, finish: BoundaryLine, boat: str, old_route: list[Card], route: list[Card]) -> dict | None:
    """Crossing the Finish Line in this turn: the movement space under the token touches the
    finish line now, and did not before the turn. A token already past the line's side before
    it moved stands on the course's first straight (on Tornado Circuit the finish line lies just
    behind the start gate): a boat that crossed leaves the course at once (Final Rankings)."""
    pose_before = boats_of(sc.before).get(boat)
    if pose_before is not None:
        was = boat_line_crossing(finish, pose_before, card_under(pose_before, old_route, covered_spaces(old_route)),
                                 sc.catalog)
        if was.crossed is True:
            return None
    after = boats_of(sc.after)[boat]
    return boat_line_crossing(finish, after, card_under(after, route, sc.covered(boat)), sc.catalog).to_json()


def check_turn(before: Observation, after: Observation, catalog: Catalog | None = None,
               deck_owner: Mapping[int, str] | None = None, card_order=()) -> TurnReport:
    """Rule on the turn that turned ``before`` into ``after`` (see the module docstring).
    deck_owner: which boat plays which deck colour, when known (else deck d is boat d);
    card_order: the racing cards in the order they were laid, when a history knows it."""
    catalog = catalog or default_catalog()
    sc = _scene(before, after, catalog, deck_owner or {}, card_order)
    laid, gone = _changed_cards(sc)
    b_before, b_after = boats_of(before), boats_of(after)
    movers = tuple(sorted(n for n, p in b_after.items() if n in b_before and moved(b_before[n], p)))
    actors = sorted(set(movers) | {sc.owner(c) for c in laid} | {sc.owner(sc.cards_before[n]) for n in gone})
    rulings: list[Ruling] = []
    crossings = {}
    finish = _finish_line(after, catalog)
    for boat in actors:
        old_route = route_order([c for c in sc.cards_before.values() if sc.owner(c) == boat])
        picked = _picked_up(sc, boat, old_route, gone)
        if picked:
            rulings.append(_from_call(boat, pickup_call(boat, [c.name for c in old_route], picked)))
        mine = [c for c in laid if sc.owner(c) == boat]
        if mine:
            rulings += _check_boat_cards(sc, boat, mine, old_route)
        route = route_order([c for c in sc.cards_after.values() if sc.owner(c) == boat])
        if boat in movers:
            rulings += _check_mover(sc, boat, route, mine, others=len(movers) - 1)
            if finish is not None:
                crossing = _crossing_now(sc, finish, boat, old_route, route)
                if crossing is not None:
                    crossings[boat] = crossing
        if table_polygon(after) is not None:
            rulings.append(_from_call(boat, out_of_bounds_call(boat, _hanging(sc, mine), boat in movers)))
    if len(movers) > 1:
        rulings.append(_seen_together_call(movers, crossings))
    warnings = hidden_boat_warnings(b_before, b_after, after.warnings)
    if laid and table_polygon(after) is None:
        warnings.append("the table's corner stickers are not all in view: Out of Bounds is not judged")
    hidden = tuple(sorted(set(b_before) - set(b_after)))
    why = reasons_not_read(after.warnings, hidden)
    return TurnReport(movers, tuple(rulings), tuple(warnings), crossings, tuple(c.name for c in laid), tuple(gone),
                      hidden, why)


def not_read_unjudged(hidden: tuple[str, ...], why: Mapping[str, str]) -> str:
    """Boats seen in the first table and not read in the second: each with what vision said kept it
    from being read, or "under a hand?" where it said nothing; their turns are not judged."""
    def reason(boat: str) -> str:
        return why.get(boat) or "under a hand?"

    names = [h.split("/")[-1] for h in hidden]
    if len(hidden) == 1:
        return f"{names[0]} was not read in the second table ({reason(hidden[0])}), so its turn is not judged"
    each = " and ".join(f"{n} ({reason(h)})" for n, h in zip(names, hidden))
    return f"{each} were not read in the second table, so their turns are not judged"
