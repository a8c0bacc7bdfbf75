"""Drawing what the referee sees over the live image.

Game-frame geometry (mm) is projected into the image through the plane homography
that maps the game frame's table plane to pixels. The vision pipeline may hand it over
(``Observation.frame["image_from_game"]`` or ``["homography"]``, a 3x3 list); if not, it
is fitted here from the detected stickers the pipeline reports
(``Observation.extra["detections"]``: {"id", "corners" (4x2 px)}) and the catalog's sticker
corners placed by each piece's pose. Without either, only the status is drawn.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from referee.catalog import default_catalog, footprint_polygon
from referee.observation import Observation, PiecePose

ToImage = Callable[[np.ndarray], np.ndarray]  # (N, 2) mm -> (N, 2) px

GREEN = (60, 200, 60)
AMBER = (0, 170, 255)
WHITE = (255, 255, 255)
BLACK = (0, 0, 0)
GREY = (150, 150, 150)
CYAN = (230, 200, 40)
MAGENTA = (200, 60, 220)


def piece_to_game(pose: PiecePose, pts: np.ndarray) -> np.ndarray:
    """(N, 2) points in the piece frame -> game frame, mm."""
    c, s = math.cos(math.radians(pose.theta_deg)), math.sin(math.radians(pose.theta_deg))
    R = np.array([[c, -s], [s, c]])
    return np.asarray(pts, dtype=np.float64) @ R.T + np.array([pose.x_mm, pose.y_mm])


def _as_h(m) -> np.ndarray | None:
    try:
        H = np.array(m, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return H if H.shape == (3, 3) and np.all(np.isfinite(H)) else None


def fit_image_from_game(obs: Observation) -> np.ndarray | None:
    """(3, 3) homography game mm -> image px, from the frame info or the detected stickers."""
    import cv2

    for key in ("image_from_game", "homography", "H_image_from_game"):
        H = _as_h(obs.frame.get(key)) if isinstance(obs.frame, dict) else None
        if H is None:
            H = _as_h(obs.extra.get(key))
        if H is not None:
            return H
    dets = obs.extra.get("detections") or obs.extra.get("markers")
    if not dets:
        return None
    cat = default_catalog()
    by_name = {p.name: p for p in obs.pieces}
    src, dst = [], []
    for d in dets:
        try:
            mid, corners = int(d["id"]), np.asarray(d["corners"], dtype=np.float64).reshape(4, 2)
        except (KeyError, TypeError, ValueError):
            continue
        spec = cat.sticker(mid)
        if spec is None or spec.piece not in by_name:
            continue
        src.extend(piece_to_game(by_name[spec.piece], np.array(spec.corners_local())))
        dst.extend(corners)
    if len(src) < 8:  # at least two stickers
        return None
    H, _ = cv2.findHomography(np.array(src), np.array(dst), cv2.RANSAC, 4.0)
    return _as_h(H)


def projector(H: np.ndarray) -> ToImage:
    def to_image(pts: np.ndarray) -> np.ndarray:
        p = np.asarray(pts, dtype=np.float64).reshape(-1, 2)
        q = np.c_[p, np.ones(len(p))] @ H.T
        return q[:, :2] / q[:, 2:3]
    return to_image


def _poly(img, to_image: ToImage, pts, color, thickness=2, closed=True) -> None:
    import cv2

    px = to_image(np.asarray(pts))
    if not np.all(np.isfinite(px)) or np.abs(px).max() > 1e5:
        return
    cv2.polylines(img, [np.round(px).astype(np.int32).reshape(-1, 1, 2)], closed, color, thickness, cv2.LINE_AA)


def _label(img, text: str, org, scale: float, color=WHITE) -> None:
    import cv2

    x, y = int(org[0]), int(org[1])
    th = max(1, int(round(scale * 2)))
    cv2.putText(img, text, (x, y), cv2.FONT_HERSHEY_SIMPLEX, scale, BLACK, th + 3, cv2.LINE_AA)
    cv2.putText(img, text, (x, y), cv2.FONT_HERSHEY_SIMPLEX, scale, color, th, cv2.LINE_AA)


def short_name(name: str) -> str:
    return name.split("/", 1)[-1]


def draw_tornado_course(img: np.ndarray, to_image: ToImage, course) -> None:
    """Tornado Splash zones (bands along the course path, named) and boundary lines.

    course: referee.tornado.course.Course as the referee built it from the last stable state.
    """
    import cv2

    tw = float(course.track_width)
    band = img.copy()
    h, w = img.shape[:2]
    scale = max(0.5, w / 1400.0)
    for z in course.zones:
        path = np.asarray(z.path, dtype=np.float64).reshape(-1, 2)
        if len(path) < 2:
            continue
        d = np.gradient(path, axis=0)
        n = np.c_[-d[:, 1], d[:, 0]] / np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-9)
        outline = np.vstack([path + n * tw / 2, (path - n * tw / 2)[::-1]])
        px = to_image(outline)
        if np.all(np.isfinite(px)) and np.abs(px).max() < 1e5:
            cv2.fillPoly(band, [np.round(px).astype(np.int32)], ZONE_COLOURS[z.index % len(ZONE_COLOURS)])
    cv2.addWeighted(band, 0.22, img, 0.78, 0, img)
    for z in course.zones:
        path = np.asarray(z.path, dtype=np.float64).reshape(-1, 2)
        if len(path):
            c = to_image(path[len(path) // 2][None])[0]
            if np.all(np.isfinite(c)) and np.abs(c).max() < 1e5:
                _label(img, z.name, c, 0.55 * scale, WHITE)
    for line in course.lines():
        # the boundary counts as extending without end; the drawn stretch spans the course
        o, a = np.asarray(line.origin, float), np.asarray(line.along, float)
        if line.kind == "ray":
            seg = [o, o + a * (tw + 200.0)]
        else:
            seg = [o - a * (tw / 2 + 150.0), o + a * (tw / 2 + 150.0)]
        color = WHITE if line is course.finish else MAGENTA
        _poly(img, to_image, seg, color, 4 if line is course.finish else 2, closed=False)


ZONE_COLOURS = [(255, 220, 170), (170, 230, 255), (200, 255, 200), (230, 200, 255), (200, 240, 240), (240, 210, 210)]


def draw_game_geometry(img: np.ndarray, to_image: ToImage, game: str, pieces: dict[str, PiecePose],
                       course=None) -> None:
    """Kang grid, Kayak river tiles, Tornado zones and boundary lines (gate and finish line)."""
    cat = default_catalog()
    if game == "kang":
        g = cat.game("kang")["grid"]
        a, nf, nr = float(g["square_mm"]), int(g["files"]), int(g["rows"])
        hx, hy = a * nf / 2, a * nr / 2
        for i in range(nf + 1):
            _poly(img, to_image, [(-hx + i * a, -hy), (-hx + i * a, hy)], CYAN, 2, closed=False)
        for j in range(nr + 1):
            _poly(img, to_image, [(-hx, -hy + j * a), (hx, -hy + j * a)], CYAN, 2, closed=False)
    elif game == "kayak":
        tile = cat.game("kayak")["tile"]
        s, lanes, rows = float(tile["space_mm"]), int(tile["lanes"]), int(tile["rows"])
        for name, p in pieces.items():
            if not name.startswith("kayak/tile-"):
                continue
            L, W = rows * s, lanes * s
            for k in range(1, lanes):  # lane lines along the river
                y = -W / 2 + k * s
                _poly(img, to_image, piece_to_game(p, np.array([(-L / 2, y), (L / 2, y)])), CYAN, 1, closed=False)
            _poly(img, to_image, piece_to_game(p, np.array([(-L / 2, -W / 2), (L / 2, -W / 2), (L / 2, W / 2),
                                                            (-L / 2, W / 2)])), CYAN, 3)
    elif game == "tornado" and course is not None:
        draw_tornado_course(img, to_image, course)
    elif game == "tornado":
        for name, p in pieces.items():
            if name.startswith("tornado/curve-card-"):
                # the card's boundary line runs from the apex along +x and counts as endless
                _poly(img, to_image, piece_to_game(p, np.array([(0.0, 0.0), (900.0, 0.0)])), MAGENTA, 2, closed=False)
            elif name in ("tornado/start-gate", "tornado/finish-line"):
                half = float(cat.piece(name).footprint["size_mm"][1]) / 2
                color = WHITE if name == "tornado/finish-line" else CYAN
                _poly(img, to_image, piece_to_game(p, np.array([(0.0, -half), (0.0, half)])), color, 4, closed=False)


def draw_overlay(image: np.ndarray, obs: Observation | None, pieces: tuple[PiecePose, ...], hidden: tuple[str, ...],
                 game: str, status: str, H: np.ndarray | None, course=None) -> np.ndarray:
    """A copy of image (H, W, 3) BGR with outlines, names, game geometry and the status."""
    import cv2

    out = image.copy()
    h, w = out.shape[:2]
    scale = max(0.7, w / 900.0)
    cat = default_catalog()
    if H is not None:
        to_image = projector(H)
        by_name = {p.name: p for p in pieces}
        draw_game_geometry(out, to_image, game, by_name, course)
        # boats and pawns last, so their names sit on top of the cards under them
        movers = ("tornado/boat", "kayak/pawn", "kang/kangaroo")
        for p in sorted(pieces, key=lambda p: cat.has_piece(p.name) and cat.piece(p.name).family in movers):
            if not cat.has_piece(p.name):
                continue
            spec = cat.piece(p.name)
            color = GREY if p.name in hidden else (GREEN if status == "stable" else AMBER)
            if spec.family in ("table/corner", "kang/board"):
                continue
            outline = piece_to_game(p, np.array(footprint_polygon(spec.footprint, 16)))
            _poly(out, to_image, outline, color, 3 if spec.family in movers else 2)
            if spec.family == "tornado/racing-card":
                continue  # outlines suffice: card names would bury the boats' names
            c = to_image(np.array([[p.x_mm, p.y_mm]]))[0]
            if np.all(np.isfinite(c)):
                _label(out, short_name(p.name) + (" (hidden)" if p.name in hidden else ""),
                       (c[0] + 8 * scale, c[1] - 8 * scale), 0.5 * scale, color)
    elif obs is not None:
        dets = obs.extra.get("detections") or []
        for d in dets:
            try:
                q = np.asarray(d["corners"], dtype=np.float64).reshape(4, 2)
            except (KeyError, TypeError, ValueError):
                continue
            cv2.polylines(out, [np.round(q).astype(np.int32).reshape(-1, 1, 2)], True, AMBER, 2, cv2.LINE_AA)
    badge = "STABLE" if status == "stable" else "IN PLAY..."
    _label(out, badge, (int(16 * scale), int(40 * scale)), 1.1 * scale, GREEN if status == "stable" else AMBER)
    return out
