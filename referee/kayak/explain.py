"""Which actions turn one position into another (``explain(before, after)``).

Every single action or sequence of up to 3 actions of one turn that does it is listed, but
for what ``LEFT_OUT`` names; sequences that cannot be told apart from the camera (Paddle
twice vs Double Paddle) are all reported. When no legal sequence does it, the nearest reading
is given with the rules it breaks, and the rules the position after breaks by itself (a kayak
on a rock). The search only tries actions on kayaks and tiles that changed, which keeps a
3-action turn to a few thousand positions.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field

from . import actions as A
from .errors import IllegalActionError, NeedsNewTileError, rule
from ..rulings import ILLEGAL, LEGAL, verdict_line
from .position import Position, pawn_name, rule_breaches, tile_token, winners
from .rules import CARD_SECTION, Placement, apply, check_turn
from .tiles import RiverTile, TileBook, tile_book

MAX_ACTIONS = 3

# Exactly what the search leaves out (README, Kayak Chaos, says the same): each is a reading
# the camera has no trace of, tried only where it is needed to explain the change at all.
LEFT_OUT = ("readings that pass through the same position twice; that move a kayak which ends the turn on "
            "the space where it began (unless a tile was laid that turn); that shift or tip a tile which ends "
            "the turn lying as it began (a tile laid this turn: shift it only if it ends out of line with "
            "the last tile before the turn, tip it only if nothing else explains the change); that swap "
            "two tiles unless one of them changed and the other changed too or lay beside a tile that "
            "changed. Discards and Life Rings leave no trace and are never listed.")


@dataclass(frozen=True)
class Reading:
    """One way the change happened: the visible actions in order, the tiles laid on the way,
    and the rules broken (empty for a legal reading)."""

    actions: tuple
    placements: tuple[Placement, ...] = ()
    breaches: tuple[tuple[str, str], ...] = ()

    @property
    def legal(self) -> bool:
        return not self.breaches

    def text(self) -> str:
        words = " then ".join(str(a) for a in self.actions) or "no visible action"
        for p in self.placements:
            words += f" (tile {tile_token(p.tile)} laid by pawn-{p.placer}'s player)"
        return words

    def to_json(self) -> dict:
        return {"actions": [A.to_json(a) for a in self.actions], "text": self.text(),
                "placements": [{"tile": tile_token(p.tile), "placer": pawn_name(p.placer)} for p in self.placements],
                "breaches": [{"rule": str(rule(s)), "section": s, "reason": r} for s, r in self.breaches]}


@dataclass(frozen=True)
class Explained:
    """The verdict on a change: legal readings, or else the nearest reading and the broken rules."""

    before: Position
    after: Position
    readings: tuple[Reading, ...]
    legal: bool
    note: str = ""
    searched: int = field(default=0, compare=False)
    # rules the after-position itself breaks that the before-position did not (a kayak on a rock)
    position_breaches: tuple[tuple[str, str], ...] = ()

    @property
    def rules(self) -> list[str]:
        return sorted({str(rule(s)) for r in self.readings for s, _ in r.breaches})

    @property
    def section(self) -> str:
        """The rulebook section the verdict rests on: the first broken rule, or the first
        action's card section for a legal change."""
        first = self.readings[0] if self.readings else None
        if first is None:
            return "Turns"
        if not self.legal:
            return first.breaches[0][0] if first.breaches else "Turns"
        return action_section(first.actions[0]) if first.actions else "Turns"

    def headline(self, who: str = "") -> str:
        """The verdict in plain words first, then who did what and the rule: "Illegal: pawn-2
        paddled on pawn-1's turn (Turns)". ``who``: words before a legal reading ("turn 3")."""
        if self.before == self.after:
            return verdict_line(LEGAL, "no change on the river")
        if not self.readings:
            return verdict_line(ILLEGAL, self.note, "Turns")
        first = self.readings[0]
        if self.legal:
            return verdict_line(LEGAL, (f"{who}, " if who else "") + first.text(), self.section)
        return verdict_line(ILLEGAL, first.breaches[0][1], self.section)

    def summary(self, who: str = "") -> str:
        """The headline, then the notation: the readings (legal) or the nearest reading and any
        further broken rule (illegal)."""
        head = self.headline(who)
        if self.before == self.after or not self.readings:
            return head
        first = self.readings[0]
        if self.legal:
            more = len(self.readings) - 1
            return head + (f"; or {more} other reading(s) the camera cannot tell apart" if more else "")
        also = "".join(f"; also {r} ({rule(s)})" for s, r in first.breaches[1:])
        reading = first.text() if first.actions else "no action reaches it"
        return f"{head}. {who + ': ' if who else ''}{reading}{also}"

    def to_json(self) -> dict:
        doc = {"legal": self.legal, "summary": self.summary(), "note": self.note,
               "readings": [r.to_json() for r in self.readings], "rules": self.rules,
               "before": self.before.text(), "after": self.after.text(), "positions_searched": self.searched}
        if self.position_breaches:
            doc["position_breaches"] = [{"rule": str(rule(s)), "section": s, "reason": r}
                                        for s, r in self.position_breaches]
        return doc


def _identity(pos: Position) -> dict:
    """Where each kayak is, by tile number rather than place in the river."""
    return {p: (pos.tiles[s.index].tile, s.row, s.lane) for p, s in pos.kayaks}


def action_section(action) -> str:
    """The rulebook section of an action's card (the discard-5 free move: Turns)."""
    return CARD_SECTION.get(action.kind) or {"weather-shift": "Weather Shift Cards", "tip": "Tip the Kayak Cards",
                                             "whirlpool": "Whirlpool Cards"}.get(action.kind, "Action Cards")


def _candidates(before: Position, after: Position, lenient: bool, tip_new: bool = False) -> tuple[list, list]:
    """(kayak actions, river actions) worth trying: only on kayaks and tiles that changed.
    tip_new: also try tipping tiles laid during the turn (the slower, second pass)."""
    was, now = _identity(before), _identity(after)
    movers = sorted(p for p in was if was.get(p) != now.get(p))
    if not movers and len(after.tiles) > len(before.tiles):
        movers = sorted(was)  # a kayak went beyond the last tile and came back: any of them
    moves = []
    for p in movers:
        for d in A.ALONG:
            moves += [A.Paddle(p, d), A.DoublePaddle(p, d)]
        for d in A.ACROSS:
            moves += [A.Swerve(p, d), A.DoubleSwerve(p, d)]
    old = {rt.tile: (i, rt) for i, rt in enumerate(before.tiles)}
    new = {rt.tile: (i, rt) for i, rt in enumerate(after.tiles)}
    # tiles laid during the turn may be shifted, tipped or swapped after they are laid
    changed = sorted(t for t in new if t not in old or old[t] != new[t])
    river = []
    for t in changed:
        if t in old or new[t][1].shift != before.tiles[-1].shift:
            river += [A.WeatherShift(t, "left"), A.WeatherShift(t, "right")]
        if t in old or tip_new:
            river.append(A.Tip(t))
    # whirlpools can pass through a tile that ends where it began: its neighbours count too
    near = sorted(set(changed) | {before.tiles[i + d].tile for t in changed if t in old
                                  for i in [old[t][0]] for d in (-1, 1) if 0 <= i + d < len(before.tiles)})
    river += [A.Whirlpool(t, u) for t in near for u in near if u > t and (t in changed or u in changed)]
    return moves, river


class _Search:
    def __init__(self, book, before, after, supply, advanced, lenient, limit, player=None):
        self.book, self.after, self.supply = book, after, supply
        self.advanced, self.lenient, self.limit = advanced, lenient, limit
        self.player = player  # whose turn it is, when declared: only that kayak moves by its own cards
        self.moves, self.river = _candidates(before, after, lenient)
        self.found: list[Reading] = []
        self.visited = 0
        self.reached: list[tuple[Position, Reading]] = []  # for the nearest reading when none fits
        self._successors: dict = {}
        self._needed: dict = {}

    def run(self, before: Position) -> None:
        self._successors = {}  # they depend on the tiles waiting to be laid
        if not self.lenient:
            for move in self.moves:  # the discard-5 free move: one space, alone in its turn
                if isinstance(move, (A.Paddle, A.Swerve)) and self.player in (None, move.pawn):
                    self._visit(before, A.FreeMove(move.pawn, move.direction), (), (), (), {before}, final=True)
        self._dfs(before, (), (), (), {before})

    def _dfs(self, pos, seq, placed, breaches, path) -> None:
        need = self._needed.get(pos)
        if need is None:
            need = self._needed[pos] = _actions_needed(pos, self.after, self.book.rows)
        if len(seq) + need > self.limit:
            return
        mover = self.player or next((a.pawn for a in seq if hasattr(a, "pawn")), None)
        for action in self.moves + self.river:
            if not self.lenient and mover is not None and getattr(action, "pawn", mover) != mover:
                continue
            if self.advanced and not self.lenient and any(a.kind == action.kind for a in seq):
                continue
            self._visit(pos, action, seq, placed, breaches, path)

    def _apply(self, pos, action, laid: int):
        """apply(), remembered: the same position recurs under many orders of the same actions."""
        key = (pos, action, laid)
        if key not in self._successors:
            noted = [] if self.lenient else None
            try:
                out = apply(pos, action, self.book, self.supply[laid:], noted)
                self._successors[key] = (out, tuple(noted or ()))
            except (IllegalActionError, NeedsNewTileError):
                self._successors[key] = None
        return self._successors[key]

    def _visit(self, pos, action, seq, placed, breaches, path, final=False) -> None:
        result = self._apply(pos, action, len(placed))
        if result is None:
            return
        out, noted = result
        self.visited += 1
        if out.position in path:
            return
        seq2, placed2 = seq + (action,), placed + out.placements
        breaches2 = breaches + noted
        if out.position == self.after:
            turn = tuple(check_turn(seq2, self.advanced, self.player))
            if self.lenient or not turn:
                self.found.append(Reading(seq2, placed2, breaches2 + turn if self.lenient else ()))
            return
        if not self.lenient:
            self.reached.append((out.position, Reading(seq2, placed2)))
        if not final:
            self._dfs(out.position, seq2, placed2, breaches2, path | {out.position})


def _distance(a: Position, b: Position) -> int:
    """How many kayaks and tiles differ between two positions."""
    ia, ib = _identity(a), _identity(b)
    kayaks = sum(ia.get(p) != ib.get(p) for p in set(ia) | set(ib))
    return kayaks + sum(x != y for x, y in zip(a.tiles, b.tiles)) + abs(len(a.tiles) - len(b.tiles))


def _actions_needed(pos: Position, goal: Position, rows: int) -> int:
    """A lower bound on the actions still needed (it prunes the search, so it must never be
    too high): the river cards needed, and the most move actions any one kayak needs."""
    river, moves = needs(pos, goal, rows)
    return river + max(moves.values(), default=0)


def needs(pos: Position, goal: Position, rows: int) -> tuple[int, dict]:
    """(river cards needed, per kayak the move actions needed), each a lower bound: Weather
    Shifts, Tips and Whirlpools each fix one thing (a Whirlpool two places); one move action
    takes a kayak at most 2 lanes across or 4 rows along (two steps, each maybe riding a
    double space)."""
    old = {rt.tile: (i, rt) for i, rt in enumerate(pos.tiles)}
    new = {rt.tile: (i, rt) for i, rt in enumerate(goal.tiles)}
    differing = {t for t in old if t in new and old[t] != new[t]}
    # a shift stays with its place in the river (a Whirlpool swaps the tiles, not the shifts), so
    # only Weather Shifts change a place's shift, one lane each; only a Tip turns a tile
    shifts = sum(abs(a.shift - b.shift) for a, b in zip(pos.tiles, goal.tiles))
    turned = sum(old[t][1].rotation != new[t][1].rotation for t in differing)
    moved = sum(old[t][0] != new[t][0] for t in differing)
    river = shifts + turned + (moved + 1) // 2
    moves = {}
    there = dict(goal.kayaks)
    for pawn, s in pos.kayaks:
        g = there.get(pawn)
        if g is None or g == s:
            continue
        a, b = pos.tiles[s.index], goal.tiles[g.index] if g.index < len(goal.tiles) else None
        if b is None or a.tile in differing or b.tile in differing or a.tile not in new or b.tile not in old:
            moves[pawn] = 1 if a.tile not in differing else 0
            continue
        along = abs((g.index - s.index) * rows + g.row - s.row)
        across = abs(g.lane + b.shift - s.lane - a.shift)
        moves[pawn] = max(-(-across // 2), -(-along // 4), 1)
    return river, moves


def _new_tiles(before: Position, after: Position):
    known = {rt.tile for rt in before.tiles}
    return tuple(rt for rt in after.tiles if rt.tile not in known)


def explain(before: Position, after: Position, book: TileBook | None = None, advanced: bool = False,
            cards: Counter | None = None, limit: int = MAX_ACTIONS, player: int | None = None) -> Explained:
    """Every reading of the change from ``before`` to ``after`` (see the module docstring).
    ``cards``: kinds of action cards seen played face up, which narrow the readings;
    ``player``: whose turn it is when the players declared it (another kayak moving by its own
    cards then breaks Turns)."""
    book = book or tile_book()
    if before == after:
        return Explained(before, after, (), True, "no change on the river")
    seen = _new_tiles(before, after)
    # a legal new tile is laid lined up with the last one (The River); it may move later in the turn
    # a new tile is laid lined up with the last tile (shift None: decided when laid); first as it
    # lies now, then, only if that explains nothing, laid the other way round and tipped later
    legal = _Search(book, before, after, (), advanced, False, limit, player)
    legal.supply = tuple(RiverTile(rt.tile, rt.side, rt.rotation, None) for rt in seen)
    legal.run(before)
    if seen and not legal.found:
        legal.moves, legal.river = _candidates(before, after, False, tip_new=True)
        for turns in itertools.product((0, 180), repeat=len(seen)):
            legal.supply = tuple(RiverTile(rt.tile, rt.side, r, None) for rt, r in zip(seen, turns))
            legal.run(before)
    if legal.found:
        return Explained(before, after, _narrow(_unique(legal.found), cards), True, searched=legal.visited)
    # a position that breaks a rule (a kayak on a rock, the Start tile moved) is ruled, not refused:
    # what it breaks that the position before did not is named whatever reading is found
    fresh = tuple(b for b in rule_breaches(after, book) if b not in rule_breaches(before, book))
    lenient = _Search(book, before, after, seen, advanced, True, limit, player)
    lenient.run(before)
    searched = legal.visited + lenient.visited
    if lenient.found:
        # fewest broken rules; then a reading that breaks only how a turn is made up (Turns,
        # Advanced Rules: the cards could all be played) before one that moves a kayak where
        # no card can (onto a rock, past a bank); then the fewest actions
        best = sorted(_unique(lenient.found), key=_implausibility)
        best = [_with_breaches(r, fresh) for r in best if _implausibility(r) == _implausibility(best[0])]
        return Explained(before, after, tuple(best), False, "no legal turn explains the change", searched,
                         fresh)
    return _unexplained(before, after, legal, searched, fresh)


def _implausibility(reading: Reading) -> tuple[int, int, int]:
    physical = sum(s not in ("Turns", "Advanced Rules") for s, _ in reading.breaches)
    return len(reading.breaches), physical, len(reading.actions)


def _with_breaches(reading: Reading, fresh) -> Reading:
    """The reading with the position's own breaches added where its actions name no breach of that rule."""
    named = {s for s, _ in reading.breaches}
    extra = tuple(b for b in fresh if b[0] not in named)
    return Reading(reading.actions, reading.placements, reading.breaches + extra) if extra else reading


def _unexplained(before, after, search: _Search, searched: int, fresh=()) -> Explained:
    ia, ib = _identity(before), _identity(after)
    moved = [pawn_name(p) for p in sorted(set(ia) | set(ib)) if ia.get(p) != ib.get(p)]
    what = f"{', '.join(moved)} moved" if moved else "the river changed"
    note = f"no sequence of at most {search.limit} actions explains the change ({what})"
    readings: tuple[Reading, ...] = ()
    if search.reached:
        scored = [(_distance(p, after), r) for p, r in search.reached]
        d = min(n for n, _ in scored)
        near = _unique([r for n, r in scored if n == d])[:3]
        readings = tuple(Reading(r.actions, r.placements, fresh + (("Turns", f"{note}; nearest legal turn leaves "
                                                                      f"{d} piece(s) elsewhere"),)) for r in near)
    else:
        readings = (Reading((), (), fresh + (("Turns", note),)),)
    return Explained(before, after, readings, False, note, searched, fresh)


def _unique(readings: list[Reading]) -> list[Reading]:
    seen, out = set(), []
    for r in readings:
        if (r.actions, r.placements) not in seen:
            seen.add((r.actions, r.placements))
            out.append(r)
    # shortest first; played cards before the discard-5 free move, which is the rarer reading
    return sorted(out, key=lambda r: (len(r.actions), any(a.kind == "free-move" for a in r.actions), r.text()))


def _narrow(readings: list[Reading], cards: Counter | None) -> tuple[Reading, ...]:
    """Played action cards in view: keep the readings whose cards were all seen, if any are."""
    if not cards:
        return tuple(readings)
    fits = [r for r in readings if not Counter(a.kind for a in r.actions if a.kind != "free-move") - cards]
    return tuple(fits or readings)


def first_to_finish(verdict: Explained, book: TileBook | None = None) -> tuple[int, ...]:
    """Game End: the kayak(s) that may have been first onto a Finish space during this turn.

    Each reading is played again action by action; the first action that puts a kayak on a
    Finish space names it. A kayak pushed there arrives before the one pushing it (Pushing
    Kayaks: the kayak ahead moves first), so within one action the mover comes last. More
    than one kayak means the readings disagree and the camera cannot tell who was first."""
    book = book or tile_book()
    already = set(winners(verdict.before, book))
    arrived = [p for p in winners(verdict.after, book) if p not in already]
    if len(arrived) < 2:
        return tuple(arrived)
    firsts: set[int] = set()
    for reading in verdict.readings:
        firsts |= _first_in_reading(verdict.before, reading, already, book) or set(arrived)
    return tuple(sorted(firsts))


def _first_in_reading(before: Position, reading: Reading, already: set, book: TileBook) -> set[int]:
    pos, supply = before, tuple(p.tile for p in reading.placements)
    for action in reading.actions:
        try:
            out = apply(pos, action, book, supply, breaches=[])
        except (IllegalActionError, NeedsNewTileError):
            return set()
        supply, pos = supply[len(out.placements):], out.position
        new = {p for p in winners(pos, book) if p not in already}
        pushed = new - {getattr(action, "pawn", None)}
        if new:
            return pushed or new
    return set()
