"""River tiles as catalog data: the size of a tile and the layout of each side.

Rocks and double spaces are never constants here; they come from the catalog family
``kayak/tile`` (plausible defaults that users edit to match their copy).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..catalog import Catalog, default_catalog
from ..errors import CatalogError

WATER, ROCK, DOUBLE, START, FINISH = ".", "R", "D", "S", "F"
SIDES = ("A", "B")


@dataclass(frozen=True)
class RiverTile:
    """One tile as it lies: which tile (0-7), which side up, rotation 0/180 and its lateral
    shift in whole lanes relative to the Start tile (+ toward the left bank)."""

    tile: int
    side: str
    rotation: int = 0
    shift: int = 0


class TileBook:
    """The catalog's tile facts, with each side's layout as it lies for either rotation."""

    def __init__(self, catalog: Catalog):
        geometry = catalog.game("kayak")["tile"]
        self.rows = int(geometry["rows"])
        self.lanes = int(geometry["lanes"])
        self.space_mm = float(geometry["space_mm"])
        self.layouts: dict[tuple[int, str], tuple[str, ...]] = {}
        self.roles: dict[int, str] = {}
        for piece in catalog.pieces(game="kayak", family="kayak/tile"):
            number = int(piece.attrs["tile"])
            self.roles[number] = str(piece.attrs.get("role", "river"))
            for side in SIDES:
                layout = tuple(piece.attrs.get("layout", {}).get(side, ()))
                self._check_layout(piece.name, side, layout)
                self.layouts[(number, side)] = layout
        self.start = self._only_role("start")
        self.finish = self._only_role("finish")
        self._lying: dict[tuple[int, str, int], tuple[str, ...]] = {}
        self._pairs: dict[tuple[int, str, int], dict[tuple[int, int], tuple[int, int]]] = {}

    @property
    def tile_length_mm(self) -> float:
        return self.rows * self.space_mm

    @property
    def tile_width_mm(self) -> float:
        return self.lanes * self.space_mm

    def _only_role(self, role: str) -> int:
        tiles = [t for t, r in self.roles.items() if r == role]
        if len(tiles) != 1:
            raise CatalogError(f"the catalog needs exactly one Kayak tile with role {role!r}, found {tiles}")
        return tiles[0]

    def _check_layout(self, name: str, side: str, layout: tuple[str, ...]) -> None:
        if len(layout) != self.rows or any(len(r) != self.lanes or set(r) - set(".RDSF") for r in layout):
            raise CatalogError(f"{name} side {side}: layout {list(layout)} is not {self.rows} rows of "
                               f"{self.lanes} characters from '.RDSF'")
        for lane in range(self.lanes):
            column = "".join(r[lane] for r in layout)
            # a double space is two rows long in one lane (SPEC section 2, Kayak): D runs pair up
            if any(len(run) % 2 for run in "".join(c if c == DOUBLE else " " for c in column).split()):
                raise CatalogError(f"{name} side {side}: lane {lane} has a double space that is not two rows long")

    def is_start_or_finish(self, tile: int) -> bool:
        return tile in (self.start, self.finish)

    def lying(self, rt: RiverTile) -> tuple[str, ...]:
        """The layout rows as the tile lies: upstream row first, lane 0 (right bank) first."""
        key = (rt.tile, rt.side, rt.rotation)
        if key not in self._lying:
            layout = self.layouts[(rt.tile, rt.side)]
            self._lying[key] = tuple(r[::-1] for r in layout[::-1]) if rt.rotation == 180 else layout
        return self._lying[key]

    def cell(self, rt: RiverTile, row: int, lane: int) -> str:
        return self.lying(rt)[row][lane]

    def double_halves(self, rt: RiverTile, row: int, lane: int) -> tuple[int, int] | None:
        """(upstream row, downstream row) of the double space holding this cell, as the tile lies."""
        key = (rt.tile, rt.side, rt.rotation)
        if key not in self._pairs:
            pairs: dict[tuple[int, int], tuple[int, int]] = {}
            rows = self.lying(rt)
            for ln in range(self.lanes):
                r = 0
                while r < self.rows - 1:
                    if rows[r][ln] == DOUBLE and rows[r + 1][ln] == DOUBLE:
                        pairs[(r, ln)] = pairs[(r + 1, ln)] = (r, r + 1)
                        r += 2
                    else:
                        r += 1
            self._pairs[key] = pairs
        return self._pairs[key].get((row, lane))

    def open_joint_lanes(self, up: RiverTile, down: RiverTile) -> set[int]:
        """River lanes (Start-tile lanes) open across a joint: no rock in the upstream tile's
        last row nor in the downstream tile's first row there."""
        last, first = self.lying(up)[-1], self.lying(down)[0]
        open_up = {ln + up.shift for ln in range(self.lanes) if last[ln] != ROCK}
        return {ln + down.shift for ln in range(self.lanes) if first[ln] != ROCK} & open_up


@lru_cache(maxsize=4)
def _book_for(catalog_id: int, catalog: Catalog) -> TileBook:
    return TileBook(catalog)


def tile_book(catalog: Catalog | None = None) -> TileBook:
    """The tile facts of this catalog (the default one when None)."""
    catalog = catalog or default_catalog()
    return _book_for(id(catalog), catalog)
