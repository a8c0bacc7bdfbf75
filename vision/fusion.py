"""Several frames of a still table -> one picture with less noise -> one Observation.

A webcam's frames of a table at rest differ only by sensor noise and by JPEG blocks that
fall differently on each frame; averaging N of them cuts the noise by about sqrt(N) and
washes the blocks out, so a small sticker the detector misses in every single frame can be
read in their average. Stages, one function each:

1. register (register): each frame's stickers against the reference frame's, the same ids
   at the same place up to one homography (the camera or the table shifted a pixel or two,
   or a hand-held phone moved between photos); a sticker off that homography by more than
   MOVED_PX moved between the frames;
2. fuse (fuse): every frame warped onto the reference and averaged (exact integer sums, rounded
   once): the per-pixel median of 3, or with 4 and more frames the mean without each pixel's
   lowest and highest value (a hand's edge in one frame is dropped; noise falls almost as with
   the plain mean);
3. read (observe_fused): the whole pipeline (vision/pipeline.py) on the fused picture, so
   every sigma comes from the fused picture's own edges (their scatter is the noise the
   sigma model measures, vision/pieces.py corner_sigma_px), not from any single frame's.
   A piece no single frame showed is marked ``source: "fused(N)"``.

Frames come as Frame(image, stickers by id); the stickers are what each frame's own
detection found (the live engine has them from its per-frame observe; photos are detected
here).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import cv2
import numpy as np

from referee.catalog import Catalog, default_catalog
from referee.errors import InvalidInputError
from referee.observation import Observation

from . import detect, edges, pipeline

# Frames fused for one stable state: sqrt(8) ~ 2.8 times less noise.
DEFAULT_FRAMES = 8
# At most this many bytes of frames are kept (8 frames of 1080p are 50 MB; 4K keeps 5).
DEFAULT_MAX_BYTES = 128 * 2 ** 20
# A sticker farther than this (px, any corner) from where the frames' common homography puts
# it has moved between the frames (or the frames are not of one still table). A hand-held
# phone's few millimetres of parallax on a piece's top stay below it.
MOVED_PX = 3.0
# On the live page a sticker some calm frames read alone joins the fused read when at least
# this many read it: the tracker asks 3 sightings in a row of a new piece, so one frame's read
# must not slip a flash past that guard (photos on the command line: one photo suffices).
LIVE_MIN_READS = 2
# Photos of one still table show the same stickers: a sticker one photo reads at this side (px)
# or more, that the registration puts wholly inside the other photo (a side from its edge), and
# that the other does not read, is not on that table (another table, a piece taken away, or a
# hand over it). Readers find 99.8 % of stickers from 21 px through a webcam's whole chain
# (tests/bench/webcam.py); smaller ones come and go with the noise.
MISSING_SIDE_PX = 24.0
# Below this many common stickers the homography is not trusted: a shift (median) is used.
MIN_STICKERS_FOR_HOMOGRAPHY = 3
# A fitted motion that moves no sticker corner by more than this (px) is taken as no motion: no
# resampling. A left-over 0.3 px shift widens a webcam's 0.6-1.1 px lens blur by under 10 %.
IDENTITY_PX = 0.3


class FusionError(InvalidInputError):
    """The frames are not of one still table: a frame does not register, or a piece moved."""


@dataclass(frozen=True)
class Frame:
    """One frame to fuse: (H, W, 3) or (H, W) uint8, and its stickers' corners by marker id."""

    image: np.ndarray
    stickers: dict
    label: str = ""
    detections: tuple = ()  # the frame's own detect.Detection list, when it was detected here


@dataclass(frozen=True)
class Registration:
    """How one frame lies on the reference: homography frame px -> reference px, the rms (px)
    of the common stickers' corners about it, and the stickers that moved (ids)."""

    homography: np.ndarray
    rms_px: float
    common: int
    moved: tuple[int, ...] = ()

    @property
    def identity(self) -> bool:
        return self.homography is None


@dataclass(frozen=True)
class Fused:
    """The fused picture and what it took: frames used, method, and the noise measured in the
    reference frame and in the fused picture (grey levels, Immerkaer's estimator)."""

    image: np.ndarray
    frames: int
    method: str
    noise_single: float
    noise_fused: float
    registration_rms_px: float


def stickers_of(result: detect.DetectionResult) -> dict[int, np.ndarray]:
    """{marker id: (4, 2) corners} of a detection result; ids seen twice are left out (which is which?)."""
    ids = [d.marker_id for d in result.detections]
    return {d.marker_id: np.asarray(d.corners, dtype=np.float64) for d in result.detections if ids.count(d.marker_id) == 1}


def stickers_from_observation(obs: Observation) -> dict[int, np.ndarray] | None:
    """The stickers a live observation kept (webui.live.pipeline_observe's "detections"), or None."""
    dets = obs.extra.get("detections")
    if dets is None:
        return None
    ids = [d["id"] for d in dets]
    return {d["id"]: np.asarray(d["corners"], dtype=np.float64) for d in dets if ids.count(d["id"]) == 1}


def register(reference: dict, frame: dict) -> Registration | None:
    """The frame's stickers mapped onto the reference's: one homography (RANSAC) from three common
    stickers up, a shift below; None when they share no sticker."""
    common = sorted(set(reference) & set(frame))
    if not common:
        return None
    src = np.concatenate([frame[i] for i in common]).astype(np.float64)
    dst = np.concatenate([reference[i] for i in common]).astype(np.float64)
    H = None
    if len(common) >= MIN_STICKERS_FOR_HOMOGRAPHY:
        H, _ = cv2.findHomography(src, dst, cv2.RANSAC, MOVED_PX)
        if H is not None and (not np.all(np.isfinite(H)) or abs(np.linalg.det(H[:2, :2])) < 0.5):
            H = None  # degenerate: fall back to the shift
    if H is None:
        shift = np.median(dst - src, axis=0)
        H = np.array([[1.0, 0.0, shift[0]], [0.0, 1.0, shift[1]], [0.0, 0.0, 1.0]])
    mapped = cv2.perspectiveTransform(src.reshape(-1, 1, 2), H).reshape(-1, 4, 2)
    off = np.linalg.norm(mapped - dst.reshape(-1, 4, 2), axis=2).max(axis=1)
    moved = tuple(i for i, o in zip(common, off) if o > MOVED_PX)
    still = off <= MOVED_PX
    resid = (mapped - dst.reshape(-1, 4, 2))[still]
    rms = float(np.sqrt((resid ** 2).sum(axis=2).mean())) if resid.size else float("inf")
    # a still camera: the fitted motion at the stickers is their detection noise averaged over
    # every corner, and resampling would blur each frame by up to half a pixel for nothing
    motion = np.linalg.norm(mapped.reshape(-1, 2) - src, axis=1).max()
    return Registration(None if motion < IDENTITY_PX else H, rms, len(common), moved)


def frames_that_fit(frames: list[Frame], max_bytes: int = DEFAULT_MAX_BYTES) -> int:
    """How many of these frames' pictures fit in max_bytes (at least 1)."""
    per = max(1, frames[0].image.nbytes) if frames else 1
    return max(1, int(max_bytes // per))


def register_all(frames: list[Frame], catalog: Catalog | None = None, strict: bool = True
                 ) -> tuple[list[Frame], list[Registration]]:
    """Every frame registered on the first. strict (photos on the command line): a frame that
    does not register, or in which a piece moved, is refused with one line naming it; otherwise
    (the live engine) such a frame is left out."""
    catalog = catalog or default_catalog()
    ref = frames[0]
    kept, regs = [ref], [Registration(None, 0.0, len(ref.stickers))]
    for f in frames[1:]:
        reg = register(ref.stickers, f.stickers) if f.image.shape == ref.image.shape else None
        problem = _mismatch(ref, f, reg, catalog) or (_not_shown(ref, f, reg, catalog) if strict else None)
        if problem is None:
            kept.append(f)
            regs.append(reg)
        elif strict:
            raise FusionError(problem)
    return kept, regs


def _mismatch(ref: Frame, f: Frame, reg: Registration | None, catalog: Catalog) -> str | None:
    """Why frame f cannot be fused with the reference (one line naming both), or None."""
    name, ref_name = f.label or "a frame", ref.label or "the first frame"
    if f.image.shape != ref.image.shape:
        return (f"{name} is {f.image.shape[1]}x{f.image.shape[0]}, {ref_name} "
                f"{ref.image.shape[1]}x{ref.image.shape[0]}: photos to fuse must come from one camera")
    if reg is None:
        return f"{name} shares no sticker with {ref_name}: not the same table, or a hand over it"
    if reg.moved:
        pieces = sorted({catalog.sticker(i).piece if catalog.sticker(i) else f"id {i}" for i in reg.moved})
        return (f"{name}: {', '.join(pieces)} moved since {ref_name}; photos to fuse must show one still "
                f"table (take them again without touching the pieces)")
    return None


def _not_shown(ref: Frame, f: Frame, reg: Registration, catalog: Catalog) -> str | None:
    """Why frame f does not show the reference's table (one line naming both), or None: pieces
    one of them reads clearly where the other shows nothing (MISSING_SIDE_PX). The live engine's
    calm frames are of one table by the tracker's own test, so only photos are checked."""
    to_f = np.eye(3) if reg.identity else np.linalg.inv(reg.homography)
    to_ref = np.eye(3) if reg.identity else reg.homography
    gone = _missing_in(ref.stickers, f.stickers, to_f, f.image.shape)
    new = _missing_in(f.stickers, ref.stickers, to_ref, ref.image.shape)
    if not gone and not new:
        return None
    name, ref_name = f.label or "a frame", ref.label or "the first frame"

    def pieces(ids):
        return ", ".join(sorted({catalog.sticker(i).piece if catalog.sticker(i) else f"id {i}" for i in ids}))

    parts = ([f"{pieces(gone)} of {ref_name} not in it"] if gone else []) + (
        [f"{pieces(new)} not in {ref_name}"] if new else [])
    return (f"{name} does not show the table of {ref_name} ({'; '.join(parts)}): photos to fuse must show one "
            f"still table, nothing moved, taken away or covered")


def _missing_in(seen: dict, other: dict, H: np.ndarray, shape: tuple) -> list[int]:
    """The ids `seen` reads at MISSING_SIDE_PX or more that `other` (a picture of `shape`) does not
    read, though H (seen px -> other px) puts them wholly inside it, a side from its edges."""
    h, w = shape[:2]
    out = []
    for i in sorted(set(seen) - set(other)):
        corners = cv2.perspectiveTransform(np.asarray(seen[i], np.float64).reshape(-1, 1, 2), H).reshape(4, 2)
        side = detect.side_px(corners)
        lo, hi = corners.min(axis=0), corners.max(axis=0)
        if side >= MISSING_SIDE_PX and (lo >= side).all() and hi[0] <= w - 1 - side and hi[1] <= h - 1 - side:
            out.append(i)
    return out


# The frames are combined a band of rows at a time: a band's sums, lowest and highest values of
# 8 frames stay in the processor's cache (1080p: 16 rows of 8 frames are 0.7 MB), where whole
# pictures went to memory and back once for every frame.
ROWS_PER_BAND = 16


def fuse(frames: list[Frame], regs: list[Registration]) -> Fused:
    """The frames warped onto the first and averaged (see the module docstring). Sums are exact
    integers (uint16 holds 257 frames of 255); the memory beyond the frames is a warped copy of
    each frame that moved and one band of rows."""
    ref = frames[0].image
    h, w = ref.shape[:2]
    pictures = [f.image if reg.identity else cv2.warpPerspective(
        f.image, reg.homography, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        for f, reg in zip(frames, regs)]
    n = len(pictures)
    if n == 1:
        image = pictures[0]
    else:
        image = np.empty_like(ref)
        for y in range(0, h, ROWS_PER_BAND):
            image[y:y + ROWS_PER_BAND] = _fused_band([p[y:y + ROWS_PER_BAND] for p in pictures])
    method = {1: "one frame", 2: "mean of 2", 3: "median of 3"}.get(
        n, f"mean of {n} without each pixel's lowest and highest")
    rms = [r.rms_px for r in regs[1:] if math.isfinite(r.rms_px)]
    return Fused(image, n, method, noise_level(ref), noise_level(image),
                 float(np.sqrt(np.mean(np.square(rms)))) if rms else 0.0)


def _fused_band(layers: list[np.ndarray]) -> np.ndarray:
    """One band of two or more frames' pictures fused, uint8: the mean of 2, the median of 3, or
    from 4 on the mean without each pixel's lowest and highest value."""
    if len(layers) == 2:
        return _rounded_mean(cv2.add(layers[0], layers[1], dtype=cv2.CV_16U), 2)
    if len(layers) == 3:  # the median of three, element-wise
        a, b, c = layers
        return np.maximum(np.minimum(a, b), np.minimum(np.maximum(a, b), c))
    total, lo, hi = layers[0].astype(np.uint16), layers[0].copy(), layers[0].copy()
    for layer in layers[1:]:
        total += layer
        np.minimum(lo, layer, out=lo)
        np.maximum(hi, layer, out=hi)
    total -= lo
    total -= hi
    return _rounded_mean(total, len(layers) - 2)


def _rounded_mean(total: np.ndarray, n: int) -> np.ndarray:
    """total / n (uint16 totals of n values of 0-255) rounded to the nearest uint8, a tie to the
    even one. OpenCV divides each exact integer total by n in floating point and rounds to
    nearest-even: a true quotient off a tie lies at least 1/(2n) from it, far beyond the
    division's rounding error, so this is the exact rounding of total / n."""
    return cv2.divide(total, float(n)).astype(np.uint8)


# Frames whose noise (one frame's sigma, grey levels, from two frames' difference) is below this
# and whose own reads agree are not fused on the live page (worth_fusing).
QUIET_GREY_LEVELS = 3.0


def worth_fusing(frames: list[Frame]) -> bool:
    """Is fusing these frames of a calm table worth its cost (about a whole frame's read)? Yes when
    their own reads differ (a sticker on the edge of readability comes and goes with the noise)
    or when the noise is high (a sticker below readability in every frame may show in the
    average); no when quiet frames all read the same stickers: their average reads what each
    does (tests/bench/robust_fusion.py shows the fusion's gains all come with one or the other)."""
    if len(frames) < 2:
        return False
    if len({frozenset(f.stickers) for f in frames}) > 1:
        return True
    return temporal_noise(frames[0].image, frames[-1].image) >= QUIET_GREY_LEVELS


def temporal_noise(a: np.ndarray, b: np.ndarray, step: int = 4) -> float:
    """One frame's noise sigma (grey levels) from two frames of a still scene: the robust spread
    (MAD) of their difference over every step-th pixel, divided by sqrt(2). Only those pixels
    are turned grey (a grey pixel depends on its own colour alone)."""
    d = _grey_of_every(a, step).astype(np.int16) - _grey_of_every(b, step)
    twice_median = _twice_median(d)
    mad = _twice_median(np.abs(2 * d - twice_median)) / 4.0  # |d - median| is a multiple of 1/2
    return float(1.4826 * np.float32(mad) / math.sqrt(2.0))  # scaled in float32, as it always was


def _grey_of_every(image: np.ndarray, step: int) -> np.ndarray:
    """The grey of every step-th pixel of every step-th row."""
    sparse = image[::step, ::step]
    return sparse if sparse.ndim == 2 else cv2.cvtColor(np.ascontiguousarray(sparse), cv2.COLOR_BGR2GRAY)


def _twice_median(values: np.ndarray) -> int:
    """Twice the median of integers (an integer: the median of an even count is the mean of the
    middle two), counted in a histogram rather than sorted."""
    low = int(values.min())
    below_or_at = np.cumsum(np.bincount((values - low).ravel()))
    n = int(below_or_at[-1])
    middle = np.searchsorted(below_or_at, [(n - 1) // 2, n // 2], side="right")
    return int(middle.sum()) + 2 * low


# Immerkaer's Laplacian difference [[1, -2, 1], [-2, 4, -2], [1, -2, 1]], the outer product of
# this row with itself
LAPLACIAN_DIFFERENCE_ROW = np.array([1, -2, 1], dtype=np.float32)


def noise_level(image: np.ndarray) -> float:
    """Immerkaer's fast estimate of the noise sigma (grey levels) of a picture (Immerkaer 1996:
    a Laplacian difference that cancels smooth shading; edges make it an upper bound).

    The difference is exact in 16-bit integers on the 8-bit grey (|value| <= 16 * 255) and
    separable, and its magnitudes are summed exactly (cv2.norm): the figure a float filter and
    a float32 mean gave, without their rounding (a few parts in ten million), in a third of the time."""
    diff = cv2.sepFilter2D(detect.to_gray(image), cv2.CV_16S, LAPLACIAN_DIFFERENCE_ROW,
                           LAPLACIAN_DIFFERENCE_ROW)[1:-1, 1:-1]  # the border row and column left out
    return float(math.sqrt(math.pi / 2.0) * cv2.norm(diff, cv2.NORM_L1) / diff.size / 6.0)


def observe_fused(frames: list[Frame], camera=None, game: str | None = None, catalog: Catalog | None = None,
                  strict: bool = True, thorough: bool = True, min_reads: int = 1,
                  checked: bool = False) -> tuple[Observation, Fused]:
    """The Observation of the fused frames (registered on the first), and the fused picture.

    checked: every frame passed the busy-picture guard (a stream's frames, vision/roi.py); their
    average holds no square shape they do not, so it is not counted again.

    Stickers the frames read on their own (in at least min_reads of them) and the fused picture
    did not are kept (_with_frames_own). A piece none of the frames' own stickers showed is
    marked source "fused(N)". The
    Observation's extra "fusion" says how many frames, how, and the noise before and after.
    One frame: that frame's own observation, unchanged. Raises FusionError (strict) when the
    frames are not of one still table, pipeline.NoStickersError when nothing is found.
    """
    catalog = catalog or default_catalog()
    kept, regs = register_all(frames, catalog, strict)
    fused = fuse(kept, regs)
    found = _with_frames_own(detect.detect_all(fused.image, catalog, second_pass=thorough, guard=not checked), kept,
                             regs, min_reads)
    obs = pipeline.observe(fused.image, camera, game, catalog=catalog, detections=found)
    if fused.frames < 2:
        return obs, fused
    seen = set().union(*(f.stickers.keys() for f in kept))
    tag = f"fused({fused.frames})"
    pieces = tuple(p if seen & set(p.marker_ids) else replace(p, source=tag) for p in obs.pieces)
    info = {"frames": fused.frames, "method": fused.method, "noise_single": round(fused.noise_single, 2),
            "noise_fused": round(fused.noise_fused, 2), "registration_rms_px": round(fused.registration_rms_px, 3),
            "fused_only": sorted(p.name for p in pieces if p.source == tag)}
    return replace(obs, pieces=pieces, extra={**obs.extra, "fusion": info}), fused


def with_fused_pieces(stable: Observation, fused: Observation) -> Observation:
    """A stable state (the tracker's average of single-frame poses) with the pieces the fused
    picture of its calm period read and it lacks, each marked source "fused(N)": the tracker
    never confirmed them in a single frame. Pieces it has keep its poses (an average of N
    single-frame poses is as good as the pose in the average of N frames). Nothing is added when
    the two are not in one frame (the fused read anchored elsewhere)."""
    info = fused.extra.get("fusion")
    same_frame = (fused.frame.get("kind"), fused.frame.get("anchor")) == (stable.frame.get("kind"),
                                                                           stable.frame.get("anchor"))
    if not info or not same_frame:
        return stable
    tag = f"fused({info['frames']})"
    have = set(stable.names())
    added = [replace(p, source=tag) for p in fused.pieces if p.name not in have]
    pieces = tuple(sorted(stable.pieces + tuple(added), key=lambda p: p.name))
    return replace(stable, pieces=pieces, extra={**stable.extra, "fusion": dict(info, fused_only=sorted(
        p.name for p in added))})


def _with_frames_own(found: detect.DetectionResult, frames: list[Frame], regs: list[Registration],
                     min_reads: int = 1) -> detect.DetectionResult:
    """The fused picture's detections plus every sticker the frames read on their own (in at least
    min_reads of them) and the fused picture did not, moved onto the reference by the first such
    frame's registration and measured on that frame's own edges: a sticker on the edge of
    readability is read in some noisy frames and not others, and is not always read in their
    average (JPEG drops a noisy frame's fine detail for good), so fusing never loses it."""
    have = {d.marker_id for d in found.detections}
    reads: dict[int, int] = {}
    for f in frames:
        for i in f.stickers:
            reads[i] = reads.get(i, 0) + 1
    extra = {}
    for f, reg in zip(frames, regs):
        wanted = [i for i in f.stickers if i not in have and i not in extra and reads[i] >= min_reads]
        for d in _frame_detections(f, wanted):
            corners = d.corners if reg.identity else cv2.perspectiveTransform(
                np.asarray(d.corners, np.float64).reshape(-1, 1, 2), reg.homography).reshape(4, 2)
            extra[d.marker_id] = replace(d, corners=np.asarray(corners, np.float64))
    if not extra:
        return found
    return replace(found, detections=tuple(sorted(found.detections + tuple(extra.values()), key=lambda d: d.marker_id)))


def _frame_detections(frame: Frame, ids: list[int]) -> list[detect.Detection]:
    """The frame's own detections of these stickers: as its detector gave them, or (a live frame
    keeps only corners) its corners with their edge scatter and blur measured again on the frame
    (edges.refine_corners; its corners are not taken: refitting a refitted 12 px sticker moves a
    corner by up to 0.15 px)."""
    if not ids:
        return []
    own = {d.marker_id: d for d in frame.detections}
    if own:
        return [own[i] for i in ids if i in own]
    gray_f = detect.to_gray(frame.image).astype(np.float32)
    corners = np.array([frame.stickers[i] for i in ids], dtype=np.float64)
    _, rms, blur = edges.refine_corners(gray_f, corners)
    out = []
    for i, c, r, b in zip(ids, corners, rms, blur):
        side = detect.side_px(c)
        out.append(detect.Detection(marker_id=i, corners=c, side_px=side, edge_rms_px=float(max(r, 0.0)),
                                    blur_px=float(b)))
    return out


def detected_frames(images: list[np.ndarray], labels: list[str], catalog: Catalog | None = None,
                    thorough: bool = True) -> list[Frame]:
    """Frames of photos: each one's stickers found by the detector."""
    catalog = catalog or default_catalog()
    out = []
    for img, label in zip(images, labels):
        result = detect.detect_all(img, catalog, second_pass=thorough)
        out.append(Frame(img, stickers_of(result), label, result.detections))
    return out
