"""Drawing what the referee sees over an image: piece outlines, the game's shapes, labels, a legend.

Everything in game-frame millimetres goes through the observation's one mapping
(``Observation.image_from_game``); the game says what to draw as Shape values
(referee/game.py) and each shape's role picks its style from one table, ROLE_STYLES.
This module knows no game: piece outlines come from the catalog's footprints.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from referee.catalog import default_catalog, footprint_polygon
from referee.observation import ImageFromGame, Observation, PiecePose
from webui.labels import Box, LabelPlacer, text_scale

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

    def project(self, points, z_mm: float = 0.0) -> np.ndarray:
        """(N, 2) pixels, NaN where a point cannot be drawn."""
        pts = [(float(x), float(y)) for x, y in points]
        out = np.array(self.mapping.project(pts, z_mm), dtype=float).reshape(-1, 2)
        hom = np.array(ImageFromGame(self.mapping.homography).project(pts), dtype=float).reshape(-1, 2)
        h = self.mapping.homography
        ws = np.array([h[6] * x + h[7] * y + h[8] for x, y in pts])
        near = ((hom[:, 0] > -self.w) & (hom[:, 0] < 2 * self.w) & (hom[:, 1] > -self.h) & (hom[:, 1] < 2 * self.h))
        ok = (ws * self._w0 > 0) & near & np.all(np.isfinite(out), axis=1)
        out[~ok] = np.nan
        return out

    def mm_to_px(self, at) -> float:
        """Pixels per mm near a game-frame point."""
        a, b = self.project([at, (at[0] + 10.0, at[1])])
        d = float(np.hypot(*(b - a))) / 10.0
        return d if math.isfinite(d) and d > 0 else 1.0


def _steps(points, closed: bool) -> list:
    pts = list(points) + ([points[0]] if closed and len(points) > 2 else [])
    out = [pts[0]] if pts else []
    for a, b in zip(pts, pts[1:]):
        n = max(1, int(math.hypot(b[0] - a[0], b[1] - a[1]) / STEP_MM))
        out += [(a[0] + (b[0] - a[0]) * i / n, a[1] + (b[1] - a[1]) * i / n) for i in range(1, n + 1)]
    return out


def _runs(px: np.ndarray) -> list[np.ndarray]:
    """Stretches of consecutive drawable points."""
    runs, cur = [], []
    for p in px:
        if np.all(np.isfinite(p)):
            cur.append(p)
        elif cur:
            runs.append(np.array(cur))
            cur = []
    if cur:
        runs.append(np.array(cur))
    return [r for r in runs if len(r) >= 2]


def _text(img, text: str, org, scale: float, colour, thick: int = 2) -> None:
    import cv2

    x, y = int(org[0]), int(org[1])
    cv2.putText(img, text, (x, y), cv2.FONT_HERSHEY_SIMPLEX, scale, BLACK, thick + 3, cv2.LINE_AA)
    cv2.putText(img, text, (x, y), cv2.FONT_HERSHEY_SIMPLEX, scale, colour, thick, cv2.LINE_AA)


def _line_runs(img, runs, style: Style, thick: int) -> None:
    import cv2

    for run in runs:
        pts = np.round(run).astype(np.int32)
        if style.dashed:
            for i in range(0, len(pts) - 1, 2):
                cv2.line(img, tuple(map(int, pts[i])), tuple(map(int, pts[i + 1])), style.colour, thick, cv2.LINE_AA)
        else:
            cv2.polylines(img, [pts.reshape(-1, 1, 2)], False, style.colour, thick, cv2.LINE_AA)


def draw_shapes(img: np.ndarray, shapes, view: PixelMap, line_px: int, font: float | None = None,
                placer: LabelPlacer | None = None) -> LabelPlacer:
    """Draw Shape values onto img in place: fills first (blended), then lines, then labels
    (placed clear of each other); returns the placer holding the label boxes."""
    draw_shape_lines(img, shapes, view, line_px)
    placer = placer or LabelPlacer(img, font)
    place_shape_labels(placer, shapes, view)
    return placer


def _fills(img: np.ndarray, shapes, view: PixelMap) -> None:
    import cv2

    fills = [s for s in shapes if s.kind == "polygon" and style_of(s.role).fill > 0]
    if fills:
        layer = img.copy()
        for s in fills:
            px = view.project(_steps(s.points, True), s.z_mm)
            if np.all(np.isfinite(px)) and len(px) >= 3:
                cv2.fillPoly(layer, [np.round(px).astype(np.int32)], style_of(s.role).colour)
        alpha = max(style_of(s.role).fill for s in fills)
        cv2.addWeighted(layer, alpha, img, 1 - alpha, 0, img)


def draw_shape_lines(img: np.ndarray, shapes, view: PixelMap, line_px: int) -> None:
    """Fills, lines, arrows and circles of the shapes (not their labels)."""
    import cv2

    _fills(img, shapes, view)
    for s in shapes:
        st = style_of(s.role)
        thick = max(1, int(round(line_px * st.width)))
        if s.kind in ("line", "polyline", "arrow") or (s.kind == "polygon" and st.width > 0):
            pts = _steps(s.points, s.kind == "polygon")
            if st.dashed:
                pts = _steps(s.points, False)
            _line_runs(img, _runs(view.project(pts, s.z_mm)), st, thick)
        if s.kind == "arrow" and len(s.points) >= 2:
            a, b = view.project([s.points[-2], s.points[-1]], s.z_mm)
            if np.all(np.isfinite([a, b])):
                cv2.arrowedLine(img, tuple(map(int, np.round(a))), tuple(map(int, np.round(b))), st.colour, thick,
                                cv2.LINE_AA, tipLength=0.3)
        elif s.kind == "circle" and s.points:
            c = view.project(s.points[:1], s.z_mm)[0]
            if np.all(np.isfinite(c)):
                r = max(3, int(round(s.radius_mm * view.mm_to_px(s.points[0]))))
                cv2.circle(img, tuple(map(int, np.round(c))), r, BLACK, thick + 2, cv2.LINE_AA)
                cv2.circle(img, tuple(map(int, np.round(c))), r, st.colour, thick, cv2.LINE_AA)


def place_shape_labels(placer: LabelPlacer, shapes, view: PixelMap) -> None:
    """The shapes' text labels, each near its point and clear of the others."""
    for s in shapes:
        if s.kind == "label" and s.points and s.text:
            c = view.project(s.points[:1], s.z_mm)[0]
            placer.place(short_names(s.text), c, style_of(s.role).colour)


def short_names(text: str) -> str:
    """Piece names without their game's prefix ("boat-2", not "tornado/boat-2"), in any text."""
    from referee.registry import game_ids

    ids = "|".join(re.escape(g) for g in sorted(game_ids(), key=len, reverse=True))
    return re.sub(rf"\b(?:{ids})/(?=[A-Za-z0-9])", "", str(text))


def piece_to_game(pose: PiecePose, pts) -> list[tuple[float, float]]:
    c, s = math.cos(math.radians(pose.theta_deg)), math.sin(math.radians(pose.theta_deg))
    return [(pose.x_mm + c * x - s * y, pose.y_mm + s * x + c * y) for x, y in pts]


def _outlines(img, view: PixelMap, pieces, hidden, scale: float) -> list[tuple[str, tuple, tuple]]:
    """Each catalog piece's footprint; the small ones (movers) last and thicker.
    Returns the movers' name labels to place: (text, anchor pixel, colour)."""
    cat = default_catalog()
    sized = []
    for p in pieces:
        if not cat.has_piece(p.name):
            continue
        spec = cat.piece(p.name)
        xs, ys = zip(*footprint_polygon(spec.footprint, 16))
        extent = max(max(xs) - min(xs), max(ys) - min(ys))
        if spec.family.startswith("table/") or min(max(xs) - min(xs), max(ys) - min(ys)) >= FURNITURE_MM:
            continue
        sized.append((extent <= SMALL_PIECE_MM, p, spec))
    labels = []
    for small, p, spec in sorted(sized, key=lambda e: e[0]):
        # one colour whatever the status: the page shows the status, once, from the server's status event
        colour = GREY if p.name in hidden else GREEN
        style = Style(colour, 1.5 if small else 1.0)
        outline = piece_to_game(p, footprint_polygon(spec.footprint, 16))
        _line_runs(img, _runs(view.project(_steps(outline, True))), style, max(2, int(round(2 * scale))))
        if small:
            c = view.project([(p.x_mm, p.y_mm)])[0]
            labels.append((short_names(p.name) + (" (hidden)" if p.name in hidden else ""), tuple(c), colour))
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
    each other, and a legend of the lines and colours. Without a mapping only the detected
    stickers are drawn. The status is not drawn (status is kept for callers): the page shows it,
    from the server's one status event, so the video cannot disagree with it."""
    import cv2

    out = image.copy()
    h, w = out.shape[:2]
    scale = max(0.7, w / 900.0)
    placer = LabelPlacer(out, text_scale(w, h))
    if mapping is not None:
        view = PixelMap(mapping, (w, h))
        draw_shape_lines(out, shapes, view, max(1, int(round(1.5 * scale))))
        names = _outlines(out, view, pieces, hidden, scale)
        colours = {c for _, _, c in names}
        entries = legend(shapes) + [(words, c) for c, words in PIECE_LEGEND.items() if c in colours]
        placer.legend(entries)
        for text, anchor, colour in names:  # the pieces' names first: they matter most
            placer.place(text, anchor, colour)
        place_shape_labels(placer, shapes, view)
    elif obs is not None:
        for d in obs.extra.get("detections") or []:
            try:
                q = np.asarray(d["corners"], dtype=np.float64).reshape(4, 2)
            except (KeyError, TypeError, ValueError):
                continue
            cv2.polylines(out, [np.round(q).astype(np.int32).reshape(-1, 1, 2)], True, AMBER, 2, cv2.LINE_AA)
    return OverlayPicture(out, placer.boxes, placer.left_out)


def draw_overlay(image: np.ndarray, obs: Observation | None, pieces: tuple[PiecePose, ...], hidden: tuple[str, ...],
                 status: str, mapping: ImageFromGame | None, shapes=()) -> np.ndarray:
    """render_overlay's picture alone."""
    return render_overlay(image, obs, pieces, hidden, status, mapping, shapes).image
