"""A Kayak Chaos position: the river (ordered tiles) and where each kayak is.

Text form (round-trips, in the spirit of FEN), two fields separated by one space:

    <tiles> <kayaks>          (the kayaks field may be left out when there are none)
    tiles:  tokens joined by "/", upstream first: tile digit, side letter, "r" when turned
            180 degrees, then the signed lateral shift in lanes when not 0, e.g. "0A/4Br/6B+1"
    kayaks: "<pawn>@<tile index>.<row>.<lane>" joined by ",", pawn number first; "-" for none,
            e.g. "1@2.1.3,2@0.0.2"

Rows count downstream from the tile's upstream edge and lanes from the right bank, both as
the tile lies now (SPEC section 4, ``kayak state --json``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import KayakStateError
from .tiles import FINISH, ROCK, RiverTile, TileBook, tile_book

_TILE_TOKEN = re.compile(r"^(\d)([AB])(r?)([+-]\d+)?$")
_KAYAK_TOKEN = re.compile(r"^(\d)@(\d+)\.(\d+)\.(\d+)$")


@dataclass(frozen=True, order=True)
class Space:
    """(tile index in the river, row, lane), counted as the tile lies now."""

    index: int
    row: int
    lane: int

    def __str__(self) -> str:
        return f"{self.index}.{self.row}.{self.lane}"


@dataclass(frozen=True)
class Position:
    tiles: tuple[RiverTile, ...]
    kayaks: tuple[tuple[int, Space], ...]  # (pawn number, space), by pawn number

    def __hash__(self) -> int:  # positions are hashed very often by the explainer
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash((self.tiles, self.kayaks))
            object.__setattr__(self, "_hash", h)
        return h

    @staticmethod
    def make(tiles, kayaks) -> "Position":
        items = kayaks.items() if isinstance(kayaks, dict) else kayaks
        return Position(tuple(tiles), tuple(sorted((int(p), s) for p, s in items)))

    def where(self, pawn: int) -> Space | None:
        for p, s in self.kayaks:
            if p == pawn:
                return s
        return None

    def occupant_free(self, space: Space) -> bool:
        return all(s != space for _, s in self.kayaks)

    def index_of(self, tile: int) -> int | None:
        for i, rt in enumerate(self.tiles):
            if rt.tile == tile:
                return i
        return None

    def text(self) -> str:
        return to_text(self)


def pawn_name(pawn: int) -> str:
    return f"kayak/pawn-{pawn}"


def tile_token(rt: RiverTile) -> str:
    return f"{rt.tile}{rt.side}{'r' if rt.rotation == 180 else ''}{'' if rt.shift == 0 else f'{rt.shift:+d}'}"


def to_text(pos: Position) -> str:
    kayaks = ",".join(f"{p}@{s}" for p, s in pos.kayaks) or "-"
    return "/".join(tile_token(rt) for rt in pos.tiles) + " " + kayaks


def from_text(text: str, book: TileBook | None = None) -> Position:
    """Parse the text form; raises KayakStateError saying what is wrong with it. A position
    that breaks a rule but could lie on the table (a kayak on a rock, the Start tile moved)
    parses: ``rule_breaches`` names what it breaks."""
    parts = str(text).split()
    if not parts:
        raise KayakStateError("an empty Kayak position: give at least the Start tile, e.g. '0A'")
    if len(parts) == 1:  # no kayaks field: no kayak on the river
        parts.append("-")
    if len(parts) != 2:
        raise KayakStateError(f"Kayak position {text!r} has {len(parts)} fields; it needs two, '<tiles> <kayaks>' "
                              f"(e.g. '0A/4B 1@0.0.1'), the tiles joined by '/' without spaces")
    tiles = []
    for token in parts[0].split("/"):
        m = _TILE_TOKEN.match(token)
        if not m:
            raise KayakStateError(f"river tile {token!r} in {text!r} is not like '4B', '6Br' or '3A+1'")
        tiles.append(RiverTile(int(m[1]), m[2], 180 if m[3] else 0, int(m[4] or 0)))
    kayaks = {}
    for token in ([] if parts[1] == "-" else parts[1].split(",")):
        m = _KAYAK_TOKEN.match(token)
        if not m:
            raise KayakStateError(f"kayak {token!r} in {text!r} is not like '1@2.1.3' (pawn@place.row.lane)")
        if int(m[1]) in kayaks:
            raise KayakStateError(f"pawn {m[1]} appears twice in {text!r}")
        kayaks[int(m[1])] = Space(int(m[2]), int(m[3]), int(m[4]))
    pos = Position.make(tiles, kayaks)
    validate(pos, book)
    return pos


def validate(pos: Position, book: TileBook | None = None) -> Position:
    """Refuse what is not a position at all (a tile that does not exist or lies twice, a kayak
    off every space, two kayaks on one space); returns the position for chaining. A position
    that only breaks a rule passes: see ``rule_breaches``."""
    book = book or tile_book()
    _validate_tiles(pos, book)
    seen: dict[Space, int] = {}
    for pawn, space in pos.kayaks:
        if not 1 <= pawn <= 4:
            raise KayakStateError(f"there is no kayak pawn {pawn} (pawns 1-4)")
        if not (0 <= space.index < len(pos.tiles) and 0 <= space.row < book.rows and 0 <= space.lane < book.lanes):
            raise KayakStateError(f"{pawn_name(pawn)} at {space} is not a space of this {len(pos.tiles)}-tile river "
                                  f"(places 0-{len(pos.tiles) - 1}, rows 0-{book.rows - 1}, lanes 0-{book.lanes - 1})")
        if space in seen:
            raise KayakStateError(f"{pawn_name(seen[space])} and {pawn_name(pawn)} share space {space}")
        seen[space] = pawn
    return pos


def _validate_tiles(pos: Position, book: TileBook) -> None:
    if not pos.tiles:
        raise KayakStateError("a river needs at least the Start tile")
    numbers = [rt.tile for rt in pos.tiles]
    for rt in pos.tiles:
        if (rt.tile, rt.side) not in book.layouts or rt.rotation not in (0, 180):
            raise KayakStateError(f"river tile {tile_token(rt)!r}: no such tile, side or rotation (tiles 0-7, A/B, 0/180)")
        if numbers.count(rt.tile) > 1:
            raise KayakStateError(f"tile {rt.tile} appears {numbers.count(rt.tile)} times in the river")
    if book.start not in numbers:
        # every place and lane is counted from the Start tile: without it nothing can be placed
        raise KayakStateError(f"the river has no Start tile {book.start}: places and lanes are counted from it")


def rule_breaches(pos: Position, book: TileBook | None = None) -> tuple[tuple[str, str], ...]:
    """Rules a position breaks although it could lie on the table, as (section, reason):
    whoever reads it rules on it (a turn that led here is illegal) rather than refusing it."""
    book = book or tile_book()
    out = list(_tile_breaches(pos, book))
    for pawn, space in pos.kayaks:
        rt = pos.tiles[space.index]
        if book.cell(rt, space.row, space.lane) == ROCK:
            # Rocks: no kayak may ever stand on a rock
            out.append(("Rocks", f"{pawn_name(pawn)} at {space} is on a rock of tile {tile_token(rt)}"))
    return tuple(out)


def _tile_breaches(pos: Position, book: TileBook):
    numbers = [rt.tile for rt in pos.tiles]
    first = pos.tiles[0]
    # Weather Shift, Tip the Kayak and Whirlpool Cards: the Start tile never moves from where
    # Game Setup laid it (first, as it lay), nor the Finish tile from the end of the river
    if first.tile != book.start:
        yield "Whirlpool Cards", f"the Start tile {book.start} is not first in the river (tile {tile_token(first)} is)"
    start = pos.tiles[numbers.index(book.start)]
    if start.rotation:
        yield "Tip the Kayak Cards", f"the Start tile lies turned ({tile_token(start)})"
    if start.shift:
        yield "Weather Shift Cards", f"the Start tile lies shifted {start.shift:+d} lanes ({tile_token(start)})"
    if book.finish in numbers[:-1]:
        yield "Whirlpool Cards", f"the Finish tile {book.finish} is not the last tile of the river"
    # Game Setup: the Finish tile lies at the bottom of the stack, so it is the last one drawn
    missing = sorted(t for t, role in book.roles.items() if role == "river" and t not in numbers)
    if book.finish in numbers and missing:
        yield "Game Setup", (f"the Finish tile {book.finish} lies in the river while tile(s) "
                             f"{', '.join(map(str, missing))} were never drawn")
    for up, down in zip(pos.tiles, pos.tiles[1:]):
        # The River: each tile is laid lined up with the one before; tiles that share no lane
        # at all leave no way down the river
        if abs(up.shift - down.shift) > book.lanes - 1:
            yield "The River", (f"tile {tile_token(down)} shares no lane with tile {tile_token(up)} "
                                f"({abs(up.shift - down.shift)} lanes apart)")


def winners(pos: Position, book: TileBook) -> list[int]:
    """Pawns standing on a Finish space."""
    return [p for p, s in pos.kayaks if book.cell(pos.tiles[s.index], s.row, s.lane) == FINISH]
