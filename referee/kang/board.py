"""The Kang board as a camera sees it: which kangaroo is on which square or in which start zone.

Pure: reads an Observation (board-frame poses of ``kang/small-1`` ... ``kang/large-4``) and the
catalog's board geometry (square size, grid, board extent, straddle margin). A token whose
centre lies within 2 sigma + the catalog's straddle margin of a square border is reported as
straddling, with the squares it could be on, never snapped to one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..catalog import Catalog, default_catalog
from ..observation import Observation, PiecePose
from .position import COACHES, EMPTY, FILES, SIZES

KANGAROO_FAMILY = "kang/kangaroo"


@dataclass(frozen=True)
class Geometry:
    """Board geometry from the catalog (SPEC section 2): grid centred on the board frame origin."""

    square_mm: float
    files: int
    rows: int
    half_extent_mm: float
    margin_mm: float

    @classmethod
    def from_catalog(cls, catalog: Catalog | None = None) -> "Geometry":
        game = (catalog or default_catalog()).game("kang")
        grid = game["grid"]
        a = float(grid["square_mm"])
        return cls(a, int(grid["files"]), int(grid["rows"]), float(game.get("board_half_extent_mm", 4.25 * a)),
                   float(game.get("straddle_margin_mm", 0.1 * a)))

    def square_centre(self, file_index: int, row: int) -> tuple[float, float]:
        """Centre of (file 0-5, row 1-6; rows 0 and 7 lie just beyond the grid's end edges)."""
        return ((file_index + 0.5 - self.files / 2) * self.square_mm, (row - 0.5 - self.rows / 2) * self.square_mm)

    def grid_half(self) -> tuple[float, float]:
        return self.files * self.square_mm / 2, self.rows * self.square_mm / 2


@dataclass(frozen=True)
class TokenPlace:
    """Where one seen kangaroo is. where: a square name, "zone A", "zone B", "straddling",
    "rim" (on the board body beyond the grid) or "off board" (beside the board, in no zone)."""

    name: str
    letter: str
    where: str
    candidates: tuple[str, ...]
    x_mm: float
    y_mm: float
    sigma_mm: float

    def to_json(self) -> dict:
        d = {"name": self.name, "size": self.letter, "where": self.where, "x_mm": round(self.x_mm, 1),
             "y_mm": round(self.y_mm, 1), "sigma_mm": round(self.sigma_mm, 2)}
        if self.candidates:
            d["candidates"] = list(self.candidates)
        return d


@dataclass(frozen=True)
class BoardRead:
    """The board read from one observation; `layout` only when every kangaroo has a clear place."""

    cells: str
    zones: tuple[tuple[int, int, int], tuple[int, int, int]]
    places: tuple[TokenPlace, ...]
    missing: tuple[str, ...]
    doubled: tuple[str, ...] = ()  # squares holding two kangaroos

    @property
    def unclear(self) -> tuple[TokenPlace, ...]:
        return tuple(p for p in self.places if p.where in ("straddling", "rim", "off board"))

    @property
    def complete(self) -> bool:
        return not self.unclear and not self.missing and not self.doubled

    @property
    def placed(self) -> bool:
        """Every kangaroo read has a clear place (those not read aside)."""
        return not self.unclear and not self.doubled

    def layout(self):
        return (self.cells, self.zones) if self.complete else None

    def problems(self, missing: bool = True) -> list[str]:
        """Why the board cannot be judged, one phrase each (empty when it can); ``missing``:
        count the kangaroos not read among them."""
        out = []
        for p in self.unclear:
            if p.where == "straddling":
                out.append(f"{p.name} straddles {' / '.join(p.candidates)}")
            elif p.where == "rim":
                out.append(f"{p.name} lies on the board's rim, on no square")
            else:
                out.append(f"{p.name} is off the board and outside both start zones")
        if self.missing and missing:
            out.append(f"{len(self.missing)} kangaroo(s) not seen ({', '.join(self.missing)}): a hand in view?")
        out += [f"two kangaroos on {sq}" for sq in self.doubled]
        return out

    def rows(self) -> list[str]:
        return [self.cells[(r - 1) * 6:r * 6] for r in range(6, 0, -1)]

    def to_json(self) -> dict:
        """SPEC section 4 `kang state --json`, plus where each kangaroo is and what could not be placed."""
        return {"board": self.rows(), "start_zone": {c: dict(zip(SIZES, z)) for c, z in zip(COACHES, self.zones)},
                "complete": self.complete, "problems": self.problems(),
                "pieces": [p.to_json() for p in self.places], "missing": list(self.missing)}


def place_token(pose: PiecePose, letter: str, geo: Geometry) -> TokenPlace:
    """Square, start zone, or why neither. Start zones lie beyond the south (A) and north (B)
    board edges; a token beside the board's side edges is in no zone."""
    x, y, s = pose.x_mm, pose.y_mm, pose.sigma_mm
    reach = 2 * s + geo.margin_mm
    gx, gy = geo.grid_half()
    half = geo.half_extent_mm

    def place(where, cands=()):
        return TokenPlace(pose.name, letter, where, tuple(cands), x, y, s)

    if abs(y) > half + reach:  # clearly beyond an end edge: the start zone in front of that coach
        return place("zone A" if y < 0 else "zone B")
    if abs(y) > half - reach and abs(x) <= half:
        return place("straddling", ("board edge", "zone A" if y < 0 else "zone B"))
    if abs(x) > half:
        return place("off board")
    if abs(x) > gx + reach or abs(y) > gy + reach:
        return place("rim")
    cands = _squares_within(x, y, reach, geo)
    if len(cands) == 1 and abs(x) < gx - reach and abs(y) < gy - reach:
        return place(cands[0])
    return place("straddling", tuple(cands) + (("rim",) if abs(x) >= gx - reach or abs(y) >= gy - reach else ()))


def _squares_within(x: float, y: float, reach: float, geo: Geometry) -> list[str]:
    a = geo.square_mm
    out = []
    for f in range(geo.files):
        for r in range(1, geo.rows + 1):
            cx, cy = geo.square_centre(f, r)
            # nearest point of the square to (x, y) within reach: the disc of doubt touches it
            dx = max(abs(x - cx) - a / 2, 0.0)
            dy = max(abs(y - cy) - a / 2, 0.0)
            if math.hypot(dx, dy) <= reach:
                out.append(f"{FILES[f]}{r}")
    return out


def kangaroo_names(catalog: Catalog | None = None) -> list[str]:
    return sorted(p.name for p in (catalog or default_catalog()).pieces(family=KANGAROO_FAMILY))


def read_board(observation: Observation, catalog: Catalog | None = None) -> BoardRead:
    """Every kangaroo of the catalog placed from the observation's board-frame poses."""
    catalog = catalog or default_catalog()
    geo = Geometry.from_catalog(catalog)
    tokens = catalog.pieces(family=KANGAROO_FAMILY)
    letters = {p.name: SIZES[int(p.attrs.get("size", 1)) - 1] for p in tokens}
    cells = [EMPTY] * (geo.files * geo.rows)
    zones = [[0, 0, 0], [0, 0, 0]]
    places, doubled = [], []
    for name in sorted(letters):
        pose = observation.piece(name)
        if pose is None:
            continue
        p = place_token(pose, letters[name], geo)
        places.append(p)
        if p.where.startswith("zone "):
            zones[COACHES.index(p.where[-1])][SIZES.index(p.letter)] += 1
        elif len(p.where) == 2:
            i = (int(p.where[1]) - 1) * geo.files + FILES.index(p.where[0])
            if cells[i] != EMPTY:
                doubled.append(p.where)
            cells[i] = p.letter
    missing = tuple(n for n in sorted(letters) if observation.piece(n) is None)
    return BoardRead("".join(cells), (tuple(zones[0]), tuple(zones[1])), tuple(places), missing, tuple(doubled))
