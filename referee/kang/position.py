"""Kang values: the position, the move, and their text forms (pure Python, frozen values).

Squares are named like chess squares from coach A's seat (SPEC section 2): files a-f west to
east, rows 1-6 south to north. Two rows beyond the board stand for the edges a move crosses
to enter or leave: row 0 is coach A's start zone (south), row 7 coach B's (north). So ``b0-b1``
enters across the south edge in file b, and ``c6-c7`` leaves the board across the north edge.

Position string (in the spirit of FEN), six space-separated fields::

    6/6/6/6/6/6 ssmmll ssmmll A 0-0 -
    |           |      |      | |   no-score flags: "-", "A", "B" or "AB"
    |           |      |      | alfalfa of A "-" alfalfa of B
    |           |      |      whose turn: A or B
    |           |      start zone of B: its kangaroos, sorted s, m, l ("-" when empty)
    |           start zone of A
    board rows 6 down to 1, separated by "/": s, m, l for a kangaroo, a digit for a run of empty squares

Move notation: the squares of the path joined by ``-``, one unit step (one line crossed) each;
a square the mover landed on and jumped on from carries ``^``; a kick ends the move with
``x`` and the square the kicked kangaroo was sent to. ``pass`` when the coach has no legal move.
Examples: ``a0-a1-b1`` (a medium kangaroo enters in file a and steps east), ``c3-c4^-c5-c6-c7``
(a small kangaroo lands on a medium one, jumps two more lines and scores),
``d2-d3-d4xb5`` (a medium kangaroo kicks the kangaroo on d4 to b5).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from .. import safeload
from ..errors import InvalidInputError, RefcamError

FILES = "abcdef"
N_FILES = N_ROWS = 6
COACHES = ("A", "B")
SIZES = "sml"  # small, medium, large: they cross 1, 2, 3 lines
SIZE_OF = {"s": 1, "m": 2, "l": 3}
EMPTY = "."
PER_SIZE = 4  # Components: 4 small, 4 medium, 4 large kangaroos
WIN_ALFALFA = 3  # End of the Game: first to 3 alfalfa tokens
ZONE_ROW = {"A": 0, "B": N_ROWS + 1}  # the notation row standing for each start zone
SIZE_NAMES = {"s": "small", "m": "medium", "l": "large"}

Square = tuple[int, int]  # (file 0-5, notation row 0-7)


class PositionError(InvalidInputError):
    """A Kang position (string or JSON) that cannot be a position."""


class MoveNotationError(InvalidInputError):
    """A move in a notation refcam does not know."""


class IllegalMoveError(RefcamError):
    """A move pushed on a position where it cannot be played at all."""


def other(coach: str) -> str:
    return "B" if coach == "A" else "A"


def square_name(sq: Square) -> str:
    return f"{FILES[sq[0]]}{sq[1]}"


def parse_square(text: str, whole: str) -> Square:
    m = re.fullmatch(r"([a-f])([0-7])", text)
    if not m:
        raise MoveNotationError(f"invalid move {whole!r}: {text!r} is not a square a0..f7")
    return FILES.index(m.group(1)), int(m.group(2))


def cell_index(sq: Square) -> int:
    """Index into Position.cells of a board square (rows 1-6)."""
    return (sq[1] - 1) * N_FILES + sq[0]


@dataclass(frozen=True)
class Position:
    """A Kang position. cells: 36 characters, a1 b1 .. f1 a2 .. f6, '.' empty or s/m/l.
    zones: kangaroos (small, medium, large) in coach A's and coach B's start zones."""

    cells: str
    zones: tuple[tuple[int, int, int], tuple[int, int, int]]
    to_move: str = "A"
    alfalfa: tuple[int, int] = (0, 0)
    no_score: tuple[bool, bool] = (False, False)

    def __post_init__(self):
        check_pieces(self.cells, self.zones, self._shown)
        if self.to_move not in COACHES:
            raise PositionError(f"invalid position {self._shown()!r}: whose turn {self.to_move!r} is not A or B")
        if any(not 0 <= a <= WIN_ALFALFA for a in self.alfalfa) or min(self.alfalfa) == WIN_ALFALFA:
            raise PositionError(f"invalid position {self._shown()!r}: alfalfa {self.alfalfa} outside 0..{WIN_ALFALFA}")

    def _shown(self) -> str:
        counts = [n for z in self.zones for n in z] if isinstance(self.zones, tuple) else [None]
        if not all(isinstance(n, int) and 0 <= n <= PER_SIZE for n in counts):
            return safeload.show(repr((self.cells, self.zones)))  # str() would spell out a huge count
        try:
            return str(self)
        except (TypeError, ValueError, IndexError):
            return repr((self.cells, self.zones))

    @classmethod
    def _trusted(cls, cells: str, zones, to_move: str, alfalfa, no_score) -> "Position":
        """A position built by the engine from a valid one: skips the checks (perft speed)."""
        pos = object.__new__(cls)
        pos.__dict__.update(cells=cells, zones=zones, to_move=to_move, alfalfa=alfalfa, no_score=no_score)
        return pos

    # --- look-ups ---------------------------------------------------------------------------
    @staticmethod
    def start() -> "Position":
        """Setup: each coach puts 2 kangaroos of each size in their start zone; A moves first (SPEC section 3)."""
        return Position(EMPTY * 36, ((2, 2, 2), (2, 2, 2)))

    def at(self, sq: Square) -> str:
        return self.cells[cell_index(sq)]

    def zone(self, coach: str) -> tuple[int, int, int]:
        return self.zones[COACHES.index(coach)]

    @property
    def winner(self) -> str | None:
        """End of the Game: the first coach holding 3 alfalfa tokens has won."""
        for coach, n in zip(COACHES, self.alfalfa):
            if n >= WIN_ALFALFA:
                return coach
        return None

    def layout(self) -> tuple[str, tuple]:
        """What a camera can see: the board and the start zones (not whose turn, alfalfa or flags)."""
        return self.cells, self.zones

    def rows(self) -> list[str]:
        """The board as six strings, row 6 first (SPEC section 4)."""
        return [self.cells[(r - 1) * N_FILES:r * N_FILES] for r in range(N_ROWS, 0, -1)]

    # --- text forms -------------------------------------------------------------------------
    def __str__(self) -> str:
        return " ".join([board_fen(self.cells), zone_text(self.zones[0]), zone_text(self.zones[1]), self.to_move,
                         f"{self.alfalfa[0]}-{self.alfalfa[1]}",
                         "".join(c for c, f in zip(COACHES, self.no_score) if f) or "-"])

    @classmethod
    def parse(cls, text: str) -> "Position":
        """The position string (module docstring) back into a Position."""
        fields = text.split(" ")
        if len(fields) != 6:
            raise PositionError(f"invalid position {text!r}: expected 6 fields "
                                f"(board, zone A, zone B, turn, alfalfa, no-score), got {len(fields)}")
        board, za, zb, turn, alf, flags = fields
        cells = parse_board_fen(board, text)
        zones = (parse_zone(za, text), parse_zone(zb, text))
        m = re.fullmatch(r"(\d)-(\d)", alf)
        if not m:
            raise PositionError(f"invalid position {text!r}: alfalfa {alf!r} is not like 0-1")
        if flags not in ("-", "A", "B", "AB"):
            raise PositionError(f"invalid position {text!r}: no-score flags {flags!r} are not -, A, B or AB")
        try:
            pos = cls(cells, zones, turn, (int(m.group(1)), int(m.group(2))), ("A" in flags, "B" in flags))
        except PositionError as exc:  # quote what the user typed, not our canonical form of it
            raise PositionError(f"invalid position {text!r}: {str(exc).split(': ', 1)[1]}") from None
        if str(pos) != text:
            raise PositionError(f"invalid position {text!r}: not in canonical form {str(pos)!r}")
        return pos

    def to_json(self) -> dict:
        return {"board": self.rows(), "start_zone": zones_json(self.zones), "to_move": self.to_move,
                "alfalfa": dict(zip(COACHES, self.alfalfa)), "no_score": dict(zip(COACHES, self.no_score))}

    @classmethod
    def from_json(cls, doc) -> "Position":
        """SPEC section 4 JSON position; to_move, alfalfa and no_score default to the start's."""
        shown = json.dumps(doc)[:80] if not isinstance(doc, str) else doc[:80]
        if not isinstance(doc, dict) or "board" not in doc:
            raise PositionError(f"invalid JSON position {shown}: needs a 'board' of six strings")
        cells = cells_from_rows(doc["board"], shown)
        zones = zones_from_json(doc.get("start_zone", {}), shown)
        try:
            alf = doc.get("alfalfa", {"A": 0, "B": 0})
            ns = doc.get("no_score", {"A": False, "B": False})
            # each count is checked against its range before it is used (a huge one never becomes text)
            alfalfa = tuple(safeload.integer(alf.get(c, 0), f"invalid JSON position: alfalfa {c}", PositionError,
                                             lo=0, hi=WIN_ALFALFA) for c in COACHES)
            no_score = (bool(ns.get("A", False)), bool(ns.get("B", False)))
        except (AttributeError, TypeError, ValueError) as exc:
            if isinstance(exc, PositionError):
                raise
            raise PositionError(f"invalid JSON position {shown}: alfalfa / no_score must be {{'A': .., 'B': ..}}") \
                from None
        return cls(cells, zones, str(doc.get("to_move", "A")), alfalfa, no_score)


def check_pieces(cells: str, zones, shown_by) -> None:
    """Components: the set holds 12 kangaroos, 4 of each size, each on a square or in a start zone.
    shown_by: the input as text, or a function giving it (only called when the check fails)."""

    def fail(why: str):
        shown = shown_by() if callable(shown_by) else shown_by
        raise PositionError(f"invalid position {shown!r}: {why}")

    if not isinstance(cells, str) or len(cells) != 36 or set(cells) - set(EMPTY + SIZES):
        fail("the board needs 36 squares of . s m l")
    try:
        ok = len(zones) == 2 and all(len(z) == 3 and all(int(n) >= 0 for n in z) for z in zones)
    except TypeError:
        ok = False
    if not ok:
        fail("start zones need counts of small, medium, large")
    total = sum(cells.count(s) for s in SIZES) + sum(sum(z) for z in zones)
    if total != 3 * PER_SIZE:
        fail(f"{total} kangaroos (a set has {3 * PER_SIZE})")
    for k, s in enumerate(SIZES):
        n = cells.count(s) + zones[0][k] + zones[1][k]
        if n != PER_SIZE:
            fail(f"{n} {SIZE_NAMES[s]} kangaroos (a set has {PER_SIZE})")


def board_fen(cells: str) -> str:
    rows = []
    for r in range(N_ROWS, 0, -1):
        row = re.sub(r"\.+", lambda m: str(len(m.group(0))), cells[(r - 1) * N_FILES:r * N_FILES])
        rows.append(row)
    return "/".join(rows)


def parse_board_fen(board: str, whole: str) -> str:
    rows = board.split("/")
    if len(rows) != N_ROWS:
        raise PositionError(f"invalid position {whole!r}: the board needs {N_ROWS} rows separated by /, "
                            f"got {len(rows)}")
    out = []
    for k, row in enumerate(rows):
        bad = re.search(r"[^sml0-9]", row)
        if bad:
            raise PositionError(f"invalid position {whole!r}: unknown letter {bad.group(0)!r} in row {N_ROWS - k}")
        expanded = re.sub(r"\d", lambda m: EMPTY * int(m.group(0)), row)
        if len(expanded) != N_FILES:
            raise PositionError(f"invalid position {whole!r}: row {N_ROWS - k} {row!r} holds {len(expanded)} "
                                f"squares, not {N_FILES}")
        out.append(expanded)
    return "".join(reversed(out))


def zone_text(zone) -> str:
    return "".join(s * n for s, n in zip(SIZES, zone)) or "-"


def parse_zone(text: str, whole: str) -> tuple[int, int, int]:
    if text == "-":
        return (0, 0, 0)
    bad = re.search(r"[^sml]", text)
    if bad:
        raise PositionError(f"invalid position {whole!r}: unknown letter {bad.group(0)!r} in start zone {text!r}")
    return tuple(text.count(s) for s in SIZES)


def zones_json(zones) -> dict:
    return {c: dict(zip(SIZES, z)) for c, z in zip(COACHES, zones)}


def cells_from_rows(rows, shown: str) -> str:
    if not isinstance(rows, list) or len(rows) != N_ROWS or not all(isinstance(r, str) for r in rows):
        raise PositionError(f"invalid JSON position {shown}: 'board' needs {N_ROWS} strings, row 6 first")
    for k, row in enumerate(rows):
        bad = re.search(r"[^sml.]", row)
        if bad:
            raise PositionError(f"invalid JSON position {shown}: unknown letter {bad.group(0)!r} in row {N_ROWS - k}")
        if len(row) != N_FILES:
            raise PositionError(f"invalid JSON position {shown}: row {N_ROWS - k} {row!r} has length {len(row)}, "
                                f"not {N_FILES}")
    return "".join(reversed(rows))


def zones_from_json(doc, shown: str) -> tuple:
    """Start-zone counts, each a whole number from 0 to PER_SIZE (a set holds 4 of a size), checked
    before use: a count is later written out as that many letters."""
    try:
        return tuple(tuple(safeload.integer(doc.get(c, {}).get(s, 0), f"invalid JSON position: start_zone {c} {s}",
                                            PositionError, lo=0, hi=PER_SIZE) for s in SIZES) for c in COACHES)
    except (AttributeError, TypeError, ValueError) as exc:
        if isinstance(exc, PositionError):
            raise
        raise PositionError(f"invalid JSON position {shown}: 'start_zone' must be "
                            f"{{'A': {{'s': n, 'm': n, 'l': n}}, 'B': {{...}}}}") from None


@dataclass(frozen=True)
class Move:
    """One turn. path: the squares visited, one line crossed per step (row 0 / 7 = beyond the
    south / north edge); jumps: indices into path where the mover landed on a kangaroo and
    jumped on; kick: where the kangaroo on the last square was sent; exits: whether the mover
    left the board (scored). An empty path is a pass."""

    path: tuple[Square, ...]
    jumps: tuple[int, ...] = ()
    kick: Square | None = None
    exits: bool = field(default=False, compare=False)

    def __post_init__(self):
        leaves = len(self.path) > 1 and self.path[-1][1] in (0, N_ROWS + 1)
        object.__setattr__(self, "exits", leaves)

    @classmethod
    def _trusted(cls, path, jumps, kick) -> "Move":
        """A move built by the generator (well formed by construction): skips __post_init__."""
        move = object.__new__(cls)
        move.__dict__.update(path=path, jumps=jumps, kick=kick,
                             exits=len(path) > 1 and path[-1][1] in (0, N_ROWS + 1))
        return move

    @property
    def is_pass(self) -> bool:
        return not self.path

    @property
    def origin(self) -> Square:
        return self.path[0]

    @property
    def end(self) -> Square:
        return self.path[-1]

    @property
    def first_leg(self) -> int:
        """Lines crossed before the first jump: the mover's own size."""
        return self.jumps[0] if self.jumps else len(self.path) - 1

    def __str__(self) -> str:
        if self.is_pass:
            return "pass"
        jumps = set(self.jumps)
        text = "-".join(square_name(sq) + ("^" if i in jumps else "") for i, sq in enumerate(self.path))
        return text + (f"x{square_name(self.kick)}" if self.kick is not None else "")

    @classmethod
    def parse(cls, text: str) -> "Move":
        """The move notation (module docstring) back into a Move; checks shape, not legality."""
        if text == "pass":
            return cls(())
        if not re.fullmatch(r"[a-f][0-7]\^?(-[a-f][0-7]\^?)+(x[a-f][0-7])?", text):
            raise MoveNotationError(f"invalid move {text!r}: expected squares joined by '-' like b0-b1-c1, "
                                    f"'^' after a jump square, 'x' and a square for a kick, or 'pass'")
        body, _, kick = text.partition("x")
        parts = body.split("-")
        path = tuple(parse_square(p.rstrip("^"), text) for p in parts)
        jumps = tuple(i for i, p in enumerate(parts) if p.endswith("^"))
        for a, b in zip(path, path[1:]):
            if abs(a[0] - b[0]) + abs(a[1] - b[1]) != 1:
                raise MoveNotationError(f"invalid move {text!r}: {square_name(a)} to {square_name(b)} "
                                        f"is not one step across one line")
        if any(i == 0 or i == len(path) - 1 for i in jumps):
            raise MoveNotationError(f"invalid move {text!r}: a jump '^' marks a square inside the path")
        move = cls(path, jumps, parse_square(kick, text) if kick else None)
        if move.exits and move.kick is not None:
            raise MoveNotationError(f"invalid move {text!r}: a kangaroo leaving the board kicks nobody")
        return move
