"""Finding refcam's ArUco stickers (DICT_5X5_1000) in an image, with sub-pixel corners.

Stickers are 16-40 mm seen from 0.6-1.2 m, so at 1080p a 16 mm boat sticker can be
under 20 px wide. Three things make those reliable and precise:

1. detector parameters tuned for small markers (low minimum perimeter, small
   adaptive-threshold windows, finer bit sampling);
2. a second pass over up-sampled crops around the candidates the first pass
   rejected (small or blurred squares whose bits could not be read at 1x);
3. corner refinement by fitting a straight line to each whole outer edge of the
   black square (black border against the white quiet zone) and intersecting
   adjacent edges. That uses every edge pixel instead of a corner window, so it
   stays precise on 15 px markers where a 5x5 corner window overlaps the bits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import cv2
import numpy as np

DICTIONARY = cv2.aruco.DICT_5X5_1000
REFINE_METHODS = {
    "none": cv2.aruco.CORNER_REFINE_NONE,
    "subpix": cv2.aruco.CORNER_REFINE_SUBPIX,
    "contour": cv2.aruco.CORNER_REFINE_CONTOUR,
    "apriltag": cv2.aruco.CORNER_REFINE_APRILTAG,
}
# Below this side length (px) a rejected candidate is re-examined in an up-sampled crop.
SECOND_PASS_MAX_SIDE_PX = 48.0
SECOND_PASS_SCALE = 3.0


@dataclass(frozen=True)
class Detection:
    """One marker found in the image.

    corners: (4, 2) float64 pixel coordinates TL, TR, BR, BL (OpenCV order);
    side_px: mean side length; sharpness: edge contrast per pixel of blur (higher = sharper),
    edge_rms_px: scatter of the edge points about the fitted lines (a blur/noise measure);
    source: which pass found it ("full" or "upsampled").
    """

    marker_id: int
    corners: np.ndarray
    side_px: float
    edge_rms_px: float = 0.0
    source: str = "full"
    known: bool = True
    extra: dict = field(default_factory=dict, hash=False, compare=False)

    @property
    def centre(self) -> np.ndarray:
        return self.corners.mean(axis=0)


@dataclass(frozen=True)
class DetectionResult:
    detections: tuple[Detection, ...]  # catalog ids only
    unknown_ids: tuple[int, ...]  # ids of the dictionary that the catalog does not list
    second_pass_found: int = 0


def detector_parameters(refine: str = "subpix", small_markers: bool = True, aruco3: bool = False
                        ) -> cv2.aruco.DetectorParameters:
    """The DetectorParameters refcam uses.

    refine: "subpix" (default), "contour", "apriltag" or "none" (OpenCV's own corner
    refinement; refcam's edge-line refinement runs after it in detect_markers).
    small_markers: accept and decode markers down to ~12 px a side.
    aruco3: OpenCV's ArUco3 fast mode (measured in the benchmark; off by default).
    """
    p = cv2.aruco.DetectorParameters()
    if small_markers:
        p.minMarkerPerimeterRate = 0.008  # ~15 px perimeter... at 1920 px: 4 * 4 px
        p.adaptiveThreshWinSizeMin = 3
        p.adaptiveThreshWinSizeMax = 33
        p.adaptiveThreshWinSizeStep = 6
        p.polygonalApproxAccuracyRate = 0.05
        p.minCornerDistanceRate = 0.05
        p.minMarkerDistanceRate = 0.05
        p.minDistanceToBorder = 2
        p.perspectiveRemovePixelPerCell = 8
        p.perspectiveRemoveIgnoredMarginPerCell = 0.2
        p.minSideLengthCanonicalImg = 16
    p.cornerRefinementMethod = REFINE_METHODS[refine]
    p.cornerRefinementWinSize = 3
    p.relativeCornerRefinmentWinSize = 0.3
    p.cornerRefinementMaxIterations = 50
    p.cornerRefinementMinAccuracy = 0.01
    if aruco3:
        p.useAruco3Detection = True
        p.minSideLengthCanonicalImg = 16
        p.minMarkerLengthRatioOriginalImg = 0.01
    return p


_DETECTORS: dict = {}


def _detector(params_key, params: cv2.aruco.DetectorParameters | None, dictionary: int):
    key = (params_key, dictionary)
    if params is not None:
        return cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(dictionary), params)
    if key not in _DETECTORS:
        _DETECTORS[key] = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(dictionary),
                                                  detector_parameters(*params_key))
    return _DETECTORS[key]


def to_gray(image: np.ndarray) -> np.ndarray:
    """(H, W) uint8 grey from (H, W) or (H, W, 3) BGR."""
    if image.ndim == 2:
        return image
    return cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)


def detect_markers(gray_or_bgr: np.ndarray, catalog=None, *, refine: str = "subpix", edge_refine: bool = True,
                   second_pass: bool = True, dictionary: int = DICTIONARY,
                   params: cv2.aruco.DetectorParameters | None = None) -> list[Detection]:
    """Markers of the catalog found in the image (all dictionary ids when catalog is None)."""
    return list(detect_all(gray_or_bgr, catalog, refine=refine, edge_refine=edge_refine,
                           second_pass=second_pass, dictionary=dictionary, params=params).detections)


def detect_all(gray_or_bgr: np.ndarray, catalog=None, *, refine: str = "subpix", edge_refine: bool = True,
               second_pass: bool = True, dictionary: int = DICTIONARY,
               params: cv2.aruco.DetectorParameters | None = None) -> DetectionResult:
    """Every marker in the image, split into catalog ids and unknown ids."""
    gray = to_gray(gray_or_bgr)
    det = _detector((refine, True, False), params, dictionary)
    corners, ids, rejected = det.detectMarkers(gray)
    found: list[tuple[int, np.ndarray, str]] = []
    if ids is not None:
        for c, i in zip(corners, ids.ravel()):
            found.append((int(i), c.reshape(4, 2).astype(np.float64), "full"))
    n_second = 0
    if second_pass and rejected is not None and len(rejected):
        extra = _second_pass(gray, rejected, found, det)
        n_second = len(extra)
        found.extend(extra)
    found = _dedupe(found)
    known_ids = catalog.known_ids() if catalog is not None else None
    gray_f = gray.astype(np.float32) if edge_refine and found else None
    detections, unknown = [], []
    for marker_id, c, source in found:
        if known_ids is not None and marker_id not in known_ids:
            unknown.append(marker_id)
            continue
        rms = 0.0
        if edge_refine:
            c, rms = refine_corners_by_edges(gray_f, c)
        side = float(np.mean(np.linalg.norm(c - np.roll(c, -1, axis=0), axis=1)))
        detections.append(Detection(marker_id=marker_id, corners=c, side_px=side, edge_rms_px=rms, source=source))
    detections.sort(key=lambda d: d.marker_id)
    return DetectionResult(tuple(detections), tuple(sorted(set(unknown))), n_second)


def _second_pass(gray: np.ndarray, rejected, found, det) -> list[tuple[int, np.ndarray, str]]:
    """Re-read small rejected candidates in crops up-sampled SECOND_PASS_SCALE times."""
    h, w = gray.shape
    centres_found = np.array([c.mean(axis=0) for _, c, _ in found]) if found else np.zeros((0, 2))
    out: list[tuple[int, np.ndarray, str]] = []
    done: list[np.ndarray] = []
    for r in rejected:
        q = r.reshape(4, 2).astype(np.float64)
        side = float(np.mean(np.linalg.norm(q - np.roll(q, -1, axis=0), axis=1)))
        if side > SECOND_PASS_MAX_SIDE_PX or side < 5:
            continue
        centre = q.mean(axis=0)
        if len(centres_found) and np.min(np.linalg.norm(centres_found - centre, axis=1)) < side:
            continue
        if any(np.linalg.norm(d - centre) < side * 0.5 for d in done):
            continue
        done.append(centre)
        margin = side * 1.2 + 4
        x0, y0 = int(max(0, np.floor(q[:, 0].min() - margin))), int(max(0, np.floor(q[:, 1].min() - margin)))
        x1, y1 = int(min(w, np.ceil(q[:, 0].max() + margin))), int(min(h, np.ceil(q[:, 1].max() + margin)))
        crop = gray[y0:y1, x0:x1]
        if crop.size == 0:
            continue
        big = cv2.resize(crop, None, fx=SECOND_PASS_SCALE, fy=SECOND_PASS_SCALE, interpolation=cv2.INTER_CUBIC)
        cs, ids, _ = det.detectMarkers(big)
        if ids is None:
            continue
        for c, i in zip(cs, ids.ravel()):
            c = c.reshape(4, 2).astype(np.float64)
            # pixel centres: x_big = (x + 0.5) * s - 0.5
            c = (c + 0.5) / SECOND_PASS_SCALE - 0.5 + np.array([x0, y0])
            if np.linalg.norm(c.mean(axis=0) - centre) < side:
                out.append((int(i), c, "upsampled"))
    return out


def _dedupe(found):
    """Drop a second detection of the same id at the same place (kept: the full-resolution one)."""
    out = []
    for marker_id, c, source in found:
        dup = False
        for m2, c2, _ in out:
            if m2 == marker_id and np.linalg.norm(c.mean(axis=0) - c2.mean(axis=0)) < 0.5 * np.linalg.norm(c[0] - c[2]):
                dup = True
                break
        if not dup:
            out.append((marker_id, c, source))
    return out


def refine_corners_by_edges(gray: np.ndarray, corners: np.ndarray) -> tuple[np.ndarray, float]:
    """Refine a marker's 4 corners by fitting lines to its 4 outer edges.

    gray: (H, W) uint8 or float32; corners: (4, 2) px TL, TR, BR, BL. Returns ((4, 2) refined
    corners, rms px of edge points about their lines). Falls back to the input corners
    when an edge cannot be measured (occluded, off-image).
    """
    c = np.asarray(corners, dtype=np.float64)
    gray_f = gray if gray.dtype == np.float32 else gray.astype(np.float32)
    side = float(np.mean(np.linalg.norm(c - np.roll(c, -1, axis=0), axis=1)))
    if side < 6:
        return c, 0.0
    cell = side / 7.0
    half_w = float(np.clip(0.75 * cell, 1.5, 6.0))  # stay inside the 1-cell black border
    n_along = int(np.clip(side * 1.5, 8, 120))
    n_across = int(np.ceil(half_w * 4)) * 2 + 1
    offsets = np.linspace(-half_w, half_w, n_across)
    centroid = c.mean(axis=0)
    lines = []
    residuals = []
    for k in range(4):
        a, b = c[k], c[(k + 1) % 4]
        d = b - a
        length = np.linalg.norm(d)
        if length < 1e-6:
            return c, 0.0
        d = d / length
        nrm = np.array([-d[1], d[0]])
        if np.dot(nrm, (a + b) / 2 - centroid) < 0:
            nrm = -nrm  # outward
        t = np.linspace(0.05, 0.95, n_along)
        base = a[None, :] + t[:, None] * (b - a)[None, :]
        pts = base[:, None, :] + offsets[None, :, None] * nrm[None, None, :]  # (n_along, n_across, 2)
        mapx = pts[..., 0].astype(np.float32)
        mapy = pts[..., 1].astype(np.float32)
        prof = cv2.remap(gray_f, mapx, mapy, interpolation=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        # the edge is where the profile crosses half-way between the border's black and the quiet
        # zone's white (robust to the neighbouring edges a gradient centroid would feel under blur)
        half = n_across // 2
        black = prof[:, :half].min(axis=1)
        white = prof[:, half + 1:].max(axis=1)
        level = (black + white) / 2.0
        below = prof[:, :-1] < level[:, None]
        above = prof[:, 1:] >= level[:, None]
        cross = below & above
        mid = (offsets[:-1] + offsets[1:]) / 2
        dist = np.where(cross, np.abs(mid)[None, :], np.inf)
        j = np.argmin(dist, axis=1)
        rows = np.arange(len(prof))
        ok = np.isfinite(dist[rows, j]) & ((white - black) > 15)
        if ok.sum() < max(4, n_along // 3):
            return c, 0.0
        p0, p1 = prof[rows, j], prof[rows, j + 1]
        frac = (level - p0) / np.maximum(p1 - p0, 1e-9)
        pos = (offsets[j] + frac * (offsets[1] - offsets[0]))
        # blur rounds the square's corners and pulls the crossing inward near them: keep the
        # edge points further than ~2.5 blur sigmas from either corner (sigma from the edge slope)
        slope = np.max(np.diff(prof, axis=1), axis=1) / (offsets[1] - offsets[0])
        blur = np.median((white - black)[ok] / np.maximum(slope[ok], 1e-6)) / math.sqrt(2 * math.pi)
        from_corner = np.minimum(t, 1 - t) * length
        keep_from = min(max(0.1 * length, 2.5 * blur + 0.5), 0.3 * length)
        ok &= from_corner >= keep_from
        if ok.sum() < 4:
            return c, 0.0
        pos = pos[ok]
        edge_pts = base[ok] + pos[:, None] * nrm[None, :]
        # total-least-squares line with one pass of outlier trimming
        line, res = _fit_line(edge_pts)
        keep = np.abs(res) < max(3 * np.median(np.abs(res)) * 1.4826, 0.3)
        if keep.sum() >= 4 and keep.sum() < len(res):
            line, res = _fit_line(edge_pts[keep])
        lines.append(line)
        residuals.append(res)
    out = np.empty((4, 2))
    for k in range(4):
        # corner k is the meeting point of edge k-1 (into it) and edge k (out of it)
        p = _intersect(lines[(k - 1) % 4], lines[k])
        if p is None or np.linalg.norm(p - c[k]) > max(2.0, 0.25 * side):
            return c, 0.0
        out[k] = p
    rms = float(np.sqrt(np.mean(np.concatenate(residuals) ** 2)))
    return out, rms


def _fit_line(pts: np.ndarray) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
    """Line through (N, 2) points: (point, unit normal) and signed residuals (N,)."""
    m = pts.mean(axis=0)
    _, _, vt = np.linalg.svd(pts - m, full_matrices=False)
    n = vt[1]
    return (m, n), (pts - m) @ n


def _intersect(l1, l2) -> np.ndarray | None:
    (p1, n1), (p2, n2) = l1, l2
    A = np.array([n1, n2])
    if abs(np.linalg.det(A)) < 1e-9:
        return None
    return np.linalg.solve(A, np.array([n1 @ p1, n2 @ p2]))
