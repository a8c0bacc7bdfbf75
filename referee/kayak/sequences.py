"""Turns seen together: a change that no single turn explains, read as 2 or 3 turns in turn order.

A camera that misses one still table (a quick player, a dropped frame, a hand over the river)
sees two or three turns as one change. Playing the Game: play moves to the left, so the turns
come in the players' seating order; a turn may show nothing (cards discarded only), and still
takes its place in that order. refcam does not know where anyone sits, so every seating order
of the kayaks in play is tried, starting after the player who moved last when that is known.

The search (``explain_turns``) walks the turns of one seating order at a time, action by
action, and keeps it bounded the way ``explain`` does: a kayak moves by its own cards only in
its player's turn and only if it changed place over the whole change (or a tile was laid);
river cards touch only tiles that changed and their neighbours; a lower bound on the actions
still needed prunes every branch; and each (position, turn, actions used, cards used, tiles
laid) is searched once.

What a sequence implies is the order in which kayaks reached the Finish (Game End: the first
wins; a kayak pushed there arrives before the one pushing it); where each kayak ends is the
table seen. Sequences that agree on it are one ruling; sequences that disagree are "cannot tell".
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from . import actions as A
from .errors import IllegalActionError, NeedsNewTileError
from .explain import MAX_ACTIONS, _candidates, _new_tiles, needs
from .position import Position, winners
from .rules import Placement, apply
from .tiles import RiverTile, TileBook, tile_book

MAX_TURNS = 3
END = "end of turn"
# positions tried (apply calls) before the search gives up and says so: a ruling never waits on
# an unbounded search, and never depends on how fast the machine is (a count, not a clock)
BUDGET = 60_000


@dataclass(frozen=True)
class SeenTurn:
    """One turn of a sequence: whose it is, its visible actions, the tiles laid, and the river
    before and after it."""

    player: int
    actions: tuple
    placements: tuple[Placement, ...]
    before: Position
    after: Position

    def text(self) -> str:
        words = " then ".join(str(a) for a in self.actions) or "nothing seen (cards discarded only)"
        for p in self.placements:
            words += f" (tile {p.tile.tile}{p.tile.side} laid by pawn-{p.placer}'s player)"
        return f"pawn-{self.player}'s turn: {words}"


@dataclass(frozen=True)
class Sequence:
    turns: tuple[SeenTurn, ...]
    places: tuple[int, ...] = ()  # kayaks new on the Finish, in the order they got there

    def text(self) -> str:
        return "; ".join(t.text() for t in self.turns)

    @property
    def winner(self) -> tuple[int, ...]:
        """The first kayak onto the Finish, () when none reached it in these turns."""
        return self.places[:1]

    @property
    def consequence(self) -> tuple[int, ...]:
        return self.places


@dataclass
class TurnsVerdict:
    """What the search found: sequences grouped by their consequence, and how hard it searched."""

    by_consequence: dict = field(default_factory=dict)  # winner -> (count, first Sequence)
    visited: int = 0
    cut: bool = False  # the budget ran out before every sequence was tried

    @property
    def found(self) -> bool:
        return bool(self.by_consequence)

    @property
    def agreed(self) -> bool:
        return len(self.by_consequence) == 1

    def sequences(self) -> list[Sequence]:
        """One sequence per consequence, the shortest first."""
        return sorted((s for _, s in self.by_consequence.values()), key=lambda s: (len(s.turns), s.text()))


def seating_orders(players: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Every seating order of the players, each once (as a cycle, from the lowest pawn)."""
    first, rest = players[0], players[1:]
    return [(first,) + p for p in itertools.permutations(rest)]


def schedules(players: tuple[int, ...], last_mover: int | None) -> list[tuple[int, ...]]:
    """The next MAX_TURNS players in turn order, for every seating order: after the player who
    moved last when known, else from anyone (the oldest player begins; refcam does not know who)."""
    out = []
    for order in seating_orders(tuple(sorted(players))):
        n = len(order)
        starts = [(order.index(last_mover) + 1) % n] if last_mover in order else range(n)
        for s in starts:
            sched = tuple(order[(s + k) % n] for k in range(MAX_TURNS))
            if sched not in out:
                out.append(sched)
    return out


class _TurnSearch:
    """The search for one schedule (players in turn order)."""

    def __init__(self, book, before, after, advanced, first_limit, moves, river, supply, schedule, finished,
                 budget, want_all, settle):
        self.book, self.after, self.advanced = book, after, advanced
        self.first_limit, self.schedule, self.supply = first_limit, schedule, supply
        self.moves, self.river, self.finished = moves, river, finished
        self.dead: set = set()
        self.needed: dict = {}
        self.visited, self.budget = 0, budget
        self.solutions: list[tuple] = []  # the action paths (with END marks) that reach ``after``
        # every path only where the consequences could differ (2 kayaks new on the Finish);
        # else the first one answers, and the count of the others is not needed
        self.cap = 400 if want_all else 1
        self.goal = {p: (after.tiles[s.index].tile, s.row, s.lane) for p, s in after.kayaks}
        self.tipped = {a.tile for a in river if isinstance(a, A.Tip)}
        # settle: a kayak whose player has no turn left is already where it ends (a first,
        # narrower pass: a later push or Tip that moves it is found by the second, full pass)
        self.settle = settle
        self.mover_pawns = {m.pawn for m in moves}

    def beyond_reach(self, pos: Position, turn: int, used: int) -> bool:
        """The turns left cannot reach ``after`` (a lower bound on the actions needed against the
        actions left). In the narrower first pass (settle), a kayak moves only by its own
        player's cards, so each kayak's moves come out of its own player's turns."""
        got = self.needed.get(pos)
        if got is None:
            got = self.needed[pos] = needs(pos, self.after, self.book.rows)
        river, moves = got
        total = self.capacity(turn) - used + MAX_ACTIONS * (len(self.schedule) - turn - 1)
        if river + max(moves.values(), default=0) > total:
            return True
        if not self.settle:
            return False
        if river + sum(moves.values()) > total:
            return True
        return any(d > self.own_capacity(pawn, turn, used) for pawn, d in moves.items())

    def own_capacity(self, pawn: int, turn: int, used: int) -> int:
        """Actions left to ``pawn``'s player from here to the end of the schedule."""
        own = self.capacity(turn) - used if self.schedule[turn] == pawn else 0
        return own + MAX_ACTIONS * sum(1 for p in self.schedule[turn + 1:] if p == pawn)

    def capacity(self, turn: int) -> int:
        return self.first_limit if turn == 0 else MAX_ACTIONS

    def unsettled(self, pos: Position, turn: int) -> bool:
        """A kayak whose player has no turn left (this one included) is not where it ends."""
        left = set(self.schedule[turn:])
        for pawn, s in pos.kayaks:
            if pawn not in left and (pos.tiles[s.index].tile, s.row, s.lane) != self.goal.get(pawn):
                return True
        return False

    def run(self, before: Position) -> None:
        self._dfs(before, 0, 0, frozenset(), 0, ())

    def _dfs(self, pos, turn, used, kinds, laid, path) -> bool:
        key = (pos, turn, used, kinds, laid)
        if key in self.dead or len(self.solutions) >= self.cap or self.visited >= self.budget:
            return False
        if self.settle and self.unsettled(pos, turn):
            self.dead.add(key)
            return False
        if self.beyond_reach(pos, turn, used):
            self.dead.add(key)
            return False
        found = False
        player = self.schedule[turn]
        if used < self.capacity(turn):
            for action in self._actions(player, used, kinds):
                found |= self._try(pos, turn, used, kinds, laid, path, action)
        if turn + 1 < len(self.schedule) and pos != self.after:
            found |= self._dfs(pos, turn + 1, 0, frozenset(), laid, path + (END,))
        if not found:
            self.dead.add(key)
        return found

    def _actions(self, player, used, kinds):
        for action in self.moves:
            if action.pawn == player and not (self.advanced and action.kind in kinds):
                yield action
        if used == 0:
            for action in self.moves:  # the discard-5 free move: one space, alone in its turn
                if action.pawn == player and isinstance(action, (A.Paddle, A.Swerve)):
                    yield A.FreeMove(player, action.direction)
        for action in self.river:
            if not (self.advanced and action.kind in kinds):
                yield action

    def _try(self, pos, turn, used, kinds, laid, path, action) -> bool:
        try:
            out = apply(pos, action, self.book, self.supply[laid:])
        except (IllegalActionError, NeedsNewTileError):
            return False
        self.visited += 1
        new = out.position
        if new == pos:
            return False
        step = path + ((action, out.placements),)
        if new == self.after:
            if sum(1 for i, item in enumerate(step) if item != END and (i == 0 or step[i - 1] == END)) < 2:
                return False  # one visible turn: explain() already judged that reading
            self.solutions.append(step)
            return True
        if isinstance(action, A.FreeMove):  # Turns: the free move ends the turn at once
            if turn + 1 >= len(self.schedule):
                return False
            return self._dfs(new, turn + 1, 0, frozenset(), laid + len(out.placements), step + (END,))
        kinds = kinds | {action.kind} if self.advanced else kinds  # Advanced Rules: one card of each type a turn
        return self._dfs(new, turn, used + 1, kinds, laid + len(out.placements), step)


def explain_turns(before: Position, after: Position, book: TileBook | None = None, advanced: bool = False,
                  players: tuple[int, ...] = (), last_mover: int | None = None,
                  first_limit: int = MAX_ACTIONS) -> TurnsVerdict:
    """Sequences of 2 to MAX_TURNS turns in turn order, each turn legal, that turn ``before``
    into ``after`` (see the module docstring). ``players``: the kayaks in play (default: those
    on the river); ``last_mover``: who took the last turn ruled, if known; ``first_limit``:
    actions left to the first turn (the players declared some spent out of sight)."""
    book = book or tile_book()
    verdict = TurnsVerdict()
    if before == after:
        return verdict
    players = tuple(sorted(set(players) or {p for p, _ in before.kayaks}))
    if len(players) < 2:
        return verdict  # Playing the Game: turns pass from player to player; one kayak, one turn at a time
    seen = _new_tiles(before, after)
    finished = set(winners(before, book))
    moves, river = _candidates(before, after, False, tip_new=True)
    moves = [m for m in moves if m.pawn in players]
    supplies = [tuple(RiverTile(rt.tile, rt.side, rt.rotation, None) for rt in seen)]
    if seen and len(seen) <= 2:  # a tile laid the other way round and tipped later in the turns
        supplies += [tuple(RiverTile(rt.tile, rt.side, r, None) for rt, r in zip(seen, turns))
                     for turns in itertools.product((0, 180), repeat=len(seen))
                     if any(r != rt.rotation for rt, r in zip(seen, turns))]
    want_all = len(set(winners(after, book)) - finished) >= 2
    for settle, supply in itertools.product((True, False), supplies):
        for schedule in schedules(players, last_mover):
            search = _TurnSearch(book, before, after, advanced, first_limit, moves, river, supply, schedule, finished,
                                 BUDGET - verdict.visited, want_all, settle)
            search.run(before)
            verdict.visited += search.visited
            verdict.cut |= search.visited >= search.budget
            for path in search.solutions:
                sequence = _sequence(book, before, schedule, path)
                n, first = verdict.by_consequence.get(sequence.consequence, (0, sequence))
                better = (len(sequence.turns), sequence.text()) < (len(first.turns), first.text())
                verdict.by_consequence[sequence.consequence] = (n + 1, sequence if better else first)
            if verdict.cut:
                return verdict
        if verdict.found:
            return verdict
    return verdict


def _sequence(book: TileBook, before: Position, schedule: tuple[int, ...], path: tuple) -> Sequence:
    """The path's turns, played again to record each turn's river before and after, and its winner."""
    turns, actions, placements, pos, start, k = [], [], [], before, before, 0
    places: list[int] = []
    for item in path:
        if item == END:
            turns.append(SeenTurn(schedule[k], tuple(actions), tuple(placements), start, pos))
            actions, placements, start, k = [], [], pos, k + 1
            continue
        action, placed = item
        out = apply(pos, action, book, tuple(p.tile for p in placed))
        arrived = set(winners(out.position, book)) - set(winners(pos, book)) - set(places)
        mover = getattr(action, "pawn", None)
        places += sorted(arrived - {mover}) + sorted(arrived & {mover})  # Pushing Kayaks: the one ahead first
        actions.append(action)
        placements += list(out.placements)
        pos = out.position
    turns.append(SeenTurn(schedule[k], tuple(actions), tuple(placements), start, pos))
    return Sequence(tuple(turns), tuple(p for p in places if p not in winners(before, book)))
