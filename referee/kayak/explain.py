"""Which actions turn one position into another (``explain(before, after)``).

Every single action or sequence of up to 3 actions of one turn that does it is listed;
sequences that cannot be told apart from the camera (Paddle twice vs Double Paddle) are
all reported. When no legal sequence does it, the nearest reading is given with the rules
it breaks. The search only tries actions on kayaks and tiles that changed, which keeps a
3-action turn to a few thousand positions.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from . import actions as A
from .errors import IllegalActionError, NeedsNewTileError, rule
from .position import Position, pawn_name, tile_token
from .rules import Placement, apply, check_turn
from .tiles import TileBook, tile_book

MAX_ACTIONS = 3


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

    @property
    def rules(self) -> list[str]:
        return sorted({str(rule(s)) for r in self.readings for s, _ in r.breaches})

    def summary(self) -> str:
        if self.before == self.after:
            return "no change on the river"
        if not self.readings:
            return self.note
        head = self.readings[0].text()
        more = f" (or {len(self.readings) - 1} other reading(s) the camera cannot tell apart)" if len(self.readings) > 1 else ""
        if self.legal:
            return head + more
        return f"illegal: {head}: " + "; ".join(f"{r} ({rule(s)})" for s, r in self.readings[0].breaches)

    def to_json(self) -> dict:
        return {"legal": self.legal, "summary": self.summary(), "note": self.note,
                "readings": [r.to_json() for r in self.readings], "rules": self.rules,
                "before": self.before.text(), "after": self.after.text(), "positions_searched": self.searched}


def _identity(pos: Position) -> dict:
    """Where each kayak is, by tile number rather than place in the river."""
    return {p: (pos.tiles[s.index].tile, s.row, s.lane) for p, s in pos.kayaks}


def _candidates(before: Position, after: Position, lenient: bool) -> tuple[list, list]:
    """(kayak actions, river actions) worth trying: only on kayaks and tiles that changed."""
    was, now = _identity(before), _identity(after)
    movers = sorted(p for p in was if was.get(p) != now.get(p))
    moves = []
    for p in movers:
        for d in A.ALONG:
            moves += [A.Paddle(p, d), A.DoublePaddle(p, d)]
        for d in A.ACROSS:
            moves += [A.Swerve(p, d), A.DoubleSwerve(p, d)]
    old = {rt.tile: (i, rt) for i, rt in enumerate(before.tiles)}
    new = {rt.tile: (i, rt) for i, rt in enumerate(after.tiles)}
    changed = sorted(t for t in old if t in new and old[t] != new[t])
    river = []
    for t in changed:
        river += [A.WeatherShift(t, "left"), A.WeatherShift(t, "right"), A.Tip(t)]
        river += [A.Whirlpool(t, u) for u in changed if u > t and (lenient or abs(old[t][0] - old[u][0]) == 1)]
    return moves, river


class _Search:
    def __init__(self, book, before, after, supply, advanced, lenient, limit):
        self.book, self.after, self.supply = book, after, supply
        self.advanced, self.lenient, self.limit = advanced, lenient, limit
        self.moves, self.river = _candidates(before, after, lenient)
        self.found: list[Reading] = []
        self.visited = 0
        self.nearest: list[tuple[int, Reading]] = []

    def run(self, before: Position) -> None:
        if not self.lenient:
            for move in self.moves:  # the discard-5 free move: one space, alone in its turn
                if isinstance(move, A.Paddle) or isinstance(move, A.Swerve):
                    self._try(before, A.FreeMove(move.pawn, move.direction), (), (), (), {before}, final=True)
        self._dfs(before, (), (), (), {before})

    def _dfs(self, pos, seq, placed, breaches, path) -> None:
        if len(seq) >= self.limit:
            return
        mover = next((a.pawn for a in seq if hasattr(a, "pawn")), None)
        for action in self.moves + self.river:
            if not self.lenient and mover is not None and getattr(action, "pawn", mover) != mover:
                continue
            if self.advanced and not self.lenient and any(a.kind == action.kind for a in seq):
                continue
            self._try(pos, action, seq, placed, breaches, path)

    def _try(self, pos, action, seq, placed, breaches, path, final=False) -> None:
        noted = [] if self.lenient else None
        supply = self.supply[len(placed):]
        try:
            out = apply(pos, action, self.book, supply, noted)
        except (IllegalActionError, NeedsNewTileError):
            return
        self.visited += 1
        if out.position in path:
            return
        seq2, placed2 = seq + (action,), placed + out.placements
        breaches2 = breaches + tuple(noted or ())
        if out.position == self.after:
            turn = check_turn(seq2, self.advanced)
            self.found.append(Reading(seq2, placed2, breaches2 + tuple(turn) if self.lenient else ()))
            if not self.lenient and turn:
                self.found.pop()
            return
        if not self.lenient:
            self.nearest.append((_distance(out.position, self.after), Reading(seq2, placed2)))
        if not final:
            self._dfs(out.position, seq2, placed2, breaches2, path | {out.position})


def _distance(a: Position, b: Position) -> int:
    """How many kayaks and tiles differ between two positions."""
    ia, ib = _identity(a), _identity(b)
    kayaks = sum(ia.get(p) != ib.get(p) for p in set(ia) | set(ib))
    return kayaks + sum(x != y for x, y in zip(a.tiles, b.tiles)) + abs(len(a.tiles) - len(b.tiles))


def _new_tiles(before: Position, after: Position):
    known = {rt.tile for rt in before.tiles}
    return tuple(rt for rt in after.tiles if rt.tile not in known)


def explain(before: Position, after: Position, book: TileBook | None = None, advanced: bool = False,
            cards: Counter | None = None, limit: int = MAX_ACTIONS) -> Explained:
    """Every reading of the change from ``before`` to ``after`` (see the module docstring).
    ``cards``: kinds of action cards seen played face up, which narrow the readings."""
    book = book or tile_book()
    if before == after:
        return Explained(before, after, (), True, "no change on the river")
    supply = _new_tiles(before, after)
    legal = _Search(book, before, after, supply, advanced, False, limit)
    legal.run(before)
    if legal.found:
        return Explained(before, after, _narrow(_unique(legal.found), cards), True, searched=legal.visited)
    lenient = _Search(book, before, after, supply, advanced, True, limit + 1)
    lenient.run(before)
    searched = legal.visited + lenient.visited
    if lenient.found:
        fewest = min(len(r.breaches) for r in lenient.found)
        best = [r for r in _unique(lenient.found) if len(r.breaches) == fewest]
        best.sort(key=lambda r: len(r.actions))
        best = [r for r in best if len(r.actions) == len(best[0].actions)]
        return Explained(before, after, tuple(best), False, "no legal turn explains the change", searched)
    return _unexplained(before, after, legal, searched)


def _unexplained(before, after, search: _Search, searched: int) -> Explained:
    ia, ib = _identity(before), _identity(after)
    moved = [pawn_name(p) for p in sorted(set(ia) | set(ib)) if ia.get(p) != ib.get(p)]
    what = f"{', '.join(moved)} moved" if moved else "the river changed"
    note = f"no sequence of at most {search.limit} actions explains the change ({what})"
    readings: tuple[Reading, ...] = ()
    if search.nearest:
        d = min(n for n, _ in search.nearest)
        near = sorted((r for n, r in search.nearest if n == d), key=lambda r: len(r.actions))[:3]
        readings = tuple(Reading(r.actions, r.placements, (("Turns", f"{note}; nearest legal turn leaves "
                                                             f"{d} piece(s) elsewhere"),)) for r in near)
    else:
        readings = (Reading((), (), (("Turns", note),)),)
    return Explained(before, after, readings, False, note, searched)


def _unique(readings: list[Reading]) -> list[Reading]:
    seen, out = set(), []
    for r in readings:
        if (r.actions, r.placements) not in seen:
            seen.add((r.actions, r.placements))
            out.append(r)
    return sorted(out, key=lambda r: (len(r.actions), r.text()))


def _narrow(readings: list[Reading], cards: Counter | None) -> tuple[Reading, ...]:
    """Played action cards in view: keep the readings whose cards were all seen, if any are."""
    if not cards:
        return tuple(readings)
    fits = [r for r in readings if not Counter(a.kind for a in r.actions if a.kind != "free-move") - cards]
    return tuple(fits or readings)
