"""How each component looks: bodies and printed details, drawn from catalog geometry.

Only appearance (colours, stroke widths) lives here; every size, position and
layout comes from referee.catalog (and the course files through the scene).
Each draw function paints one piece whose frame is given as a world transform.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from referee.catalog import Catalog, PieceSpec, footprint_polygon

from .canvas import Canvas

PAPER = (236, 238, 240)  # BGR of sticker paper
INK = (28, 28, 30)  # BGR of printed black
SKIN = (150, 178, 222)
STROKE_MM = 1.5


class PieceFrame:
    """The rigid transform piece frame -> world (mm, degrees CCW)."""

    def __init__(self, x_mm: float, y_mm: float, theta_deg: float):
        self.x, self.y = float(x_mm), float(y_mm)
        a = math.radians(theta_deg)
        self.c, self.s = math.cos(a), math.sin(a)

    def apply(self, pts) -> np.ndarray:
        """(N, 2) local mm -> (N, 2) world mm."""
        p = np.asarray(pts, dtype=np.float64).reshape(-1, 2)
        return np.column_stack([self.x + self.c * p[:, 0] - self.s * p[:, 1],
                                self.y + self.s * p[:, 0] + self.c * p[:, 1]])


def shade(colour, factor: float) -> tuple[int, int, int]:
    return tuple(int(max(0, min(255, round(c * factor)))) for c in colour)


def rect(cx: float, cy: float, w: float, h: float) -> list[tuple[float, float]]:
    return [(cx - w / 2, cy - h / 2), (cx + w / 2, cy - h / 2), (cx + w / 2, cy + h / 2), (cx - w / 2, cy + h / 2)]


def circle(cx: float, cy: float, r: float, segments: int = 40) -> list[tuple[float, float]]:
    return [(cx + r * math.cos(2 * math.pi * i / segments), cy + r * math.sin(2 * math.pi * i / segments))
            for i in range(segments)]


# --- stickers ----------------------------------------------------------------------------
@lru_cache(maxsize=512)
def marker_bitmap(marker_id: int, cell_px: int, paper=PAPER, ink=INK) -> np.ndarray:
    """The printed marker (black square with its code), (7*cell_px, 7*cell_px, 3) BGR."""
    import cv2

    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_5X5_1000)
    side = 7 * cell_px  # 5x5 code + one black border cell each side
    bits = cv2.aruco.generateImageMarker(dictionary, int(marker_id), side, borderBits=1)
    frac = bits.astype(np.float32)[:, :, None] / 255.0
    out = np.array(paper, np.float32) * frac + np.array(ink, np.float32) * (1 - frac)
    return np.ascontiguousarray(out.round().astype(np.uint8))


SPREAD_SUPERSAMPLE_CELL_PX = 48  # ink spread is drawn at this many px a cell, then area-averaged


@lru_cache(maxsize=512)
def spread_marker_bitmap(marker_id: int, cell_px: int, spread_cells: float, paper=PAPER,
                         ink=INK) -> np.ndarray:
    """The printed marker whose ink ran spread_cells of a cell past every black edge (< 0: thin
    ink, the paper eats into the black), with one cell of paper around it for the ink to run
    into: (9*cell_px, 9*cell_px, 3) BGR. The black outer square grows by 2 spread_cells, which
    is what a printer does to every sticker and what no catalog size says."""
    import cv2

    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_5X5_1000)
    k = SPREAD_SUPERSAMPLE_CELL_PX
    bits = cv2.aruco.generateImageMarker(dictionary, int(marker_id), 7 * k, borderBits=1)
    bits = cv2.copyMakeBorder(bits, k, k, k, k, cv2.BORDER_CONSTANT, value=255)
    black = (bits < 128).astype(np.uint8)
    to_black = cv2.distanceTransform(1 - black, cv2.DIST_L2, 5)  # white px: distance to ink
    to_white = cv2.distanceTransform(black, cv2.DIST_L2, 5)  # ink px: distance to paper
    signed = np.where(black > 0, -to_white + 0.5, to_black - 0.5)  # < 0 inside the ink
    coverage = np.clip(0.5 + spread_cells * k - signed, 0.0, 1.0).astype(np.float32)
    coverage = cv2.resize(coverage, (9 * cell_px, 9 * cell_px), interpolation=cv2.INTER_AREA)[:, :, None]
    out = np.array(ink, np.float32) * coverage + np.array(paper, np.float32) * (1 - coverage)
    return np.ascontiguousarray(out.round().astype(np.uint8))


def draw_sticker(canvas: Canvas, marker_id: int, corners_world_xy: np.ndarray, z_mm: float,
                 quiet_zone_fraction: float, owner: str, printed: dict | None = None) -> int:
    """A sticker: white quiet zone of s*q on every side, then the black marker warped
    exactly onto its corners (TL, TR, BR, BL, world mm). printed (the scene's effects "print"):
    paper and ink colours (RGB) and the ink's spread (mm) past the design's edges. Returns the
    paint order of the marker (its occlusion reference)."""
    printed = printed or {}
    paper = _bgr(printed.get("paper"), PAPER)
    ink = _bgr(printed.get("ink"), INK)
    corners = np.asarray(corners_world_xy, dtype=np.float64)
    centre = corners.mean(axis=0)
    quiet = centre + (corners - centre) * (1 + 2 * quiet_zone_fraction)
    canvas.fill(quiet, z_mm, paper, owner=owner)
    # size the bitmap to about 1.5x the painted size so the warp never loses a cell
    px, _ = canvas.to_canvas(np.column_stack([corners, np.full(4, z_mm)]))
    span = max(np.linalg.norm(px[1] - px[0]), np.linalg.norm(px[2] - px[1]), 7.0)
    cell = int(min(64, max(4, math.ceil(1.5 * span / 7))))
    spread_mm = float(printed.get("ink_spread_mm", 0.0))
    side_mm = float(np.linalg.norm(corners[1] - corners[0]))
    order = canvas.next_order()
    if spread_mm:
        bitmap = spread_marker_bitmap(int(marker_id), cell, round(spread_mm / (side_mm / 7), 4), paper, ink)
        lo, hi = cell - 0.5, 8 * cell - 0.5  # the design's corners inside the paper margin
        src = np.array([[lo, lo], [hi, lo], [hi, hi], [lo, hi]])
    else:
        bitmap = marker_bitmap(int(marker_id), cell, paper, ink)
        n = bitmap.shape[0]
        src = np.array([[-0.5, -0.5], [n - 0.5, -0.5], [n - 0.5, n - 0.5], [-0.5, n - 0.5]])
        canvas.warp(bitmap, src, corners, z_mm, owner=owner, order=order)
        return order
    # the warp maps the design's corners; the paper margin around them lands on the quiet zone
    H = _square_map(src, corners)
    margin = np.array([[-0.5, -0.5], [9 * cell - 0.5, -0.5], [9 * cell - 0.5, 9 * cell - 0.5], [-0.5, 9 * cell - 0.5]])
    canvas.warp(bitmap, margin, _apply_h(H, margin), z_mm, owner=owner, order=order)
    return order


def _bgr(rgb, default) -> tuple:
    return default if rgb is None else (int(rgb[2]), int(rgb[1]), int(rgb[0]))


def _square_map(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    import cv2

    return cv2.getPerspectiveTransform(np.asarray(src, np.float32), np.asarray(dst, np.float32)).astype(np.float64)


def _apply_h(H: np.ndarray, pts: np.ndarray) -> np.ndarray:
    q = np.column_stack([pts, np.ones(len(pts))]) @ H.T
    return q[:, :2] / q[:, 2:3]


# --- table -------------------------------------------------------------------------------
def table_texture(size_mm, colour, seed: int, mm_per_px: float = 2.0, contrast: float = 1.0) -> np.ndarray:
    """A wood-like table top, (h, w, 3) BGR, one pixel = mm_per_px; contrast scales its grain."""
    import cv2

    w = max(8, int(round(size_mm[0] / mm_per_px)))
    h = max(8, int(round(size_mm[1] / mm_per_px)))
    rng = np.random.default_rng(seed)
    blotch = cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), 18)
    blotch /= max(1e-6, float(np.abs(blotch).max()))
    grain = cv2.GaussianBlur(rng.normal(0, 1, (h, 1)).astype(np.float32), (0, 0), 1.5)
    grain = np.repeat(grain / max(1e-6, float(np.abs(grain).max())), w, axis=1)
    fine = cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), 0.8)
    factor = 1 + contrast * (0.08 * blotch + 0.06 * grain + 0.03 * fine)
    tex = np.array(colour, np.float32)[None, None, :] * factor[:, :, None]
    return np.clip(tex, 0, 255).astype(np.uint8)


def draw_table(canvas: Canvas, table: dict) -> None:
    w, h = table["size_mm"]
    frame = PieceFrame(*table["centre_mm"], table["theta_deg"])
    tex = table_texture(table["size_mm"], table["colour"], table["texture_seed"],
                        contrast=table.get("texture_contrast", 1.0))
    th, tw = tex.shape[:2]
    src = np.array([[-0.5, th - 0.5], [tw - 0.5, th - 0.5], [tw - 0.5, -0.5], [-0.5, -0.5]])
    world = frame.apply([(-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2)])
    canvas.warp(tex, src, world, 0.0, owner="table")


def draw_boards(canvas: Canvas, boards: list[dict]) -> None:
    """Printed targets of other systems lying flat on the table (ChArUco, AprilTag, chessboard):
    nothing on them is a refcam sticker (synth/boards.py draws them)."""
    from .boards import board_image

    for b in boards:
        frame = PieceFrame(b["x_mm"], b["y_mm"], b["theta_deg"])
        z = b.get("z_mm", 0.2)
        # drawn at about 1.5 bitmap px per canvas px, so the warp never skips a cell
        ends, _ = canvas.to_canvas(np.column_stack([frame.apply([(-b["width_mm"] / 2, 0), (b["width_mm"] / 2, 0)]),
                                                    np.full(2, z)]))
        image = board_image(b["kind"], b["seed"], int(np.clip(1.5 * np.linalg.norm(ends[1] - ends[0]), 64, 4096)))
        h, w = image.shape[:2]
        hw, hh = b["width_mm"] / 2, b["width_mm"] * h / w / 2
        world = frame.apply([(-hw, hh), (hw, hh), (hw, -hh), (-hw, -hh)])
        src = np.array([[-0.5, -0.5], [w - 0.5, -0.5], [w - 0.5, h - 0.5], [-0.5, h - 0.5]])
        canvas.warp(image, src, world, z, owner="board")


# --- component bodies --------------------------------------------------------------------
PAWN_COLOURS = [(40, 40, 200), (30, 200, 230), (60, 170, 40), (160, 60, 150)]
BOAT_COLOURS = [(40, 40, 210), (200, 120, 30), (40, 170, 60), (30, 200, 230), (170, 60, 160), (40, 120, 240)]
DECK_COLOURS = [(60, 60, 190), (170, 110, 40), (60, 150, 60), (40, 170, 210), (150, 70, 140), (120, 120, 120)]
TOKEN_COLOURS = {1: (90, 200, 235), 2: (60, 140, 225), 3: (50, 90, 160)}
WATER = (190, 140, 70)
ROCK = (110, 115, 120)


def _index(name: str) -> int:
    digits = "".join(ch if ch.isdigit() else " " for ch in name).split()
    return int(digits[-1]) if digits else 0


def draw_body(canvas: Canvas, catalog: Catalog, spec: PieceSpec, frame: PieceFrame, face: str | None,
              z_top: float, owner: str) -> None:
    """The piece's body and printed details (not its stickers)."""
    fam = spec.family
    if fam == "table/corner":
        return  # just a sticker on the table
    drawer = _DRAWERS.get(fam, _draw_generic)
    drawer(canvas, catalog, spec, frame, face, z_top, owner)


def _body_polygon(spec: PieceSpec, frame: PieceFrame, segments: int = 48) -> np.ndarray:
    return frame.apply(spec.footprint_polygon(segments))


def _draw_generic(canvas, catalog, spec, frame, face, z_top, owner, colour=(200, 200, 200)):
    poly = _body_polygon(spec, frame)
    if spec.flat and spec.thickness_mm < 1.5:
        canvas.fill(poly, z_top, colour, owner)
    else:
        canvas.prism(poly, z_top - spec.thickness_mm, z_top, shade(colour, 0.6), colour, owner)


def _draw_kang_board(canvas, catalog, spec, frame, face, z_top, owner):
    grid = catalog.game("kang")["grid"]
    a = float(grid["square_mm"])
    nf, nr = int(grid["files"]), int(grid["rows"])
    canvas.prism(_body_polygon(spec, frame), z_top - spec.thickness_mm, z_top, (70, 120, 150), (150, 200, 225), owner)
    half_x, half_y = nf * a / 2, nr * a / 2
    w_body, h_body = spec.footprint["size_mm"]
    # coach bands beyond the two start-zone edges: A (south, red), B (north, blue)
    canvas.fill(frame.apply(rect(0, -(half_y + h_body / 2) / 2, w_body, h_body / 2 - half_y)), z_top, (120, 120, 215), owner)
    canvas.fill(frame.apply(rect(0, (half_y + h_body / 2) / 2, w_body, h_body / 2 - half_y)), z_top, (215, 150, 110), owner)
    for f in range(nf):
        for r in range(nr):
            col = (175, 215, 235) if (f + r) % 2 else (140, 190, 215)
            canvas.fill(frame.apply(rect((f - nf / 2 + 0.5) * a, (r - nr / 2 + 0.5) * a, a, a)), z_top, col, owner)
    for f in range(nf + 1):  # lines between files
        x = (f - nf / 2) * a
        canvas.fill(frame.apply(rect(x, 0, STROKE_MM, nr * a + STROKE_MM)), z_top, (50, 60, 70), owner)
    for r in range(1, nr):
        y = (r - nr / 2) * a
        canvas.fill(frame.apply(rect(0, y, nf * a + STROKE_MM, STROKE_MM)), z_top, (50, 60, 70), owner)
    # the start-zone edges, thicker, in each coach's colour
    canvas.fill(frame.apply(rect(0, -half_y, nf * a + 3 * STROKE_MM, 3 * STROKE_MM)), z_top, (40, 40, 190), owner)
    canvas.fill(frame.apply(rect(0, half_y, nf * a + 3 * STROKE_MM, 3 * STROKE_MM)), z_top, (190, 90, 40), owner)


def _draw_kangaroo(canvas, catalog, spec, frame, face, z_top, owner):
    colour = TOKEN_COLOURS.get(int(spec.attrs.get("size", 1)), (120, 160, 200))
    if face == "back":
        colour = shade(colour, 0.8)
    poly = _body_polygon(spec, frame)
    canvas.prism(poly, z_top - spec.thickness_mm, z_top, shade(colour, 0.55), colour, owner)
    r = spec.footprint["diameter_mm"] / 2
    # size pips around the rim: one per size step
    for k in range(int(spec.attrs.get("size", 1))):
        ang = math.radians(90 + 40 * (k - (int(spec.attrs.get("size", 1)) - 1) / 2))
        canvas.fill(frame.apply(circle(0.8 * r * math.cos(ang), 0.8 * r * math.sin(ang), 1.6, 12)), z_top, (40, 40, 60), owner)


def _draw_alfalfa(canvas, catalog, spec, frame, face, z_top, owner):
    _draw_generic(canvas, catalog, spec, frame, face, z_top, owner, colour=(70, 170, 110))


def kayak_space_centre(catalog: Catalog, row: int, lane: int) -> tuple[float, float]:
    """Centre of a tile space in the tile frame: rows run along +x (downstream), lanes
    along +y (lane 0 at the right bank, -y)."""
    t = catalog.game("kayak")["tile"]
    a = float(t["space_mm"])
    return ((row - t["rows"] / 2 + 0.5) * a, (lane - t["lanes"] / 2 + 0.5) * a)


def _draw_kayak_tile(canvas, catalog, spec, frame, face, z_top, owner):
    t = catalog.game("kayak")["tile"]
    a = float(t["space_mm"])
    layout = spec.attrs["layout"][face or "A"]
    canvas.prism(_body_polygon(spec, frame), z_top - spec.thickness_mm, z_top, (110, 90, 60), WATER, owner)
    rows, lanes = int(t["rows"]), int(t["lanes"])
    for r in range(rows):
        for lane in range(lanes):
            cx, cy = kayak_space_centre(catalog, r, lane)
            ch = layout[r][lane]
            if ch == "S":
                canvas.fill(frame.apply(rect(cx, cy, a - 4, a - 4)), z_top, (90, 180, 90), owner)
            elif ch == "F":
                canvas.fill(frame.apply(rect(cx, cy, a - 4, a - 4)), z_top, (240, 240, 240), owner)
                canvas.fill(frame.apply(rect(cx, cy, a - 4, (a - 4) / 3)), z_top, (50, 50, 200), owner)
            elif ch == "D" and (r == 0 or layout[r - 1][lane] != "D"):
                # a double space: one rapid two rows long
                canvas.fill(frame.apply(rect(cx + a / 2, cy, 2 * a - 4, a - 4)), z_top, (215, 190, 140), owner)
                for k in range(3):
                    x = cx - a / 2 + (k + 0.5) * (2 * a / 3)
                    canvas.polyline(frame.apply([(x - 5, cy - 12), (x + 5, cy), (x - 5, cy + 12)]), z_top, 2.0,
                                    (250, 250, 250), owner)
            elif ch == "R":
                rock = [(cx + 14 * math.cos(2 * math.pi * i / 9) * (0.8 + 0.2 * ((i * 7 + r + lane) % 3) / 2),
                         cy + 14 * math.sin(2 * math.pi * i / 9) * (0.8 + 0.2 * ((i * 5 + lane) % 3) / 2))
                        for i in range(9)]
                canvas.fill(frame.apply(rock), z_top, ROCK, owner)
    for lane in range(1, lanes):  # lane separators
        y = (lane - lanes / 2) * a
        canvas.fill(frame.apply(rect(0, y, rows * a, 1.0)), z_top, (215, 175, 120), owner)


def _draw_pawn(canvas, catalog, spec, frame, face, z_top, owner):
    colour = PAWN_COLOURS[(_index(spec.name) - 1) % len(PAWN_COLOURS)]
    canvas.prism(_body_polygon(spec, frame), z_top - spec.thickness_mm, z_top, shade(colour, 0.55), colour, owner)


def _draw_card(canvas, catalog, spec, frame, face, z_top, owner, colour=(225, 225, 225), band=(80, 80, 80)):
    w, h = spec.footprint["size_mm"]
    canvas.fill(_body_polygon(spec, frame), z_top, colour, owner)
    canvas.fill(frame.apply(rect(-w / 2 + 6, 0, 8, h - 8)), z_top, band, owner)


def _draw_action_card(canvas, catalog, spec, frame, face, z_top, owner):
    _draw_card(canvas, catalog, spec, frame, face, z_top, owner, (225, 235, 240), (150, 110, 50))


def _draw_character(canvas, catalog, spec, frame, face, z_top, owner):
    colour = BOAT_COLOURS[(_index(spec.name) - 1) % len(BOAT_COLOURS)]
    if face == "face-down":
        _draw_card(canvas, catalog, spec, frame, face, z_top, owner, (120, 90, 60), (200, 200, 200))
    else:
        _draw_card(canvas, catalog, spec, frame, face, z_top, owner, (225, 235, 240), colour)


def _draw_boat(canvas, catalog, spec, frame, face, z_top, owner):
    colour = BOAT_COLOURS[(_index(spec.name) - 1) % len(BOAT_COLOURS)]
    canvas.prism(_body_polygon(spec, frame), z_top - spec.thickness_mm, z_top, shade(colour, 0.5), colour, owner)


def _draw_curve_marker(canvas, catalog, spec, frame, face, z_top, owner):
    poly = _body_polygon(spec, frame)
    canvas.prism(poly, z_top - spec.thickness_mm, z_top, (90, 40, 20), (150, 70, 30), owner)


def curve_card_opens_left(spec: PieceSpec, face: str | None) -> bool:
    """Whether the wedge opens toward the card's +y: a top card on its left-turn face
    does, and turning the card over mirrors it (catalog description)."""
    top = spec.attrs.get("type", "top") == "top"
    return top == (face != "right-turn")


def _draw_curve_card(canvas, catalog, spec, frame, face, z_top, owner):
    poly = np.array(footprint_polygon(spec.footprint, 48))
    sign = 1.0 if curve_card_opens_left(spec, face) else -1.0
    poly[:, 1] *= sign
    colour = (205, 175, 120) if face != "right-turn" else (150, 200, 220)
    canvas.fill(frame.apply(poly), z_top, colour, owner)
    r = spec.footprint["radius_mm"]
    # the boundary line printed along +x from the apex
    canvas.fill(frame.apply([(0, 0), (r, 0), (r, sign * 5), (0, sign * 5)]), z_top, (245, 245, 245), owner)


def _draw_gate(canvas, catalog, spec, frame, face, z_top, owner):
    w, h = spec.footprint["size_mm"]
    finish = "finish" in spec.name
    canvas.prism(_body_polygon(spec, frame), 0.0, z_top, (40, 40, 40), (50, 50, 50) if finish else (40, 160, 200), owner)
    if finish:  # checkered borders either side of the line
        n = 16
        for k in range(n):
            y = -h / 2 + (k + 0.5) * h / n
            for side in (-1, 1):
                if (k + (side > 0)) % 2:
                    canvas.fill(frame.apply(rect(side * w / 3, y, w / 3, h / n)), z_top, (230, 230, 230), owner)
    # the white line joining the two end stickers (the gate's line)
    canvas.fill(frame.apply(rect(0, 0, 4, h)), z_top, (250, 250, 250), owner)


def _draw_course_tool(canvas, catalog, spec, frame, face, z_top, owner):
    w, h = spec.footprint["size_mm"]
    canvas.prism(_body_polygon(spec, frame), 0.0, z_top, (80, 80, 80), (170, 160, 150), owner)
    for k in range(int(w // 50) + 1):
        x = -w / 2 + 50 * k
        canvas.fill(frame.apply(rect(x, h / 2 - 6, 1.2, 12)), z_top, (60, 60, 60), owner)


def _draw_racing_card(canvas, catalog, spec, frame, face, z_top, owner):
    from shapely.geometry import LineString, Polygon

    L, W = spec.footprint["size_mm"]
    deck = int(spec.attrs.get("deck", 1))
    colour = DECK_COLOURS[(deck - 1) % len(DECK_COLOURS)]
    body = _body_polygon(spec, frame)
    canvas.fill(body, z_top, colour, owner)
    kind = catalog.racing_card_kind(spec.attrs["kind"])
    for sp in kind["spaces"]:
        cx, bx = float(sp["centre_x"]), float(sp["bracket_x"])
        half = bx - cx
        canvas.fill(frame.apply(rect(cx, 0, 2 * half - 2, W - 14)), z_top, shade(colour, 1.25), owner)
        # white bracket at the front of the space: a bar across and two short arms back
        canvas.fill(frame.apply(rect(bx - 1, 0, 2, W - 12)), z_top, (250, 250, 250), owner)
        for side in (-1, 1):
            canvas.fill(frame.apply(rect(bx - 5, side * (W / 2 - 7), 8, 2)), z_top, (250, 250, 250), owner)
    card = Polygon(rect(0, 0, L, W))
    for dg in kind.get("diagonals", []):
        ang = math.radians(90 + float(dg["angle_deg"]))
        x = float(dg["x"])
        line = LineString([(x - 200 * math.cos(ang), -200 * math.sin(ang)), (x + 200 * math.cos(ang), 200 * math.sin(ang))])
        seg = line.intersection(card)
        if not seg.is_empty:
            canvas.polyline(frame.apply(list(seg.coords)), z_top, 2.0, (240, 240, 240), owner)


_DRAWERS = {
    "kang/board": _draw_kang_board,
    "kang/kangaroo": _draw_kangaroo,
    "kang/alfalfa": _draw_alfalfa,
    "kayak/tile": _draw_kayak_tile,
    "kayak/pawn": _draw_pawn,
    "kayak/action-card": _draw_action_card,
    "tornado/boat": _draw_boat,
    "tornado/character": _draw_character,
    "tornado/curve-marker": _draw_curve_marker,
    "tornado/curve-card": _draw_curve_card,
    "tornado/gate": _draw_gate,
    "tornado/course-tool": _draw_course_tool,
    "tornado/racing-card": _draw_racing_card,
}


# --- occluders ---------------------------------------------------------------------------
def occluder_polygons(occ: dict) -> list[np.ndarray]:
    """World polygons (each (N, 2) mm) of one occluder at its height."""
    kind = occ["kind"]
    if kind == "polygon":
        return [np.asarray(occ["points_mm"], dtype=np.float64)]
    if kind == "ellipse":
        cx, cy = occ["centre_mm"]
        ax, ay = occ["axes_mm"]
        fr = PieceFrame(cx, cy, occ.get("theta_deg", 0.0))
        return [fr.apply([(ax / 2 * math.cos(2 * math.pi * i / 40), ay / 2 * math.sin(2 * math.pi * i / 40))
                          for i in range(40)])]
    # a hand: palm, four fingers and a thumb pointing along +x, the arm trailing back along -x
    k = float(occ.get("scale", 1.0))
    fr = PieceFrame(occ["x_mm"], occ["y_mm"], occ.get("theta_deg", 0.0))
    parts = []

    def ell(cx, cy, ax, ay, th=0.0):
        c, s = math.cos(math.radians(th)), math.sin(math.radians(th))
        pts = [(ax / 2 * math.cos(2 * math.pi * i / 28), ay / 2 * math.sin(2 * math.pi * i / 28)) for i in range(28)]
        return fr.apply([(k * (cx + c * x - s * y), k * (cy + s * x + c * y)) for x, y in pts])

    parts.append(ell(0, 0, 95, 85))
    for j, (dy, ln) in enumerate(((-27, 62), (-9, 75), (9, 72), (27, 58))):
        parts.append(ell(45 + ln / 2 - 6, dy * 1.05, ln, 19, -4 + 3 * j))
    parts.append(ell(10, 52, 55, 22, 50))
    arm = float(occ.get("arm_length_mm", 350.0))
    parts.append(fr.apply([(k * -20, k * -36), (k * -20 - arm, k * -42), (k * -20 - arm, k * 42), (k * -20, k * 36)]))
    return parts
