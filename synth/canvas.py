"""The supersampled ideal-pinhole canvas the renderer paints on.

Everything drawn is planar at a known height z, so each shape reaches the image
through the exact plane-to-image homography of that plane: polygons are projected
vertex by vertex (a homography maps straight edges to straight edges), stickers and
textures are warped with cv2.warpPerspective. Painting happens at s times the output
resolution with the pixel-centre convention (output pixel i covers canvas pixels
s*i .. s*i+s-1), then the canvas is area-averaged down and bent by the lens model.

Every painted shape is also kept as a polygon in output-ideal pixels so the truth
can tell how much of each sticker stayed uncovered.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .camera import ideal_source_map, project_ideal

FILL_SHIFT = 4  # fixed-point bits for cv2.fillPoly vertices (1/16 canvas pixel)
MAX_CANVAS_PIXELS = 36_000_000  # caps the supersampling factor for 4K frames


@dataclass
class Painted:
    """One painted shape, kept for the occlusion bookkeeping."""

    order: int
    polygon_px: np.ndarray  # (N, 2) in output-ideal pixels
    owner: str  # e.g. "sticker:203" for a sticker's own layers


class Canvas:
    """Ideal pinhole canvas covering every ideal pixel the distorted output needs."""

    def __init__(self, K: np.ndarray, dist: np.ndarray, R: np.ndarray, t: np.ndarray,
                 size: tuple[int, int], supersample: int):
        import cv2  # noqa: F401  (fail early when OpenCV is missing)

        self.K = np.asarray(K, dtype=np.float64)
        self.dist = np.asarray(dist, dtype=np.float64)
        self.R, self.t = np.asarray(R, dtype=np.float64), np.asarray(t, dtype=np.float64)
        self.size = (int(size[0]), int(size[1]))
        self.map_x, self.map_y = ideal_source_map(self.K, self.dist, self.size)
        # ideal area the distorted frame shows, plus a margin for interpolation
        x0 = math.floor(float(self.map_x.min())) - 2
        y0 = math.floor(float(self.map_y.min())) - 2
        x1 = math.ceil(float(self.map_x.max())) + 3
        y1 = math.ceil(float(self.map_y.max())) + 3
        self.origin = (x0, y0)
        self.ideal_w, self.ideal_h = x1 - x0, y1 - y0
        s = max(1, int(supersample))
        while s > 1 and self.ideal_w * self.ideal_h * s * s > MAX_CANVAS_PIXELS:
            s -= 1
        self.s = s
        # canvas pixel (I, J) centre <-> output-ideal coordinate (I + 0.5) / s - 0.5 + origin
        Ks = self.K.copy()
        Ks[0, 0] *= s
        Ks[0, 1] *= s
        Ks[1, 1] *= s
        Ks[0, 2] = (self.K[0, 2] - x0 + 0.5) * s - 0.5
        Ks[1, 2] = (self.K[1, 2] - y0 + 0.5) * s - 0.5
        self.Ks = Ks
        self.image = np.zeros((self.ideal_h * s, self.ideal_w * s, 3), np.uint8)
        self.painted: list[Painted] = []
        self._order = 0

    # --- coordinates -------------------------------------------------------------------
    def to_canvas(self, points_world: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(N, 3) world mm -> (N, 2) canvas pixels and (N,) camera depths."""
        return project_ideal(np.asarray(points_world, dtype=np.float64), self.Ks, self.R, self.t)

    def canvas_to_ideal(self, pts: np.ndarray) -> np.ndarray:
        return (pts + 0.5) / self.s - 0.5 + np.array(self.origin, dtype=np.float64)

    def plane_homography(self, z_mm: float) -> np.ndarray:
        """(3, 3) map from world (x, y) on the plane z = z_mm to canvas pixels."""
        R, t = self.R, self.t
        H = self.Ks @ np.column_stack([R[:, 0], R[:, 1], R[:, 2] * z_mm + t])
        return H / H[2, 2]

    # --- painting ----------------------------------------------------------------------
    def next_order(self) -> int:
        self._order += 1
        return self._order

    def _record(self, canvas_pts: np.ndarray, owner: str, order: int | None) -> None:
        self.painted.append(Painted(order if order is not None else self.next_order(),
                                    self.canvas_to_ideal(canvas_pts), owner))

    def fill(self, polygon_xy, z_mm: float, colour, owner: str = "", order: int | None = None) -> None:
        """Fill a world polygon (N, 2) mm lying at height z_mm."""
        poly = np.asarray(polygon_xy, dtype=np.float64)
        if len(poly) < 3:
            return
        pts3 = np.column_stack([poly, np.full(len(poly), float(z_mm))])
        px, depth = self.to_canvas(pts3)
        if np.any(depth <= 1.0):
            return  # behind or at the camera: never the case for a table seen from above
        self._fill_canvas(px, colour)
        self._record(px, owner, order)

    def _fill_canvas(self, px: np.ndarray, colour) -> None:
        import cv2

        lim = 4.0 * max(self.image.shape)
        px = np.clip(px, -lim, lim)
        pts = np.round(px * (1 << FILL_SHIFT)).astype(np.int32).reshape(-1, 1, 2)
        cv2.fillPoly(self.image, [pts], tuple(int(c) for c in colour), lineType=cv2.LINE_AA, shift=FILL_SHIFT)

    def prism(self, footprint_xy, z_bottom: float, z_top: float, side_colour, top_colour,
              owner: str = "", order: int | None = None) -> None:
        """A solid with a convex footprint: visible side walls, then its top face."""
        import cv2

        poly = np.asarray(footprint_xy, dtype=np.float64)
        n = len(poly)
        bottom = np.column_stack([poly, np.full(n, float(z_bottom))])
        top = np.column_stack([poly, np.full(n, float(z_top))])
        px, depth = self.to_canvas(np.vstack([bottom, top]))
        if np.any(depth <= 1.0):
            return
        hull = cv2.convexHull(px.astype(np.float32)).reshape(-1, 2).astype(np.float64)
        self._fill_canvas(hull, side_colour)
        self._fill_canvas(px[n:], top_colour)
        self._record(hull, owner, order)

    def polyline(self, points_xy, z_mm: float, width_mm: float, colour, owner: str = "") -> None:
        """A painted stroke of width_mm along a world polyline, as quads per segment."""
        pts = np.asarray(points_xy, dtype=np.float64)
        for a, b in zip(pts[:-1], pts[1:]):
            d = b - a
            n = np.hypot(*d)
            if n < 1e-9:
                continue
            nrm = np.array([-d[1], d[0]]) / n * (width_mm / 2)
            self.fill([a + nrm, b + nrm, b - nrm, a - nrm], z_mm, colour, owner)

    def warp(self, src: np.ndarray, src_corners_px, world_corners_xy, z_mm: float,
             owner: str = "", order: int | None = None, interpolation: int | None = None) -> None:
        """Paint image src so that its corner points src_corners_px (4, 2) land on the
        world points world_corners_xy (4, 2) at height z_mm; pixels outside src stay."""
        import cv2

        world = np.column_stack([np.asarray(world_corners_xy, dtype=np.float64), np.full(4, float(z_mm))])
        dst, depth = self.to_canvas(world)
        if np.any(depth <= 1.0):
            return
        H = cv2.getPerspectiveTransform(np.asarray(src_corners_px, np.float32), dst.astype(np.float32))
        # paint only the bounding box of the target quad
        h_img, w_img = self.image.shape[:2]
        x0 = max(0, int(math.floor(dst[:, 0].min())) - 2)
        y0 = max(0, int(math.floor(dst[:, 1].min())) - 2)
        x1 = min(w_img, int(math.ceil(dst[:, 0].max())) + 3)
        y1 = min(h_img, int(math.ceil(dst[:, 1].max())) + 3)
        if x1 <= x0 or y1 <= y0:
            return
        T = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]], dtype=np.float64)
        roi = self.image[y0:y1, x0:x1].copy()
        cv2.warpPerspective(src, T @ H, (x1 - x0, y1 - y0), dst=roi,
                            flags=cv2.INTER_LINEAR if interpolation is None else interpolation,
                            borderMode=cv2.BORDER_TRANSPARENT)
        self.image[y0:y1, x0:x1] = roi
        self._record(dst, owner, order)

    # --- output ------------------------------------------------------------------------
    def finish(self) -> np.ndarray:
        """Area-average to output resolution and apply the lens: (h, w, 3) uint8."""
        import cv2

        ideal = self.image
        if self.s > 1:
            ideal = cv2.resize(ideal, (self.ideal_w, self.ideal_h), interpolation=cv2.INTER_AREA)
        mx = self.map_x - np.float32(self.origin[0])
        my = self.map_y - np.float32(self.origin[1])
        return cv2.remap(ideal, mx, my, interpolation=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
