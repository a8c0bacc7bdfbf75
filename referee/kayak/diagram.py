"""The river drawn for the page: tiles with their lane cells, rocks, double spaces, Start and
Finish, the kayaks, and the last turn's actions as arrows (referee.game.diagram).

Coordinates are the game frame (the Start tile's frame, mm): x runs downstream, y toward the
left bank, which is "up" on the page when the river flows left to right.
"""

from __future__ import annotations

from ..errors import RefcamError
from ..game import Shape, diagram
from . import actions as A
from .explain import Explained
from .position import Position, pawn_name
from .river import space_centre
from .rules import apply
from .tiles import DOUBLE, FINISH, ROCK, START, RiverTile, TileBook

PLAYER_ROLES = 6  # the page styles player-1 .. player-6


def river_diagram(book: TileBook, position: Position | None, last: Explained | None = None,
                  caption: tuple[str, ...] = ()) -> dict:
    """The diagram JSON for View.data["diagram"]; an empty river (nothing seen yet) has no shapes."""
    shapes: list[Shape] = []
    if position is not None:
        for index, rt in enumerate(position.tiles):
            shapes += tile_shapes(book, index, rt)
        if last is not None and last.before != last.after:
            shapes += turn_arrows(book, last)
        shapes += kayak_shapes(book, position)
    return diagram(shapes, caption, unit_mm=book.space_mm)


def _box(x0: float, y0: float, x1: float, y1: float) -> tuple:
    return ((x0, y0), (x1, y0), (x1, y1), (x0, y1))


def tile_shapes(book: TileBook, index: int, rt: RiverTile) -> list[Shape]:
    """One tile as it lies: its water, the lines between lanes and rows, its special spaces and its name."""
    a, length, width = book.space_mm, book.tile_length_mm, book.tile_width_mm
    x0, y0 = index * length - length / 2, rt.shift * a - width / 2
    role_name = {book.start: " Start", book.finish: " Finish"}.get(rt.tile, "")
    name = f"{rt.tile}{rt.side}{' turned' if rt.rotation else ''}"
    out = [Shape("polygon", _box(x0, y0, x0 + length, y0 + width), "water", text=f"tile {name}", legend="water")]
    out += [Shape("line", ((x0, y0 + k * a), (x0 + length, y0 + k * a)), "grid") for k in range(1, book.lanes)]
    out += [Shape("line", ((x0 + k * a, y0), (x0 + k * a, y0 + width)), "grid") for k in range(1, book.rows)]
    for row, cells in enumerate(book.lying(rt)):
        for lane, cell in enumerate(cells):
            out += _cell_shapes(book, rt, row, lane, cell, x0 + row * a, y0 + lane * a)
    out.append(Shape("label", ((x0 + length / 2, y0 + width + 0.45 * a),), "info", text=name + role_name))
    return out


def _cell_shapes(book: TileBook, rt: RiverTile, row: int, lane: int, cell: str, x: float, y: float) -> list[Shape]:
    a = book.space_mm
    inset = 0.12 * a
    if cell == ROCK:
        # an irregular octagon reads as a rock at any size
        k = (0.30, 0.08, 0.12, 0.28, 0.88, 0.70, 0.92, 0.86)
        pts = ((x + inset, y + k[0] * a), (x + k[3] * a, y + inset), (x + k[5] * a, y + k[1] * a),
               (x + a - inset, y + k[3] * a), (x + k[7] * a, y + k[5] * a), (x + k[4] * a, y + a - inset),
               (x + k[3] * a, y + k[6] * a), (x + k[2] * a, y + k[4] * a))
        return [Shape("polygon", pts, "rock", text="rock", legend="rock")]
    if cell == DOUBLE:
        halves = book.double_halves(rt, row, lane)
        if halves is None or halves[0] != row:
            return []  # drawn once, from its upstream half
        return [Shape("polygon", _box(x + inset, y + inset, x + 2 * a - inset, y + a - inset), "double",
                      text="double space", legend="double space")]
    if cell in (START, FINISH):
        role, words = ("start", "Start space") if cell == START else ("finish", "Finish space")
        return [Shape("polygon", _box(x, y, x + a, y + a), role, text=words, legend=words)]
    return []


def kayak_shapes(book: TileBook, position: Position) -> list[Shape]:
    """Each kayak as a disc in its player's colour with its pawn number on it."""
    out = []
    for pawn, space in position.kayaks:
        centre = space_centre(book, position, space)
        role = f"player-{(pawn - 1) % PLAYER_ROLES + 1}"
        out.append(Shape("circle", (centre,), role, text=f"{pawn_name(pawn)} at {space}", radius_mm=0.36 * book.space_mm,
                         legend=f"kayak {pawn}"))
        out.append(Shape("label", (centre,), "info", text=str(pawn)))
    return out


def turn_arrows(book: TileBook, verdict: Explained) -> list[Shape]:
    """The last turn as arrows, one action after the other along its first reading: each kayak
    that an action moved (the mover, a pushed kayak, kayaks riding a moved tile) and each
    moved tile's centre. When the reading cannot be replayed, one arrow per kayak from where
    it was to where it is."""
    role = "legal" if verdict.legal else "illegal"
    reading = verdict.readings[0] if verdict.readings else None
    steps = _replay(book, verdict.before, reading) if reading and reading.actions else None
    if steps is None:
        return _net_arrows(book, verdict.before, verdict.after, role, "last turn")
    out = []
    for number, (action, before, after) in enumerate(steps, start=1):
        words = f"{number}: {action}"
        arrows = _net_arrows(book, before, after, role, words) + _tile_arrows(book, before, after, role, words)
        if arrows:
            out += arrows
            (x0, y0), (x1, y1) = arrows[0].points[0], arrows[0].points[-1]
            out.append(Shape("label", (((x0 + x1) / 2, (y0 + y1) / 2 + 0.3 * book.space_mm),), role, text=str(number)))
    return out


def _replay(book: TileBook, start: Position, reading) -> list[tuple[object, Position, Position]] | None:
    supply = [p.tile for p in reading.placements]
    steps, pos = [], start
    for action in reading.actions:
        if isinstance(action, (A.LifeRing, A.Discard)):
            continue  # nothing moves on the river
        try:
            outcome = apply(pos, action, book, supply, [])  # breaches noted, not raised: an illegal reading replays too
        except RefcamError:
            return None
        supply = supply[len(outcome.placements):]
        steps.append((action, pos, outcome.position))
        pos = outcome.position
    return steps


def _net_arrows(book: TileBook, before: Position, after: Position, role: str, words: str) -> list[Shape]:
    out = []
    for pawn, space in before.kayaks:
        there = after.where(pawn)
        if there is None:
            continue
        start, end = space_centre(book, before, space), space_centre(book, after, there)
        if start != end:
            out.append(Shape("arrow", (start, end), role, text=f"{words} ({pawn_name(pawn)})", legend="last turn"))
    return out


def _tile_arrows(book: TileBook, before: Position, after: Position, role: str, words: str) -> list[Shape]:
    """Tiles a Weather Shift, a Tip or a Whirlpool moved: centre before -> centre after (a
    Tip, which turns a tile in place, is a short arrow along it, downstream end to upstream end)."""
    length, a, out = book.tile_length_mm, book.space_mm, []
    for index, rt in enumerate(before.tiles):
        now = after.index_of(rt.tile)
        if now is None:
            continue
        moved = after.tiles[now]
        start, end = (index * length, rt.shift * a), (now * length, moved.shift * a)
        if start == end and moved.rotation != rt.rotation:
            start, end = (start[0] + length / 3, start[1]), (start[0] - length / 3, start[1])
        if start != end:
            out.append(Shape("arrow", (start, end), role, text=f"{words} (tile {rt.tile})", legend="last turn"))
    return out
