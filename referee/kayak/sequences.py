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
from .rules import SIDE_STEP, Placement, apply
from .tiles import RiverTile, TileBook, tile_book

MAX_TURNS = 3
END = "end of turn"
# positions tried (apply calls) before the search gives up and says so: a ruling never waits on
# an unbounded search, and never depends on how fast the machine is (a count, not a clock)
BUDGET = 120_000


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
    """The search over every schedule at once. Whose turn each turn is stays open until a kayak
    moves by its own card in it (a turn of river cards only, or of discards, is anyone's in
    line); each choice must leave some schedule (seating order) that fits every turn so far."""

    def __init__(self, book, before, after, advanced, first_limit, moves, river, supply, plans, finished,
                 budget, want_all, settle, straight=False):
        self.book, self.after, self.advanced = book, after, advanced
        self.first_limit, self.plans, self.supply = first_limit, plans, supply
        self.moves, self.river, self.finished = moves, river, finished
        self.dead: set = set()
        self.needed: dict = {}
        self.fitting: dict = {}
        self.visited, self.budget = 0, budget
        self.solutions: list[tuple] = []  # (action path with END marks, the schedule it fits)
        # every path only where the consequences could differ (2 kayaks new on the Finish);
        # else the first one answers
        self.cap = 400 if want_all else 1
        self.goal = {p: (after.tiles[s.index].tile, s.row, s.lane) for p, s in after.kayaks}
        # settle: a kayak moves only by its own player's cards, so it is where it ends once its
        # player has no turn left (a first, narrower pass: pushes are found by the full pass)
        self.settle = settle
        self.turned = {rt.tile: rt.rotation for rt in after.tiles}
        self.straight = straight  # river cards only toward ``after`` (see toward)

    @property
    def done(self) -> bool:
        return len(self.solutions) >= self.cap or self.visited >= self.budget

    def fits(self, movers: tuple) -> tuple:
        """The schedules whose players match every turn's mover known so far."""
        got = self.fitting.get(movers)
        if got is None:
            got = self.fitting[movers] = tuple(s for s in self.plans
                                               if all(m is None or s[i] == m for i, m in enumerate(movers)))
        return got

    def capacity(self, turn: int) -> int:
        return self.first_limit if turn == 0 else MAX_ACTIONS

    def beyond_reach(self, pos: Position, turn: int, used: int, movers: tuple) -> bool:
        """The turns left cannot reach ``after``: a lower bound on the actions needed against the
        actions left; in the settle pass, each kayak's moves against its own player's turns."""
        got = self.needed.get(pos)
        if got is None:
            got = self.needed[pos] = needs(pos, self.after, self.book.rows)
        river, moves = got
        total = self.capacity(turn) - used + MAX_ACTIONS * (MAX_TURNS - turn - 1)
        if river + max(moves.values(), default=0) > total:
            return True
        if not self.settle:
            return False
        if river + sum(moves.values()) > total:
            return True
        plans = self.fits(movers)
        for pawn, d in moves.items():
            own = max((self.capacity(turn) - used if s[turn] == pawn else 0)
                      + MAX_ACTIONS * s[turn + 1:].count(pawn) for s in plans)
            if d > own:
                return True
        return False

    def unsettled(self, pos: Position, turn: int, movers: tuple) -> bool:
        """A kayak whose player has no turn left in any fitting schedule is not where it ends."""
        left = {p for s in self.fits(movers) for p in s[turn:]}
        # a kayak on a tile still to be tipped changes space without moving itself
        return any(pawn not in left and pos.tiles[s.index].rotation == self.turned.get(pos.tiles[s.index].tile)
                   and (pos.tiles[s.index].tile, s.row, s.lane) != self.goal.get(pawn) for pawn, s in pos.kayaks)

    def run(self, before: Position) -> None:
        self.on_path = {before}
        self._dfs(before, 0, 0, frozenset(), 0, (None,), ())

    def _dfs(self, pos, turn, used, kinds, laid, movers, path) -> bool:
        key = (pos, turn, used, kinds, laid, movers)
        if key in self.dead or self.done:
            return False
        if (self.settle and self.unsettled(pos, turn, movers)) or self.beyond_reach(pos, turn, used, movers):
            self.dead.add(key)
            return False
        found = False
        if used < self.capacity(turn):
            # nearest first: a legal sequence is found early, the rest only when none is
            for _, action, place, out in sorted(self._children(pos, turn, used, kinds, laid, movers),
                                                key=lambda child: child[0]):
                found |= self._descend(out, turn, place, laid, path, action)
                if self.done:
                    return found
        if turn + 1 < MAX_TURNS and pos != self.after:  # this turn ends here, the next begins
            found |= self._dfs(pos, turn + 1, 0, frozenset(), laid, movers + (None,), path + (END,))
        if not found and self.visited < self.budget:  # searched to the end from here
            self.dead.add(key)
        return found

    def _actions(self, turn, used, kinds, movers):
        """(action, where it goes) for every action worth trying in this turn: a kayak moves by
        its own card only in its player's turn, in some seating order that fits."""
        current = movers[turn]
        for action in self.moves:
            if current not in (None, action.pawn) or (self.advanced and action.kind in kinds):
                continue
            mine = movers[:turn] + (action.pawn,)
            if current is None and not self.fits(mine):
                continue  # not this player's turn in any seating order
            yield action, (turn, used, kinds, mine)
            if used == 0 and isinstance(action, (A.Paddle, A.Swerve)):  # discard 5: alone in its turn
                yield A.FreeMove(action.pawn, action.direction), (turn, used, kinds, mine)
        for action in self.river:
            if not (self.advanced and action.kind in kinds):
                yield action, (turn, used, kinds, movers)

    def toward(self, pos: Position, action) -> bool:
        """Whether a river card brings the river nearer to ``after``: a Weather Shift toward its
        place's shift there, a Tip of a tile lying otherwise there, a Whirlpool that puts two
        tiles in the order they have there. (The straight passes leave out river cards that are
        undone later, as explain() leaves out a tile that ends the turn lying as it began.)"""
        if isinstance(action, A.WeatherShift):
            i = pos.index_of(action.tile)
            if i is None or i >= len(self.after.tiles):
                return True
            return (self.after.tiles[i].shift - pos.tiles[i].shift) * SIDE_STEP[action.direction] > 0
        if isinstance(action, A.Tip):
            i, j = pos.index_of(action.tile), self.after.index_of(action.tile)
            return i is None or j is None or pos.tiles[i].rotation != self.after.tiles[j].rotation
        if isinstance(action, A.Whirlpool):
            i, j = pos.index_of(action.tile_a), pos.index_of(action.tile_b)
            gi, gj = self.after.index_of(action.tile_a), self.after.index_of(action.tile_b)
            return None in (i, j, gi, gj) or (i < j) != (gi < gj)
        return True

    def _children(self, pos, turn, used, kinds, laid, movers):
        """(how far from ``after``, action, where it goes, outcome) for each action that may come next."""
        for action, place in self._actions(turn, used, kinds, movers):
            if self.straight and not self.toward(pos, action):
                continue
            try:
                out = apply(pos, action, self.book, self.supply[laid:])
            except (IllegalActionError, NeedsNewTileError):
                continue
            self.visited += 1
            if out.position in self.on_path:
                # a loop back to a position of this sequence: the sequence without the loop is
                # legal too (fewer actions, the same turns) and is searched on its own
                continue
            got = self.needed.get(out.position)
            if got is None:
                got = self.needed[out.position] = needs(out.position, self.after, self.book.rows)
            yield got[0] + sum(got[1].values()), action, place, out

    def _descend(self, out, turn, place, laid, path, action) -> bool:
        new = out.position
        to, used, kinds, movers = place
        step = path + ((action, out.placements),)
        if new == self.after:
            if sum(1 for i, item in enumerate(step) if item != END and (i == 0 or step[i - 1] == END)) < 2:
                return False  # one visible turn: explain() already judged that reading
            self.solutions.append((step, self.fits(movers)[0]))
            return True
        # Turns: the discard-5 free move ends the turn at once
        used = self.capacity(to) if isinstance(action, A.FreeMove) else used + 1
        kinds = kinds | {action.kind} if self.advanced else kinds  # Advanced Rules: one card of each type a turn
        self.on_path.add(new)
        try:
            return self._dfs(new, to, used, kinds, laid + len(out.placements), movers, step)
        finally:
            self.on_path.discard(new)


def explain_turns(before: Position, after: Position, book: TileBook | None = None, advanced: bool = False,
                  players: tuple[int, ...] = (), last_mover: int | None = None,
                  first_limit: int = MAX_ACTIONS, seating: tuple[int, ...] | None = None) -> TurnsVerdict:
    """Sequences of 2 to MAX_TURNS turns in turn order, each turn legal, that turn ``before``
    into ``after`` (see the module docstring). ``players``: the kayaks in play (default: those
    on the river); ``last_mover``: who took the last turn ruled, if known; ``first_limit``:
    actions left to the first turn (the players declared some spent out of sight); ``seating``:
    the seating order the turns ruled so far show, if they show one: its schedule is searched
    first (with a share of the budget), so where several orders of turns make the same river,
    the one the table has been playing in is ruled; the others are searched only if it finds none."""
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
    plans = schedules(players, last_mover)
    if seating is not None and not want_all and last_mover in seating and set(seating) == set(players):
        at = seating.index(last_mover)
        preferred = tuple(seating[(at + 1 + k) % len(seating)] for k in range(MAX_TURNS))
        if preferred in plans:
            first = _search_plans(verdict, book, before, after, advanced, first_limit, moves, river, supplies,
                                  [preferred], finished, want_all, players, BUDGET // PREFERRED_SHARE)
            if first.found:
                return first
            verdict = TurnsVerdict(visited=first.visited)
    return _search_plans(verdict, book, before, after, advanced, first_limit, moves, river, supplies, plans,
                         finished, want_all, players, BUDGET)


PREFERRED_SHARE = 4  # the share of the budget the seating order seen so far is searched with first


def _search_plans(verdict, book, before, after, advanced, first_limit, moves, river, supplies, plans, finished,
                  want_all, players, budget_total) -> TurnsVerdict:
    """The passes of the search (narrower first) over the schedules ``plans``, within
    ``budget_total`` positions in all (counted in ``verdict.visited``)."""
    changed = {rt.tile for rt in before.tiles if rt not in after.tiles}
    # the last pass also moves a kayak that ends where it began on a tile that changed (it moved,
    # and a Tip or a Whirlpool took it back): on a river that did not change, that is left out
    # as explain() leaves it out (LEFT_OUT)
    riders = {m.pawn for m in moves} | {p for p, sp in before.kayaks if before.tiles[sp.index].tile in changed}
    every = [kind(p, d) for p in sorted(riders & set(players))
             for kind, ways in ((A.Paddle, A.ALONG), (A.DoublePaddle, A.ALONG), (A.Swerve, A.ACROSS),
                                (A.DoubleSwerve, A.ACROSS)) for d in ways]
    # narrower passes first (river cards only toward the river seen, kayaks moved only by their
    # own players, only kayaks that changed place), each with a share of what is left; the last
    # pass leaves nothing out
    passes = ((True, True, 2, moves), (False, True, 2, moves), (True, False, 2, moves), (False, False, 1, every))
    tries = [(settle, straight, share, movable, supply) for settle, straight, share, movable in passes
             for supply in supplies]
    for settle, straight, share, movable, supply in tries:
        budget = (budget_total - verdict.visited) // share
        search = _TurnSearch(book, before, after, advanced, first_limit, movable, river, supply, plans, finished,
                             budget, want_all, settle, straight)
        search.run(before)
        verdict.visited += search.visited
        for path, schedule in search.solutions:
            _collect(verdict, book, before, schedule, (path,))
        if verdict.found:
            return verdict
        if share == 1 and search.visited >= search.budget:
            verdict.cut = True  # not searched to the end: no ground to call it illegal
            return verdict
    return verdict


def _collect(verdict: TurnsVerdict, book: TileBook, before: Position, schedule, paths) -> None:
    """Each path as a Sequence, grouped by what it implies; the shortest kept for each."""
    for path in paths:
        sequence = _sequence(book, before, schedule, path)
        n, first = verdict.by_consequence.get(sequence.consequence, (0, sequence))
        better = (len(sequence.turns), sequence.text()) < (len(first.turns), first.text())
        verdict.by_consequence[sequence.consequence] = (n + 1, sequence if better else first)


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
