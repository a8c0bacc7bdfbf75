"""Drawing what the referee sees over an image: piece outlines, the game's shapes, labels, a legend.

Everything in game-frame millimetres goes through the observation's one mapping
(``Observation.image_from_game``); the game says what to draw as Shape values
(referee/game.py) and each shape's role picks its style from one table, ROLE_STYLES.
This module knows no game: piece outlines come from the catalog's footprints.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass

import numpy as np

from referee.catalog import default_catalog, footprint_polygon
from referee.observation import MAX_DISTORTED_R2, ImageFromGame, Observation, PiecePose
from webui.labels import Box, LabelPlacer, legend_strip, text_scale
from webui.layers import SEEN_ONCE, Layer, LayerCache, opaque, put_text

GREEN = (60, 200, 60)
AMBER = (0, 170, 255)
WHITE = (255, 255, 255)
BLACK = (0, 0, 0)
GREY = (150, 150, 150)
SMALL_PIECE_MM = 60.0  # pieces this small are movers: drawn last, thicker, and named
FURNITURE_MM = 300.0  # pieces this large (a board) are furniture: the game's shapes show them
STEP_MM = 20.0  # long lines are drawn in steps this long, so they follow the lens
DASH_MM = 25.0
PIECE_LEGEND = {GREEN: "piece", GREY: "piece hidden (where last seen)"}


@dataclass(frozen=True)
class Style:
    colour: tuple[int, int, int]  # BGR
    width: float = 1.0  # times the picture's line width
    fill: float = 0.0  # polygon fill opacity (0: outline only)
    dashed: bool = False


ROLE_STYLES: dict[str, Style] = {
    "zone-1": Style((255, 220, 170), 0, 0.25), "zone-2": Style((170, 230, 255), 0, 0.25),
    "zone-3": Style((200, 255, 200), 0, 0.25), "zone-4": Style((230, 200, 255), 0, 0.25),
    "zone-5": Style((200, 240, 240), 0, 0.25), "zone-6": Style((240, 210, 210), 0, 0.25),
    "boundary": Style((0, 140, 255), 1.5), "extension": Style((0, 140, 255), 0.5, dashed=True),
    "finish": Style(WHITE, 2.0), "grid": Style((230, 200, 40), 1.0),
    "player-1": Style((40, 40, 230), 1.5), "player-2": Style((230, 120, 30), 1.5),
    "player-3": Style((40, 180, 40), 1.5), "player-4": Style((200, 40, 200), 1.5),
    "player-5": Style((30, 200, 230), 1.5), "player-6": Style((130, 80, 20), 1.5),
    "legal": Style(GREEN, 2.0), "illegal": Style((40, 40, 230), 2.0), "uncertain": Style((0, 215, 255), 1.0),
    "path": Style((230, 200, 40), 1.5), "highlight": Style(WHITE, 1.0), "piece": Style(GREEN, 1.0),
    "info": Style(WHITE, 1.0),
}


def style_of(role: str) -> Style:
    return ROLE_STYLES.get(role, ROLE_STYLES["info"])


def legend(shapes) -> list[tuple[str, tuple[int, int, int]]]:
    """(words, colour) for each role the shapes declare a legend for, in first-seen order."""
    seen: dict[str, tuple[int, int, int]] = {}
    for s in shapes:
        if s.legend and s.legend not in seen:
            seen[s.legend] = style_of(s.role).colour
    return list(seen.items())


class PixelMap:
    """Game-frame mm -> pixels through an ImageFromGame, keeping only points that make
    sense in a picture of this size (in front of the camera, near the frame)."""

    def __init__(self, mapping: ImageFromGame, size: tuple[int, int], unit: float = 1.0):
        self.mapping, self.w, self.h, self.unit = mapping, size[0], size[1], unit
        h = mapping.homography
        self._w0 = h[8] if abs(h[8]) > 1e-12 else 1.0
        self.cache_key = (mapping, size[0], size[1], unit)  # what its projections depend on

    def project(self, points, z_mm: float = 0.0) -> np.ndarray:
        """(N, 2) pixels, NaN where a point cannot be drawn."""
        pts = np.asarray(points, dtype=float).reshape(-1, 2)
        h = np.asarray(self.mapping.homography, dtype=float)
        ws = h[6] * pts[:, 0] + h[7] * pts[:, 1] + h[8]
        safe = np.where(np.abs(ws) > 1e-12, ws, 1e-12)
        hom = np.stack([(h[0] * pts[:, 0] + h[1] * pts[:, 1] + h[2]) / safe,
                        (h[3] * pts[:, 0] + h[4] * pts[:, 1] + h[5]) / safe], axis=1)
        out = hom.copy() if self.mapping.camera is None else project_camera(self.mapping.camera, pts, z_mm)
        near = ((hom[:, 0] > -self.w) & (hom[:, 0] < 2 * self.w) & (hom[:, 1] > -self.h) & (hom[:, 1] < 2 * self.h))
        ok = (ws * self._w0 > 0) & near & np.all(np.isfinite(out), axis=1)
        out[~ok] = np.nan
        return out

    def mm_to_px(self, at) -> float:
        """Pixels per mm near a game-frame point."""
        a, b = self.project([at, (at[0] + 10.0, at[1])])
        d = float(np.hypot(*(b - a))) / 10.0
        return d if math.isfinite(d) and d > 0 else 1.0


def project_camera(cam: tuple[float, ...], pts: np.ndarray, z: float) -> np.ndarray:
    """referee.observation's camera projection (pinhole + radial-tangential, the pinhole point
    past where the lens polynomial folds back) for (N, 2) points at once: the overlay projects
    a few thousand points a frame."""
    K, R, t, (k1, k2, p1, p2, k3) = cam[0:9], cam[9:18], cam[18:21], cam[21:26]
    x, y = pts[:, 0], pts[:, 1]
    X = R[0] * x + R[1] * y + R[2] * z + t[0]
    Y = R[3] * x + R[4] * y + R[5] * z + t[1]
    Z = R[6] * x + R[7] * y + R[8] * z + t[2]
    Z = np.where(np.abs(Z) > 1e-9, Z, 1e-9)
    a, b = X / Z, Y / Z
    r2 = a * a + b * b
    folded = (r2 > MAX_DISTORTED_R2) | (1 + 3 * k1 * r2 + 5 * k2 * r2 * r2 + 7 * k3 * r2 ** 3 <= 0)
    radial = 1 + k1 * r2 + k2 * r2 * r2 + k3 * r2 ** 3
    ad = np.where(folded, a, a * radial + 2 * p1 * a * b + p2 * (r2 + 2 * a * a))
    bd = np.where(folded, b, b * radial + p1 * (r2 + 2 * b * b) + 2 * p2 * a * b)
    return np.stack([K[0] * ad + K[1] * bd + K[2], K[4] * bd + K[5]], axis=1)


def _steps(points, closed: bool) -> np.ndarray:
    """(N, 2) points along the path, each segment cut into pieces at most STEP_MM long (the
    corners kept), so the projected line follows the lens."""
    pts = np.asarray(points, dtype=float).reshape(-1, 2)
    if closed and len(pts) > 2:
        pts = np.concatenate([pts, pts[:1]])
    if len(pts) < 2:
        return pts
    a, d = pts[:-1], pts[1:] - pts[:-1]
    n = np.maximum(1, (np.hypot(d[:, 0], d[:, 1]) / STEP_MM).astype(np.int64))
    seg = np.repeat(np.arange(len(n)), n)
    i = (np.arange(len(seg)) - np.repeat(np.cumsum(n) - n, n) + 1)[:, None]
    return np.concatenate([pts[:1], a[seg] + d[seg] * i / n[seg][:, None]])


def _runs(px: np.ndarray) -> list[np.ndarray]:
    """Stretches of consecutive drawable points (two or more)."""
    ok = np.all(np.isfinite(px), axis=1)
    if ok.all():
        return [px] if len(px) >= 2 else []
    edges = np.flatnonzero(np.diff(np.concatenate([[0], ok.astype(np.int8), [0]])))
    return [px[i:j] for i, j in zip(edges[::2], edges[1::2]) if j - i >= 2]


def project_all(view, requests) -> list[np.ndarray]:
    """view.project of many (points, z_mm) requests with one call per height: the overlay
    projects a few thousand points a frame, in a few hundred pieces."""
    return project_grouped(view, grouped_by_height(requests))


def grouped_by_height(requests) -> tuple[int, list]:
    """(points, z_mm) requests gathered for project_grouped: their count, and per height the points
    of all its requests in one array, which requests they are and where each ends."""
    requests = [(np.asarray(p, dtype=float).reshape(-1, 2), z) for p, z in requests]
    groups = []
    for z in {z for _, z in requests}:
        idx = [i for i, (_, zi) in enumerate(requests) if zi == z]
        cuts = np.cumsum([len(requests[i][0]) for i in idx])[:-1]
        groups.append((z, np.concatenate([requests[i][0] for i in idx]), idx, cuts))
    return len(requests), groups


def project_grouped(view, grouped: tuple[int, list]) -> list[np.ndarray]:
    """Each request's pixels (view.project works point by point: the same pixels as one call each)."""
    count, groups = grouped
    out: list = [None] * count
    for z, points, idx, cuts in groups:
        for i, part in zip(idx, np.split(view.project(points, z), cuts)):
            out[i] = part
    return out


def _text(img, text: str, org, scale: float, colour, thick: int = 2) -> None:
    import cv2

    x, y = int(org[0]), int(org[1])
    put_text(img, text, (x, y), scale, BLACK, thick + 3)
    put_text(img, text, (x, y), scale, colour, thick)


def _line_runs(img, runs, style: Style, thick: int) -> None:
    import cv2

    colour = opaque(img, style.colour)
    for run in runs:
        pts = np.round(run).astype(np.int32)
        if style.dashed:
            for i in range(0, len(pts) - 1, 2):
                cv2.line(img, tuple(map(int, pts[i])), tuple(map(int, pts[i + 1])), colour, thick, cv2.LINE_AA)
        else:
            cv2.polylines(img, [pts.reshape(-1, 1, 2)], False, colour, thick, cv2.LINE_AA)


def draw_shapes(img: np.ndarray, shapes, view: PixelMap, line_px: int, font: float | None = None,
                placer: LabelPlacer | None = None) -> LabelPlacer:
    """Draw Shape values onto img in place: fills first (blended), then lines, then labels
    (placed clear of each other); returns the placer holding the label boxes."""
    draw_shape_lines(img, shapes, view, line_px)
    placer = placer or LabelPlacer(img, font)
    place_shape_labels(placer, shapes, view)
    return placer


@dataclass
class ShapePixels:
    """Every shape's points projected once (index-aligned with the shapes; None: nothing of that
    kind): its line path, its fill outline, its arrow head (2 points), its centre or label anchor
    (1 point) and the pixels per mm at a circle's centre."""

    lines: list
    fills: list
    heads: list
    anchors: list
    px_per_mm: list


_PIXEL_CACHE: dict = {}
_PIXEL_CACHE_SIZE = 4  # a few views (the live page, a settle picture) reuse their projections


def shape_pixels(shapes, view) -> ShapePixels:
    """The shapes' projected geometry: one view.project per height for all of it, kept while
    the shapes and the view's mapping and size stay the same (a board at rest)."""
    key = getattr(view, "cache_key", None)
    if key is not None:
        try:
            key = (key, tuple(shapes))
            hit = _PIXEL_CACHE.get(key)
        except TypeError:  # a shape with a list inside: not hashable, not cached
            key, hit = None, None
        if hit is not None:
            return hit
    where, grouped = _shape_points(shapes)
    out = ShapePixels(*([None] * len(shapes) for _ in range(5)))
    for (i, kind), px in zip(where, project_grouped(view, grouped)):
        getattr(out, kind)[i] = px
    for i, px in enumerate(out.px_per_mm):
        if px is not None:
            d = float(np.hypot(*(px[1] - px[0]))) / 10.0
            out.px_per_mm[i] = d if math.isfinite(d) and d > 0 else 1.0
    if key is not None:
        while len(_PIXEL_CACHE) >= _PIXEL_CACHE_SIZE:
            _PIXEL_CACHE.pop(next(iter(_PIXEL_CACHE)))
        _PIXEL_CACHE[key] = out
    return out


_POINTS_CACHE: dict = {}


def _shape_points(shapes) -> tuple[list, tuple]:
    """The game-frame points shape_pixels projects, (shape index, kind) of each, grouped by height:
    they depend on the shapes alone, so they are kept while the shapes stay the same and only the
    mapping moves (the table's pose, a little each frame)."""
    try:
        key = tuple(shapes)
        hit = _POINTS_CACHE.get(key)
    except TypeError:  # a shape with a list inside: not hashable, not cached
        key, hit = None, None
    if hit is not None:
        return hit
    requests, where = [], []
    for i, s in enumerate(shapes):
        st = style_of(s.role)
        if s.kind in ("line", "polyline", "arrow") or (s.kind == "polygon" and st.width > 0):
            where.append((i, "lines"))
            requests.append((_steps(s.points, s.kind == "polygon" and not st.dashed), s.z_mm))
        if s.kind == "polygon" and st.fill > 0:
            where.append((i, "fills"))
            requests.append((_steps(s.points, True), s.z_mm))
        if s.kind == "arrow" and len(s.points) >= 2:
            where.append((i, "heads"))
            requests.append((s.points[-2:], s.z_mm))
        if s.kind in ("circle", "label") and s.points:
            where.append((i, "anchors"))
            requests.append((s.points[:1], s.z_mm))
        if s.kind == "circle" and s.points:
            where.append((i, "px_per_mm"))
            at = s.points[0]
            requests.append(([at, (at[0] + 10.0, at[1])], 0.0))
    out = where, grouped_by_height(requests)
    if key is not None:
        while len(_POINTS_CACHE) >= _PIXEL_CACHE_SIZE:
            _POINTS_CACHE.pop(next(iter(_POINTS_CACHE)))
        _POINTS_CACHE[key] = out
    return out


def _fills(img: np.ndarray, shapes, pixels: ShapePixels) -> None:
    import cv2

    fills = [(s, px) for s, px in zip(shapes, pixels.fills) if px is not None]
    polygons = [(np.round(px).astype(np.int32), style_of(s.role).colour) for s, px in fills
                if np.all(np.isfinite(px)) and len(px) >= 3]
    if not polygons:
        return
    # blend only the polygons' bounding box: outside them the layer is the picture itself, and
    # a x + (1 - a) x rounds back to x, so the pixels are those of blending the whole picture
    h, w = img.shape[:2]
    corners = np.concatenate([pts for pts, _ in polygons])
    x0, y0 = np.clip(corners.min(axis=0), 0, [w, h])
    x1, y1 = np.clip(corners.max(axis=0) + 1, 0, [w, h])
    if x1 <= x0 or y1 <= y0:
        return
    box = img[y0:y1, x0:x1]
    layer = box.copy()
    for pts, colour in polygons:
        cv2.fillPoly(layer, [pts], opaque(layer, colour), offset=(-int(x0), -int(y0)))
    alpha = max(style_of(s.role).fill for s, _ in fills)
    cv2.addWeighted(layer, alpha, box, 1 - alpha, 0, box)


def draw_shape_lines(img: np.ndarray, shapes, view: PixelMap, line_px: int) -> None:
    """Fills, lines, arrows and circles of the shapes (not their labels)."""
    import cv2

    pixels = shape_pixels(shapes, view)
    _fills(img, shapes, pixels)
    for i, s in enumerate(shapes):
        st = style_of(s.role)
        thick = max(1, int(round(line_px * st.width)))
        if pixels.lines[i] is not None:
            _line_runs(img, _runs(pixels.lines[i]), st, thick)
        if pixels.heads[i] is not None:
            a, b = pixels.heads[i]
            if np.all(np.isfinite([a, b])):
                cv2.arrowedLine(img, tuple(map(int, np.round(a))), tuple(map(int, np.round(b))), opaque(img, st.colour), thick,
                                cv2.LINE_AA, tipLength=0.3)
        elif s.kind == "circle" and pixels.anchors[i] is not None:
            c = pixels.anchors[i][0]
            if np.all(np.isfinite(c)):
                r = max(3, int(round(s.radius_mm * pixels.px_per_mm[i])))
                cv2.circle(img, tuple(map(int, np.round(c))), r, opaque(img, BLACK), thick + 2, cv2.LINE_AA)
                cv2.circle(img, tuple(map(int, np.round(c))), r, opaque(img, st.colour), thick, cv2.LINE_AA)


def place_shape_labels(placer: LabelPlacer, shapes, view: PixelMap) -> None:
    """The shapes' text labels, each near its point and clear of the others."""
    anchors = shape_pixels(shapes, view).anchors  # a label's anchor: its first point
    for s, at in zip(shapes, anchors):
        if s.kind == "label" and s.points and s.text:
            placer.place(short_names(s.text), at[0], style_of(s.role).colour)


def short_names(text: str) -> str:
    """Piece names without their game's prefix ("boat-2", not "tornado/boat-2"), in any text."""
    return _game_prefix().sub("", str(text))


@functools.lru_cache(maxsize=1)
def _game_prefix() -> "re.Pattern":
    from referee.registry import game_ids

    ids = "|".join(re.escape(g) for g in sorted(game_ids(), key=len, reverse=True))
    return re.compile(rf"\b(?:{ids})/(?=[A-Za-z0-9])")


def piece_to_game(pose: PiecePose, pts) -> np.ndarray:
    """(N, 2) game-frame points of piece-frame points."""
    c, s = math.cos(math.radians(pose.theta_deg)), math.sin(math.radians(pose.theta_deg))
    p = np.asarray(pts, dtype=float).reshape(-1, 2)
    return np.stack([pose.x_mm + c * p[:, 0] - s * p[:, 1], pose.y_mm + s * p[:, 0] + c * p[:, 1]], axis=1)


@functools.lru_cache(maxsize=512)
def _outline_of(name: str) -> tuple[bool, np.ndarray] | None:
    """(a small piece, its footprint's outline in its own frame), None for furniture
    (table corners, boards: the game's shapes show them) and pieces not in the catalog."""
    cat = default_catalog()
    if not cat.has_piece(name):
        return None
    spec = cat.piece(name)
    poly = footprint_polygon(spec.footprint, 16)
    xs, ys = zip(*poly)
    if spec.family.startswith("table/") or min(max(xs) - min(xs), max(ys) - min(ys)) >= FURNITURE_MM:
        return None
    return max(max(xs) - min(xs), max(ys) - min(ys)) <= SMALL_PIECE_MM, np.array(poly, dtype=float)


def _stepped_outlines(sized) -> list[np.ndarray]:
    """Each piece's footprint outline in game mm, stepped as _steps does; the pieces of one
    catalog shape (a game's cards) transformed and stepped together."""
    out: list = [None] * len(sized)
    groups: dict[bytes, list[int]] = {}
    for i, (_, _, local) in enumerate(sized):
        groups.setdefault(local.tobytes(), []).append(i)
    for idx in groups.values():
        local = sized[idx[0]][2]
        if len(idx) == 1 or len(local) < 3:
            for i in idx:
                out[i] = _steps(piece_to_game(sized[i][1], local), True)
            continue
        turn = np.array([(math.cos(math.radians(sized[i][1].theta_deg)), math.sin(math.radians(sized[i][1].theta_deg)))
                         for i in idx])
        at = np.array([(sized[i][1].x_mm, sized[i][1].y_mm) for i in idx])
        c, s, lx, ly = turn[:, :1], turn[:, 1:], local[None, :, 0], local[None, :, 1]
        pts = np.stack([at[:, :1] + c * lx - s * ly, at[:, 1:] + s * lx + c * ly], axis=2)  # (P, m, 2)
        pts = np.concatenate([pts, pts[:, :1]], axis=1)
        d = pts[:, 1:] - pts[:, :-1]
        n = np.maximum(1, (np.hypot(d[..., 0], d[..., 1]) / STEP_MM).astype(np.int64))
        # a side a whole number of steps long rounds either way from piece to piece: one batch per
        # pattern of step counts
        patterns: dict[tuple, list[int]] = {}
        for r, row in enumerate(n.tolist()):
            patterns.setdefault(tuple(row), []).append(r)
        for pattern, rows in patterns.items():
            steps = np.array(pattern)
            seg = np.repeat(np.arange(len(steps)), steps)
            k = (np.arange(len(seg)) - np.repeat(np.cumsum(steps) - steps, steps) + 1)[None, :, None]
            part = np.concatenate([pts[rows, :1], pts[rows][:, :-1][:, seg] + d[rows][:, seg] * k / steps[seg][None, :, None]],
                                  axis=1)
            for j, r in enumerate(rows):
                out[idx[r]] = part[j]
    return out


_OUTLINE_CACHE: dict = {}


def _projected_outlines(view: PixelMap, sized) -> list[np.ndarray]:
    """The pieces' outlines in pixels, then the small ones' centres: kept while the view and every
    piece's place stay the same (a table at rest redraws the same outlines frame after frame)."""
    key = (view.cache_key, tuple((p.name, p.x_mm, p.y_mm, p.theta_deg) for _, p, _ in sized))
    hit = _OUTLINE_CACHE.get(key)
    if hit is not None:
        return hit
    requests = [(outline, 0.0) for outline in _stepped_outlines(sized)]
    requests += [([(p.x_mm, p.y_mm)], 0.0) for small, p, _ in sized if small]
    projected = project_all(view, requests)
    while len(_OUTLINE_CACHE) >= _PIXEL_CACHE_SIZE:
        _OUTLINE_CACHE.pop(next(iter(_OUTLINE_CACHE)))
    _OUTLINE_CACHE[key] = projected
    return projected


def _outlines(img, view: PixelMap, pieces, hidden, scale: float) -> list[tuple[str, tuple, tuple]]:
    """Each catalog piece's footprint; the small ones (movers) last and thicker.
    Returns the movers' name labels to place: (text, anchor pixel, colour)."""
    import cv2

    sized = [(o[0], p, o[1]) for p in pieces if (o := _outline_of(p.name)) is not None]
    sized.sort(key=lambda e: e[0])
    projected = _projected_outlines(view, sized)
    anchors = iter(projected[len(sized):])
    labels = []
    thick = max(2, int(round(2 * scale)))
    batch, batch_colour = [], None  # consecutive outlines of one colour: one polylines call
    for (small, p, _), px in zip(sized, projected):
        # one colour whatever the status: the page shows the status, once, from the server's status event
        colour = GREY if p.name in hidden else GREEN
        if colour != batch_colour and batch:
            cv2.polylines(img, batch, False, opaque(img, batch_colour), thick, cv2.LINE_AA)
            batch = []
        batch_colour = colour
        batch += [np.round(run).astype(np.int32).reshape(-1, 1, 2) for run in _runs(px)]
        if small:
            c = next(anchors)[0]
            labels.append((short_names(p.name) + (" (hidden)" if p.name in hidden else ""), tuple(c), colour))
    if batch:
        cv2.polylines(img, batch, False, opaque(img, batch_colour), thick, cv2.LINE_AA)
    return labels


@dataclass
class OverlayPicture:
    """The drawn picture and the boxes of its labels and legend (pixels), for tests and the page."""

    image: np.ndarray
    boxes: list[Box]
    left_out: list[str]


def render_overlay(image: np.ndarray, obs: Observation | None, pieces: tuple[PiecePose, ...],
                   hidden: tuple[str, ...], status: str, mapping: ImageFromGame | None, shapes=()) -> OverlayPicture:
    """A copy of image (H, W, 3) BGR with the game's shapes, piece outlines, names placed clear of
    each other, and a legend of the lines and colours in a strip under the picture (the picture
    returned is taller by that strip). Without a mapping only the detected
    stickers are drawn. The status is not drawn (status is kept for callers): the page shows it,
    from the server's one status event, so the video cannot disagree with it.

    What is drawn depends only on the view (the picture's size, the mapping, the pieces, the hidden
    ones, the shapes), not on the picture under it: a view drawn again (a table at rest, frame
    after frame) is put on the new picture as a layer (webui/layers.py), not drawn again."""
    import cv2

    h, w = image.shape[:2]
    if mapping is not None:
        key = _view_key(w, h, pieces, hidden, mapping, shapes)
        layer = _LAYERS.get(key) if key is not None else None
        if layer is SEEN_ONCE:  # the view again: worth a layer
            layer = ViewLayer.drawn(w, h, pieces, hidden, mapping, shapes)
            _LAYERS.put(key, layer)
        if layer is not None:
            return layer.on(image)
        if key is not None:
            _LAYERS.put(key, SEEN_ONCE)
        # the legend in a strip under the picture: beside the play area, not over it
        strip, legend_box = legend_strip(w, h, _legend_entries(pieces, hidden, shapes), text_scale(w, h))
        out = np.empty((h + (0 if strip is None else strip.shape[0]), w, 3), np.uint8)
        out[:h] = image
        if strip is not None:
            out[h:] = strip
        placer = _draw_view(out[:h], pieces, hidden, mapping, shapes)
        return OverlayPicture(out, placer.boxes + ([legend_box] if legend_box is not None else []), placer.left_out)
    out = image.copy()
    for d in (obs.extra.get("detections") or []) if obs is not None else []:
        try:
            q = np.asarray(d["corners"], dtype=np.float64).reshape(4, 2)
        except (KeyError, TypeError, ValueError):
            continue
        cv2.polylines(out, [np.round(q).astype(np.int32).reshape(-1, 1, 2)], True, AMBER, 2, cv2.LINE_AA)
    return OverlayPicture(out, [], [])


def _draw_view(out: np.ndarray, pieces, hidden, mapping: ImageFromGame, shapes) -> LabelPlacer:
    """The shapes, outlines and labels of a view drawn onto out in place; returns the placer (the
    label boxes)."""
    h, w = out.shape[:2]
    scale = max(0.7, w / 900.0)
    placer = LabelPlacer(out, text_scale(w, h))
    view = PixelMap(mapping, (w, h))
    draw_shape_lines(out, shapes, view, max(1, int(round(1.5 * scale))))
    for text, anchor, colour in _outlines(out, view, pieces, hidden, scale):  # the pieces' names first: they matter most
        placer.place(text, anchor, colour)
    place_shape_labels(placer, shapes, view)
    return placer


def _legend_entries(pieces, hidden, shapes) -> list[tuple[str, tuple[int, int, int]]]:
    """The legend: the shapes' entries, then the colours the named pieces (the small ones) show in."""
    colours = {GREY if p.name in hidden else GREEN for p in pieces if (o := _outline_of(p.name)) is not None and o[0]}
    return legend(shapes) + [(words, c) for c, words in PIECE_LEGEND.items() if c in colours]


def _view_key(w: int, h: int, pieces, hidden, mapping, shapes) -> tuple | None:
    """What a view's drawing depends on, hashable; None when a shape holds something unhashable."""
    key = (w, h, tuple(pieces), tuple(hidden), mapping, tuple(shapes))
    try:
        hash(key)
    except TypeError:
        return None
    return key


@dataclass
class ViewLayer:
    """A view's whole overlay as a layer (webui/layers.py), with its legend strip and label boxes."""

    layer: Layer
    strip: np.ndarray | None  # the legend's strip under the picture
    boxes: list[Box]
    left_out: list[str]

    @classmethod
    def drawn(cls, w: int, h: int, pieces, hidden, mapping: ImageFromGame, shapes) -> "ViewLayer":
        layer, placer = Layer.drawn(w, h, lambda canvas: _draw_view(canvas, pieces, hidden, mapping, shapes))
        strip, legend_box = legend_strip(w, h, _legend_entries(pieces, hidden, shapes), placer.scale)
        return cls(layer, strip, placer.boxes + ([legend_box] if legend_box is not None else []), list(placer.left_out))

    def on(self, image: np.ndarray) -> OverlayPicture:
        h, w = image.shape[:2]
        out = np.empty((h + (0 if self.strip is None else self.strip.shape[0]), w, 3), np.uint8)
        self.layer.onto(image, out[:h])
        if self.strip is not None:
            out[h:] = self.strip
        return OverlayPicture(out, list(self.boxes), list(self.left_out))


_LAYERS = LayerCache(layers=3)


def draw_overlay(image: np.ndarray, obs: Observation | None, pieces: tuple[PiecePose, ...], hidden: tuple[str, ...],
                 status: str, mapping: ImageFromGame | None, shapes=()) -> np.ndarray:
    """render_overlay's picture alone."""
    return render_overlay(image, obs, pieces, hidden, status, mapping, shapes).image
