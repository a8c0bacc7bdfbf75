"""Reading a piece again where the game expects it, and seeing its place empty.

The first pass (vision/detect.py) looks for every sticker everywhere, so it must be sure of a
sticker from its pixels alone. Where the game says a piece it needs should stand
(referee.game.ExpectedPiece, game-frame mm, from the last reading or the setup), much less is
in question: one piece, a few ids, one place. So where such a piece was not read:

1. its stickers' corners are projected into the image with the frame's table pose (every
   height the catalog allows), and a crop around them, grown by the piece's sigma, is
   upsampled (UPSAMPLE_TO_PX a sticker side, at least 2x);
2. the sticker's outer square is found in the crop (the predicted square itself, and the
   square candidates ArUco's contour stage proposes near it, none on a sticker read already:
   a piece a turn may have carried is searched wide, among the read stickers of its
   neighbours; a wide search also moves the predicted square onto each) and fitted by its edges
   (vision/edges.py), then moved by a fraction of a px to where the dictionary's best-fitting
   codes (whichever ids) fit it best: an edge fit under a defocus disc and sharpening halos is
   off by a fifth of a 2 px cell, which costs most of the evidence;
3. its 7x7 cells and quiet zone are sampled and matched, as soft values, against the
   drawings of EVERY code of the dictionary (4 turns), of the near codes of the other
   dictionaries, of the other grids (AprilTag, 4x4/6x6/7x7 ArUco) and of two look-alikes
   (a QR code's finder square, a plain dark square), each under the blur model that fits
   best (MODELS: Gaussians, and a defocus disc plain or with in-camera sharpening). Under
   Gaussian noise, a drawing T explains the samples x (a + b T, b > 0) with a residual
   S (1 - c^2), c = the correlation; so its log-likelihood is E(T) = D c^2 / (2 (1 - c_best^2))
   with the noise variance taken from the best fit's residual (model error counted as noise:
   conservative) and D = EFFECTIVE_SAMPLES independent samples (the cells; their 3x3 samples
   and the blur tie neighbours together). The log-likelihood ratio of "the piece's id" against
   "anything else" is E(best turn of the piece's ids) - max E(every other drawing);
4. a still period gives N looks: Evidence sums E over the frames (the noise of each frame is
   its own), per place, while the place and its square stay put, so N frames of a weak sticker
   add up and a look-alike's evidence against the id adds up too;
5. the read is accepted only at LLR_MIN or more (chosen on synth.webcam.TUNING_CONDITIONS,
   checked on the held-back ones: docs/vision-webcam.md).

A re-read never makes a piece out of an empty place: an empty place matches every drawing
about as badly, and the best of 4000 other drawings then beats the piece's own (LLR < 0).
Where no square carries the piece's code and the place is in view, calm (no motion there) and
clearly empty (its grey range is small and it looks like the table around it), the piece is
reported in Observation.seen_empty. Where the game's anchor is out of view (a frame of the table's
own), the pieces read tie the expected places to it (expected_in_frame).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import cv2
import numpy as np

from . import detect, edges

UPSAMPLE_TO_PX = 40.0  # the crop is upsampled until a sticker is about this wide (2x-4x)
EFFECTIVE_SAMPLES = 25.0  # independent samples in a 7x7 sticker's 77 soft samples (its 25 bits' worth)
LLR_MIN = 12.0  # nats; chosen on the tuning conditions (tests/bench/reread_threshold.py), never on held-back ones
MIN_CONTRAST = 18.0  # grey levels between the square's border and its quiet zone
EMPTY_RANGE = 28.0  # grey p5-p95 over a place at most this: nothing with a sticker's contrast there
EMPTY_LIKE_TABLE = 22.0  # and its median colour within this of the table around it (per channel)
MOVED_SIDES = 0.35  # evidence of a place is dropped when its square moved this many sides
MIN_SIDE_PX = 6.0
MAX_SQUARES = 12  # square candidates tried a place (the nearest the prediction): bounds a wide search's cost
MAX_CROP_PX = 480  # a place's crop spans at most this (image px, before upsampling): bounds it too
FIT_ROWS = 64  # the square is fitted to the drawings of this many codes (those that fit it best at first)
FIT_SHIFT_PX = 0.25  # a step of the square's fit, in image px (times the crop's upsampling)
FIT_SCALE = 0.04  # and of its size
FIT_STEPS = 2
_FIT_MOVES = [(dx, dy, 1.0 + ds) for dx in (-1, 0, 1) for dy in (-1, 0, 1) for ds in (-FIT_SCALE, 0.0, FIT_SCALE)
              if (dx, dy, ds) != (0, 0, 0.0)]


@dataclass
class Look:
    """The evidence one place has gathered: sums of E per drawing, over the frames it stayed put."""

    centre: np.ndarray
    side: float
    evidence: np.ndarray
    frames: int = 0


@dataclass
class Evidence:
    """Per (piece, place) evidence kept across the frames of a stream (webui.live.tracking_observe)."""

    looks: dict = field(default_factory=dict)  # (piece, spot key) -> Look
    # (piece, spot key) -> (centre px, Reread or None, seen empty): a decided place, reused while
    # nothing moves there (a stream does only what changed since the last frame)
    settled: dict = field(default_factory=dict)
    cost_s: float = 0.0  # seconds the re-reads took (with the observe they redo), for tests/bench/speed.py
    frames: int = 0  # frames that re-read something

    def add(self, key, centre: np.ndarray, side: float, e: np.ndarray) -> Look:
        look = self.looks.get(key)
        if look is None or len(look.evidence) != len(e) or \
                np.linalg.norm(look.centre - centre) > MOVED_SIDES * max(side, 1.0):
            look = Look(centre, side, np.zeros_like(e))
            self.looks[key] = look
        look.evidence = look.evidence + e
        look.centre, look.side, look.frames = centre, side, look.frames + 1
        return look

    def forget(self, piece: str) -> None:
        for key in [k for k in self.looks if k[0] == piece]:
            del self.looks[key]
        for key in [k for k in self.settled if k[0] == piece]:
            del self.settled[key]

    def reuse(self, key, quad: np.ndarray, motion: np.ndarray | None):
        """(Reread or None, seen empty) decided at this place before, when nothing moved there since
        (a motion mask is known and clear over it) and the place is where it was; else None."""
        got = self.settled.get(key)
        if got is None or motion is None or _moving_at(motion, quad) or \
                np.linalg.norm(got[0] - quad.mean(axis=0)) > MOVED_SIDES * detect.side_px(quad):
            return None
        return got[1], got[2]

    def settle(self, key, quad: np.ndarray, read, empty: bool) -> None:
        """Keep a place's outcome when it is decided: nothing with a marker's contrast there, or the
        evidence twice LLR_MIN for or against the id."""
        if read is None or abs(read.llr) >= 2 * LLR_MIN:
            self.settled[key] = (quad.mean(axis=0), read, empty)


@dataclass(frozen=True)
class Reread:
    """One sticker read again: its detection, the LLR it was accepted with and the frames behind it."""

    piece: str
    detection: detect.Detection
    llr: float  # over every frame of the place's evidence
    frames: int
    llr_now: float  # this frame's alone: it must favour the id too (a swapped piece shows here first)


@dataclass(frozen=True)
class RereadResult:
    reads: tuple[Reread, ...]
    seen_empty: tuple[str, ...]
    # (piece, its sticker's side px where expected, why: "" (too small, dark or blurred to read),
    # "occupied" (another sticker is read there) or "out of view")
    not_read: tuple[tuple[str, float, str], ...]


def reread(image: np.ndarray, camera_pose: dict, expected, catalog, game: str | None, occupied: np.ndarray,
           evidence: Evidence | None = None, motion: np.ndarray | None = None) -> RereadResult:
    """Re-read every expected piece (referee.game.ExpectedPiece) at its place (see the module doc).

    camera_pose: Observation.frame["camera_pose"] (game frame -> camera); occupied: (k, 4, 2) the
    corners of the stickers already read (a place holding one of those is not this piece's);
    motion: a (H, W) bool mask of what moved since the last frame (None: nothing known)."""
    gray = detect.to_gray(image)
    game_ids = detect.second_pass_ids(catalog, game) or ()
    reads, empty, not_read = [], [], []
    for piece in expected:
        if not catalog.has_piece(piece.name):
            continue
        best, sides, looked_empty, why = None, [], True, ""
        for spot, ids in _spots(catalog.piece(piece.name)):
            for z in _heights(catalog, spot):
                quad = project_sticker(piece, spot, z, camera_pose)
                if quad is None or not _inside(quad, gray.shape, margin=detect.side_px(quad)):
                    looked_empty, why = False, why or "out of view"  # neither read nor seen empty
                    continue
                side = detect.side_px(quad)
                sides.append(side)
                if side < MIN_SIDE_PX:
                    looked_empty = False
                    continue
                if _overlaps(quad, occupied):
                    looked_empty, why = False, "occupied"  # another sticker is read there: not this piece, not empty
                    if _search_px(piece, quad, spot) < detect.side_px(quad):
                        continue  # and the piece cannot be anywhere else
                key = (piece.name, spot.slot, z)
                if _moving_at(motion, quad):  # a hand or a piece moving there: nothing to read, and what
                    if evidence is not None:  # was seen there before may have changed
                        evidence.forget(piece.name)
                    looked_empty, why = False, why or "moving"
                    continue
                known = evidence.reuse(key, quad, motion) if evidence is not None else None
                if known is not None:
                    got, empty_here = known
                else:
                    got = _read_at(gray, quad, piece, ids, game_ids, catalog, evidence, key, occupied)
                    empty_here = _clearly_empty(image, gray, quad, piece, spot, motion)
                    if evidence is not None:
                        evidence.settle(key, quad, got, empty_here)
                if got is not None and (best is None or got.llr > best.llr):
                    best = got
                looked_empty &= empty_here
        if best is not None and best.llr >= LLR_MIN and best.llr_now > 0:
            reads.append(best)
        elif sides or why:
            not_read.append((piece.name, float(max(sides, default=0.0)),
                             why if why in ("occupied", "moving") or not sides else ""))
            if looked_empty:
                empty.append(piece.name)
                if evidence is not None:
                    evidence.forget(piece.name)
    return RereadResult(tuple(reads), tuple(sorted(set(empty))), tuple(not_read))


TIE_MIN_PLACES = 3  # pieces read at this many places (TIE_APART_MM apart) must agree to tie a frame
TIE_APART_MM = 20.0
TIE_SLACK_MM = 5.0  # beyond 3 sigma of the expected place and of the read piece


def expected_in_frame(expected, pieces) -> tuple:
    """The expected pieces (game frame) moved into an observation's own frame (a camera-plane frame:
    the game's anchor out of view) by the rigid motion that takes the expected places of the pieces
    read to where they were read; () unless pieces read at TIE_MIN_PLACES places or more agree on it
    (each within 3 sigma of both, plus TIE_SLACK_MM: pieces a turn moved do not agree). Their sigma
    grows by the tie's residual. The re-read only ever reads a piece's own ids, so a wrong tie costs
    reads, never a wrong piece."""
    by_name = {e.name: e for e in expected}
    pairs = [(by_name[p.name], p) for p in pieces if p.name in by_name]
    if len(pairs) < TIE_MIN_PLACES:
        return ()
    src = np.array([[e.x_mm, e.y_mm] for e, _ in pairs])
    dst = np.array([[p.x_mm, p.y_mm] for _, p in pairs])
    tol = 3.0 * np.array([e.sigma_mm + p.sigma_mm for e, p in pairs]) + TIE_SLACK_MM
    best = None
    for i in range(len(pairs)):
        for j in range(i + 1, len(pairs)):
            if np.linalg.norm(src[i] - src[j]) < 2 * TIE_APART_MM:
                continue
            R, t = _rigid(src[[i, j]], dst[[i, j]])
            inliers = np.flatnonzero(np.linalg.norm(src @ R.T + t - dst, axis=1) <= tol)
            if best is None or len(inliers) > len(best):
                best = inliers
    if best is None or _places(src[best]) < TIE_MIN_PLACES:
        return ()
    R, t = _rigid(src[best], dst[best])
    rms = float(np.sqrt(np.mean(np.sum((src[best] @ R.T + t - dst[best]) ** 2, axis=1))))
    turn = math.degrees(math.atan2(R[1, 0], R[0, 0]))
    return tuple(replace(e, x_mm=float(xy[0]), y_mm=float(xy[1]), theta_deg=e.theta_deg + turn,
                         sigma_mm=float(math.hypot(e.sigma_mm, rms)))
                 for e, xy in zip(expected, np.array([[e.x_mm, e.y_mm] for e in expected]) @ R.T + t))


def _rigid(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(R, t): the rotation and shift in the plane taking src to dst in least squares."""
    a, b = src - src.mean(axis=0), dst - dst.mean(axis=0)
    angle = math.atan2(float((a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]).sum()), float((a * b).sum()))
    R = np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
    return R, dst.mean(axis=0) - src.mean(axis=0) @ R.T


def _places(xy: np.ndarray) -> int:
    """How many of the points stand TIE_APART_MM or more from every one counted before."""
    kept: list = []
    for p in xy:
        if all(np.linalg.norm(p - k) >= TIE_APART_MM for k in kept):
            kept.append(p)
    return len(kept)


def _moving_at(motion: np.ndarray | None, quad: np.ndarray) -> bool:
    if motion is None:
        return False
    h, w = motion.shape[:2]
    x0, y0 = np.clip(np.floor(quad.min(axis=0)).astype(int), 0, [w - 1, h - 1])
    x1, y1 = np.clip(np.ceil(quad.max(axis=0)).astype(int) + 1, 1, [w, h])
    return bool(motion[y0:y1, x0:x1].any())


def _spots(spec):
    """(one sticker of each place on the piece, the ids at that place): a double-sided piece shows
    one of two ids at the same spot."""
    by_place: dict = {}
    for st in spec.stickers:
        by_place.setdefault((round(st.x_mm, 2), round(st.y_mm, 2), round(st.size_mm, 2)), []).append(st)
    return [(sts[0], tuple(sorted(s.marker_id for s in sts))) for sts in by_place.values()]


def _heights(catalog, spot) -> list[float]:
    return sorted(set(catalog.heights_for(spot)))


def project_sticker(piece, sticker, z_mm: float, camera_pose: dict) -> np.ndarray | None:
    """(4, 2) image px of the sticker's black square (TL, TR, BR, BL) on the piece at its expected
    pose, at height z_mm; None when it falls behind the camera."""
    t = math.radians(piece.theta_deg)
    c, s = math.cos(t), math.sin(t)
    pts = np.array([[piece.x_mm + c * x - s * y, piece.y_mm + s * x + c * y, z_mm] for x, y in sticker.corners_local()])
    rvec = np.asarray(camera_pose["rvec"], dtype=np.float64)
    tvec = np.asarray(camera_pose["tvec"], dtype=np.float64)
    R = cv2.Rodrigues(rvec)[0]
    if ((pts @ R.T)[:, 2] + tvec[2] <= 1.0).any():
        return None
    out, _ = cv2.projectPoints(pts, rvec, tvec, np.asarray(camera_pose["camera_matrix"], dtype=np.float64),
                               np.asarray(camera_pose["dist_coeffs"], dtype=np.float64))
    return out.reshape(4, 2)


def _inside(quad: np.ndarray, shape, margin: float) -> bool:
    h, w = shape[:2]
    return bool(quad[:, 0].min() >= margin and quad[:, 1].min() >= margin and quad[:, 0].max() <= w - 1 - margin
                and quad[:, 1].max() <= h - 1 - margin)


def _overlaps(quad: np.ndarray, occupied: np.ndarray) -> bool:
    return bool(len(occupied)) and _near_any(quad, np.asarray(occupied, dtype=np.float64))


def _search_px(piece, quad: np.ndarray, sticker) -> float:
    """How far (px) the sticker may be from its predicted place: 2.5 sigma of the piece."""
    return 2.5 * piece.sigma_mm * detect.side_px(quad) / sticker.size_mm


def _read_at(gray: np.ndarray, quad: np.ndarray, piece, ids: tuple, game_ids: tuple, catalog,
             evidence: Evidence | None, key, occupied: np.ndarray | None = None) -> Reread | None:
    """The best square near quad, read against ids (see the module doc; game_ids: the game's, whose
    other dictionaries' near codes are drawn too), or None. The squares of the stickers read
    already (occupied: (k, 4, 2) image corners) are not this piece's and are not tried, so a wide
    search's candidates are the unread squares. The search reaches at most MAX_CROP_PX across."""
    side = detect.side_px(quad)
    reach = min(_search_px(piece, quad, catalog.sticker(ids[0])) + 0.6 * side, max(MAX_CROP_PX - side, side) / 2)
    k = float(np.clip(math.ceil(UPSAMPLE_TO_PX / side), 2, 4))
    x0, y0 = np.floor(quad.min(axis=0) - reach).astype(int)
    x1, y1 = np.ceil(quad.max(axis=0) + reach).astype(int) + 1
    h, w = gray.shape
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x1 - x0 < 8 or y1 - y0 < 8:
        return None
    big = cv2.resize(gray[y0:y1, x0:x1], None, fx=k, fy=k, interpolation=cv2.INTER_CUBIC)
    to_big = lambda q: (q - [x0, y0] + 0.5) * k - 0.5  # noqa: E731  pixel centres
    predicted = to_big(quad)
    read = to_big(np.asarray(occupied, dtype=np.float64)) if occupied is not None and len(occupied) else None
    mine = [] if read is not None and _near_any(predicted, read) else [predicted]
    found = _squares_near(big, predicted, reach * k, read)
    # each found square also as the predicted one moved there: the sticker's projected size and shape
    # fit a far square (a piece a turn carried) better than the contour stage's rough outline does
    moved = _moved_to(predicted, found) if not mine or reach > detect.side_px(quad) else []
    candidates = mine + found + moved
    if not candidates:
        return None
    big_f = big.astype(np.float32)
    refined, rms, blur = edges.refine_edges(big_f, np.array(candidates))
    best = None  # screened on the piece's own drawings only; the full evidence is for the best square
    own = _own_stack(ids)
    for q0, q, r, b in zip(candidates, refined, rms, blur):
        q = _same_start(q if r > 0 else q0, predicted)
        m = unit_samples(big_f, q)
        if m is None:
            continue
        likes = _products(own, m.astype(np.float32)).reshape(len(MODELS), -1).max(axis=1)
        if best is None or likes.max() > best[0]:
            best = (float(likes.max()), likes, q, m, float(b) / k if r > 0 else 0.0, float(r) / k if r > 0 else 0.0)
    if best is None:
        return None
    _, likes, q_big, m, blur_px, rms_px = best
    models = [MODELS[i] for i in np.argsort(-likes)[:MODELS_TRIED]]
    q_big, m = _fit_to_drawings(big_f, q_big, m, _best_model(m, models), k)
    e = evidence_of(m, ids, game_ids, models=models)
    q_img = (q_big + 0.5) / k - 0.5 + [x0, y0]
    look = evidence.add(key, q_img.mean(axis=0), detect.side_px(q_img), e) if evidence is not None else None
    total = look.evidence if look is not None else e
    llr, rot, marker_id = _llr(total, ids, game_ids)
    frames = look.frames if look is not None else 1
    det = detect.Detection(marker_id=marker_id, corners=np.roll(q_img, rot, axis=0) if rot else q_img,
                           side_px=detect.side_px(q_img), edge_rms_px=rms_px, source="reread", blur_px=blur_px)
    return Reread(piece.name, det, llr, frames, _llr(e, ids, game_ids)[0])


def _best_model(m: np.ndarray, models) -> tuple:
    """Of models, the one under which the best of the dictionary's codes (whichever ids) fits m best."""
    codes = len(_ALL_IDS) * 4  # _shared's first rows
    return max(models, key=lambda model: float(_products(_shared(model)[:codes], m.astype(np.float32)).max()))


def _fit_to_drawings(big_f: np.ndarray, q: np.ndarray, m: np.ndarray, model: tuple,
                     k: float) -> tuple[np.ndarray, np.ndarray]:
    """(square, unit samples) in the crop (upsampled k times), moved and scaled (FIT_STEPS rounds of
    FIT_SHIFT_PX and FIT_SCALE) to where the dictionary's codes that fit it best (FIT_ROWS of them,
    whichever ids) fit it better still.

    The edge fit of a 2 px-cell sticker under a disc and halos is off by 0.2-0.5 px, and a fifth of a
    cell off costs most of the evidence. The square is fitted to the drawings that explain it, never
    to the piece's own: a look-alike gets the same help as the id, so the LLR stays fair."""
    codes = _shared(model)[:len(_ALL_IDS) * 4]
    rows = codes[np.argsort(-_products(codes, m.astype(np.float32)))[:FIT_ROWS]]
    moves = np.array(_FIT_MOVES)
    best = (float((rows @ m.astype(np.float32)).max()), q, m)
    for _ in range(FIT_STEPS):
        centre, here = best[1].mean(axis=0), best[1]
        quads = centre + (here - centre)[None] * moves[:, 2, None, None] + moves[:, None, :2] * FIT_SHIFT_PX * k
        ms, ok = unit_samples_of(big_f, quads)
        fits = np.where(ok, (ms.astype(np.float32) @ rows.T).max(axis=1), -np.inf)
        j = int(np.argmax(fits))
        if fits[j] <= best[0]:
            break
        best = (float(fits[j]), quads[j], ms[j])
    return best[1], best[2]


def _squares_near(big: np.ndarray, predicted: np.ndarray, reach: float,
                  read: np.ndarray | None = None) -> list[np.ndarray]:
    """Square outlines ArUco's contour stage finds in the crop near the predicted sticker, of about
    its size, but none on a sticker read already (read: (k, 4, 2) in the crop's px); each also
    shrunk to the black square inside a blurred quiet zone. The MAX_SQUARES nearest the prediction."""
    det = detect._detector(("none", True, False), None, detect.DICTIONARY)
    corners, _, rejected = det.detectMarkers(big)
    side = detect.side_px(predicted)
    out = []
    for c in list(corners) + list(rejected if rejected is not None else ()):
        q = np.asarray(c, dtype=np.float64).reshape(4, 2)
        s = detect.side_px(q)
        if np.linalg.norm(q.mean(axis=0) - predicted.mean(axis=0)) > reach or not 0.6 * side < s < 1.8 * side:
            continue
        if read is not None and _near_any(q, read):
            continue
        out.append(q)
        if s > 1.15 * side:  # the quiet zone's outline: the black square is 7/9 of it
            out.append(q.mean(axis=0) + (q - q.mean(axis=0)) * 7.0 / 9.0)
    out.sort(key=lambda q: float(np.linalg.norm(q.mean(axis=0) - predicted.mean(axis=0))))
    return out[:MAX_SQUARES]


def _moved_to(predicted: np.ndarray, squares: list[np.ndarray]) -> list[np.ndarray]:
    """The predicted square moved to the centre of each square (a square and its shrunk inner
    square share a centre: once)."""
    centres = {tuple(np.round(q.mean(axis=0)).astype(int)): q.mean(axis=0) for q in squares}
    return [predicted - predicted.mean(axis=0) + c for c in centres.values()]


def _near_any(q: np.ndarray, read: np.ndarray) -> bool:
    """q lies on one of the read stickers (its centre within 0.8 of their side of theirs)."""
    d = np.linalg.norm(read.mean(axis=1) - q.mean(axis=0), axis=1)
    sides = np.linalg.norm(read[:, 1] - read[:, 0], axis=1)
    return bool((d < 0.8 * np.maximum(sides, detect.side_px(q))).any())


def _same_start(q: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """q's corners in the predicted square's turn and order (so turns add up across frames)."""
    if _turn(q) * _turn(predicted) < 0:
        q = q[::-1].copy()
    shifts = [np.linalg.norm(np.roll(q, -r, axis=0) - predicted, axis=1).sum() for r in range(4)]
    return np.roll(q, -int(np.argmin(shifts)), axis=0)


def _turn(p: np.ndarray) -> float:
    a, b = p[1] - p[0], p[2] - p[1]
    return float(a[0] * b[1] - a[1] * b[0])


def unit_samples(gray_f: np.ndarray, quad: np.ndarray) -> np.ndarray | None:
    """The square's 7x7 cells and quiet-zone ring as a unit zero-mean vector (detect._cell_samples'
    layout), or None when it cannot be sampled or has no marker's contrast."""
    m, ok = unit_samples_of(gray_f, quad[None])
    return m[0] if ok[0] else None


def unit_samples_of(gray_f: np.ndarray, quads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """((k, 7*7 + 4*7) unit samples, (k,) bool: sampled, in the image and with a marker's contrast) of
    k squares at once (one remap for all: the square's fit samples 26 of them a round)."""
    cells, ring, ok = detect.cell_samples_arrays(gray_f, quads, 7)
    k = len(quads)
    border = np.concatenate([cells[:, 0], cells[:, -1], cells[:, 1:-1, 0], cells[:, 1:-1, -1]], axis=1)
    ok &= np.median(ring, axis=1) - np.median(border, axis=1) >= MIN_CONTRAST
    x = np.concatenate([cells.reshape(k, -1), ring], axis=1).astype(np.float64)
    x -= x.mean(axis=1, keepdims=True)
    norm = np.linalg.norm(x, axis=1)
    ok &= norm >= 1e-6
    return x / np.maximum(norm, 1e-6)[:, None], ok


def evidence_of(m: np.ndarray, ids: tuple, game_ids: tuple = (), models=None) -> np.ndarray:
    """E per drawing (see _scores) for the unit samples m, under the blur model that fits best over
    every drawing alike (among `models`, those the square's own drawing fits best; all by default)."""
    best_e = None
    for model in models or MODELS:
        c = np.clip(_scores(game_ids or ids, model, m), 0.0, None)
        cmax = float(c.max())
        e = EFFECTIVE_SAMPLES * c ** 2 / (2.0 * max(1.0 - cmax ** 2, 0.02))
        if best_e is None or cmax > best_e[0]:
            best_e = (cmax, e)
    return best_e[1]


def _llr(e: np.ndarray, ids: tuple, game_ids: tuple = ()) -> tuple[float, int, int]:
    """(LLR of the best turn of ids against every other drawing, its turn, its id)."""
    rows_ids, rows_rot, mine, others = _rows_of(ids, game_ids or ids)
    j = int(mine[np.argmax(e[mine])])
    return float(e[j] - e[others].max()), int(rows_rot[j]), int(rows_ids[j])


def _rows_of(ids: tuple, drawn_for: tuple):
    """(_rows, rows of ids, rows of everything else), built once per pair."""
    key = ("rows_of", ids, drawn_for)
    if key not in _CACHE:
        rows_ids, rows_rot = _rows(drawn_for)
        mine = np.isin(rows_ids, ids)
        _CACHE[key] = (rows_ids, rows_rot, np.flatnonzero(mine), np.flatnonzero(~mine))
    return _CACHE[key]


_CACHE: dict = {}
_ALL_IDS = tuple(range(len(cv2.aruco.getPredefinedDictionary(detect.DICTIONARY).bytesList)))


def _rows(ids: tuple) -> tuple[np.ndarray, np.ndarray]:
    """(id, turn) of each row of _scores: the dictionary's codes, then -1 for every look-alike."""
    all_ids, rots, _ = detect._patterns(detect.DICTIONARY, _ALL_IDS, 7)
    n_other = len(_shared(MODELS[0])) - len(all_ids) + len(_foreign(ids, MODELS[0]))
    return np.concatenate([all_ids, -np.ones(n_other, int)]), np.concatenate([rots, np.zeros(n_other, int)])


def _scores(ids: tuple, model: tuple, m: np.ndarray) -> np.ndarray:
    """Correlation of the unit zero-mean samples m with every drawing under the blur model: every code
    of the dictionary (4 turns), the other grids' markers, a QR finder square and a dark square (built
    once a model), then the other dictionaries' near codes of ids."""
    m = m.astype(np.float32)
    return np.concatenate([_products(_shared(model), m), _products(_foreign(ids, model), m)])


def _products(T: np.ndarray, m: np.ndarray) -> np.ndarray:
    """T @ m in blocks of 128 rows: small enough that OpenBLAS keeps each on one thread (its threads
    on the whole product cost 10-100x on a busy machine: 43 ms instead of 0.5; detect._max_correlation)."""
    return np.concatenate([T[r:r + 128] @ m for r in range(0, len(T), 128)]) if len(T) else np.zeros(0, np.float32)


# The blurs a sticker is drawn under, (kind, size in cells, sharpening amount): the first pass's
# Gaussians, and a defocus disc (with a little Gaussian) plain or with the in-camera sharpening a
# cheap webcam adds (an unsharp mask). On a 2 px cell a disc's flat top and the halos' negative
# lobes decide the bits, and a Gaussian draws neither: a sticker drawn under the wrong blur leaves
# a residual that the LLR counts as noise (chosen on synth.webcam's tuning condition tune-cheap).
GAUSS_MODELS = tuple(("gauss", level, 0.0) for level in detect._BLUR_LEVELS)
DISC_MODELS = tuple(("disc", radius, amount) for radius in (0.8, 1.0, 1.2) for amount in (0.0, 1.0, 2.0))
MODELS = GAUSS_MODELS + DISC_MODELS
MODELS_TRIED = 3  # models the square's own drawing fits best, among which every drawing's fit chooses
DISC_GAUSS_CELLS = 0.2
SHARPEN_RADIUS_CELLS = 0.5
_DRAW_PX = 12  # drawing px a cell, as detect's drawings


def _normed(T: np.ndarray) -> np.ndarray:
    T = T - T.mean(axis=1, keepdims=True)
    return np.ascontiguousarray(T / np.maximum(np.linalg.norm(T, axis=1, keepdims=True), 1e-9), dtype=np.float32)


def _shared(model: tuple) -> np.ndarray:
    if ("shared", model) not in _CACHE:
        _, _, patterns = detect._patterns(detect.DICTIONARY, _ALL_IDS, 7)
        B = _response(model)
        own, grids, looks = _normed(patterns @ B), _other_grids(model), _look_alikes(B, 7)
        _CACHE[("shared", model)] = np.concatenate([own, grids, looks]).astype(np.float32)
    return _CACHE[("shared", model)]


def _foreign(ids: tuple, model: tuple) -> np.ndarray:
    key = ("foreign", ids, model)
    if key not in _CACHE:
        patterns = detect._foreign_patterns(detect.DICTIONARY, ids, 7)
        _CACHE[key] = _normed(np.array(patterns) @ _response(model)) if patterns else np.zeros((0, 7 * 7 + 4 * 7), np.float32)
    return _CACHE[key]


def _own_stack(ids: tuple) -> np.ndarray:
    """(len(MODELS) * 4 len(ids), samples): the piece's own drawings under every model, model by model."""
    key = ("own", ids)
    if key not in _CACHE:
        _, _, patterns = detect._patterns(detect.DICTIONARY, ids, 7)
        _CACHE[key] = np.concatenate([_normed(patterns @ _response(model)) for model in MODELS])
    return _CACHE[key]


def _response(model: tuple, n: int = 7) -> np.ndarray:
    """((n+2)^2, n*n + 4n): samples of a drawing white in one cell only, under the blur model
    (detect._cell_response for the first pass's Gaussians)."""
    if model[0] == "gauss":
        return detect._cell_response(n, model[1])
    key = ("response", model, n)
    if key not in _CACHE:
        rows = []
        for cell in range((n + 2) ** 2):
            big = np.zeros(((n + 2) * _DRAW_PX, (n + 2) * _DRAW_PX), np.float32)
            r, c = divmod(cell, n + 2)
            big[r * _DRAW_PX:(r + 1) * _DRAW_PX, c * _DRAW_PX:(c + 1) * _DRAW_PX] = 1.0
            rows.append(_sampled(_blurred(big, model, cv2.BORDER_CONSTANT), n))
        _CACHE[key] = np.array(rows)
    return _CACHE[key]


def _other_grids(model: tuple, n: int = 7) -> np.ndarray:
    """detect._other_grid_templates under the blur model: every marker of another grid drawn over the
    same black square (its g x g cells and the white outside as a basis)."""
    if model[0] == "gauss":
        return detect._other_grid_templates(model[1], n)
    parts = []
    for dictionary in detect.OTHER_GRID_DICTIONARIES:
        g = cv2.aruco.getPredefinedDictionary(dictionary).markerSize + 2
        if g == n:
            continue
        rows, size = [], (n + 2) * _DRAW_PX
        inner = slice(_DRAW_PX, _DRAW_PX + n * _DRAW_PX)
        for cell in range(g * g + 1):
            big = np.zeros((size, size), np.float32)
            if cell < g * g:
                one = np.zeros((g, g), np.float32)
                one[divmod(cell, g)] = 1.0
                big[inner, inner] = cv2.resize(one, (n * _DRAW_PX, n * _DRAW_PX), interpolation=cv2.INTER_NEAREST)
            else:
                big[:] = 1.0
                big[inner, inner] = 0.0
            rows.append(_sampled(_blurred(big, model, cv2.BORDER_REPLICATE), n))
        parts.append(_normed(detect._grid_patterns(dictionary) @ np.array(rows)))
    return np.concatenate(parts)


def _blurred(big: np.ndarray, model: tuple, border: int) -> np.ndarray:
    """A drawing (_DRAW_PX a cell) under the model's disc and Gaussian, then its sharpening."""
    _, radius, amount = model
    r = radius * _DRAW_PX
    half = int(math.ceil(r)) + 1
    yy, xx = np.mgrid[-half:half + 1, -half:half + 1]
    disc = np.clip(r + 0.5 - np.hypot(xx, yy), 0.0, 1.0).astype(np.float32)  # its rim a px wide, antialiased
    out = cv2.filter2D(big, -1, disc / disc.sum(), borderType=border)
    out = cv2.GaussianBlur(out, (0, 0), DISC_GAUSS_CELLS * _DRAW_PX, borderType=border)
    if amount:
        out = out + np.float32(amount) * (out - cv2.GaussianBlur(out, (0, 0), SHARPEN_RADIUS_CELLS * _DRAW_PX,
                                                                 borderType=border))
    return out


def _sampled(big: np.ndarray, n: int) -> np.ndarray:
    """A drawing's samples at refcam's points: its cells' 3x3 means, then the quiet-zone ring."""
    px = ((detect._sample_points(n) + 1.0) * _DRAW_PX - 0.5).astype(np.float32)
    v = detect.remap(big, px[:, 0].reshape(1, -1), px[:, 1].reshape(1, -1), cv2.INTER_LINEAR).ravel()
    n_cell = n * n * len(detect._CELL_OFFSETS)
    return np.concatenate([v[:n_cell].reshape(n * n, -1).mean(axis=1), v[n_cell:]])


def _look_alikes(B: np.ndarray, n: int) -> np.ndarray:
    """A QR code's finder square (black ring, white ring, 3x3 black) and a plain dark square, drawn
    as the markers are (with their quiet zone), unit zero-mean."""
    finder = np.ones((n + 2, n + 2), np.float32)
    finder[1:n + 1, 1:n + 1] = 0.0
    finder[2:n, 2:n] = 1.0
    finder[3:n - 1, 3:n - 1] = 0.0
    dark = np.ones((n + 2, n + 2), np.float32)
    dark[1:n + 1, 1:n + 1] = 0.0
    return _normed(np.stack([finder.ravel(), dark.ravel()]) @ B)


def _clearly_empty(image: np.ndarray, gray: np.ndarray, quad: np.ndarray, piece, spot, motion) -> bool:
    """The place (the sticker's square grown by the piece's reach) is calm, holds nothing with a
    sticker's contrast, and looks like the table just around it."""
    centre = quad.mean(axis=0)
    radius = 0.75 * detect.side_px(quad) + _search_px(piece, quad, spot)
    h, w = gray.shape
    if not (radius * 2.2 <= centre[0] <= w - 1 - radius * 2.2 and radius * 2.2 <= centre[1] <= h - 1 - radius * 2.2):
        return False  # the place or the table around it is out of view
    yy, xx = np.ogrid[:h, :w]
    x0, x1 = int(centre[0] - 2.2 * radius), int(centre[0] + 2.2 * radius) + 1
    y0, y1 = int(centre[1] - 2.2 * radius), int(centre[1] + 2.2 * radius) + 1
    d = np.hypot(xx[:, x0:x1] - centre[0], yy[y0:y1, :] - centre[1])
    inner, ring = d <= radius, (d > 1.6 * radius) & (d <= 2.2 * radius)
    if motion is not None and motion[y0:y1, x0:x1][inner | ring].any():
        return False  # a hand or a moving piece: not seen
    g = gray[y0:y1, x0:x1].astype(np.float32)
    p5, p95 = np.percentile(g[inner], (5, 95))
    if p95 - p5 > EMPTY_RANGE:
        return False
    crop = image[y0:y1, x0:x1].reshape(-1, image.shape[2]) if image.ndim == 3 else g.reshape(-1, 1)
    here, around = np.median(crop[inner.ravel()], axis=0), np.median(crop[ring.ravel()], axis=0)
    return bool(np.abs(here.astype(np.float32) - around.astype(np.float32)).max() <= EMPTY_LIKE_TABLE)


CANDIDATE_GROWTH_MM = 0.5  # a candidate's sigma grows this much a frame it is not read
CANDIDATE_MAX_SIGMA_MM = 20.0
MOTION_LEVEL = 18  # grey change between frames that counts as motion (noise of a webcam: 3-6)


class StreamMemory:
    """What the re-read keeps over a stream of frames (webui.live.tracking_observe): each piece
    read once stays a candidate at its last pose, its sigma growing while it is not read, until
    its place is seen empty; the evidence of every place over the still frames; and the previous
    frame, whose difference is the motion mask (a hand or a moving piece is never seen empty)."""

    def __init__(self):
        self.candidates: dict = {}  # name -> ExpectedPiece
        self.evidence = Evidence()
        self._previous: np.ndarray | None = None
        self._given: dict = {}  # name -> the game's place for it this frame
        self._read_under: dict = {}  # name -> the game's place for it when the stream last read it

    def expected(self, given=()) -> tuple:
        """The pieces to re-read: those the game expects and every candidate. The game's place wins,
        unless the stream has read the piece since the game last placed it: the game places a piece
        from its stable tables only, so a piece put down elsewhere and read there in a frame since
        is looked for where it was read, not at the place it left (with the game's sigma where
        that is wider)."""
        self._given = {e.name: _place_of(e) for e in given}
        sigma = {e.name: e.sigma_mm for e in given}  # the game's own doubt (a piece a turn may carry) is kept
        newer = {n: replace(c, sigma_mm=max(c.sigma_mm, sigma[n])) for n, c in self.candidates.items()
                 if n in self._given and self._read_under.get(n) == self._given[n]}
        names = set(self._given)
        return tuple(newer.get(e.name, e) for e in given) + \
            tuple(c for n, c in sorted(self.candidates.items()) if n not in names)

    def motion(self, image: np.ndarray) -> np.ndarray | None:
        """(H, W) bool: where this frame differs from the previous one (None for the first). The
        frame may be given grey (the detector's): the same mask, without converting it again."""
        small = cv2.resize(detect.to_gray(image), None, fx=0.25, fy=0.25, interpolation=cv2.INTER_AREA)
        previous, self._previous = self._previous, small
        if previous is None or previous.shape != small.shape:
            return None
        h, w = image.shape[:2]
        moved = cv2.threshold(cv2.absdiff(small, previous), MOTION_LEVEL, 1, cv2.THRESH_BINARY)[1]
        if not cv2.countNonZero(moved):
            return np.zeros((h, w), bool)  # nothing moved: no need to draw it at full size
        moved = cv2.dilate(moved, np.ones((5, 5), np.uint8))
        return cv2.resize(moved, (w, h), interpolation=cv2.INTER_NEAREST).view(bool)  # 0 and 1: bool as it is

    def update(self, obs) -> None:
        """After a frame: read pieces become candidates at their pose; the others' sigma grows;
        pieces seen empty are given up."""
        from referee.game import ExpectedPiece

        read = set()
        for p in obs.pieces:
            read.add(p.name)
            self.candidates[p.name] = ExpectedPiece(p.name, p.x_mm, p.y_mm, p.theta_deg, max(p.sigma_mm, 1.0))
            self._read_under[p.name] = self._given.get(p.name)
        for name, c in list(self.candidates.items()):
            if name in obs.seen_empty:
                del self.candidates[name]
                self._read_under.pop(name, None)
                self.evidence.forget(name)
            elif name not in read:
                self.candidates[name] = replace(c, sigma_mm=min(c.sigma_mm + CANDIDATE_GROWTH_MM, CANDIDATE_MAX_SIGMA_MM))


def _place_of(e) -> tuple[float, float, float]:
    return (round(e.x_mm, 3), round(e.y_mm, 3), round(e.theta_deg, 3))


def warm() -> None:
    """Build the drawings every re-read and the detector's second pass match against (a few s once),
    before a stream starts."""
    from referee.catalog import default_catalog

    for model in MODELS:
        _shared(model)
    detect.warm_second_pass(default_catalog())
