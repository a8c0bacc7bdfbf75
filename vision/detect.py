"""Finding refcam's ArUco stickers (DICT_5X5_1000) in an image, with sub-pixel corners.

Stickers are 16-40 mm seen from 0.6-1.2 m, so at 1080p a 16 mm boat sticker can be
under 20 px wide. Three things make those reliable and precise:

1. detector parameters tuned for small markers (low minimum perimeter, small
   adaptive-threshold windows, finer bit sampling);
2. a second pass over the candidates the first pass rejected (small or blurred squares
   whose bits could not be read at 1x): each outline is tried as the black square at the
   scales a webcam's blur and tone curve leave it at, or the dark square inside it is found
   again, and read hard or against the drawings of the catalog's ids (of the game in play,
   when known) blurred as the sticker's own edges say. A soft read must lead every other id
   and every marker of another dictionary or grid drawn on the same square, and a small
   first-pass read that another grid's marker draws better is dropped (no phantom sticker
   on ChArUco boards or AprilTags);
3. corner refinement by fitting a straight line to each whole outer edge of the
   black square (black border against the white quiet zone) and intersecting
   adjacent edges. That uses every edge pixel instead of a corner window, so it
   stays precise on 15 px markers where a 5x5 corner window overlaps the bits.
   vision/edges.py fits all the stickers of a frame in one batch.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass, field
from typing import Callable

import cv2
import numpy as np

from . import edges, foreign
from .image_guard import check_square_shapes, remap

DICTIONARY = cv2.aruco.DICT_5X5_1000
REFINE_METHODS = {
    "none": cv2.aruco.CORNER_REFINE_NONE,
    "subpix": cv2.aruco.CORNER_REFINE_SUBPIX,
    "contour": cv2.aruco.CORNER_REFINE_CONTOUR,
    "apriltag": cv2.aruco.CORNER_REFINE_APRILTAG,
}
NEXT_CORNER = [1, 2, 3, 0]  # corner k's successor: quads[..., NEXT_CORNER, :] is np.roll(quads, -1, axis=-2)
# Below this side length (px) a rejected candidate is re-examined in an up-sampled crop.
SECOND_PASS_MAX_SIDE_PX = 64.0


@dataclass(frozen=True)
class Detection:
    """One marker found in the image.

    corners: (4, 2) float64 pixel coordinates TL, TR, BR, BL (OpenCV order);
    side_px: mean side length; sharpness: edge contrast per pixel of blur (higher = sharper),
    edge_rms_px: scatter of the edge points about the fitted lines (a blur/noise measure);
    source: which pass found it ("full" or "second-pass");
    blur_px: Gaussian-equivalent blur sigma measured across the edges (0: not measured).
    """

    marker_id: int
    corners: np.ndarray
    side_px: float
    edge_rms_px: float = 0.0
    source: str = "full"
    known: bool = True
    blur_px: float = 0.0
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
        # measured on rendered tables (tests/bench/accuracy.py): more threshold windows or a
        # lower perimeter limit cost time without finding more; the second pass does the rest
        p.minMarkerPerimeterRate = 0.02  # 1080p: markers from ~10 px a side
        p.adaptiveThreshWinSizeMin = 3
        p.adaptiveThreshWinSizeMax = 23
        p.adaptiveThreshWinSizeStep = 10
        p.polygonalApproxAccuracyRate = 0.04
        p.minCornerDistanceRate = 0.05
        p.minDistanceToBorder = 2
        p.perspectiveRemovePixelPerCell = 4
        p.perspectiveRemoveIgnoredMarginPerCell = 0.2
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
    """(H, W) uint8 grey from (H, W) or (H, W, 3) BGR.

    A frame's grey is asked for several times (detection, the motion mask, re-reads), each
    conversion ~1 ms at 1080p: the last colour frame's grey is kept and handed out again for the
    same array object, unchanged at a sparse grid of its pixels, read-only so that no caller can
    change it under another."""
    if image.ndim == 2:
        return image
    memo = _LAST_GRAY[0]
    if memo is not None and memo[0]() is image and memo[1] == _fingerprint(image):
        return memo[2]
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    gray.flags.writeable = False
    try:
        _LAST_GRAY[0] = (weakref.ref(image), _fingerprint(image), gray)
    except TypeError:  # an array type that takes no weak reference: not kept
        _LAST_GRAY[0] = None
    return gray


_LAST_GRAY: list = [None]  # (weak reference to the colour frame, its fingerprint, its grey)


def _fingerprint(image: np.ndarray) -> tuple:
    """Where the array's data lie and a sparse sample of them (a frame written to in place after
    its grey was taken gets a new grey)."""
    return (image.__array_interface__["data"][0], image.shape, image.strides, image[::37, ::41].tobytes())


def detect_markers(gray_or_bgr: np.ndarray, catalog=None, *, refine: str = "subpix", edge_refine: bool = True,
                   second_pass: bool = True, dictionary: int = DICTIONARY,
                   params: cv2.aruco.DetectorParameters | None = None) -> list[Detection]:
    """Markers of the catalog found in the image (all dictionary ids when catalog is None)."""
    return list(detect_all(gray_or_bgr, catalog, refine=refine, edge_refine=edge_refine,
                           second_pass=second_pass, dictionary=dictionary, params=params).detections)


def detect_all(gray_or_bgr: np.ndarray, catalog=None, *, refine: str = "subpix", edge_refine: bool = True,
               second_pass: bool = True, dictionary: int = DICTIONARY,
               params: cv2.aruco.DetectorParameters | None = None, game: str | None = None,
               guard: bool = True, reuse: Callable | None = None, second_pass_in: Callable | None = None
               ) -> DetectionResult:
    """Every marker in the image, split into catalog ids and unknown ids.

    guard: count the picture's square shapes first (image_guard.check_square_shapes, TooBusyError);
    False only for a picture known to have passed it unchanged (vision/roi.py, a stream's frames).
    reuse: reuse(ids, corners) -> a Detection or None for each first-pass read (ids (m,), raw corners
    (m, 4, 2)): an earlier measurement of that sticker whose pixels have not changed since
    (vision/stillness.py); it is given out again as it was, not measured again.
    second_pass_in: second_pass_in(ids the first pass read) -> boxes (x0, y0, x1, y1, ...) px or None: the
    second pass looks only at candidates centred in them (vision/roi.py: where a stream's picture
    changed, and where a sticker it gave out is not read now); None: everywhere.

    game: the game in play, when known; the second pass then reads blurred candidates only as
    the catalog's ids of that game's pieces (fewer codes to tell apart: fewer misreads and
    clearer leads). Markers read by the first pass are reported whatever their game."""
    gray = to_gray(gray_or_bgr)
    if guard:
        check_square_shapes(gray)  # the detector's time grows with the square of their number
    det = _detector((refine, True, False), params, dictionary)
    corners, ids, rejected = det.detectMarkers(gray)
    # the candidates the detector could not read, (m, 4, 2) px, in one conversion
    rejected = np.array(rejected, dtype=np.float64).reshape(-1, 4, 2) if rejected is not None and len(rejected) \
        else np.zeros((0, 4, 2))
    # id, corners, source, edge rms (-1: not refined), blur px
    found: list[tuple[int, np.ndarray, str, float, float]] = []
    if ids is not None:
        for c, i in zip(corners, ids.ravel()):
            found.append((int(i), c.reshape(4, 2).astype(np.float64), "full", -1.0, 0.0))
    n_second = 0
    gray_f = _FloatGrey(gray)  # made the first time a fit or a read samples it
    edge_blurs: dict[int, tuple] = {}  # id of a refined entry's corners -> (them, blur across each edge)
    reused: set[int] = set()  # ids of the corners of the entries reused as they were measured before
    if reuse is not None and edge_refine and found:
        found = _reused(found, reuse, edge_blurs, reused)
    if second_pass and len(rejected):
        allowed = second_pass_ids(catalog, game)
        if edge_refine:  # refined now: their blur tells the second pass how blurred the picture is
            found = _refine_found(gray_f, found, [k for k, f in enumerate(found) if f[3] < 0], edge_blurs)
        blurs = [f[4] for f in found if f[3] > 0 and f[4] > 0]
        image_blur = float(np.median(blurs)) if blurs else 0.0
        where = second_pass_in({f[0] for f in found}) if second_pass_in is not None else None
        candidates = _centred_in(rejected, where)
        extra = _second_pass(gray, gray_f() if len(candidates) else None, candidates, found, dictionary, allowed,
                             image_blur)
        n_second = len(extra)
        found.extend(extra)
    found = _dedupe(found)
    known_ids = catalog.known_ids() if catalog is not None else None
    if known_ids is not None:
        unknown = [f[0] for f in found if f[0] not in known_ids]
        found = _outside_foreign_grids(gray, [f for f in found if f[0] in known_ids],
                                       [f for f in found if f[0] not in known_ids], rejected)
    else:
        unknown = []
    if edge_refine:
        found = _refine_found(gray_f, found, [k for k, f in enumerate(found) if f[3] < 0], edge_blurs)
        # a small first-pass read can be a marker of another grid that ArUco's error correction
        # took for a refcam code (second-pass reads already had to lead those)
        dropped = _other_grid_reads(gray_f, found, dictionary, skip=reused)
        found = [f for k, f in enumerate(found) if k not in dropped]
    per_edge = _edge_blurs(gray_f, found, edge_blurs) if edge_refine else {}
    detections = []
    for k, (marker_id, c, source, rms, blur) in enumerate(found):
        if rms < 0:  # not refined (edge_refine off)
            rms, blur = 0.0, 0.0
        side = side_px(c)
        extra = {"edge_blur_px": per_edge[k]} if k in per_edge else {}
        detections.append(Detection(marker_id=marker_id, corners=c, side_px=side, edge_rms_px=rms, source=source,
                                    blur_px=blur, extra=extra))
    detections.sort(key=lambda d: d.marker_id)
    return DetectionResult(tuple(detections), tuple(sorted(set(unknown))), n_second)


class _FloatGrey:
    """The grey picture as float32, made the first time it is asked for (~0.4 ms at 1080p): a frame
    whose stickers are all handed on unmeasured never asks."""

    def __init__(self, gray: np.ndarray):
        self.gray, self._f = gray, None

    def __call__(self) -> np.ndarray:
        if self._f is None:
            self._f = self.gray.astype(np.float32)
        return self._f


def _centred_in(quads: np.ndarray, boxes: list | None) -> np.ndarray:
    """The (m, 4, 2) quads whose centres lie in one of the boxes (x0, y0, x1, y1, ...); all when boxes is None."""
    if boxes is None or not len(quads):
        return quads
    centres = quads.mean(axis=1)
    inside = np.zeros(len(quads), bool)
    for x0, y0, x1, y1, *_ in boxes:
        inside |= (centres[:, 0] >= x0) & (centres[:, 0] < x1) & (centres[:, 1] >= y0) & (centres[:, 1] < y1)
    return quads[inside]


def _reused(found: list, reuse: Callable, edge_blurs: dict, reused: set) -> list:
    """found with the first-pass reads that reuse() hands an earlier Detection for replaced by it (its
    corners, edge scatter and blur, and its blur across each edge in edge_blurs)."""
    earlier = reuse(np.array([f[0] for f in found]), np.array([f[1] for f in found]))
    out = list(found)
    for k, d in enumerate(earlier):
        if d is not None and d.marker_id == found[k][0] and d.source == found[k][2]:
            c = d.corners
            out[k] = (d.marker_id, c, found[k][2], d.edge_rms_px, d.blur_px)
            edge_blurs[id(c)] = (c, np.asarray(d.extra.get("edge_blur_px", (0.0,) * 4), dtype=np.float64))
            reused.add(id(c))
    return out


def _outside_foreign_grids(gray: np.ndarray, found: list, unknown: list, rejected: np.ndarray) -> list:
    """found without the entries that sit in a grid of other systems' markers (vision/foreign.py):
    their neighbours are the candidates nobody read and the ids the catalog does not list."""
    if not found:
        return found
    unread = np.concatenate([rejected, np.array([f[1] for f in unknown], dtype=np.float64).reshape(-1, 4, 2)])
    if not len(unread):
        return found
    detected = np.array([f[1] for f in found])
    unread = unread[foreign.may_neighbour(detected, unread)]  # the levels of the others are never looked at
    if not len(unread):
        return found
    levels = _ring_levels(gray, np.concatenate([detected, unread]))  # one batch: the same values, row by row
    drop = foreign.in_foreign_grid(detected, unread, levels[:len(detected)], levels[len(detected):])
    return [f for f, d in zip(found, drop) if not d]


def _ring_levels(gray: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """(m, 2) median grey of each quad's border ring (middle of a 7-cell marker's border cells) and
    of the ring just outside it (its quiet zone); NaN outside the image. gray: uint8; only the part
    the rings cover is made float (the samples are those of the whole picture made float)."""
    # sampled at float32 points as _sample takes them; shifting those by whole pixels is exact
    pts = np.concatenate([_ring_points(quads, 13.0 / 14.0), _ring_points(quads, 8.0 / 7.0)], axis=1).astype(np.float32)
    h, w = gray.shape
    lo = np.clip(np.floor(pts.reshape(-1, 2).min(axis=0)).astype(int) - 2, 0, (w - 1, h - 1))
    hi = np.clip(np.ceil(pts.reshape(-1, 2).max(axis=0)).astype(int) + 3, 1, (w, h))
    part = gray[lo[1]:hi[1], lo[0]:hi[0]].astype(np.float32)
    both = _sample(part, pts - lo.astype(np.float32))
    inside = (pts[..., 0] >= 0) & (pts[..., 1] >= 0) & (pts[..., 0] <= w - 1) & (pts[..., 1] <= h - 1)
    both = np.where(inside, both, np.nan)  # outside the picture, not the part
    dark, light = np.split(both, 2, axis=1)  # one remap for both rings: the same samples
    return np.stack([edges.masked_median(dark, ~np.isnan(dark)), edges.masked_median(light, ~np.isnan(light))], axis=1)


def side_px(corners: np.ndarray) -> float:
    """A quad's mean side length (px)."""
    d = corners[NEXT_CORNER] - corners  # np.roll(corners, -1, axis=0) - corners, without its overhead
    return float(np.mean(np.sqrt((d * d).sum(axis=1))))


def second_pass_ids(catalog, game: str | None = None) -> tuple[int, ...] | None:
    """The ids a second-pass read may give: the catalog's (those of the game's pieces when game is
    given and has pieces in it), or None (any dictionary id) without a catalog."""
    if catalog is None:
        return None
    if game is not None:
        ids = {st.marker_id for piece in catalog.pieces(game) for st in piece.stickers}
        if ids:
            return tuple(sorted(ids))
    return tuple(sorted(catalog.known_ids()))


def _edge_blurs(gray_f: "_FloatGrey", found: list, measured: dict) -> dict[int, tuple[float, ...]]:
    """{index in found: blur sigma px across each of its four edges} for the stickers whose edges
    were measured: motion blur spreads only the edges across its path, which the sticker's one
    blur figure (a median over all four) understates (the sigma model in vision/pipeline.py).
    measured: {id of corners: (corners, per-edge blurs)} of the entries _refine_found refined, measured in the
    round that gave their corners (as vision/roi.py's follow pass does); the others' edges (a
    second-pass read's) are measured here, in one batch."""
    which = [k for k, f in enumerate(found) if f[3] > 0]
    per_edge = {k: got[1] for k in which if (got := measured.get(id(found[k][1]))) and got[0] is found[k][1]}
    todo = [k for k in which if k not in per_edge]
    if todo:
        fresh = edges.refine_edges(gray_f(), np.array([found[k][1] for k in todo]), per_edge=True)[3]
        per_edge.update((k, fresh[n]) for n, k in enumerate(todo))
    return {k: tuple(float(b) for b in blurs) for k, blurs in per_edge.items() if blurs.min() > 0}


def _refine_found(gray_f: "_FloatGrey", found: list, which, per_edge: dict) -> list:
    """found with the entries `which` refined on their edges, all in one batch (edges.py); an
    entry whose edges cannot be measured keeps its corners with rms 0. per_edge gets, by the id of
    each refined entry's corners, the blur across each of its edges."""
    which = list(which)
    if not which:
        return found
    corners, rms, blur, blur_edges = edges.refine_corners(gray_f(), np.array([found[k][1] for k in which]),
                                                          per_edge=True)
    out = list(found)
    for n, k in enumerate(which):
        marker_id, _, source, _, _ = found[k]
        c = corners[n].copy()  # an object of its own: per_edge is keyed by it
        per_edge[id(c)] = (c, blur_edges[n])  # the array itself kept: an id is only unique while it lives
        out[k] = (marker_id, c, source, float(max(rms[n], 0.0)), float(blur[n]))
    return out


def _second_pass(gray: np.ndarray, gray_f: np.ndarray, rejected: np.ndarray, found, dictionary: int,
                 allowed: tuple | None = None, image_blur_px: float = 0.0
                 ) -> list[tuple[int, np.ndarray, str, float, float]]:
    """Read small candidates the first pass rejected, from sub-pixel corners.

    At 15-22 px a cell is 2-3 px wide, and the first pass samples the bits through the
    contour polygon's corners, which are off by up to a pixel: enough to read the wrong
    cells. Here each candidate's corners are first refined on its four edges, then every
    cell is sampled at its centre (3x3 points), and read hard or soft (_decode_quad).
    Candidates are screened first, all at once (a dark ring inside a light one), and at
    most SECOND_PASS_MAX candidates a frame are read, the most marker-like first.
    """
    quads = rejected
    if not len(quads):
        return []
    sides = np.linalg.norm(quads - quads[:, NEXT_CORNER], axis=2).mean(axis=1)
    centres = quads.mean(axis=1)
    keep = (sides >= 8) & (sides <= SECOND_PASS_MAX_SIDE_PX)
    if found:
        cf = np.array([f[1].mean(axis=0) for f in found])
        dmin = np.linalg.norm(centres[:, None, :] - cf[None, :, :], axis=2).min(axis=1)
        keep &= dmin >= 0.7 * sides
    idx = np.flatnonzero(keep)
    idx = idx[_black_and_white(gray, quads[idx])]
    if not len(idx):
        return []
    ring_score = _ring_contrasts(gray_f, quads[idx], _SECOND_PASS_SCALES)  # (m, scales)
    halo_score = _halo_contrast(gray_f, quads[idx])
    order = np.argsort(-np.maximum(ring_score.max(axis=1), halo_score))
    dic = cv2.aruco.getPredefinedDictionary(dictionary)
    scaled = {(j, k): centres[idx[j]] + (quads[idx[j]] - centres[idx[j]]) * scale
              for j in order[:2 * SECOND_PASS_MAX] for k, scale in enumerate(_SECOND_PASS_SCALES)
              if ring_score[j, k] > 0}
    refined = _refine_many(gray_f, scaled)
    out: list[tuple[int, np.ndarray, str, float, float]] = []
    done: list[np.ndarray] = []
    tried = 0
    for j in order:
        if tried >= SECOND_PASS_MAX or max(ring_score[j].max(), halo_score[j]) <= 0:
            break
        i = idx[j]
        q, centre, side = quads[i], centres[i], sides[i]
        if any(np.linalg.norm(d - centre) < 0.3 * side for d in done):
            continue
        tried += 1
        decoded = None
        for k, scale in enumerate(_SECOND_PASS_SCALES):
            if decoded is None and ring_score[j, k] > 0:
                decoded = _decode_quad(gray_f, centre + (q - centre) * scale, dic, dictionary, allowed,
                                       image_blur_px, refined.get((j, k)))
        if decoded is None and halo_score[j] > 0:
            # a blurred halo around the marker: find the dark square inside the candidate again
            inner = _resegment(gray, q)
            if inner is not None and _ring_contrast(gray_f, inner[None], 1.0)[0] > 0:
                decoded = _decode_quad(gray_f, inner, dic, dictionary, allowed, image_blur_px)
        if decoded is not None:
            done.append(centre)
            out.append((decoded[0], decoded[1], "second-pass", decoded[2], decoded[3]))
    unscreened = [idx[j] for j in order if max(ring_score[j].max(), halo_score[j]) <= 0]
    unscreened = np.array(unscreened, dtype=int)
    if len(unscreened):  # re-segmented: its dark square must be a sticker of its own
        fit = _about_square(quads[unscreened])
        if found:
            fit &= ~_boxes_overlap(quads[unscreened], np.array([f[1] for f in found]))
        unscreened = unscreened[fit]
    out.extend(_read_unscreened(gray, gray_f, quads[unscreened], done, dic, dictionary, allowed, image_blur_px))
    return out


def _read_unscreened(gray: np.ndarray, gray_f: np.ndarray, quads: np.ndarray, done: list, dic, dictionary: int,
                     allowed: tuple | None, image_blur_px: float) -> list[tuple[int, np.ndarray, str, float, float]]:
    """Candidates that look like no marker outline at any scale: a webcam's blur joins a small
    sticker's quiet zone to the piece around it, so the outline found is the piece's (up to twice
    the sticker). The dark square inside is found again (_resegment) and read if it has a marker's
    dark border in a light ring; at most RESEGMENT_MAX a frame, the smallest first."""
    out: list[tuple[int, np.ndarray, str, float, float]] = []
    if not len(quads) or allowed is None:
        return out
    sides = np.linalg.norm(quads - quads[:, NEXT_CORNER], axis=2).mean(axis=1)
    for i in np.argsort(sides)[:RESEGMENT_MAX]:
        centre = quads[i].mean(axis=0)
        if any(np.linalg.norm(d - centre) < 0.3 * sides[i] for d in done):
            continue
        inner = _resegment(gray, quads[i])
        if inner is None or _ring_contrast(gray_f, inner[None], 1.0)[0] <= 0:
            continue
        decoded = _decode_quad(gray_f, inner, dic, dictionary, allowed, image_blur_px)
        if decoded is not None:
            done.append(centre)
            out.append((decoded[0], decoded[1], "second-pass", decoded[2], decoded[3]))
    return out


SECOND_PASS_MAX = 48
# What the second look can read is a sticker the first pass missed; a candidate that cannot be
# one is not worth its ring test, soft read or re-segmentation. Measured on the webcam chain's
# tables (tests/bench/webcam.py --n 2), where all of its reads come from: every read candidate
# spans 89 grey levels or more over its box (SECOND_PASS_MIN_RANGE keeps a margin), and every
# candidate re-segmented into a read has sides within 1.6x of each other, an area over 0.96 of
# its mean side squared (a square seen obliquely) and a box clear of every sticker already read.
# (A candidate read as it is may sit that close: one in tests/bench/robust.py's tone-curve scenes.)
SECOND_PASS_MIN_RANGE = 50  # grey levels between the darkest and lightest pixel of the candidate's box
RESEGMENT_MAX_ASPECT = 2.5  # longest side over shortest, for a candidate to re-segment
RESEGMENT_MIN_FILL = 0.6  # area over mean side squared (a square: 1), for a candidate to re-segment
RESEGMENT_MAX = 48  # unscreened candidates re-segmented a frame (each ~0.2 ms)
# Candidate outlines tried (scaled about their centre) as the black square: 1 (the square itself),
# 7/9 (the white quiet zone's outline), 0.69 (that outline grown by a webcam: blurred in linear
# light and tone-curved, a white zone spreads into a darker piece around it) and 1.15 (the black
# square shrunk by the same effect). Measured on the webcam chain's tuning tables (tests/bench/webcam.py).
_SECOND_PASS_SCALES = (1.0, 7.0 / 9.0, 0.69, 1.15)


def _boxes_overlap(quads: np.ndarray, read: np.ndarray) -> np.ndarray:
    """(m,) True where a candidate's pixel box (corners' floor to ceil) overlaps the box of a
    sticker already read, (f, 4, 2): its dark square would be that sticker's or beside it."""
    lo, hi = np.floor(quads.min(axis=1)), np.ceil(quads.max(axis=1))
    rlo, rhi = read.min(axis=1), read.max(axis=1)
    return ((rlo[None] < hi[:, None]) & (rhi[None] > lo[:, None])).all(axis=2).any(axis=1)


def _black_and_white(gray: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """(m,) True where a candidate's pixel box spans SECOND_PASS_MIN_RANGE grey levels or more."""
    h, w = gray.shape
    lo = np.clip(np.floor(quads.min(axis=1)).astype(int), 0, [w - 1, h - 1])
    hi = np.clip(np.ceil(quads.max(axis=1)).astype(int), 0, [w - 1, h - 1])
    out = np.zeros(len(quads), bool)
    for k, ((x0, y0), (x1, y1)) in enumerate(zip(lo.tolist(), hi.tolist())):
        box = gray[y0:y1 + 1, x0:x1 + 1]
        out[k] = int(box.max()) - int(box.min()) >= SECOND_PASS_MIN_RANGE
    return out


def _about_square(quads: np.ndarray) -> np.ndarray:
    """(m,) True for candidates shaped like a square seen obliquely (RESEGMENT_MAX_ASPECT,
    RESEGMENT_MIN_FILL)."""
    sides = np.linalg.norm(quads - quads[:, NEXT_CORNER], axis=2)
    x, y = quads[..., 0], quads[..., 1]
    area = 0.5 * np.abs((x * y[:, NEXT_CORNER] - x[:, NEXT_CORNER] * y).sum(axis=1))
    return ((sides.max(axis=1) <= RESEGMENT_MAX_ASPECT * sides.min(axis=1))
            & (area >= RESEGMENT_MIN_FILL * sides.mean(axis=1) ** 2))


def _refine_many(gray_f: np.ndarray, quads: dict) -> dict:
    """{key: (corners, rms, blur)}: one round of the edge fit for every quad, in one batch."""
    if not quads:
        return {}
    c, rms, blur = edges.refine_edges(gray_f, np.array(list(quads.values())))
    return {key: (c[n], float(rms[n]), float(blur[n])) for n, key in enumerate(quads)}


def _identify(dic, dictionary: int, bits: np.ndarray) -> tuple[bool, int, int]:
    """dic.identify(bits, 0.0) (an exact match in any turn: (found, id, turns)) by table look-up;
    identify scans the whole dictionary, ~2 ms when nothing matches."""
    table = _IDENTIFY_TABLES.get(dictionary)
    if table is None:
        table = {}
        n = dic.markerSize
        for mid in range(len(dic.bytesList)):
            b = (dic.generateImageMarker(mid, n + 2, borderBits=1)[1:-1, 1:-1] > 127).astype(np.uint8)
            for rot in range(4):  # identify reports a marker turned by np.rot90 k times as rotation k
                table.setdefault(np.rot90(b, rot).tobytes(), (mid, rot))
        _IDENTIFY_TABLES[dictionary] = table
    got = table.get(np.ascontiguousarray(bits, dtype=np.uint8).tobytes())
    return (False, -1, 0) if got is None else (True, got[0], got[1])


_IDENTIFY_TABLES: dict = {}


def _sample(gray_f: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Bilinear samples at (..., 2) points; NaN outside the image."""
    flat = pts.reshape(-1, 2).astype(np.float32)
    h, w = gray_f.shape
    v = remap(gray_f, flat[:, 0].reshape(1, -1), flat[:, 1].reshape(1, -1), cv2.INTER_LINEAR).ravel()
    out = np.where((flat[:, 0] >= 0) & (flat[:, 1] >= 0) & (flat[:, 0] <= w - 1) & (flat[:, 1] <= h - 1), v, np.nan)
    return out.reshape(pts.shape[:-1])


_T_RING = np.array([0.2, 0.35, 0.5, 0.65, 0.8])


def _ring_points(quads: np.ndarray, scale: float) -> np.ndarray:
    """(m, 4 * len(_T_RING), 2) points along the quads scaled by `scale` about their centres."""
    c = quads.mean(axis=1, keepdims=True)
    q = c + (quads - c) * scale
    a, b = q, q[:, NEXT_CORNER]
    return (a[:, :, None, :] + _T_RING[None, None, :, None] * (b - a)[:, :, None, :]).reshape(len(quads), -1, 2)


def _ring_contrast(gray_f: np.ndarray, quads: np.ndarray, scale: float) -> np.ndarray:
    """(m,) light-minus-dark contrast of a marker's black border ring (middle of the border cells)
    against its quiet zone (middle of the quiet zone), for quads scaled by `scale`; <= 0: not a marker."""
    return _ring_contrasts(gray_f, quads, (scale,))[:, 0]


def _ring_contrasts(gray_f: np.ndarray, quads: np.ndarray, scales) -> np.ndarray:
    """(m, len(scales)): _ring_contrast at each scale, sampled and reduced in one batch."""
    m = len(quads)
    dark = _sample(gray_f, np.concatenate([_ring_points(quads, scale * 13.0 / 14.0) for scale in scales]))
    light = _sample(gray_f, np.concatenate([_ring_points(quads, scale * 8.0 / 7.0) for scale in scales]))
    dark, light = np.sort(dark, axis=1), np.sort(light, axis=1)  # a sample off the image (NaN) sorts last
    md, ml = _sorted_median(dark), _sorted_median(light)
    ok = (ml - md > 15) & (_sorted_percentile(light, 20) > md) & ~np.isnan(dark[:, -1]) & ~np.isnan(light[:, -1])
    return np.where(ok, ml - md, 0.0).reshape(len(scales), m).T


def _sorted_median(rows: np.ndarray) -> np.ndarray:
    """np.median(rows, axis=1) of rows sorted along axis 1 (to the bit)."""
    k = rows.shape[1] // 2
    return rows[:, k] if rows.shape[1] % 2 else (rows[:, k - 1] + rows[:, k]) / 2


def _sorted_percentile(rows: np.ndarray, q: float) -> np.ndarray:
    """np.percentile(rows, q, axis=1) of rows sorted along axis 1 (to the bit: numpy's linear method,
    interpolated from the nearer end)."""
    n = rows.shape[1]
    virtual = (n - 1) * (q / 100)
    before = math.floor(virtual)
    gamma = virtual - before
    a, b = rows[:, before], rows[:, min(before + 1, n - 1)]
    return b - (b - a) * (1 - gamma) if gamma >= 0.5 else a + (b - a) * gamma


def _halo_contrast(gray_f: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """(m,) > 0 when the quad holds something clearly darker than its rim in the middle and
    something lighter around that (a black square in a white quiet zone inside a blurred halo)."""
    c = quads.mean(axis=1, keepdims=True)
    inner = np.concatenate([c, c + (quads - c) * 0.35], axis=1)
    edges = np.concatenate([quads, (quads + quads[:, NEXT_CORNER]) / 2], axis=1)
    vi = _sample(gray_f, inner)
    vm = _sample(gray_f, c + (edges - c) * 0.8)
    vr = _sample(gray_f, edges)
    with np.errstate(invalid="ignore"):
        rim = np.median(vr, axis=1)
        ok = (np.min(vi, axis=1) < rim - 20) & (np.median(vm, axis=1) > rim + 10)
    return np.where(ok, np.median(vm, axis=1) - np.min(vi, axis=1), 0.0)


def _resegment(gray: np.ndarray, quad: np.ndarray) -> np.ndarray | None:
    """The largest dark quadrilateral inside a candidate (Otsu threshold of its crop), as a
    (4, 2) quad in the candidate's corner orientation, or None."""
    h, w = gray.shape
    xs, ys = quad[:, 0].tolist(), quad[:, 1].tolist()
    x0, y0 = max(math.floor(min(xs)) - 1, 0), max(math.floor(min(ys)) - 1, 0)
    x1, y1 = min(math.ceil(max(xs)) + 2, w), min(math.ceil(max(ys)) + 2, h)
    crop = gray[y0:y1, x0:x1]
    if crop.shape[0] < 8 or crop.shape[1] < 8:
        return None
    big = cv2.resize(crop, None, fx=4, fy=4, interpolation=cv2.INTER_LINEAR)
    inside = np.zeros(big.shape, np.uint8)
    cv2.fillConvexPoly(inside, np.round((quad - [x0, y0] + 0.5) * 4 - 0.5).astype(np.int32), 255)
    vals = big[inside > 0]
    if vals.size < 50:
        return None
    thr, _ = cv2.threshold(vals.reshape(-1, 1), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    # below the (whole-level) threshold: at most thr - 1
    mask = cv2.bitwise_and(cv2.threshold(big, thr - 1, 255, cv2.THRESH_BINARY_INV)[1], inside)
    mask = cv2.erode(mask, _ERODE_3X3)  # cut thin bridges to the candidate's rim
    # two-level hierarchy: outer boundaries of dark blobs (the halo's rim and, inside its hole,
    # the marker's black square) are at the top level; holes below them
    contours, hierarchy = cv2.findContours(mask, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
    cand_area = abs(cv2.contourArea(quad.astype(np.float32))) * 16
    best = None
    for cnt, hier in zip(contours, hierarchy[0] if hierarchy is not None else []):
        if hier[3] != -1:
            continue
        area = cv2.contourArea(cnt)
        if area < 0.2 * cand_area or area > 0.8 * cand_area:
            continue
        peri = cv2.arcLength(cnt, True)
        for eps in (0.03, 0.05, 0.08):
            poly = cv2.approxPolyDP(cnt, eps * peri, True)
            if len(poly) == 4 and cv2.isContourConvex(poly):
                if best is None or area > best[0]:
                    best = (area, poly.reshape(4, 2).astype(np.float64))
                break
    if best is None:
        return None
    # back to image pixels: x = (x_big + 0.5) / 4 - 0.5 (pixel centres)
    poly = (best[1] + 0.5) / 4.0 - 0.5 + np.array([x0, y0])
    def turn(p):  # z of (p1 - p0) x (p2 - p1): the corner order's orientation
        a, b = p[1] - p[0], p[2] - p[1]
        return float(a[0] * b[1] - a[1] * b[0])

    if np.sign(turn(poly)) != np.sign(turn(quad)):
        poly = poly[::-1].copy()
    return poly


_ERODE_3X3 = np.ones((3, 3), np.uint8)
_CELL_OFFSETS = np.array([(u, v) for u in (-0.22, 0.0, 0.22) for v in (-0.22, 0.0, 0.22)])


def _decode_quad(gray_f: np.ndarray, quad: np.ndarray, dic, dictionary: int = DICTIONARY,
                 allowed: tuple | None = None, image_blur_px: float = 0.0, refined=None
                 ) -> tuple[int, np.ndarray, float, float] | None:
    """(marker id, (4, 2) corners TL,TR,BR,BL, edge rms px, blur px) if the quad holds a readable marker.

    First a hard read (cells thresholded half-way between the black border and the white
    quiet zone, as ArUco does); if that fails, a soft read: the 7x7 cells and the quiet-zone
    ring are correlated with every allowed marker (4 turns each) drawn with the blur
    measured on the marker's own edges. A soft read must beat every other id clearly.
    """
    refined, rms, blur = refined if refined is not None else _refine_edges(gray_f, quad)  # refined: done in a batch
    q = refined if rms > 0 else quad
    n = dic.markerSize + 2  # bits + 1-cell border
    sampled = _cell_samples(gray_f, q, n)
    if sampled is None:
        return None
    cells, ring = sampled
    white = _median(ring)
    border = np.concatenate([cells[0], cells[-1], cells[1:-1, 0], cells[1:-1, -1]])
    black = _median(border)
    if white - black < 25:
        return None
    thr = (white + black) / 2
    if int((border > thr).sum()) <= 2:
        bits = (cells[1:-1, 1:-1] > thr).astype(np.uint8)
        ok, idx, rot = _identify(dic, dictionary, bits)
        if ok and (allowed is None or int(idx) in allowed):
            # identify's rotation: the marker is read after turning the bits `rot` quarter turns
            return int(idx), (np.roll(q, rot, axis=0) if rot else q), rms, blur
    if rms <= 0 or allowed is None:
        return None
    side = side_px(q)
    m = np.concatenate([cells.ravel(), ring])
    m = m - m.mean()
    norm = np.linalg.norm(m)
    if norm < 1e-6:
        return None
    # the edge blur is measured within a cell of the border, so it saturates for blurs of
    # half a cell and more; the stickers read in the first pass measure the picture's blur
    # better (image_blur_px). When that says the picture is blurred at this size, the drawings
    # are tried at every stronger blur too; never on a sharp picture, where stronger blurs
    # would forgive the cells of another dictionary's marker
    measured = blur / (side / n)
    nearest = min(_BLUR_LEVELS, key=lambda b: abs(b - measured))
    image_cells = image_blur_px / (side / n)
    read = None
    for level in _BLUR_LEVELS:
        if level != nearest and (image_cells < SOFT_BLURRED_CELLS or level < measured):
            continue
        got = _soft_read(m / norm, dictionary, allowed, level, n)
        if got is not None and (read is None or got[0] > read[0]):
            read = got
    if read is None:
        return None
    _, marker_id, rot, level = read
    # the blur of the drawing it matched is the better measure of a strongly blurred marker
    return marker_id, (np.roll(q, rot, axis=0) if rot else q), rms, max(blur, level * side / n)


def _cell_samples(gray_f: np.ndarray, q: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray] | None:
    """((n, n) mean of each cell's 3x3 samples, (4n,) quiet-zone ring samples) of the marker with
    corners q, or None when a sample falls outside the image."""
    return _cell_samples_many(gray_f, [q], n)[0]


def _cell_samples_many(gray_f: np.ndarray, quads, n: int) -> list:
    """_cell_samples of every quad, sampled in one remap."""
    if not len(quads):
        return []
    cells, ring, inside = cell_samples_arrays(gray_f, quads, n)
    return [(c, r) if ok else None for c, r, ok in zip(cells, ring, inside)]


def cell_samples_arrays(gray_f: np.ndarray, quads, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """((k, n, n) mean of each cell's 3x3 samples, (k, 4n) quiet-zone ring samples, (k,) bool: every
    sample inside the image) of k quads, sampled in one remap."""
    unit = np.array([[0, 0], [n, 0], [n, n], [0, n]], dtype=np.float32)
    pts = _sample_points(n).reshape(-1, 1, 2).astype(np.float32)
    img_p = np.concatenate([cv2.perspectiveTransform(pts, cv2.getPerspectiveTransform(unit, q.astype(np.float32)))
                            for q in quads]).reshape(len(quads), -1, 2)
    h, w = gray_f.shape
    inside = (img_p.min(axis=1) >= 0).all(axis=1) & (img_p[..., 0].max(axis=1) <= w - 1) \
        & (img_p[..., 1].max(axis=1) <= h - 1)
    vals = remap(gray_f, img_p[..., 0], img_p[..., 1], cv2.INTER_LINEAR)
    n_cell = n * n * len(_CELL_OFFSETS)
    return vals[:, :n_cell].reshape(len(quads), n, n, -1).mean(axis=3), vals[:, n_cell:], inside


def _other_grid_reads(gray_f: "_FloatGrey", found: list, dictionary: int = DICTIONARY, skip=frozenset()) -> set[int]:
    """Indices in found of the small first-pass reads that a whole marker of another grid (an
    AprilTag, a 4x4 ChArUco marker that ArUco's error correction took for a refcam code) draws
    better than the read id's own drawing, at the blur measured on its edges. One product with
    the other grids' drawings per blur level, for all the reads at that level. skip: ids of corners
    of reads that passed this test on the very same pixels before (reused, unchanged)."""
    n = cv2.aruco.getPredefinedDictionary(dictionary).markerSize + 2
    by_level: dict = {}
    small = [k for k, (_, q, source, rms, _) in enumerate(found)
             if source == "full" and rms > 0 and side_px(q) <= SECOND_PASS_MAX_SIDE_PX and id(q) not in skip]
    if not small:
        return set()
    for k, sampled in zip(small, _cell_samples_many(gray_f(), [found[k][1] for k in small], n)):
        marker_id, q, _, _, blur = found[k]
        side = side_px(q)
        if sampled is None or _reads_exactly(sampled, marker_id, dictionary):
            continue  # every cell as the code says: no other grid's marker sampled on this one's grid does that
        m = np.concatenate([sampled[0].ravel(), sampled[1]])
        m = m - m.mean()
        norm = np.linalg.norm(m)
        if norm < 1e-6:
            continue
        level = min(_BLUR_LEVELS, key=lambda b: abs(b - blur / (side / n)))
        own = float((_templates(dictionary, (int(marker_id),), level, n)[2] @ (m / norm)).max())
        by_level.setdefault(level, []).append((k, m / norm, own))
    dropped = set()
    for level, reads in by_level.items():
        best = _max_correlation(_other_grid_templates(level, n), np.array([r[1] for r in reads], dtype=np.float32))
        dropped |= {k for (k, _, own), b in zip(reads, best) if b > own + OTHER_GRID_LEAD}
    return dropped


def _median(values: np.ndarray) -> float:
    """float(np.median(values)) of a small 1-D array, to the bit (a middle value, or the float mean of
    the two middle ones in the array's own type), without np.median's ~30 us of overhead."""
    s = np.sort(values)
    if len(s) == 0 or np.isnan(s[-1]):
        return float(np.median(values))
    k = len(s) // 2
    return float(s[k]) if len(s) % 2 else float((s[k - 1] + s[k]) / 2)


def _reads_exactly(sampled: tuple[np.ndarray, np.ndarray], marker_id: int, dictionary: int) -> bool:
    """True when the cells, thresholded half-way between the border's black and the quiet zone's
    white, are the marker's code exactly (in the corners' order) inside an all-black border."""
    cells, ring = sampled
    border = np.concatenate([cells[0], cells[-1], cells[1:-1, 0], cells[1:-1, -1]])
    thr = (_median(ring) + _median(border)) / 2
    if (border > thr).any():
        return False
    dic = cv2.aruco.getPredefinedDictionary(dictionary)
    ok, idx, rot = _identify(dic, dictionary, (cells[1:-1, 1:-1] > thr).astype(np.uint8))
    return ok and idx == marker_id and rot == 0


def _max_correlation(templates: np.ndarray, samples: np.ndarray) -> np.ndarray:
    """(k,) max over the (F, d) templates of their product with each of the (k, d) samples, in blocks
    small enough that OpenBLAS keeps them on one thread: its threads on the whole product cost
    10-100x on a busy machine (measured: 0.3 ms on one thread, 14-290 ms threaded)."""
    out = np.full(len(samples), -np.inf, dtype=np.float32)
    for c in range(0, len(samples), 16):
        cols = np.ascontiguousarray(samples[c:c + 16].T)
        for r in range(0, len(templates), 128):
            np.maximum(out[c:c + 16], (templates[r:r + 128] @ cols).max(axis=0), out=out[c:c + 16])
    return out


OTHER_GRID_LEAD = 0.0  # a first-pass read is dropped when another grid's marker matches it better


def _soft_read(m: np.ndarray, dictionary: int, allowed: tuple, level: float, n: int):
    """(score, id, rotation) of the allowed marker drawn at blur `level` (cells) that the unit
    zero-mean samples m match, or None: it must match well, lead every other id clearly and
    lead every near-identical marker of another dictionary."""
    ids, rots, templates = _templates(dictionary, allowed, level, n)
    score = templates @ m
    best = int(np.argmax(score))
    others = score[ids != ids[best]]
    second = float(others.max()) if len(others) else -1.0
    if score[best] < SOFT_MIN_SCORE or score[best] - second < SOFT_MIN_MARGIN:
        return None
    foreign = _foreign_templates(dictionary, allowed, level, n)
    if len(foreign) and float((foreign @ m).max()) > score[best] - SOFT_FOREIGN_MARGIN:
        return None  # as like a marker of another dictionary that differs in a cell or two
    other_grids = _other_grid_templates(level, n)
    if len(other_grids) and float(_max_correlation(other_grids, m[None].astype(np.float32))[0]) \
            > score[best] - SOFT_FOREIGN_MARGIN:
        return None  # as like a whole marker of a finer or coarser grid (AprilTag, ChArUco 4x4, ...)
    return float(score[best]), int(ids[best]), int(rots[best]), level


# Soft reads: normalised correlation with the best marker drawing, and its lead over the best
# other id. On rendered tables real markers lead by 0.05-0.10 and non-marker candidates
# (wood grain, card art) by at most 0.015, whatever their raw score.
SOFT_MIN_SCORE = 0.85
SOFT_MIN_MARGIN = 0.04
SOFT_FOREIGN_MARGIN = 0.02  # lead over a near-identical marker of another dictionary
SOFT_BLURRED_CELLS = 0.42  # measured edge blur (cells) from which stronger blurs are tried too
_BLUR_LEVELS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.65, 0.8)  # blur sigma in cells
_TEMPLATE_CACHE: dict = {}


def _sample_points(n: int = 7) -> np.ndarray:
    """(n*n*9 + 4n, 2) sample points in cell units: 3x3 per cell, then the quiet-zone ring."""
    if ("pts", n) not in _TEMPLATE_CACHE:
        jj, ii = np.meshgrid(np.arange(n) + 0.5, np.arange(n) + 0.5)
        cellp = (np.stack([jj.ravel(), ii.ravel()], axis=1)[:, None, :] + _CELL_OFFSETS[None, :, :]).reshape(-1, 2)
        t = np.linspace(0.5, n - 0.5, n)
        ring = np.concatenate([np.stack([t, np.full(n, -0.45)], 1), np.stack([t, np.full(n, n + 0.45)], 1),
                               np.stack([np.full(n, -0.45), t], 1), np.stack([np.full(n, n + 0.45), t], 1)])
        _TEMPLATE_CACHE[("pts", n)] = np.concatenate([cellp, ring])
    return _TEMPLATE_CACHE[("pts", n)]


def _templates(dictionary: int, allowed: tuple, blur_cells: float, n: int = 7):
    """(ids (M,), rotations (M,), unit zero-mean templates (M, n*n + 4n)) for the nearest blur level.

    Blurring and sampling are linear in the drawing, so the samples of every marker are
    (its (n+2)^2 cell pattern) @ B, with B built once per blur level from one blurred
    drawing per cell.
    """
    level = min(_BLUR_LEVELS, key=lambda b: abs(b - blur_cells))
    key = (dictionary, allowed, level, n)
    if key in _TEMPLATE_CACHE:
        return _TEMPLATE_CACHE[key]
    B = _cell_response(n, level)  # ((n+2)^2, samples)
    ids, rots, patterns = _patterns(dictionary, allowed, n)
    T = patterns @ B if len(patterns) else np.zeros((0, B.shape[1]))
    T -= T.mean(axis=1, keepdims=True)
    T /= np.maximum(np.linalg.norm(T, axis=1, keepdims=True), 1e-9)
    out = (ids, rots, T)
    _TEMPLATE_CACHE[key] = out
    return out


def _patterns(dictionary: int, allowed: tuple, n: int):
    """(ids (M,), rotations (M,), (M, (n+2)^2) drawings with their quiet zone): every allowed marker
    in its 4 turns, drawn once for every blur level."""
    key = ("patterns", dictionary, allowed, n)
    if key in _TEMPLATE_CACHE:
        return _TEMPLATE_CACHE[key]
    dic = cv2.aruco.getPredefinedDictionary(dictionary)
    drawn = [int(mid) for mid in allowed if mid < len(dic.bytesList)]
    imgs = np.array([dic.generateImageMarker(mid, n, borderBits=1) for mid in drawn], np.float32).reshape(-1, n, n)
    imgs /= 255.0
    # every marker in its 4 turns (as seen when the corners are rolled by `rot`), in a white quiet zone
    patterns = np.ones((len(drawn), 4, n + 2, n + 2), np.float32)
    for rot in range(4):
        patterns[:, rot, 1:n + 1, 1:n + 1] = np.rot90(imgs, rot, axes=(1, 2))
    out = (np.repeat(np.array(drawn, dtype=int), 4), np.tile(np.arange(4), len(drawn)), patterns.reshape(len(drawn) * 4, -1))
    _TEMPLATE_CACHE[key] = out
    return out


# Other dictionaries drawn on the same 5x5-bit grid: their markers can differ from a refcam
# code in one or two cells, which a soft read of a blurred candidate would forgive.
FOREIGN_DICTIONARIES = (cv2.aruco.DICT_ARUCO_ORIGINAL, cv2.aruco.DICT_APRILTAG_25h9)
FOREIGN_MAX_DISTANCE = 4  # bits: foreign codes further from every allowed code are not mistaken for one


def _inner_bits(dic, marker_id: int, n: int) -> np.ndarray:
    return (dic.generateImageMarker(int(marker_id), n, borderBits=1)[1:-1, 1:-1] > 127).astype(np.uint8)


def warm_second_pass(catalog) -> None:
    """Build the drawings the second pass matches blurred candidates against, at every blur level,
    for the catalog's ids (~0.1 s once a process; otherwise paid by the first frames that need each
    level)."""
    dic = cv2.aruco.getPredefinedDictionary(DICTIONARY)
    allowed, n = second_pass_ids(catalog), dic.markerSize + 2
    _identify(dic, DICTIONARY, np.zeros((n - 2, n - 2), np.uint8))  # its look-up table
    for level in _BLUR_LEVELS:
        _templates(DICTIONARY, allowed, level, n)
        _foreign_templates(DICTIONARY, allowed, level, n)
        _other_grid_templates(level, n)


def _foreign_templates(dictionary: int, allowed: tuple, blur_cells: float, n: int = 7) -> np.ndarray:
    """(F, n*n + 4n) unit zero-mean drawings (4 turns each) of the foreign dictionaries' markers
    within FOREIGN_MAX_DISTANCE bits of an allowed code, at the nearest blur level."""
    level = min(_BLUR_LEVELS, key=lambda b: abs(b - blur_cells))
    key = ("foreign", dictionary, allowed, level, n)
    if key in _TEMPLATE_CACHE:
        return _TEMPLATE_CACHE[key]
    patterns = _foreign_patterns(dictionary, allowed, n)
    if patterns is None:
        _TEMPLATE_CACHE[key] = np.zeros((0, n * n + 4 * n))
        return _TEMPLATE_CACHE[key]
    B = _cell_response(n, level)
    T = np.array(patterns) @ B if patterns else np.zeros((0, B.shape[1]))
    T -= T.mean(axis=1, keepdims=True)
    T /= np.maximum(np.linalg.norm(T, axis=1, keepdims=True), 1e-9)
    _TEMPLATE_CACHE[key] = T
    return T


def _foreign_patterns(dictionary: int, allowed: tuple, n: int) -> list | None:
    """The drawings (with border and quiet zone, 4 turns each) of _foreign_templates, built once
    for every blur level; None when the dictionary's grid is not n - 2 bits."""
    key = ("foreign patterns", dictionary, allowed, n)
    if key in _TEMPLATE_CACHE:
        return _TEMPLATE_CACHE[key]
    own = cv2.aruco.getPredefinedDictionary(dictionary)
    if own.markerSize != n - 2:
        return None
    mine = np.array([_inner_bits(own, i, n).ravel() for i in allowed if i < len(own.bytesList)])
    patterns = []
    for fd in FOREIGN_DICTIONARIES:
        dic = cv2.aruco.getPredefinedDictionary(fd)
        if dic.markerSize != own.markerSize:
            continue
        for mid in range(len(dic.bytesList)):
            bits = _inner_bits(dic, mid, n)
            turns = [np.rot90(bits, r) for r in range(4)]
            dist = min(int((mine != t.ravel()[None, :]).sum(axis=1).min()) for t in turns)
            if 0 < dist <= FOREIGN_MAX_DISTANCE:
                for t in turns:
                    pattern = np.ones((n + 2, n + 2), np.float32)
                    pattern[2:n, 2:n] = t
                    pattern[1, 1:n + 1] = pattern[n, 1:n + 1] = pattern[1:n + 1, 1] = pattern[1:n + 1, n] = 0
                    patterns.append(pattern.ravel())
    _TEMPLATE_CACHE[key] = patterns
    return patterns


# Dictionaries on other grids whose whole marker, its black square taken for a refcam sticker's,
# a soft read of a blurred candidate could take for a refcam code (ChArUco boards, AprilTags).
OTHER_GRID_DICTIONARIES = (cv2.aruco.DICT_4X4_1000, cv2.aruco.DICT_6X6_1000, cv2.aruco.DICT_7X7_1000,
                           cv2.aruco.DICT_APRILTAG_16h5, cv2.aruco.DICT_APRILTAG_36h11,
                           cv2.aruco.DICT_ARUCO_MIP_36h12)


def _other_grid_templates(level: float, n: int = 7) -> np.ndarray:
    """(F, n*n + 4n) unit zero-mean drawings (4 turns each) of every marker of OTHER_GRID_DICTIONARIES
    whose grid differs from n - 2 bits, drawn over the same black square, blurred by `level` cells
    and sampled at refcam's cell points."""
    level = min(_BLUR_LEVELS, key=lambda b: abs(b - level))
    key = ("other grids", level, n)
    if key in _TEMPLATE_CACHE:
        return _TEMPLATE_CACHE[key]
    parts = [np.zeros((0, n * n + 4 * n))]
    for dictionary in OTHER_GRID_DICTIONARIES:
        dic = cv2.aruco.getPredefinedDictionary(dictionary)
        g = dic.markerSize + 2  # cells across the black square, border included
        if g == n:
            continue
        parts.append(_grid_patterns(dictionary) @ _grid_response(n, g, level))
    T = np.concatenate(parts)
    T -= T.mean(axis=1, keepdims=True)
    T /= np.maximum(np.linalg.norm(T, axis=1, keepdims=True), 1e-9)
    _TEMPLATE_CACHE[key] = T.astype(np.float32)  # 15k drawings: float32 halves each product's memory traffic
    return _TEMPLATE_CACHE[key]


def _grid_patterns(dictionary: int) -> np.ndarray:
    """(4 M, g*g + 1): every marker of the dictionary in its 4 turns, border included, then 1 (the
    white outside); built once for every blur level."""
    key = ("grid patterns", dictionary)
    if key not in _TEMPLATE_CACHE:
        dic = cv2.aruco.getPredefinedDictionary(dictionary)
        g = dic.markerSize + 2
        patterns = []
        for mid in range(len(dic.bytesList)):
            drawing = dic.generateImageMarker(mid, g, borderBits=1).astype(np.float32) / 255.0
            patterns.extend(np.append(np.rot90(drawing, rot).ravel(), 1.0) for rot in range(4))
        _TEMPLATE_CACHE[key] = np.array(patterns)
    return _TEMPLATE_CACHE[key]


def _grid_response(n: int, g: int, level: float) -> np.ndarray:
    """(g*g + 1, n*n + 4n): refcam's samples of a drawing that is white in one cell of a g x g grid
    spanning refcam's black square (n cells), or (last row) white everywhere outside that square."""
    S = 12  # drawing pixels per refcam cell
    pts = _sample_points(n)
    px = ((pts + 1.0) * S - 0.5).astype(np.float32)
    n_cell = n * n * len(_CELL_OFFSETS)
    rows = []
    for cell in range(g * g + 1):
        big = np.zeros(((n + 2) * S, (n + 2) * S), np.float32)
        if cell < g * g:
            one = np.zeros((g, g), np.float32)
            one[divmod(cell, g)] = 1.0
            big[S:S + n * S, S:S + n * S] = cv2.resize(one, (n * S, n * S), interpolation=cv2.INTER_NEAREST)
        else:
            big[:] = 1.0
            big[S:S + n * S, S:S + n * S] = 0.0
        big = cv2.GaussianBlur(big, (0, 0), level * S, borderType=cv2.BORDER_REPLICATE)
        v = remap(big, px[:, 0].reshape(1, -1), px[:, 1].reshape(1, -1), cv2.INTER_LINEAR).ravel()
        rows.append(np.concatenate([v[:n_cell].reshape(n * n, -1).mean(axis=1), v[n_cell:]]))
    return np.array(rows)


def _cell_response(n: int, level: float) -> np.ndarray:
    """((n+2)^2, n*n + 4n): the sampled values (cells averaged over their 3x3 points, then the
    quiet-zone ring) of a drawing that is white in one cell only, blurred by `level` cells."""
    key = ("B", n, level)
    if key in _TEMPLATE_CACHE:
        return _TEMPLATE_CACHE[key]
    S = 12  # drawing pixels per cell
    pts = _sample_points(n)
    px = ((pts + 1.0) * S - 0.5).astype(np.float32)
    n_cell = n * n * len(_CELL_OFFSETS)
    rows = []
    for cell in range((n + 2) ** 2):
        big = np.zeros(((n + 2) * S, (n + 2) * S), np.float32)
        r, c = divmod(cell, n + 2)
        big[r * S:(r + 1) * S, c * S:(c + 1) * S] = 1.0
        big = cv2.GaussianBlur(big, (0, 0), level * S, borderType=cv2.BORDER_CONSTANT)
        v = remap(big, px[:, 0].reshape(1, -1), px[:, 1].reshape(1, -1), cv2.INTER_LINEAR).ravel()
        rows.append(np.concatenate([v[:n_cell].reshape(n * n, -1).mean(axis=1), v[n_cell:]]))
    B = np.array(rows)
    _TEMPLATE_CACHE[key] = B
    return B


def _dedupe(found):
    """Drop a second detection of the same id at the same place (kept: the full-resolution one)."""
    out = []
    for f in found:
        marker_id, c = f[0], f[1]
        if not any(o[0] == marker_id and np.linalg.norm(c.mean(axis=0) - o[1].mean(axis=0))
                   < 0.5 * np.linalg.norm(c[0] - c[2]) for o in out):
            out.append(f)
    return out


def refine_corners_by_edges(gray: np.ndarray, corners: np.ndarray) -> tuple[np.ndarray, float]:
    """Refine a marker's 4 corners by fitting lines to its 4 outer edges (twice when the first
    correction is large, since the edge samples follow the guessed edges).

    gray: (H, W) uint8 or float32; corners: (4, 2) px TL, TR, BR, BL. Returns ((4, 2) refined
    corners, rms px of edge points about their lines); the input corners and rms 0 when an
    edge cannot be measured (occluded, off-image).
    """
    c, rms, _ = _refine_corners(gray, corners)
    return c, rms


def _refine_corners(gray: np.ndarray, corners: np.ndarray) -> tuple[np.ndarray, float, float]:
    """refine_corners_by_edges, also giving the blur sigma px measured across the edges."""
    c, rms, blur = edges.refine_corners(gray, np.asarray(corners, dtype=np.float64)[None])
    return c[0], float(rms[0]), float(blur[0])


def _refine_edges(gray: np.ndarray, corners: np.ndarray) -> tuple[np.ndarray, float, float]:
    """One round of the edge-line refinement (edges.refine_edges) of one sticker: (corners, rms px, blur px)."""
    c, rms, blur = edges.refine_edges(gray, np.asarray(corners, dtype=np.float64)[None])
    return c[0], float(rms[0]), float(blur[0])
