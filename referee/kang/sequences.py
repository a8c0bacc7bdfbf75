"""Turns seen together: the sequences of up to 3 Kang turns that turn one board into the one seen.

A camera can miss a still moment (a quick player, a dropped frame, a hand in the way), so the
change since the last legal position may be two or three turns, the coaches alternating
(Gameplay), a pass where a coach has no move. The search is exhaustive within its bound, so
"no sequence" is a proof, never a guess:

- a turn changes at most 3 places (the mover's square or start zone, where it lands, where a
  kicked kangaroo goes), so a position more than 3 x (turns left) places from the board seen
  cannot reach it, and its branch is cut (``Target.distance`` is that count, a lower bound);
- the shortest length that explains the board wins: players make one move a turn, and a
  longer sequence ending on the same board is only the shorter one with moves that undo
  each other;
- a turn that leaves the board exactly as it was cannot be seen, and is not looked for.

What the camera saw is a ``Target``: the squares and start zones of the kangaroos it read. A
kangaroo it did not read may stand on any square not seen empty; the search keeps those
places open, and the judge (judge.py) decides whether a ruling rests on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .moves import PASS, movers, push, raw_moves_of, successor_moves
from .position import COACHES, EMPTY, N_ROWS, SIZES, Move, Position, cell_index, other, square_name

MAX_TURNS = 3  # a change of more turns than this is not read as turns seen together
PLACES_PER_TURN = 3  # where the mover was, where it lands, where a kicked kangaroo goes
UNKNOWN = "?"  # a square where a kangaroo not read may stand


@dataclass(frozen=True)
class Target:
    """The board seen. cells: 36 characters, a read kangaroo's letter, "." a square seen
    empty, "?" a square that may hold a kangaroo not read; zones: the read kangaroos in each
    start zone (small, medium, large); free: kangaroos not read, per size."""

    cells: str
    zones: tuple[tuple[int, int, int], tuple[int, int, int]]
    free: tuple[int, int, int] = (0, 0, 0)

    @classmethod
    def exact(cls, layout) -> "Target":
        cells, zones = layout
        return cls(cells, (tuple(zones[0]), tuple(zones[1])))

    @property
    def is_exact(self) -> bool:
        return not any(self.free)

    def distance(self, layout) -> int:
        """A lower bound of the places that must still change for ``layout`` to be this board:
        read squares holding something else, squares seen empty that are not, start zones
        short of the kangaroos read there, and per size the kangaroos beyond those read that
        the kangaroos not read cannot account for."""
        cells, zones = layout
        wrong, loose = 0, [0, 0, 0]
        for have, want in zip(cells, self.cells):
            if want == UNKNOWN:
                if have != EMPTY:
                    loose[SIZES.index(have)] += 1
            elif have != want:
                wrong += 1
        for zone, read in zip(zones, self.zones):
            for k in range(3):
                if zone[k] < read[k]:
                    wrong += read[k] - zone[k]
                else:
                    loose[k] += zone[k] - read[k]
        return wrong + sum(max(0, n - f) for n, f in zip(loose, self.free))

    def matches(self, layout) -> bool:
        return self.distance(layout) == 0


@dataclass(frozen=True)
class Turn:
    """One turn of a sequence: who played which move, from which position to which."""

    coach: str
    move: Move
    before: Position
    after: Position

    def __str__(self) -> str:
        return f"{self.coach} {self.move}"


Sequence = tuple[Turn, ...]


@dataclass
class Search:
    """Every sequence of the shortest length (``shortest``..MAX_TURNS turns) from ``start`` that
    turns it into ``target``; ``nearest``: of the sequences tried, one whose board is nearest
    the target (for an illegal change: what the players may have meant)."""

    start: Position
    target: Target
    shortest: int = 1
    longest: int = MAX_TURNS
    accept: Callable[[tuple], bool] = lambda seq: True  # e.g. fits the kangaroos' identities read

    def __post_init__(self):
        self.found: list[Sequence] = []
        self.nearest: Sequence = ()
        self.nearest_distance = self.target.distance(self.start.layout())
        self.nodes = 0
        for n in range(self.shortest, self.longest + 1):
            self._extend(self.start, n, ())
            if self.found:
                break

    def _extend(self, pos: Position, left: int, path: Sequence) -> None:
        bound = PLACES_PER_TURN * (left - 1)
        exact = self.target.is_exact
        for move, after in (moves_toward(pos, self.target, bound) if exact else successor_moves(pos)):
            if not move.is_pass and after.layout() == pos.layout():
                continue  # a move back onto its own square leaves no trace: not looked for
            self.nodes += 1
            d = self.target.distance(after.layout())
            seq = path + (Turn(pos.to_move, move, pos, after),)
            if d < self.nearest_distance or (d == self.nearest_distance and len(seq) < len(self.nearest)):
                self.nearest, self.nearest_distance = seq, d
            if left == 1:
                if d == 0 and not (move.is_pass and self.target.matches(pos.layout())) and self.accept(seq):
                    self.found.append(seq)
            elif d <= PLACES_PER_TURN * (left - 1):
                self._extend(after, left - 1, seq)


def moves_toward(pos: Position, target: Target, bound: int) -> list[tuple[Move, Position]]:
    """The distinct turns of the coach to move (Which tokens you may move: the nearest group
    that can move; a pass where nothing can) whose board is at most ``bound`` places from the
    (exact) target. A kangaroo moved from a place the target leaves as it is makes that place
    wrong and puts right at most two (where it lands, where it kicks to), so where the board is
    more than ``bound`` + 1 places off, only the places the target changes are tried as origins."""
    if pos.winner:
        return []
    coach = pos.to_move
    k = COACHES.index(coach)
    narrow = target.distance(pos.layout()) - 1 > bound
    out: list[tuple[Move, Position]] = []
    seen: set = set()
    for group in movers(pos, coach):
        can_move = False
        for origin, letter in group:
            if origin[1] in (0, N_ROWS + 1):
                changed = pos.zones[k][SIZES.index(letter)] > target.zones[k][SIZES.index(letter)]
            else:
                changed = target.cells[cell_index(origin)] != letter
            if narrow and not changed and can_move:
                continue
            for path, jumps, kick in raw_moves_of(pos, coach, origin, letter):
                can_move = True
                if narrow and not changed:
                    break
                key = (origin, letter, path[-1], kick)
                if key in seen:
                    continue
                seen.add(key)
                move = Move._trusted(path, jumps, kick)
                after = push(pos, move, letter=letter)
                if target.distance(after.layout()) <= bound:
                    out.append((move, after))
        if can_move:
            return out
    passed = push(pos, PASS)
    return [(PASS, passed)] if target.distance(passed.layout()) <= bound else []


def consequence(seq: Sequence) -> Position:
    """What a sequence leads to that the board does not show: whose turn, the alfalfa, who
    may not score next, the winner: all in the final position."""
    return seq[-1].after


def text(seq: Sequence) -> str:
    return ", ".join(str(turn) for turn in seq)


def identities(places: dict[str, str], seq: Sequence) -> list[dict[str, str]]:
    """Where each named kangaroo ends after ``seq`` (name -> "c3" / "zone A"), from where each
    stood: the mover is the kangaroo on its origin square (from a start zone: any of that
    zone's kangaroos of its size, each tried), a kicked one the kangaroo it landed on, one that
    scores goes to the opponent's start zone."""
    outs = [dict(places)]
    for turn in seq:
        if turn.move.is_pass:
            continue
        move, nxt = turn.move, []
        origin, end = square_name(move.origin), square_name(move.end)
        for now in outs:
            if move.origin[1] in (0, N_ROWS + 1):
                size = SIZES[move.first_leg - 1] if 1 <= move.first_leg <= 3 else ""
                movers = [n for n, p in now.items() if p == f"zone {turn.coach}" and _size(n) == size]
            else:
                movers = [n for n, p in now.items() if p == origin]
            kicked = [n for n, p in now.items() if p == end and move.kick is not None]
            for mover in movers[:4]:
                after = dict(now)
                after[mover] = f"zone {other(turn.coach)}" if move.exits else end
                for n in kicked:
                    after[n] = square_name(move.kick)
                nxt.append(after)
        outs = list({tuple(sorted(o.items())): o for o in nxt}.values())
    return outs


def _size(name: str) -> str:
    return name.rsplit("/", 1)[-1][0]  # kang/small-1 -> "s"
