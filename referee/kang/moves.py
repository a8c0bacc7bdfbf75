"""Kang move generation, legality, push and perft (SPEC section 3, Kang, which settles the rulebook).

The rulebook's "line" is one unit segment of the grid. Segments are numbered so that one move
can keep the set it has crossed in a bit mask: the 6 x 7 segments across rows (the south edge,
the five lines between rows, the north edge) and the 5 x 6 segments between files.

``Rules`` holds one switch per rule so that the judge (explain.py) can ask "would this change
be a move if that one rule were waived?" and name the rule that was broken; play always uses
every rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from .position import (COACHES, EMPTY, N_FILES, N_ROWS, SIZE_OF, SIZES, ZONE_ROW, IllegalMoveError, Move,
                       Position, Square, cell_index, other, square_name)

PASS = Move(())


@dataclass(frozen=True)
class Rules:
    """Which rules the generator enforces (all of them in play)."""

    nearest_row: bool = True  # Which tokens you may move
    exact_count: bool = True  # How to move kangaroo tokens: exactly as many lines as the size
    segment_once: bool = True  # How to move kangaroo tokens: no line crossed twice in one move
    empty_path: bool = True  # Ordinary move: only across empty squares
    kick_target: bool = True  # Kick: the kicked kangaroo must stay playable for the opponent
    no_score_turn: bool = True  # How to get an alfalfa token: no scoring on the turn after scoring
    exit_last: bool = True  # How to get an alfalfa token: leaving the board is the last crossing
    own_edge: bool = True  # How to move kangaroo tokens: once on the board, a kangaroo leaves only at the far end


PLAY = Rules()
MAX_RELAXED_LEG = 6  # with exact_count waived, the longest first leg the judge tries


def _segment(a: Square, b: Square) -> int:
    """Bit number of the line between two neighbouring squares (rows 0 and 7 beyond the edges)."""
    (fa, ra), (fb, rb) = sorted((a, b))
    if fa == fb:
        return fa * (N_ROWS + 1) + ra
    return N_FILES * (N_ROWS + 1) + (ra - 1) * (N_FILES - 1) + fa


@lru_cache(maxsize=None)
def neighbours(sq: Square) -> tuple[tuple[Square, int], ...]:
    """Squares one line away, with the line's bit. A side edge is never crossed (SPEC section 3),
    so beyond-the-edge rows 0 and 7 only join the square in front of them."""
    f, r = sq
    if r in (0, N_ROWS + 1):
        step = 1 if r == 0 else -1
        return (((f, r + step), _segment(sq, (f, r + step))),)
    out = []
    for df, dr in ((0, 1), (0, -1), (1, 0), (-1, 0)):
        g, s = f + df, r + dr
        if 0 <= g < N_FILES and 0 <= s <= N_ROWS + 1:
            out.append(((g, s), _segment(sq, (g, s))))
    return tuple(out)


@dataclass
class _Walk:
    """One mover's search: the position, who moves, where from, and which rules hold."""

    pos: Position
    coach: str
    origin: Square
    letter: str
    rules: Rules
    kicks: dict = field(default_factory=dict)  # landing square -> kick targets (the same on every path)
    busy: dict = field(default_factory=dict)  # board square -> its kangaroo (the origin counts as empty)

    def __post_init__(self):
        cells = self.pos.cells
        self.busy = {(i % N_FILES, i // N_FILES + 1): c for i, c in enumerate(cells) if c != EMPTY}
        self.busy.pop(self.origin, None)  # Ordinary move: the mover's own starting square counts as empty
        self.exit_ok = not (self.rules.no_score_turn and self.pos.no_score[COACHES.index(self.coach)])
        self.goal = ZONE_ROW[other(self.coach)]
        self.limit = self.longest

    @property
    def goal_row(self) -> int:
        """How to get an alfalfa token: a kangaroo leaves only across the opponent's edge."""
        return ZONE_ROW[other(self.coach)]

    @property
    def longest(self) -> int:
        """Path length bound: 72 lines can each be crossed once; with that rule waived, jumps
        between two kangaroos could bounce for ever, so the judge stops at a plausible length."""
        return 73 if self.rules.segment_once else 16

    def occupied(self, sq: Square) -> bool:
        """Ordinary move: the mover's own starting square counts as empty."""
        return sq != self.origin and self.pos.cells[cell_index(sq)] != EMPTY


NEIGHBOURS = {(f, r): neighbours((f, r)) for f in range(N_FILES) for r in range(N_ROWS + 2)}


def _walk(w: _Walk, sq: Square, left: int, used: int, path: tuple, jumps: tuple, out: list) -> None:
    """Every move continuing from sq with `left` lines still to cross in this leg, appended to out.

    How to move kangaroo tokens / Ordinary move / Jump / Kick (SPEC section 3): each step crosses
    one line never crossed before in this move; squares passed through are empty; at the leg's
    last crossing the mover stops on an empty square, or lands on a kangaroo and either jumps on
    by that kangaroo's size or kicks it. Leaving the board must be the very last crossing.
    Appends (path, jumps, kick target or None): Move values, and generators passing each result
    up through every level of a jump chain, cost time that perft cannot spare.
    """
    once = w.rules.segment_once
    for nxt, bit in NEIGHBOURS[sq]:
        if used >> bit & 1 and once:
            continue
        here = path + (nxt,)
        if nxt[1] in (0, N_ROWS + 1):  # beyond an end edge: only the opponent's, only when scoring is allowed
            if nxt[1] == w.goal and w.exit_ok and (left == 1 or not w.rules.exit_last):
                out.append((here, jumps, None))
            elif nxt[1] != w.goal and not w.rules.own_edge and left == 1 and w.origin[1] not in (0, N_ROWS + 1):
                out.append((here, jumps, None))  # the judge's question: back into the mover's own start zone
            continue
        landed_on = w.busy.get(nxt)
        if left > 1:
            if (not landed_on or not w.rules.empty_path) and len(here) <= w.limit:
                _walk(w, nxt, left - 1, used | 1 << bit, here, jumps, out)
            continue
        if not landed_on:
            out.append((here, jumps, None))
            continue
        if len(here) <= w.limit:
            _walk(w, nxt, SIZE_OF[landed_on], used | 1 << bit, here, jumps + (len(path),), out)
        if nxt not in w.kicks:
            w.kicks[nxt] = kick_targets(w, nxt)
        for target in w.kicks[nxt]:
            out.append((here, jumps, target))


def kick_targets(w: _Walk, at: Square) -> list[Square]:
    """Kick (SPEC section 3): the kicked kangaroo goes to an empty square no farther from the
    opponent than the opponent's nearest row that holds a kangaroo, counting the mover on its new
    square and leaving the kicked one out, so the opponent can still play it."""
    cells = list(w.pos.cells)
    if w.origin[1] not in (0, N_ROWS + 1):
        cells[cell_index(w.origin)] = EMPTY
    cells[cell_index(at)] = w.letter
    rows = [i // N_FILES + 1 for i, c in enumerate(cells) if c != EMPTY]
    if w.coach == "A":  # the opponent B sits north: its nearest row is the northernmost occupied one
        allowed = (lambda r: r >= max(rows)) if w.rules.kick_target else (lambda r: True)
    else:
        allowed = (lambda r: r <= min(rows)) if w.rules.kick_target else (lambda r: True)
    return [(i % N_FILES, i // N_FILES + 1) for i, c in enumerate(cells) if c == EMPTY and allowed(i // N_FILES + 1)]


def raw_moves_of(pos: Position, coach: str, origin: Square, letter: str, rules: Rules = PLAY) -> list[tuple]:
    """Every move of the kangaroo `letter` starting at origin (a board square, or row 0 / 7 in
    its coach's start zone), as (path, jumps, kick) tuples, one per distinct path."""
    w = _Walk(pos, coach, origin, letter, rules)
    legs = [SIZE_OF[letter]] if rules.exact_count else range(1, MAX_RELAXED_LEG + 1)
    out: list[tuple] = []
    for leg in legs:
        _walk(w, origin, leg, 0, (origin,), (), out)
    return out


def moves_of(pos: Position, coach: str, origin: Square, letter: str, rules: Rules = PLAY) -> list[Move]:
    """raw_moves_of as Move values."""
    return [Move._trusted(path, jumps, kick) for path, jumps, kick in raw_moves_of(pos, coach, origin, letter, rules)]


def movers(pos: Position, coach: str) -> list[list[tuple[Square, str]]]:
    """Which tokens you may move (SPEC section 3): the coach's start zone first, then their row 1,
    row 2, ... (counted from their own edge); each group lists (origin, size letter). Tokens in
    a start zone enter in any of the 6 files of the coach's edge."""
    zone_row = ZONE_ROW[coach]
    zone = pos.zone(coach)
    groups = [[((f, zone_row), s) for s, n in zip(SIZES, zone) if n for f in range(N_FILES)]]
    rows = range(1, N_ROWS + 1) if coach == "A" else range(N_ROWS, 0, -1)
    for r in rows:
        groups.append([((f, r), pos.cells[cell_index((f, r))]) for f in range(N_FILES)
                       if pos.cells[cell_index((f, r))] != EMPTY])
    return [g for g in groups if g]


def legal_moves(pos: Position, rules: Rules = PLAY, coach: str | None = None) -> tuple[Move, ...]:
    """Every legal move for the coach to move (or `coach`). A row whose tokens cannot move is
    skipped (Which tokens you may move); with no legal move at all the coach passes
    ((PASS,)); a won game has no moves (End of the Game)."""
    return _legal_moves(pos, rules, coach or pos.to_move)


@lru_cache(maxsize=2048)  # the judge and the players ask about the same positions again and again
def _legal_moves(pos: Position, rules: Rules, coach: str) -> tuple[Move, ...]:
    if pos.winner:
        return ()
    found: list[Move] = []
    for group in movers(pos, coach):
        for origin, letter in group:
            found.extend(moves_of(pos, coach, origin, letter, rules))
        if found and rules.nearest_row:
            return tuple(found)
    return tuple(found) or (PASS,)


def mover_letter(pos: Position, move: Move) -> str:
    """Size letter of the moving kangaroo: on its square, or from a start zone by its first leg."""
    f, r = move.origin
    if r in (0, N_ROWS + 1):
        if not 1 <= move.first_leg <= 3:
            raise IllegalMoveError(f"illegal move {str(move)!r}: a kangaroo crosses 1, 2 or 3 lines before a jump")
        return SIZES[move.first_leg - 1]
    letter = pos.cells[cell_index(move.origin)]
    if letter == EMPTY:
        raise IllegalMoveError(f"illegal move {str(move)!r} in {str(pos)!r}: no kangaroo on {square_name(move.origin)}")
    return letter


def push(pos: Position, move: Move, coach: str | None = None, letter: str | None = None) -> Position:
    """The position after `move` (not checked for legality: see is_legal). The mover leaves its
    square or start zone; a kick sends the kicked kangaroo to its target; a kangaroo leaving the
    board goes to the opponent's start zone and its coach takes an alfalfa token and may not
    score on their next turn (How to get an alfalfa token); then the other coach is to move."""
    coach = coach or pos.to_move
    k = COACHES.index(coach)
    no_score = list(pos.no_score)
    no_score[k] = move.exits  # the flag lasts exactly the scorer's next turn
    if move.is_pass:
        return Position._trusted(pos.cells, pos.zones, other(coach), pos.alfalfa, tuple(no_score))
    letter = letter or mover_letter(pos, move)
    cells = list(pos.cells)
    zones = [list(pos.zones[0]), list(pos.zones[1])]
    alfalfa = list(pos.alfalfa)
    if move.origin[1] in (0, N_ROWS + 1):
        side = 0 if move.origin[1] == 0 else 1
        if zones[side][SIZES.index(letter)] == 0:
            raise IllegalMoveError(f"illegal move {str(move)!r} in {str(pos)!r}: no {letter} kangaroo in that start zone")
        zones[side][SIZES.index(letter)] -= 1
    else:
        cells[cell_index(move.origin)] = EMPTY
    if move.exits:
        zones[1 - k][SIZES.index(letter)] += 1
        alfalfa[k] += 1
    else:
        end = cell_index(move.end)
        if move.kick is not None:
            cells[cell_index(move.kick)] = cells[end]
        cells[end] = letter
    return Position._trusted("".join(cells), (tuple(zones[0]), tuple(zones[1])), other(coach), tuple(alfalfa),
                             tuple(no_score))


def _after(pos: Position, origin: Square, letter: str, end: Square, kick: Square | None) -> Position:
    """push() for perft: the same effect, straight from the mover, its end square and its kick."""
    k = 0 if pos.to_move == "A" else 1
    cells, zones, alfalfa = pos.cells, pos.zones, pos.alfalfa
    size = SIZES.index(letter)
    if origin[1] in (0, N_ROWS + 1):
        side = 0 if origin[1] == 0 else 1
        zone = list(zones[side])
        zone[size] -= 1
        zones = (tuple(zone), zones[1]) if side == 0 else (zones[0], tuple(zone))
    else:
        i = cell_index(origin)
        cells = cells[:i] + EMPTY + cells[i + 1:]
    exits = end[1] in (0, N_ROWS + 1)
    if exits:
        zone = list(zones[1 - k])
        zone[size] += 1
        zones = (zones[0], tuple(zone)) if k == 0 else (tuple(zone), zones[1])
        alfalfa = (alfalfa[0] + 1, alfalfa[1]) if k == 0 else (alfalfa[0], alfalfa[1] + 1)
    else:
        i = cell_index(end)
        if kick is not None:
            j = cell_index(kick)
            cells = cells[:j] + cells[i] + cells[j + 1:]
        cells = cells[:i] + letter + cells[i + 1:]
    no_score = (exits, pos.no_score[1]) if k == 0 else (pos.no_score[0], exits)
    return Position._trusted(cells, zones, "B" if k == 0 else "A", alfalfa, no_score)


def is_legal(pos: Position, move: Move) -> bool:
    """Whether `move` is one of the legal moves of the coach to move."""
    return move in legal_moves(pos)


def successor_moves(pos: Position) -> tuple[tuple[Move, Position], ...]:
    """Distinct positions one turn away, each with one move reaching it (the first path found;
    paths that differ only on the way, same mover, same end, same kick, are pushed once); a
    pass where the coach has no move; none once the game is won."""
    if pos.winner:
        return ()
    out: list[tuple[Move, Position]] = []
    seen: set[tuple] = set()
    for group in movers(pos, pos.to_move):
        for origin, letter in group:
            for path, jumps, kick in raw_moves_of(pos, pos.to_move, origin, letter):
                key = (origin, letter, path[-1], kick)
                if key not in seen:
                    seen.add(key)
                    out.append((Move._trusted(path, jumps, kick), _after(pos, origin, letter, path[-1], kick)))
        if seen:
            return tuple(out)
    return ((PASS, push(pos, PASS)),)


def successors(pos: Position) -> set[Position]:
    """The positions of successor_moves (SPEC section 3, Perft)."""
    return {after for _, after in successor_moves(pos)}


def perft(pos: Position, depth: int, memo: dict | None = None) -> int:
    """Leaf count at `depth` of the tree whose children are distinct successor positions
    (SPEC section 3, Perft); a won position has no children."""
    if depth == 0:
        return 1
    memo = {} if memo is None else memo
    key = (pos, depth)
    if key not in memo:
        kids = successors(pos)
        memo[key] = len(kids) if depth == 1 else sum(perft(c, depth - 1, memo) for c in kids)
    return memo[key]
