"""The Kang board drawn for the page (referee.game.diagram), from the board view's own data.

A pure function of the view's data dict (``KangGame.view``): the 6x6 squares with their file
and row names, the kangaroos by size, both start zones with how many of each size wait there,
the alfalfa of each coach, whose turn it is, and the last move's path as an arrow through the
squares it crossed (a kick as a second arrow, each jump marked).

Coordinates: the board frame in mm, y up, coach A's seat south (row 1 at the bottom), the same
squares as the board geometry. The start zones are drawn a little beyond rows 1 and 6, leaving
room for the file names; a path's row 0 / row 7 point (entering or leaving) lies in that zone.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..game import Shape, diagram
from .position import FILES, N_ROWS as ROWS, SIZE_NAMES as SIZE_WORDS, SIZES
RADIUS = {"s": 0.22, "m": 0.30, "l": 0.38}  # of a square: the three sizes told apart at a glance
ZONE_GAP = 1.1  # squares between the board's edge and a start zone's centre line
ZONE_ROLE = {"A": "zone-1", "B": "zone-2"}
ZONE_SIDE = {"A": -1, "B": 1}  # A sits south (row 1 side), B north


def _centre(file_index: int, row: int, a: float) -> tuple[float, float]:
    """Square centre; row 0 and row 7 (beyond the edges) are drawn in the start zones."""
    x = (file_index + 0.5 - len(FILES) / 2) * a
    if row <= 0:
        return x, -(ROWS / 2 + ZONE_GAP) * a
    if row > ROWS:
        return x, (ROWS / 2 + ZONE_GAP) * a
    return x, (row - 0.5 - ROWS / 2) * a


def _square(name: str, a: float) -> tuple[float, float] | None:
    if len(name) != 2 or name[0] not in FILES or not name[1].isdigit():
        return None
    return _centre(FILES.index(name[0]), int(name[1]), a)


def _box(cx: float, cy: float, w: float, h: float) -> tuple:
    return ((cx - w / 2, cy - h / 2), (cx + w / 2, cy - h / 2), (cx + w / 2, cy + h / 2), (cx - w / 2, cy + h / 2))


def board_diagram(data: Mapping[str, Any], square_mm: float) -> dict:
    """The diagram JSON for the board view's ``data["diagram"]``."""
    a = float(square_mm)
    shapes = _grid(a) + _kangaroos(data.get("board") or [], a)
    for coach in ("A", "B"):
        shapes += _zone(coach, data, a)
    shapes += _last_move(data.get("last_move"), a)
    return diagram(shapes, _caption(data), unit_mm=a)


def _grid(a: float) -> list[Shape]:
    half = len(FILES) * a / 2
    out = [Shape("polygon", _box(*_centre(f, r, a), a, a), "surface", text=f"{FILES[f]}{r}", legend="square")
           for r in range(1, ROWS + 1) for f in range(len(FILES))]
    out += [Shape("line", ((-half + k * a, -half), (-half + k * a, half)), "grid") for k in range(len(FILES) + 1)]
    out += [Shape("line", ((-half, -half + k * a), (half, -half + k * a)), "grid") for k in range(ROWS + 1)]
    for f, letter in enumerate(FILES):
        x, _ = _centre(f, 1, a)
        out.append(Shape("label", ((x, -half - 0.3 * a),), "info", text=letter))
    for r in range(1, ROWS + 1):
        _, y = _centre(0, r, a)
        out.append(Shape("label", ((-half - 0.35 * a, y),), "info", text=str(r)))
    return out


def _kangaroo(centre: tuple[float, float], size: str, a: float, text: str) -> list[Shape]:
    return [Shape("circle", (centre,), "piece", text=text, radius_mm=RADIUS[size] * a,
                  legend="kangaroo (s, m, l)"),
            Shape("label", (centre,), "info", text=size.upper())]


def _kangaroos(rows: list[str], a: float) -> list[Shape]:
    """rows: six strings, row 6 first, files a-f; s/m/l a kangaroo, anything else empty."""
    out = []
    for i, line in enumerate(rows[:ROWS]):
        row = ROWS - i
        for f, size in enumerate(str(line)[:len(FILES)]):
            if size in RADIUS:
                out += _kangaroo(_centre(f, row, a), size, a, f"{SIZE_WORDS[size]} kangaroo on {FILES[f]}{row}")
    return out


def _zone(coach: str, data: Mapping[str, Any], a: float) -> list[Shape]:
    """A start zone: its waiting kangaroos as one of each size with the count beside it, and under
    (A) or over (B) it the coach, their alfalfa, whether they may score, and whose turn it is."""
    side, width = ZONE_SIDE[coach], len(FILES) * a
    cy = side * (ROWS / 2 + ZONE_GAP) * a
    out = [Shape("polygon", _box(0.0, cy, width, 1.2 * a), ZONE_ROLE[coach], text=f"start zone {coach}",
                 legend=f"start zone {coach}")]
    if data.get("to_move") == coach and not data.get("winner"):
        out.append(Shape("polygon", _box(0.0, cy, width + 0.2 * a, 1.4 * a), "highlight", text=f"{coach} to move",
                         legend="to move"))
    counts = (data.get("start_zone") or {}).get(coach)
    for k, size in enumerate(SIZES if counts is not None else ()):  # nothing to count before a board is seen
        x = (k - 1) * 2 * a
        n = int(counts.get(size, 0) or 0)
        out += _kangaroo((x - 0.45 * a, cy), size, a, f"{n} {SIZE_WORDS[size]} in start zone {coach}") if n else []
        out.append(Shape("label", ((x + 0.35 * a, cy),), "info", text=f"×{n}"))
    words = [f"{coach}"] + ([f"alfalfa {data['alfalfa'].get(coach, 0)}"] if data.get("alfalfa") else [])
    if (data.get("no_score") or {}).get(coach):
        words.append("may not score")
    if data.get("winner") == coach:
        words.append("wins")
    elif data.get("to_move") == coach:
        words.append("to move")
    out.append(Shape("label", ((0.0, cy + side * 1.0 * a),), ZONE_ROLE[coach], text=" · ".join(words)))
    return out


def _last_move(move: Mapping[str, Any] | None, a: float) -> list[Shape]:
    """The path through the centres of the squares it crossed; jumps from the notation's ``^``."""
    if not move or not move.get("path"):
        return []
    points = [p for p in (_square(str(n), a) for n in move["path"]) if p is not None]
    if len(points) < 2:
        return []
    words = f"last move: {move.get('coach') or ''} {move.get('notation', '')}".replace("  ", " ")
    out = [Shape("arrow", tuple(points), "path", text=words, legend="last move")]
    kick = _square(str(move.get("kick") or ""), a)
    if kick is not None:
        out.append(Shape("arrow", (points[-1], kick), "highlight", text=f"kicked to {move['kick']}",
                         legend="kicked kangaroo"))
    steps = str(move.get("notation", "")).split("x")[0].split("-")
    for step in steps:
        landing = _square(step.rstrip("^"), a) if step.endswith("^") else None
        if landing is not None:
            out.append(Shape("circle", (landing,), "highlight", text=f"jumped on {step[:-1]}", radius_mm=0.45 * a,
                             legend="jumped from here"))
    return out


def _caption(data: Mapping[str, Any]) -> list[str]:
    lines = []
    if data.get("winner"):
        lines.append(f"{data['winner']} wins with 3 alfalfa")
    elif data.get("board") is None:
        lines.append("no board seen yet")
    elif data.get("to_move"):
        lines.append(f"{data['to_move']} to move")
    else:
        lines.append("whose turn: not known until the first move")
    alfalfa = data.get("alfalfa")
    if alfalfa:
        lines.append("alfalfa: " + ", ".join(f"{c} {n}" for c, n in alfalfa.items()))
    move = data.get("last_move")
    if move:
        lines.append(f"last move: {move.get('coach') or '?'} {move.get('notation', '')}")
    if data.get("illegal_on_board"):
        lines.append("an illegal move is on the board: take it back")
    if data.get("pending"):
        lines.append(f"cannot tell: {data['pending']}")
    return lines
