"""The river and the kayaks as the camera sees them: an Observation -> a Position.

Tiles come from their stickers (SPEC section 2: ids 100 + 4k + 2*side + end): place in
the river from how far downstream of the Start tile each lies, rotation 0/180 from its
heading, lateral shift snapped to whole lanes with the residual kept. Each kayak's space
comes from its pawn's pose, which vision has already corrected for the 15 mm the pawn
sticker stands above the table. Everything is measured in the Start tile's frame.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field

from ..catalog import Catalog, default_catalog
from ..observation import Observation, PiecePose
from .errors import RiverGapError, RiverReadError, rule
from .position import Position, Space, rule_breaches, validate
from .tiles import RiverTile, TileBook, tile_book

_TILE_NAME = re.compile(r"^kayak/tile-(\d+)$")
_PAWN_NAME = re.compile(r"^kayak/pawn-(\d+)$")
_BOTH_FACES = re.compile(r"^(kayak/tile-\d+) shows both faces")


@dataclass(frozen=True)
class RiverReading:
    """A position read from one observation, with how far each piece sat from its snapped place."""

    position: Position
    tiles: tuple[dict, ...]  # per river place: tile, side, rotation, shift and the residuals
    kayaks: dict  # pawn name -> {tile_index, row, lane, residual_mm}
    problems: tuple[str, ...] = ()  # why the reading is incomplete (a kayak off the river, ...)
    cards: Counter = field(default_factory=Counter)  # kinds of action cards seen played
    # rules the position breaks (a kayak on what the catalog calls a rock): reported, not refused
    conflicts: tuple[tuple[str, str], ...] = ()
    kept: tuple[str, ...] = ()  # tiles not in view whose last stable place was used

    def to_json(self) -> dict:
        doc = {"river": list(self.tiles), "kayaks": self.kayaks, "text": self.position.text(),
               "problems": list(self.problems), "cards_in_view": dict(self.cards)}
        if self.conflicts:
            doc["conflicts"] = [{"rule": str(rule(s)), "section": s, "reason": r} for s, r in self.conflicts]
        if self.kept:
            doc["kept_from_last_stable"] = list(self.kept)
        return doc


def _in_start_frame(start: PiecePose, x: float, y: float) -> tuple[float, float]:
    c, s = math.cos(math.radians(start.theta_deg)), math.sin(math.radians(start.theta_deg))
    dx, dy = x - start.x_mm, y - start.y_mm
    return c * dx + s * dy, -s * dx + c * dy


def _wrap(angle: float) -> float:
    return (angle + 180.0) % 360.0 - 180.0


def _side_of(catalog: Catalog, pose: PiecePose) -> str:
    """Which side shows: the stickers' face; two stickers that disagree make the tile unreadable."""
    faces = {catalog.sticker(m).face for m in pose.marker_ids if catalog.sticker(m) is not None} - {None}
    if pose.face and not faces:
        faces = {pose.face}
    if len(faces) != 1:
        raise RiverReadError(f"{pose.name}: its stickers disagree about which side shows "
                             f"({', '.join(sorted(faces)) or 'none'}, ids {list(pose.marker_ids)})")
    return faces.pop()


def _tile_poses(observation: Observation) -> dict[int, PiecePose]:
    for warning in observation.warnings:
        m = _BOTH_FACES.match(warning)
        if m:
            raise RiverReadError(f"{m.group(1)}: its two stickers disagree about which side shows ({warning})")
    return {int(m.group(1)): p for p in observation.pieces if (m := _TILE_NAME.match(p.name))}


def _places(poses: dict[int, PiecePose], start: PiecePose, book: TileBook) -> dict[int, tuple]:
    """place in the river -> (tile number, pose, x, y in the Start tile's frame)."""
    placed: dict[int, tuple[int, PiecePose, float, float]] = {}
    for number, pose in poses.items():
        x, y = _in_start_frame(start, pose.x_mm, pose.y_mm)
        place = round(x / book.tile_length_mm)
        if place in placed:
            raise RiverReadError(f"kayak/tile-{placed[place][0]} and {pose.name} both lie at place {place} of the river")
        placed[place] = (number, pose, x, y)
    return placed


def _tile_at(place: int, entry: tuple, start: PiecePose, book: TileBook, catalog: Catalog) -> tuple[RiverTile, dict]:
    number, pose, x, y = entry
    turn = _wrap(pose.theta_deg - start.theta_deg)
    rotation = 0 if abs(turn) < 90 else 180
    shift = round(y / book.space_mm)
    rt = RiverTile(number, _side_of(catalog, pose), rotation, shift)
    return rt, {"tile": number, "side": rt.side, "rotation": rotation, "shift": shift,
                "residual_shift_mm": round(y - shift * book.space_mm, 2),
                "residual_along_mm": round(x - place * book.tile_length_mm, 2),
                "residual_deg": round(_wrap(turn - rotation), 2)}


def _tiles(observation: Observation, book: TileBook, catalog: Catalog,
           remembered: Position | None = None) -> tuple[list[RiverTile], list[dict], PiecePose, list[str]]:
    """The tiles by place; a tile of ``remembered`` (the last stable river) that is not in view
    keeps its place there when no tile in view has taken it (a hand over it, a cup on it)."""
    poses = _tile_poses(observation)
    start = poses.get(book.start)
    if start is None:
        raise RiverGapError(f"the Start tile (kayak/tile-{book.start}) is not in view: the river cannot be anchored")
    placed = _places(poses, start, book)
    kept: dict[int, RiverTile] = {}
    for place, rt in enumerate(remembered.tiles if remembered else ()):
        if rt.tile not in poses and place not in placed:
            kept[place] = rt
    order = sorted(set(placed) | set(kept))
    if order != list(range(len(order))):
        gap = next(i for i in range(len(order) + 1) if i not in order)
        raise RiverGapError(f"no tile at place {gap} of the river (tiles at places {order}): tiles meet end to "
                             f"end, so a tile there is hidden (a hand over it?) or out of line")
    tiles, rows = [], []
    for place in order:
        if place in kept:
            tiles.append(kept[place])
            rows.append({"tile": kept[place].tile, "side": kept[place].side, "rotation": kept[place].rotation,
                         "shift": kept[place].shift, "kept_from_last_stable": True})
            continue
        rt, row = _tile_at(place, placed[place], start, book, catalog)
        tiles.append(rt)
        rows.append(row)
    return tiles, rows, start, [f"kayak/tile-{rt.tile}" for rt in kept.values()]


def _kayaks(observation: Observation, book: TileBook, tiles: list[RiverTile], start: PiecePose):
    length, a = book.tile_length_mm, book.space_mm
    where, rows, problems = {}, {}, []
    for pose in observation.pieces:
        m = _PAWN_NAME.match(pose.name)
        if not m:
            continue
        x, y = _in_start_frame(start, pose.x_mm, pose.y_mm)
        index = math.floor((x + length / 2) / length)
        if index >= len(tiles):
            problems.append(f"{pose.name} is beyond the last tile: a new tile is called for")
            continue
        if index < 0:
            problems.append(f"{pose.name} is upstream of the Start tile, off the river")
            continue
        if tiles[index] is None:  # only in a survey: the tile there is hidden
            problems.append(f"{pose.name} is at place {index}, whose tile is hidden: its space cannot be told")
            continue
        along = x - (index * length - length / 2)
        across = y - tiles[index].shift * a + book.tile_width_mm / 2
        row, lane = min(book.rows - 1, max(0, math.floor(along / a))), math.floor(across / a)
        if not 0 <= lane < book.lanes:
            problems.append(f"{pose.name} is beside tile {tiles[index].tile}, off the river")
            continue
        where[int(m.group(1))] = Space(index, row, lane)
        dx, dy = along - (row + 0.5) * a, across - (lane + 0.5) * a
        rows[pose.name] = {"tile_index": index, "row": row, "lane": lane, "residual_mm": round(math.hypot(dx, dy), 2)}
    return where, rows, problems


def read_river(observation: Observation, book: TileBook | None = None, catalog: Catalog | None = None,
               remembered: Position | None = None) -> RiverReading:
    """The position an observation shows; raises RiverReadError / KayakStateError when it cannot
    be one. A kayak on what the catalog calls a rock is read and listed in ``conflicts``: the
    catalog's layout may not match this copy, or the pawn is misplaced. ``remembered``: the
    last stable position, whose tiles keep their place while out of view (live play)."""
    catalog = catalog or default_catalog()
    book = book or tile_book(catalog)
    tiles, tile_rows, start, kept = _tiles(observation, book, catalog, remembered)
    where, kayak_rows, problems = _kayaks(observation, book, tiles, start)
    position = validate(Position.make(tiles, where), book)
    cards = Counter(catalog.piece(p.name).attrs.get("kind") for p in observation.pieces
                    if p.name.startswith("kayak/card-") and catalog.has_piece(p.name))
    return RiverReading(position, tuple(tile_rows), dict(sorted(kayak_rows.items())), tuple(problems), cards,
                        rule_breaches(position, book), tuple(kept))


def survey_river(observation: Observation, book: TileBook | None = None, catalog: Catalog | None = None) -> dict:
    """What `kayak state` reports when no whole river can be read (the Start tile or a tile in
    the middle hidden): the tiles and kayaks in view, each at its place where the Start tile
    anchors one, and the gaps marked, rather than a refusal. Raises only what read_river
    raises for stickers that contradict each other."""
    catalog = catalog or default_catalog()
    book = book or tile_book(catalog)
    poses = _tile_poses(observation)
    pawns = [p for p in observation.pieces if _PAWN_NAME.match(p.name)]
    start = poses.get(book.start)
    if start is None:
        return {"river": None, "text": None, "complete": False,
                "problems": [f"the Start tile (kayak/tile-{book.start}) is not in view: places in the river are "
                             f"counted from it, so none is given"],
                "tiles_in_view": [{"tile": n, "side": _side_of(catalog, p), "x_mm": round(p.x_mm, 1),
                                   "y_mm": round(p.y_mm, 1)} for n, p in sorted(poses.items())],
                "kayaks": {},
                "kayaks_in_view": {p.name: {"x_mm": round(p.x_mm, 1), "y_mm": round(p.y_mm, 1)} for p in pawns}}
    placed = _places(poses, start, book)
    river, tiles = [], []
    for place in range(max(placed) + 1):
        if place in placed:
            rt, row = _tile_at(place, placed[place], start, book, catalog)
            river.append({"place": place, **row})
            tiles.append(rt)
        else:
            river.append({"place": place, "tile": None, "hidden": True})
            tiles.append(None)
    _, kayak_rows, problems = _kayaks(observation, book, tiles, start)
    gaps = [f"no tile seen at place {r['place']} of the river: hidden (a hand over it?) or out of line"
            for r in river if r["tile"] is None]
    return {"river": river, "text": None, "complete": False, "problems": gaps + problems,
            "kayaks": dict(sorted(kayak_rows.items()))}


def space_centre(book: TileBook, position: Position, space: Space) -> tuple[float, float]:
    """Game-frame (Start tile frame) centre of a space, in mm."""
    rt = position.tiles[space.index]
    x = space.index * book.tile_length_mm - book.tile_length_mm / 2 + (space.row + 0.5) * book.space_mm
    y = rt.shift * book.space_mm - book.tile_width_mm / 2 + (space.lane + 0.5) * book.space_mm
    return x, y


__all__ = ["RiverReading", "read_river", "space_centre", "survey_river"]
