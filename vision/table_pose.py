"""Where the camera is relative to the table, from every flat sticker at its known height.

Model: the camera pose (R, t) maps table-frame points X to camera points R X + t. Each
flat piece (board, tiles, gate, cards ...) is rigid with an unknown in-plane pose
(x, y, theta); one reference piece is held at the identity, which fixes the frame.
Its stickers' corners lie at (piece layout, z = sticker height). All corners of all
flat pieces are fitted jointly (Levenberg-Marquardt with an analytic Jacobian and Huber weights, residuals
whitened by each corner's noise), initialised from IPPE square solutions per sticker.
A piece whose corners still disagree with the common plane (bumped, tilted, lifted)
is dropped from the plane and the fit repeated.

Without a camera file the focal length joins the unknowns (principal point at the
image centre, no distortion assumed): flat stickers of known size on one plane fix
it only loosely, so callers widen sigma.

Edge bias: a camera's tone curve (and, less, blur and sharpening) moves every black
square's edges in or out by about the same fraction of a pixel, which reads as a change of
scale and tilt. Sticker centres do not move, sticker sizes do, and every sticker's true size
is in the catalog: so the fit carries one more unknown, the edge bias (px, > 0: squares read
small) at the image's median blur, with a weak prior. Each edge's share of it scales with the
blur measured across that edge (a tone curve moves an edge by a fixed fraction of its blur width),
less where the one-cell black border is thin against that blur (bias_outward).

Uncertainty: the fit's covariance from the corner noise model, scaled by the residuals the
picture shows in the moves that shift poses (each sticker's corners shifted or turned together:
_rigid_chi2, RIGID_MIN_DOF; NOISE_FACTOR_FLOOR), plus each sticker's own edge offset, which moves its four
corners together (_edge_offset_cov: modelled from bias and blur, or as large as the residuals
show it, and its smooth gradient across the picture, which reads as tilt), plus each sticker's
shift under motion blur (_centre_shift_cov, from its per-edge blurs). When few or blurred
stickers fix the plane, callers also refit it without each sticker in turn (plane_support,
leave_one_out) and take that spread where it is larger.

Stickers stuck by hand: on pieces with several stickers, each sticker's placement on its piece
(StickerObs.placement_mm / placement_deg) is a prior that moves its four corners together; the fit
uses it when the residuals show the stickers off their catalog layout (PLACEMENT_SHOWN).

Coordinates: "ideal pixels" = undistorted pixel coordinates under K (no distortion).
"""

from __future__ import annotations

import copy
import math
from collections import OrderedDict
from dataclasses import astuple, dataclass, field, fields, replace

import cv2
import numpy as np

from referee.errors import RefcamError


class TablePoseError(RefcamError):
    """The stickers in view do not determine where the table is."""


@dataclass
class Intrinsics:
    """Ideal pinhole intrinsics; focal_free: the focal length is an unknown (no camera file)."""

    fx: float
    fy: float
    cx: float
    cy: float
    focal_free: bool = False
    # without a camera file: priors on the unknown focal length (log-normal around a typical
    # webcam's ~65 deg field of view) and on the radial distortion k1 (webcams: |k1| < ~0.15)
    prior_f: float = 0.0
    prior_log_f_sigma: float = 0.35
    prior_k1_sigma: float = 0.08
    prior_k2_sigma: float = 0.08

    def K(self, f: float | None = None) -> np.ndarray:
        fx = f if f is not None else self.fx
        fy = f * self.fy / self.fx if f is not None else self.fy
        return np.array([[fx, 0, self.cx], [0, fy, self.cy], [0, 0, 1]], dtype=np.float64)


@dataclass
class StickerObs:
    """One detected sticker: (4, 2) ideal-pixel corners TL,TR,BR,BL, its local (4, 2) corners in
    its piece frame (mm), height z (mm) and corner noise sigma (px)."""

    marker_id: int
    piece: str
    ideal_px: np.ndarray
    local_mm: np.ndarray
    z_mm: float
    sigma_px: float
    size_mm: float
    side_px: float
    blur_px: float = 0.0  # blur sigma measured across its edges (0: unknown)
    streak_px: float = 0.0  # its most blurred edge's blur beyond its sharpest's, in quadrature (motion blur)
    edge_blur_px: tuple = ()  # the blur across each of its four edges (edge k: corner k to k+1), when measured
    # how far it may sit off its catalog place on its piece (stuck by hand): sd per axis (mm) and of its turn (deg)
    placement_mm: float = 0.0
    placement_deg: float = 0.0


@dataclass
class TablePose:
    rvec: np.ndarray  # (3,) table -> camera
    tvec: np.ndarray  # (3,)
    f: float  # focal length used (fx)
    k1: float  # radial distortion estimated without a camera file (0 with one: corners are undistorted)
    k2: float
    intrinsics: Intrinsics
    reference: str  # piece held at the identity
    piece_poses: dict  # flat piece name -> (x, y, theta_rad) in the reference frame
    piece_cov: dict  # flat piece name -> (3, 3) covariance of (x, y, theta_rad)
    camera_cov: np.ndarray  # (6 or 7, 6 or 7) covariance of (rvec, tvec[, f])
    # flat piece name -> (3, 3): the part of piece_cov that moves with the camera beyond what it would be
    # with every sticker exactly in place (_camera_share_added); empty without the placement prior
    camera_share_added: dict = field(default_factory=dict)
    outliers: list = field(default_factory=list)  # pieces left out of the plane fit
    rms_sigma: float = 0.0  # rms whitened residual of the plane fit
    cost: float = 0.0  # robust cost at the solution
    used_pieces: list = field(default_factory=list)
    noise_factor: float = 1.0  # measured corner noise / modelled corner noise (floored)
    noise_floor: float | None = None  # the floor noise_factor was held at (raised under a tone curve); None: unknown
    # squared noise factor of the pieces fitted on their own, pooled over the first batch of them
    # (vision.pieces.fit_pieces sets it): later fits of some of them use the same level
    pieces_noise2: float | None = None
    edge_bias_px: float = 0.0  # squares' edges read this far inside their true place (at edge_bias_blur_px)
    edge_bias_blur_px: float = 0.0  # the blur the bias refers to (median of the plane's stickers)
    edge_bias_sigma_px: float = 0.0
    # with a camera file: how far the stickers would move the focal length from the file's (px), and
    # its sd, in one Gauss-Newton step from this fit (_focal_score): check_camera_file's first look
    focal_offset_px: float = 0.0
    focal_offset_sigma_px: float = math.inf

    @property
    def R(self) -> np.ndarray:
        return cv2.Rodrigues(self.rvec)[0]

    def K(self) -> np.ndarray:
        return self.intrinsics.K(self.f if self.intrinsics.focal_free else None)

    def camera_centre(self) -> np.ndarray:
        return -self.R.T @ self.tvec

    def tilt_deg(self) -> float:
        """Angle between the optical axis and the table normal (0 = looking straight down)."""
        return math.degrees(math.acos(abs(float(self.R[2, 2]))))


# The corner noise model is scaled by the residuals each picture shows. The floor used to be
# 0.35, a margin for what residuals cannot show (per-sticker errors hiding in the poses); that
# is now measured where it matters, by refitting without each sticker when few or blurred
# stickers fix the plane (leave_one_out), so the floor only guards against a degenerate fit.
# Clean 1080p renders: 85 % of errors within 0.5 sigma with 0.35 (and the 0.05 mm position
# floor), 70 % with 0.1 (tests/bench/robust.py).
NOISE_FACTOR_FLOOR = 0.1
# The same when a tone curve's edge bias was removed. It was 0.6 while every edge of a sticker took
# one share of the bias: the share's error between edges tilted the plane (edges facing a tilt are
# thinner, bias_outward), which a wider sigma had to hold. With each edge's own share, varied tuning
# tables (synth/variety.py, 4 per game) had errors p95 / max under gamma 2.2 2.26 / 3.15 -> 1.81 /
# 2.80 mm. The floor is the lowest on a 0.05 grid that keeps 2 sigma >= 95 % wherever 0.6 did, on
# those tables and the default bench seeds (tests/bench/robust.py), with no piece newly confidently
# wrong there or on the webcam chain's tuning seeds: at 0.4 the default seeds hold 95.4 % under an
# sRGB-like curve and 97.2 % under gamma 2.2 at 4K, the tuning tables 96.0-99.6 % (0.5 sigma under
# gamma 2.2 70.7 % at 0.6, 66.9 % at 0.45, 66.2 % at 0.4); at 0.35 the default seeds fell to 94.0 %
# and 94.4 %.
BIASED_NOISE_FLOOR = 0.4
# prior on the edge bias (px): tone curves move edges by up to ~0.3 blur sigma
EDGE_BIAS_PRIOR_PX = 0.5
# On a sharp picture (median edge blur below EDGE_BIAS_SHARP_PX) a bias estimate within its own
# sigma of 0 is noise, not a tone curve: left free, it trades the layout's scale and tilt for that
# noise where pieces lie far from the stickers that fix the plane (bench-accuracy 1080p pair-distance
# max 0.5 -> 2.1 mm after the bias was introduced; 1.3 with this). The fit is then repeated with the
# bias held at 0 by a tight prior (px). Blurred pictures keep it free: blur moves edges too, and a
# stricter test (1.5-3 sigma) cost tone-curve and noise figures in tests/bench/robust.py.
EDGE_BIAS_SIGNIFICANT = 1.0
EDGE_BIAS_SHARP_PX = 1.0
EDGE_BIAS_HELD_PX = 1e-4


def edge_normals(ideal_px: np.ndarray) -> np.ndarray:
    """(4, 2): the outward unit normal of each edge k (corner k to k+1) of a square seen at ideal_px;
    (k, 4, 2) for k squares at once."""
    c = np.asarray(ideal_px, dtype=np.float64)
    e = np.roll(c, -1, axis=-2) - c
    n = np.stack([e[..., 1], -e[..., 0]], axis=-1) / np.maximum(np.linalg.norm(e, axis=-1), 1e-9)[..., None]
    mids = c + e / 2
    return n * np.where((n * (mids - c.mean(axis=-2, keepdims=True))).sum(axis=-1) < 0, -1.0, 1.0)[..., None]


def corner_outward(ideal_px: np.ndarray, edge_moves: np.ndarray | None = None) -> np.ndarray:
    """(4, 2): how each corner of a square moves when all four edges move out by 1 px (the sum of
    the two adjacent edges' outward unit normals), or each edge k by edge_moves[k] px; (k, 4, 2) for k
    squares at once (edge_moves (k, 4))."""
    n = edge_normals(ideal_px)
    if edge_moves is not None:
        n = n * np.asarray(edge_moves, dtype=np.float64)[..., None]
    return n + np.roll(n, 1, axis=-2)  # corner k: edge k-1 (into it) and edge k (out of it)


# the edge bias is not quite the same on every sticker (it scales with each one's blur and
# black/white levels): per corner, this fraction of it is left as noise once it is removed
EDGE_BIAS_SPREAD = 0.8
EDGE_BIAS_NEGLIGIBLE_PX = 0.03


def bias_share(s: StickerObs, blur_ref_px: float) -> float:
    """How much of the image's edge bias (given at blur blur_ref_px) this sticker carries: its edges'
    mean share where they were measured one by one (bias_shares)."""
    return float(bias_shares([s], blur_ref_px)[0][0])


def unbias_sticker(s: StickerObs, bias_px: float, blur_ref_px: float = 0.0) -> StickerObs:
    """The sticker with its corners moved out by its share of the image's edge bias, its corner
    sigma widened by the bias's sticker-to-sticker spread."""
    if abs(bias_px) < EDGE_BIAS_NEGLIGIBLE_PX:
        return s
    shares = bias_shares([s], blur_ref_px)
    moved = bias_outwards(np.asarray(s.ideal_px, dtype=np.float64)[None], shares)[0]
    return replace(s, ideal_px=s.ideal_px + bias_px * moved,
                   sigma_px=math.hypot(s.sigma_px, EDGE_BIAS_SPREAD * (bias_px * float(shares[0][0]))))


# A tone curve moves each edge by an amount that grows with the blur across it, and shrinks where
# the square's one-cell black border is thin against that blur (its dark bar no longer reaches
# black): measured against the renders' true corners under gamma 2.2 (varied tuning tables, 4 per
# game), an edge's shift fits blur x (1 - EDGE_BIAS_THIN x blur / cell), the cell measured across
# that edge. A tilted view thins the cells across the edges facing the tilt: their edges moved
# 0.20 px against 0.29 px for the others on one Tornado table (0.12 against 0.38 on another), which
# reads as a sticker foreshortened more than it is, and so as a tilt of the plane (pieces 1 m from
# the gate 2-3 mm off). Each edge then carries its own share (bias_outward).
# Fitted over every sticker of the tuning tables: 1.24 under gamma 2.2, 0.69 under an sRGB-like curve.
# 0.7 and 1.0 gave the same bench figures there (0.5 sigma within 0.7 points); at 0.7 every case of
# tests/test_edge_bias_truth.py has its corrected corners as close to the truth as with one share or
# closer (at 1.0 a Tornado table under the sRGB-like curve lost 0.01 px).
EDGE_BIAS_THIN = 0.7
EDGE_BIAS_THIN_MIN = 0.2


def bias_shares(stickers: list[StickerObs], blur_ref_px: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every sticker's share of the image's edge bias at once (one pass over their squares): (k,) its
    one share (bias_share), (k, 4) each edge's (its blur and the cell across it, above), and (k,)
    whether its edges' blurs were measured (where not, its edges take its one share)."""
    blur = np.array([s.blur_px for s in stickers], dtype=np.float64)
    # blurs read from a matched drawing (strongly blurred stickers) are coarse: bounded share
    one = np.where(blur > 0, np.clip(blur / blur_ref_px, 0.5, 1.5), 1.0) if blur_ref_px > 0 else np.ones(len(blur))
    measured = np.array([blur_ref_px > 0 and len(s.edge_blur_px) == 4 and min(s.edge_blur_px) > 0 for s in stickers],
                        dtype=bool)
    per_edge = np.zeros((len(stickers), 4))
    if measured.any():
        seen = [s for s, m in zip(stickers, measured) if m]
        c = np.array([s.ideal_px for s in seen], dtype=np.float64)
        n = edge_normals(c)
        cells = np.abs(((c[:, None, :, :] - c[:, :, None, :]) * n[:, :, None, :]).sum(axis=-1)).max(axis=-1) / 7.0
        edge_blur = np.array([s.edge_blur_px for s in seen], dtype=np.float64)
        thin = np.maximum(EDGE_BIAS_THIN_MIN, 1.0 - EDGE_BIAS_THIN * edge_blur / np.maximum(cells, 0.5))
        per_edge[measured] = np.clip(edge_blur * thin / blur_ref_px, 0.5 * EDGE_BIAS_THIN_MIN, 1.5)
        one = np.where(measured & (blur > 0), per_edge.mean(axis=1), one)
    return one, per_edge, measured


def bias_outwards(ideal_px: np.ndarray, shares: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
    """(k, 4, 2): how each corner of k stickers (ideal_px (k, 4, 2)) moves per px of the image's edge
    bias, given their bias_shares: each edge by its own share, or all by the sticker's one share
    where its edges' blurs were not measured."""
    one, per_edge, measured = shares
    out = corner_outward(ideal_px) * one[:, None, None]
    if measured.any():
        out[measured] = corner_outward(ideal_px[measured], per_edge[measured])
    return out


def bias_outward(s: StickerObs, blur_ref_px: float) -> np.ndarray:
    """(4, 2): bias_outwards of one sticker."""
    return bias_outwards(np.asarray(s.ideal_px, dtype=np.float64)[None], bias_shares([s], blur_ref_px))[0]


def rot_z(theta: float) -> np.ndarray:
    c, s = math.cos(theta), math.sin(theta)
    return np.array([[c, -s], [s, c]])


def piece_points(local_mm: np.ndarray, z: float | np.ndarray, pose) -> np.ndarray:
    """(N, 2) local piece coordinates -> (N, 3) table points for pose (x, y, theta_rad)."""
    x, y, th = pose
    c, s = math.cos(th), math.sin(th)
    out = np.empty((len(local_mm), 3))
    out[:, 0] = x + c * local_mm[:, 0] - s * local_mm[:, 1]
    out[:, 1] = y + s * local_mm[:, 0] + c * local_mm[:, 1]
    out[:, 2] = z
    return out


def project_ideal(X: np.ndarray, rvec, tvec, K: np.ndarray) -> np.ndarray:
    """(N, 3) table points -> (N, 2) ideal pixels."""
    R = cv2.Rodrigues(np.asarray(rvec, dtype=np.float64))[0]
    Xc = X @ R.T + tvec
    return np.stack([K[0, 0] * Xc[:, 0] / Xc[:, 2] + K[0, 2], K[1, 1] * Xc[:, 1] / Xc[:, 2] + K[1, 2]], axis=1)


def intersect_plane(ideal_px: np.ndarray, z: float, rvec, tvec, K: np.ndarray) -> np.ndarray:
    """(N, 2) ideal pixels -> (N, 2) table (x, y) where their rays meet the plane at height z."""
    R = cv2.Rodrigues(np.asarray(rvec, dtype=np.float64))[0]
    return _cut_rays(_rays(ideal_px, K), z, R, -R.T @ tvec)


def intersect_plane_many(ideal_px: np.ndarray, z: float, cameras: list) -> np.ndarray:
    """(cameras, N, 2): intersect_plane of the same ideal pixels under each camera (rvec, tvec, K)."""
    R = np.stack([cv2.Rodrigues(np.asarray(rvec, dtype=np.float64))[0] for rvec, _, _ in cameras])
    C = np.stack([-r.T @ tvec for r, (_, tvec, _) in zip(R, cameras)])
    return _cut_rays(np.stack([_rays(ideal_px, K) for _, _, K in cameras]), z, R, C)


def _rays(ideal_px: np.ndarray, K: np.ndarray) -> np.ndarray:
    """(N, 3) camera rays (z = 1) of ideal pixels."""
    return np.stack([(ideal_px[:, 0] - K[0, 2]) / K[0, 0], (ideal_px[:, 1] - K[1, 2]) / K[1, 1],
                     np.ones(len(ideal_px))], axis=1)


def _cut_rays(rays_c: np.ndarray, z, R: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Where camera rays ((..., N, 3)) of cameras R ((..., 3, 3)) at C ((..., 3), table frame) meet
    the plane at height z: (..., N, 2)."""
    rays = np.matmul(rays_c, R)  # R.T @ ray
    lam = (z - C[..., None, 2]) / rays[..., 2]
    return C[..., None, :2] + lam[..., None] * rays[..., :2]


def fit_rigid_2d(local: np.ndarray, world: np.ndarray, weights: np.ndarray | None = None):
    """Least-squares (x, y, theta) with world ~ R(theta) local + (x, y); (N, 2) each."""
    w = np.ones(len(local)) if weights is None else weights
    w = w / w.sum()
    ml = (w[:, None] * local).sum(axis=0)
    mw = (w[:, None] * world).sum(axis=0)
    a, b = local - ml, world - mw
    sxx = (w * (a[:, 0] * b[:, 0] + a[:, 1] * b[:, 1])).sum()
    sxy = (w * (a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0])).sum()
    th = math.atan2(sxy, sxx)
    t = mw - rot_z(th) @ ml
    return float(t[0]), float(t[1]), th


# The last IPPE solutions by their exact inputs: one observation asks for each sticker's up to three
# times (the layout check, the consensus normal, the first camera), and a stream's held stickers
# (vision/roi.py) come back with the same corners frame after frame. Enough for a few frames of a
# 250-sticker table.
IPPE_MEMO_SIZE = 1024
_ippe_memo: OrderedDict = OrderedDict()


def ippe_square(ideal_px: np.ndarray, size_mm: float, K: np.ndarray):
    """Both IPPE solutions for one square marker: list of (rvec, tvec, reprojection rms px) (arrays
    read-only: the same answer is handed to every caller with the same inputs)."""
    img = np.asarray(ideal_px).reshape(4, 1, 2).astype(np.float64)
    key = (img.tobytes(), float(size_mm), np.asarray(K, dtype=np.float64).tobytes())
    hit = _ippe_memo.get(key)
    if hit is not None:
        try:
            _ippe_memo.move_to_end(key)
        except KeyError:  # dropped meanwhile by another thread's observation: the answer still holds
            pass
        return list(hit)
    h = size_mm / 2
    obj = np.array([[-h, h, 0], [h, h, 0], [h, -h, 0], [-h, -h, 0]], dtype=np.float64)
    try:
        n, rvecs, tvecs, errs = cv2.solvePnPGeneric(obj, img, K, None, flags=cv2.SOLVEPNP_IPPE_SQUARE)
    except cv2.error:
        return []
    out = [(_frozen(rvecs[i].ravel()), _frozen(tvecs[i].ravel()), float(np.ravel(errs)[i]) if errs is not None else 0.0)
           for i in range(n)]
    _ippe_memo[key] = tuple(out)
    if len(_ippe_memo) > IPPE_MEMO_SIZE:
        _ippe_memo.popitem(last=False)
    return out


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=np.float64)
    a.setflags(write=False)
    return a


def _consensus_normal(stickers: list[StickerObs], K: np.ndarray) -> np.ndarray | None:
    """The table normal in camera coordinates most flat stickers agree on (IPPE is two-fold ambiguous)."""
    normals, weights = [], []
    for s in stickers:
        for rvec, tvec, err in ippe_square(s.ideal_px, s.size_mm, K):
            normals.append(cv2.Rodrigues(rvec)[0][:, 2])
            weights.append(s.side_px)
    if not normals:
        return None
    n_all, w_all = np.array(normals), np.array(weights, dtype=np.float64)
    # every candidate's support at once (a 500-sticker table: 1000 x 1000 dot products, not a
    # Python loop over pairs); the first best as before
    near = (n_all @ n_all.T) > math.cos(math.radians(8))
    best = n_all[int(np.argmax(near.astype(np.float64) @ w_all))]
    agree = (n_all @ best) > math.cos(math.radians(8))
    n = (n_all[agree] * w_all[agree, None]).sum(axis=0)
    return n / np.linalg.norm(n)


def _init_camera(ref: list[StickerObs], K: np.ndarray, normal: np.ndarray | None):
    """Camera pose (rvec, tvec) from the reference piece's stickers (piece at the identity)."""
    best = None
    for s in sorted(ref, key=lambda s: -s.side_px)[:1]:
        for rvec, tvec, err in ippe_square(s.ideal_px, s.size_mm, K):
            n = cv2.Rodrigues(rvec)[0][:, 2]
            score = -float(n @ normal) if normal is not None else err
            if best is None or score < best[0]:
                best = (score, rvec, tvec, s)
    if best is None:
        raise TablePoseError("no usable flat sticker to find the table plane")
    _, rvec_s, tvec_s, s = best
    # sticker pose in its piece: centre = mean of local corners, +x = TL->TR direction
    Rs = cv2.Rodrigues(rvec_s)[0]
    centre = s.local_mm.mean(axis=0)
    dx = s.local_mm[1] - s.local_mm[0]
    rot = math.atan2(dx[1], dx[0])
    # piece -> sticker: p_sticker = Rz(-rot) (p_piece - centre) - (0,0,z) ; camera = Rs p_sticker + ts
    Rz = np.eye(3)
    Rz[:2, :2] = rot_z(-rot)
    R = Rs @ Rz
    t = tvec_s - Rs @ Rz @ np.array([centre[0], centre[1], s.z_mm])
    rvec = cv2.Rodrigues(R)[0].ravel()
    if len(ref) > 1:
        obj = np.concatenate([np.column_stack([r.local_mm, np.full(4, r.z_mm)]) for r in ref])
        img = np.concatenate([r.ideal_px for r in ref])
        ok, rv, tv = cv2.solvePnP(obj, img.reshape(-1, 1, 2), K, None, rvec.reshape(3, 1).copy(),
                                  t.reshape(3, 1).copy(), useExtrinsicGuess=True, flags=cv2.SOLVEPNP_ITERATIVE)
        if ok:
            rvec, t = rv.ravel(), tv.ravel()
    return rvec, t


# The last few solves, by their exact inputs: a table at rest whose stickers a stream follows
# without moving them (vision/roi.py holds a sticker's corners while it stays within its hold
# distance) hands the same stickers every frame, and the same inputs give the same fit.
SOLVE_MEMO_SIZE = 8
_solve_memo: OrderedDict = OrderedDict()


_STICKER_FIELDS = tuple(f.name for f in fields(StickerObs))


def _solve_key(groups: dict[str, list[StickerObs]], reference: str, intrinsics: Intrinsics,
               f_init: float | None, outlier_sigma: float) -> tuple:
    """The exact inputs of one solve, as a hashable key (every sticker's every field, arrays as bytes)."""
    def sticker(s: StickerObs) -> tuple:
        values = (getattr(s, f) for f in _STICKER_FIELDS)
        return tuple(v.tobytes() if isinstance(v, np.ndarray) else v for v in values)

    return (reference, astuple(intrinsics), f_init, outlier_sigma,
            tuple((n, tuple(sticker(s) for s in groups[n])) for n in sorted(groups)))


def _copy_pose(tp: TablePose) -> TablePose:
    """A copy of a memo's table pose that its user may change (its lists and dicts; nothing writes
    into its arrays)."""
    out = copy.copy(tp)
    out.piece_poses, out.piece_cov = dict(tp.piece_poses), dict(tp.piece_cov)
    out.camera_share_added, out.outliers, out.used_pieces = dict(tp.camera_share_added), list(tp.outliers), list(tp.used_pieces)
    return out


def solve_table_pose(groups: dict[str, list[StickerObs]], reference: str, intrinsics: Intrinsics,
                     f_init: float | None = None, outlier_sigma: float = 6.0) -> TablePose:
    """Joint fit of the camera pose and the in-plane poses of the flat pieces in `groups`.

    groups: piece name -> its detected stickers (all flat, or used as flat); reference: the
    piece held at the identity (must be in groups). The same inputs as one of the last
    SOLVE_MEMO_SIZE solves give a copy of its answer without fitting again.
    """
    key = _solve_key(groups, reference, intrinsics, f_init, outlier_sigma)
    if key in _solve_memo:
        _solve_memo.move_to_end(key)
        return _copy_pose(_solve_memo[key])
    tp = _solve_fresh(groups, reference, intrinsics, f_init, outlier_sigma)
    _solve_memo[key] = _copy_pose(tp)
    if len(_solve_memo) > SOLVE_MEMO_SIZE:
        _solve_memo.popitem(last=False)
    return tp


def _solve_fresh(groups: dict[str, list[StickerObs]], reference: str, intrinsics: Intrinsics,
                 f_init: float | None, outlier_sigma: float) -> TablePose:
    """solve_table_pose without the memo: the fit, refitted with the edge bias held or each corner's
    sigma widened by the bias's spread as the first fit calls for."""
    starts: dict = {}  # the refits below start where the first fit did (_Start), the same pieces the same way
    tp = _solve_with_outliers(groups, reference, intrinsics, f_init, outlier_sigma, starts=starts)
    if abs(tp.edge_bias_px) < EDGE_BIAS_SIGNIFICANT * tp.edge_bias_sigma_px and tp.edge_bias_blur_px < EDGE_BIAS_SHARP_PX:
        return _solve_with_outliers(groups, reference, intrinsics, f_init, outlier_sigma, bias_prior_px=EDGE_BIAS_HELD_PX,
                                    starts=starts)
    if abs(tp.edge_bias_px) < EDGE_BIAS_NEGLIGIBLE_PX:
        return tp
    # a tone curve moved the edges: solve again with every corner's sigma widened by the
    # bias's spread (the corners stay where they were seen: the fit removes the bias itself)
    ref = tp.edge_bias_blur_px
    shares = iter(bias_shares([s for sts in groups.values() for s in sts], ref)[0])
    wider = {n: [replace(s, sigma_px=math.hypot(s.sigma_px, EDGE_BIAS_SPREAD * tp.edge_bias_px * float(next(shares))))
                 for s in sts] for n, sts in groups.items()}
    # the bias's spread is systematic per sticker and hides in the piece poses more than in the
    # residuals: here sigma is scaled down less (measured in tests/bench/robust.py)
    return _solve_with_outliers(wider, reference, intrinsics, f_init, outlier_sigma,
                                noise_floor=biased_noise_floor(tp.edge_bias_px, _median_blur_cells(groups)), starts=starts)


# The floor above was measured under tone curves (biases 0.3-0.5 px). A small bias (a printer's ink
# spread or thin ink: 0.03-0.12 px on varied tables, synth/variety.py) hides as little in the poses
# as its spread, which the corner sigmas already carry: with the full floor, clean varied tuning
# tables had 80-96 % of errors within 0.5 sigma (errors 0.03-0.2 mm). The floor grows with the bias
# and reaches BIASED_NOISE_FLOOR at EDGE_BIAS_FULL_FLOOR_PX. Not on soft pictures (median blur
# past JACKKNIFE_SOFT_BLUR_CELLS, the soft corners of plane_support): blur bends edges too, and a small bias there is no sign of a small error
# (default bench seed 29, defocus 2 px: a boat 21.5 mm off at 3.04 sigma with the reduced floor,
# median blur 0.34 cell, within 3 sigma without; with the threshold at 1 px of blur rather than in
# cells, varied tuning tables under defocus 1 px had 0.5 sigma 64 -> 77 %).
EDGE_BIAS_FULL_FLOOR_PX = 0.25


def _median_blur_cells(groups: dict[str, list[StickerObs]]) -> float:
    cells = [s.blur_px / max(s.side_px / 7.0, 0.5) for sts in groups.values() for s in sts if s.blur_px > 0]
    return float(np.median(cells)) if cells else 0.0


def biased_noise_floor(bias_px: float, blur_cells: float = 0.0) -> float:
    """The noise floor of a fit whose edge bias was removed (blur_cells: the plane stickers' median
    blur sigma per cell)."""
    if blur_cells > JACKKNIFE_SOFT_BLUR_CELLS:
        return BIASED_NOISE_FLOOR
    share = min(1.0, abs(bias_px) / EDGE_BIAS_FULL_FLOOR_PX)
    return NOISE_FACTOR_FLOOR + (BIASED_NOISE_FLOOR - NOISE_FACTOR_FLOOR) * share


def _solve_with_outliers(groups, reference, intrinsics, f_init, outlier_sigma,
                         noise_floor: float = NOISE_FACTOR_FLOOR, bias_prior_px: float | None = None,
                         starts: dict | None = None) -> TablePose:
    """The plane fit, refitted without the worst piece while one clearly disagrees with the plane.
    starts: the _Start of each set of pieces fitted so far, by their names (kept across calls)."""
    names = [reference] + sorted(n for n in groups if n != reference)
    outliers: list[str] = []
    starts = {} if starts is None else starts
    while True:
        active = tuple(n for n in names if n not in outliers)
        if active not in starts:
            starts[active] = _start(groups, list(active), intrinsics, f_init)
        pose = _solve_once({n: groups[n] for n in active}, reference, intrinsics, f_init,
                           noise_floor, bias_prior_px, starts[active])
        # per-piece rms whitened residual; drop the worst clear outlier and refit
        worst, worst_rms = None, 0.0
        for n, rms in pose.extra_rms.items():
            if n != reference and rms > outlier_sigma and rms > worst_rms:
                worst, worst_rms = n, rms
        active = [n for n in names if n not in outliers]
        if worst is None or len(active) <= 2:
            tp = pose.table_pose
            tp.outliers = outliers
            return tp
        outliers.append(worst)


@dataclass
class _Solve:
    table_pose: TablePose
    extra_rms: dict


@dataclass(frozen=True)
class _Start:
    """What a plane fit of some pieces starts from, none of it depending on the corners' sigma (a refit
    of the same pieces, with the edge bias held or the sigmas widened, starts from the same): the
    camera and piece poses from IPPE (rvec, tvec, poses: (pieces, 3), names' order) and every corner
    in order (piece index k of names): local mm, height, ideal px, owner, edge-bias direction (its
    share of the bias), the median blur, and each sticker's one share of the bias (bias_shares)."""

    rvec: np.ndarray
    tvec: np.ndarray
    poses: np.ndarray
    loc: np.ndarray
    zs: np.ndarray
    obs: np.ndarray
    owner: np.ndarray
    out_dirs: np.ndarray
    blur_ref: float
    bias_one: np.ndarray


def _start(groups, names: list[str], intrinsics: Intrinsics, f_init) -> _Start:
    """The _Start of a plane fit of the pieces names (the reference first)."""
    K0 = intrinsics.K(f_init if intrinsics.focal_free and f_init else None)
    all_st = [s for n in names for s in groups[n]]
    rvec, tvec = _init_camera(groups[names[0]], K0, _consensus_normal(_voters(all_st), K0))
    loc, zs, obs, owner = [], [], [], []
    blurs = [s.blur_px for s in all_st if s.blur_px > 0]
    blur_ref = float(np.median(blurs)) if blurs else 0.0
    for k, n in enumerate(names):
        for s in groups[n]:
            loc.append(s.local_mm)
            zs.append(np.full(4, s.z_mm))
            obs.append(s.ideal_px)
            owner.append(np.full(4, k))
    loc, zs, obs, owner = np.concatenate(loc), np.concatenate(zs), np.concatenate(obs), np.concatenate(owner)
    # every other piece where its corners, cut with the plane at their heights, put it
    first = np.searchsorted(owner, np.arange(len(names) + 1))
    world = intersect_plane(obs[first[1]:], zs[first[1]:], rvec, tvec, K0)
    poses = [(0.0, 0.0, 0.0)] + [fit_rigid_2d(loc[a:b], world[a - first[1]:b - first[1]])
                                 for a, b in zip(first[1:-1], first[2:])]
    shares = bias_shares(all_st, blur_ref)
    out_dirs = bias_outwards(obs.reshape(-1, 4, 2), shares).reshape(-1, 2)
    return _Start(np.asarray(rvec, dtype=np.float64), np.asarray(tvec, dtype=np.float64),
                  np.array(poses, dtype=np.float64), loc, zs, obs, owner, out_dirs, blur_ref, shares[0])


# The table's normal is voted on by the largest stickers only: IPPE costs ~30 us a sticker (7 ms on a
# 247-sticker table), and the vote only picks which of the reference sticker's two IPPE poses starts
# the fit (two solutions tens of degrees apart), which a few dozen stickers settle as well as all.
CONSENSUS_MAX_STICKERS = 48


def _voters(stickers: list[StickerObs]) -> list[StickerObs]:
    """The stickers that vote on the table's normal: all, or the CONSENSUS_MAX_STICKERS largest (in
    their order)."""
    if len(stickers) <= CONSENSUS_MAX_STICKERS:
        return stickers
    keep = set(np.argsort([-s.side_px for s in stickers], kind="stable")[:CONSENSUS_MAX_STICKERS].tolist())
    return [s for i, s in enumerate(stickers) if i in keep]


def _solve_once(groups, reference, intrinsics: Intrinsics, f_init, noise_floor: float = NOISE_FACTOR_FLOOR,
                bias_prior_px: float | None = None, start: _Start | None = None):
    names = [reference] + sorted(n for n in groups if n != reference)
    f0 = f_init if intrinsics.focal_free and f_init else intrinsics.fx
    start = start or _start(groups, names, intrinsics, f_init)
    all_st = [s for n in names for s in groups[n]]
    nf = 3 if intrinsics.focal_free else 0  # f, k1, k2
    ncam = 6 + nf
    loc, zs, obs, owner, out_dirs = start.loc, start.zs, start.obs, start.owner, start.out_dirs
    blur_ref, bias_one = start.blur_ref, start.bias_one
    sig = np.repeat(np.array([s.sigma_px for s in all_st], dtype=np.float64), 4)
    model = _PlaneModel(loc, zs, obs, sig, owner, len(names), intrinsics, nf, out_dirs, bias_prior_px)
    R = cv2.Rodrigues(start.rvec)[0]
    state = _State(R, start.tvec.copy(), f0, start.poses.copy())
    state, r, J, wts = model.levenberg_marquardt(state)
    placed_mm = np.array([s.placement_mm for s in all_st])
    placed_rad = np.radians([s.placement_deg for s in all_st])
    exact_normal = None  # the normal equations with every sticker taken as exactly in place
    if placed_mm.any() and np.all(np.isfinite(r)):
        # hand-stuck stickers: refit with each one's placement as a known prior, when the residuals
        # show it (_placement_free_noise, PLACEMENT_SHOWN)
        exact_normal = model.normal.copy()
        state, r, J, wts = _placement_refit(model, (state, r, J, wts), placed_mm, placed_rad, noise_floor)
    if nf and (not np.isfinite(state.f) or state.f <= 0):
        raise TablePoseError("could not estimate the focal length from the stickers in view")
    npar = J.shape[1]
    JtJ = model.normal  # J^T W J, summed piece by piece (_PlaneModel.normal_equations)
    Jw = J * np.sqrt(np.repeat(wts, 2))[:, None]  # whitened rows: the per-sticker edge offsets below
    try:
        cov = arrow_inverse(JtJ + 1e-12 * np.eye(npar), ncam)
    except np.linalg.LinAlgError:
        cov = np.linalg.pinv(JtJ)
    rw = r * np.sqrt(np.repeat(wts, 2))
    dof = max(1, len(r) - npar)
    rigid = _rigid_chi2(rw, Jw, cov, obs, owner) if model.mix is None else None
    chi2 = rigid if rigid is not None else _offset_free_chi2(rw, Jw, owner, dof)
    # the corner noise model is a prior scale: the fit's own residuals say how noisy this image
    # really is (sharp renders: a third of the model; noisy webcams: more); NOISE_FACTOR_FLOOR
    noise_factor = math.sqrt(max(noise_floor ** 2, chi2))
    bias_var = float(cov[-1, -1]) * noise_factor ** 2  # from corner noise alone (the hold test's scale)
    seen_sd = _seen_edge_offset_sd(rw, Jw, owner)
    offset_sd = np.maximum(_edge_offset_sd(all_st, float(state.bias), bias_one), seen_sd)
    fit_cov = cov
    scaled = _scaled_cov(model, Jw, wts, cov, noise_factor, placed_mm, placed_rad)
    share_added = _camera_share_added(scaled, exact_normal if model.mix is not None else None, noise_factor,
                                      names, ncam)
    # with many parameters, only the blocks kept below are formed (_propagated)
    cols = _sticker_columns(owner, ncam, npar)
    row_scale = np.repeat(wts, 2)[:2 * len(obs)] ** 0.5 / np.repeat(sig, 2)
    cov = (scaled + _edge_offset_cov(cov, Jw, offset_sd, cols) + _offset_gradient_cov(cov, Jw, obs, seen_sd)
           + _centre_shift_cov(cov, Jw, row_scale, np.array([centre_shift_px(s) for s in all_st]), cols)
           + _twist_cov(cov, Jw, row_scale, obs, TWIST_EXCESS * noise_factor * sig[::4], cols))
    rr = r[:2 * len(obs)].reshape(-1, 2)
    per_piece_rms = _per_piece_rms(model, r, rr, noise_factor, names)
    own_placement = _own_placement_cov(model, Jw, wts, fit_cov, ncam)
    piece_poses, piece_cov = {reference: (0.0, 0.0, 0.0)}, {reference: np.zeros((3, 3))}
    for k, n in enumerate(names[1:], start=1):
        c0 = ncam + 3 * (k - 1)
        piece_poses[n] = tuple(float(v) for v in state.poses[k])
        piece_cov[n] = psd(cov[c0:c0 + 3, c0:c0 + 3] - own_placement.get(k, 0.0))
    rvec_out = cv2.Rodrigues(state.R)[0].ravel()
    # covariance of the local rotation increment equals that of rvec to first order near the solution
    tp = TablePose(rvec=rvec_out, tvec=state.t.copy(), f=float(state.f), k1=float(state.k1), k2=float(state.k2),
                   intrinsics=intrinsics,
                   reference=reference,
                   piece_poses=piece_poses, piece_cov=piece_cov, camera_cov=_rvec_cov(state.R, cov[:ncam, :ncam]),
                   camera_share_added=share_added,
                   rms_sigma=float(np.sqrt(np.mean(rr ** 2))), cost=_robust_cost(r), used_pieces=list(names),
                   noise_factor=noise_factor, noise_floor=noise_floor, edge_bias_px=float(state.bias), edge_bias_blur_px=blur_ref, edge_bias_sigma_px=math.sqrt(max(bias_var, 0.0)))
    tp._ncam = ncam
    if not nf and np.all(np.isfinite(r)):
        tp.focal_offset_px, tp.focal_offset_sigma_px = _focal_score(model, state, r, J, wts, fit_cov, noise_factor)
    return _Solve(tp, per_piece_rms)


def _focal_score(model: "_PlaneModel", state: "_State", r: np.ndarray, J: np.ndarray, wts: np.ndarray,
                 cov: np.ndarray, noise: float) -> tuple[float, float]:
    """(offset, sd) px: where the stickers would move the camera file's focal length (fx, fy together)
    from this fit, in one Gauss-Newton step with every other parameter refitted (the focal
    column's Schur complement against the fit's; cov: its covariance before the noise scale),
    and that step's sd at the fit's noise. A score test: no second fit unless it calls for one."""
    step = 1e-4 * model.intr.fx
    nudged = copy.copy(model)
    nudged.intr = replace(model.intr, fx=model.intr.fx + step, fy=model.intr.fy * (1.0 + step / model.intr.fx))
    jf = (nudged.residuals(state)[0] - r) / step
    w = np.sqrt(np.repeat(wts, 2))[:len(r)]
    Jw, jfw, rw = J * w[:, None], jf * w, r * w
    b = Jw.T @ jfw
    info = float(jfw @ jfw - b @ cov @ b)
    if not info > 0:
        return 0.0, math.inf
    score = float(jfw @ rw - b @ cov @ (Jw.T @ rw))
    return -score / info, noise / math.sqrt(info)


def _per_piece_rms(model: "_PlaneModel", r: np.ndarray, rr: np.ndarray, noise: float, names: list[str]) -> dict:
    """Piece name -> its corners' rms residual (rr: per corner), or its stickers' worst placement
    misfit when larger (_placement_misfit): what _solve_with_outliers weighs to leave a piece out."""
    placed_off = _placement_misfit(model, r, noise)
    # corners run piece by piece (_start): each piece's are one slice, found once
    starts = np.searchsorted(model.owner, np.arange(len(names) + 1))
    out = {}
    for k, n in enumerate(names):
        a, b = starts[k], starts[k + 1]
        out[n] = max(float(np.sqrt((rr[a:b] ** 2).sum(axis=1).mean() / 2.0)),
                     float(placed_off[a // 4:b // 4].max(initial=0.0)))
    return out


# Stickers stuck by hand (SPEC section 2): a piece with several stickers (the start gate, the finish
# line, racing cards, the Kang board, river tiles) disagrees with its catalog layout by how its
# stickers were stuck. Read as corner noise, that disagreement widened every piece's sigma 3-5x
# through the noise factor (4-5 sigma rms) and, weighed as independent corner noise, tilted the
# camera. Each such sticker's placement (x, y and its turn, per sticker sd from the catalog's piece
# term, vision/pipeline.sticker_placement) is a prior on three more unknowns of its own, which
# moves its four corners together: marginalised, a correlated 8 x 8 block in each sticker's
# corner covariance (_PlaneModel.set_placement). The picture's noise is then measured off those
# directions (_placement_free_noise) and each piece's own stickers' placement is left out of its
# own sigma (_own_placement_cov): the pipeline adds its piece's placement term itself.


# The placement prior is used when the stickers' disagreement with the catalog layout shows: the
# residuals' noise scale is this many times what is left once each such sticker may also move on its
# piece (_placement_free_noise). Tuning (seeds 1000-1011, 1080p): hand-stuck tables 2.4-80, exact
# stickers 0.96-1.2, and up to 2.0 under a tone curve (tests/test_sigma_calibration.py's Kayak table:
# its edge bias differs per sticker). Left on there, it loosened what fixes that table's scale (each
# river tile's two stickers 110 mm apart), the edge bias took it, and tiles went 6-9 sigma off.
PLACEMENT_SHOWN = 2.2
# With the prior on, each such sticker may move on its piece: a piece's stickers' spacing (a river
# tile's two, 110 mm apart) no longer fixes the scale, which only the stickers' sizes then give, and
# those trade with the edge bias. Its weak prior (EDGE_BIAS_PRIOR_PX, centred on 0) then pulled a tone
# curve's bias to 0 and took the scale with it: on exact stickers under a tone curve the ratio above
# reached 2.3-4.1, the prior came on, and Kayak river tiles went 3-30 mm off at 10-15 sigma
# (tests/bench/robust.py default seed, 1080p and 4K). So the refit holds the bias where the fit
# without the prior put it, within that fit's own sd at the noise its residuals showed: tight when
# the placement shows little, loose on truly hand-stuck stickers.


def _placement_refit(model: "_PlaneModel", fit: tuple, sd_mm: np.ndarray, sd_rad: np.ndarray, floor: float):
    """fit (state, residuals, Jacobian, Huber weights) of the plane without the placement prior, or
    refitted with it when the residuals show the stickers off their layout (PLACEMENT_SHOWN), the edge
    bias held where the fit without it put it."""
    state, r, J, wts = fit
    shown, free = _placement_free_noise(model, state, r, J, sd_mm, sd_rad, floor)
    if shown <= PLACEMENT_SHOWN * free:
        return fit
    bias_sd = math.sqrt(max(float(arrow_inverse(model.normal + 1e-12 * np.eye(len(model.normal)), model.ncam_count)[-1, -1]), 0.0))
    model.hold_bias(float(state.bias), max(shown * bias_sd, EDGE_BIAS_HELD_PX))
    model.set_placement(state, sd_mm, sd_rad, free)
    return model.levenberg_marquardt(state)


def _placement_free_noise(model: "_PlaneModel", st: "_State", r: np.ndarray, J: np.ndarray,
                          sd_mm: np.ndarray, sd_rad: np.ndarray, floor: float) -> tuple[float, float]:
    """(with, without): the corner noise scale the residuals r of a fit without the placement prior
    show as they are, and once each hand-stuck sticker's placement is a free unknown too (a fit
    that also moves each such sticker on its piece: the camera's tilt that took up their misplacement
    is refitted with them). J: that fit's Jacobian.

    The refit is a least-squares fit of r on [J | each sticker's placement columns]. Each piece's
    own columns (its pose and its stickers' placements) touch its own rows only, so they are
    projected out piece by piece (_project_out_pieces) and only the shared columns (camera, edge
    bias) are fitted on what is left: the same residual and rank as one dense fit, in time linear
    in the stickers (a dense fit of a 247-sticker table took 400 ms)."""
    rows = 8 * len(sd_mm)
    P = model.placement_columns(st, np.where(sd_mm > 0, 1.0, 0.0), np.where(sd_rad > 0, 1.0, 0.0))
    ncam = model.ncam_count
    shared = np.concatenate([J[:rows, :ncam], J[:rows, -1:]], axis=1)
    # each row's own piece's pose columns (zero for the reference piece)
    owner_rows = np.repeat(model.owner, 2)[:rows]
    at = ncam + 3 * np.maximum(owner_rows - 1, 0)[:, None] + np.arange(3)
    at = np.minimum(at, J.shape[1] - 1)  # the reference's (no pose columns) are masked out below
    pose = np.where((owner_rows > 0)[:, None], np.take_along_axis(J[:rows], at, axis=1), 0.0)
    left_r, left_shared, local_rank, largest = _project_out_pieces(model.owner[::4], P, pose, r[:rows], shared)
    # lstsq's rank rule for the whole fit: a value is zero below eps x the larger side x the
    # largest singular value of all the columns (the camera's moves that the reference piece's
    # stickers' placements also make are such zeros: ~1e-14 of the largest)
    columns = J.shape[1] + 3 * int(np.count_nonzero(sd_mm > 0))
    largest = max(largest, float(np.linalg.norm(shared, 2)))
    tol = np.finfo(float).eps * max(rows, columns) * largest
    top = float(np.linalg.norm(left_shared, 2))
    coef, _, shared_rank, _ = np.linalg.lstsq(left_shared, left_r, rcond=min(1.0, tol / top) if top > 0 else None)
    left = left_r - left_shared @ coef
    with_ = float(r[:rows] @ r[:rows]) / max(rows - J.shape[1], 1)
    without = float(left @ left) / max(rows - local_rank - shared_rank, 1)
    return math.sqrt(max(floor ** 2, with_)), math.sqrt(max(floor ** 2, without))


def _project_out_pieces(sticker_owner: np.ndarray, P: np.ndarray, pose: np.ndarray, r: np.ndarray,
                        shared: np.ndarray) -> tuple[np.ndarray, np.ndarray, int, float]:
    """(r, shared, rank, largest): r and the shared columns with each piece's own columns projected
    out of its rows (own columns: its pose, rows x 3, and its stickers' placement columns P,
    (stickers, 8, 3)), the summed rank of those own columns and their largest singular value.
    Pieces with as many stickers are done in one batched SVD; the rank tolerance is lstsq's
    (eps x the larger side x the largest value)."""
    r_out, shared_out, rank, largest = r.copy(), shared.copy(), 0, 0.0
    starts = np.flatnonzero(np.r_[True, sticker_owner[1:] != sticker_owner[:-1]])  # stickers run by piece
    counts = np.diff(np.r_[starts, len(sticker_owner)])
    for n in np.unique(counts):
        first = starts[counts == n]
        stickers = first[:, None] + np.arange(n)[None, :]  # (pieces, n)
        m = len(first)
        own = np.zeros((m, n, 8, 3 + 3 * n))
        own[:, :, :, :3] = pose.reshape(-1, 8, 3)[stickers]
        for j in range(n):
            own[:, j, :, 3 + 3 * j:6 + 3 * j] = P[stickers[:, j]]
        own = own.reshape(m, 8 * n, 3 + 3 * n)
        U, S, _ = np.linalg.svd(own, full_matrices=False)
        tol = S[:, :1] * max(own.shape[1:]) * np.finfo(float).eps
        kept = S > tol
        rank += int(kept.sum())
        largest = max(largest, float(S[:, 0].max()))
        Q = U * kept[:, None, :]
        row_idx = (8 * stickers[:, :, None] + np.arange(8)).reshape(m, 8 * n)
        rb, sb = r[row_idx], shared[row_idx]
        r_out[row_idx] = rb - np.einsum("mik,mk->mi", Q, np.einsum("mik,mi->mk", Q, rb))
        shared_out[row_idx] = sb - Q @ (Q.transpose(0, 2, 1) @ sb)
    return r_out, shared_out, rank, largest


def _placement_misfit(model: "_PlaneModel", r: np.ndarray, noise: float) -> np.ndarray:
    """Per sticker: how far the fit puts it off its catalog place on its piece, in sds of its
    placement (the length of its shift and turn; 0 without the placement prior). A sticker lifted
    or bumped reads several sds off, where hand-stuck ones read 1-3: it is weighed with the
    pieces' residual rms, so that such a piece is still left out of the plane (_solve_with_outliers)."""
    if model.mix is None:
        return np.zeros(len(model.owner) // 4)
    P = model.placement_cols
    n = len(P)
    raw = np.linalg.solve(model.mix, r[:8 * n].reshape(n, 8, 1))  # the residuals before the placement's whitening
    Pt = P.transpose(0, 2, 1)
    u = np.linalg.solve(Pt @ P + noise ** 2 * np.eye(3)[None], Pt @ raw)[:, :, 0]
    return np.linalg.norm(u, axis=1)


def _placement_moves(model: "_PlaneModel", Jw: np.ndarray, wts: np.ndarray, cov: np.ndarray,
                     stickers: np.ndarray, rows=slice(None)) -> np.ndarray:
    """(len(stickers), parameters in rows, 3): how the fit's answer moves per sd of each chosen sticker's
    placement (x, y, turn); cov: the fit's covariance before its noise scale."""
    P = model.placement_cols
    n = len(P)
    WP = (model.mix @ P) * np.sqrt(np.repeat(wts[:4 * n], 2)).reshape(n, 8)[:, :, None]
    pushed = np.einsum("snp,snk->spk", Jw[:8 * n].reshape(n, 8, -1)[stickers], WP[stickers])  # J_s^T W_s P_s
    return np.einsum("qp,spk->sqk", cov[rows], pushed)


def _own_placement_cov(model: "_PlaneModel", Jw: np.ndarray, wts: np.ndarray, cov: np.ndarray,
                       ncam: int) -> dict:
    """Piece index -> (3, 3): the part of its pose covariance (in cov, the fit's covariance
    before its noise scale) that comes from its own stickers' placement."""
    if model.mix is None:
        return {}
    owner = model.owner[::4]
    out = {}
    for k in np.unique(owner[model.placement_cols.any(axis=(1, 2))]):
        if k == 0:  # the reference piece is held at the identity (_reference_gauge_cov)
            continue
        c0 = ncam + 3 * (k - 1)
        moved = _placement_moves(model, Jw, wts, cov, owner == k, slice(c0, c0 + 3))
        out[int(k)] = np.einsum("sqk,srk->qr", moved, moved)
    return out


def _scaled_cov(model: "_PlaneModel", Jw: np.ndarray, wts: np.ndarray, cov: np.ndarray, noise: float,
                sd_mm: np.ndarray, sd_rad: np.ndarray) -> np.ndarray:
    """The fit's covariance: cov (before its noise scale) times noise^2; with hand-stuck stickers,
    the corner noise's part (noise^2 A B A) and the placements' (_placement_moves) apart, the
    reference piece's stickers moving together on it left out (_reference_gauge_cov)."""
    if model.mix is None:
        return cov * noise ** 2
    n = len(model.placement_cols)
    rows = np.einsum("sij,sjp->sip", model.mix, Jw[:8 * n].reshape(n, 8, -1)).reshape(8 * n, -1)
    B = rows.T @ rows + Jw[8 * n:].T @ Jw[8 * n:]
    others = (model.owner[::4] != 0) & model.placement_cols.any(axis=(1, 2))
    moved = _placement_moves(model, Jw, wts, cov, others)
    placed = np.einsum("sqk,srk->qr", moved, moved)
    return noise ** 2 * cov @ B @ cov + placed + _reference_gauge_cov(model, Jw, wts, cov, sd_mm, sd_rad)


def _camera_share_added(scaled: np.ndarray, exact_normal: np.ndarray | None, noise: float, names: list[str],
                        ncam: int) -> dict:
    """Piece name -> (3, 3): how much more of the piece's pose covariance moves with the camera on a
    hand-stuck copy than it would with every sticker exactly in place (exact_normal: the same fit's
    normal equations without the placement prior; None: the prior is off, nothing added). Each is
    the piece's regression on the camera's parameters in the joint covariance (scaled: the fit's,
    corner noise and placement; the exact fit's at the same noise). Stickers free to sit a little
    off their layout fix the camera's scale and tilt less well, and that looser camera moves every
    piece read through it alike (TablePose.camera_share_added)."""
    if exact_normal is None:
        return {}
    hand_stuck = _camera_regression(scaled, len(names) - 1, ncam)
    exact = _camera_regression(np.linalg.pinv(exact_normal) * noise ** 2, len(names) - 1, ncam)
    return {name: psd(hand_stuck[k] - exact[k]) for k, name in enumerate(names[1:])}


def _camera_regression(cov: np.ndarray, pieces: int, ncam: int) -> np.ndarray:
    """(pieces, 3, 3): the part of each piece's pose covariance (rows ncam + 3k..) that the camera's
    parameters (the first ncam) explain in the joint covariance cov: B C^+ B^T."""
    C = np.linalg.pinv(cov[:ncam, :ncam])
    B = cov[ncam:ncam + 3 * pieces, :ncam].reshape(pieces, 3, ncam)
    return B @ C @ B.transpose(0, 2, 1)


def _reference_gauge_cov(model: "_PlaneModel", Jw: np.ndarray, wts: np.ndarray, cov: np.ndarray,
                         sd_mm: np.ndarray, sd_rad: np.ndarray) -> np.ndarray:
    """The fit's covariance from the reference piece's stickers' placement, less their moving together
    on it (one shift and turn of all of them): that moves the frame, and every piece with it, and the
    frame is where the reference's stickers put it (its own placement term is the pipeline's). What
    they do to each other (one sticker off the others) stays: it tilts the plane."""
    mine = (model.owner[::4] == 0) & (sd_mm > 0)
    if model.mix is None or not mine.any():
        return np.zeros_like(cov)
    moved = _placement_moves(model, Jw, wts, cov, mine)  # (m, npar, 3)
    centre = model.loc.reshape(-1, 4, 2).mean(axis=1)[mine]
    m = int(mine.sum())
    G = np.zeros((m, 3, 3))  # sticker placement (in sds) per unit of the reference's own (x, y, turn)
    G[:, 0, 0] = G[:, 1, 1] = 1.0
    G[:, 0, 2], G[:, 1, 2] = -centre[:, 1], centre[:, 0]
    G[:, :2] /= sd_mm[mine][:, None, None]
    G[:, 2, 2] = 1.0 / np.maximum(sd_rad[mine], 1e-9)
    G = G.reshape(3 * m, 3)
    M = moved.transpose(1, 0, 2).reshape(len(cov), 3 * m)
    internal = np.eye(3 * m) - G @ np.linalg.pinv(G.T @ G) @ G.T  # a projector: the part that is no frame move
    return M @ internal @ M.T


# The plane fit's normal equations are an arrow: the shared parameters (the camera's, ncam, and the
# edge bias, the last) meet every piece, and each piece's pose (3) meets only itself. From this many
# parameters on they are solved and inverted through that form (each piece's 3 x 3 block on its own,
# then the shared ones' Schur complement): time linear in the pieces for the solve and quadratic for
# the dense inverse, where the dense routines take cubic time (a 247-sticker table has ~380 parameters:
# 5.7 ms an inverse, 1.2 ms a solve). Smaller fits keep the dense routines; both agree to rounding
# (tests/test_fast_paths.py).
ARROW_MIN_PARAMS = 64


def _arrow_blocks(A: np.ndarray, ncam: int):
    """(shared columns, (pieces, 3) piece columns, U shared x shared, W (pieces, shared, 3), V (pieces, 3, 3))."""
    npar = len(A)
    shared = np.r_[np.arange(ncam), npar - 1]
    cols = ncam + np.arange(npar - 1 - ncam).reshape(-1, 3)
    W = A[shared[None, :, None], cols[:, None, :]]
    return shared, cols, A[np.ix_(shared, shared)], W, A[cols[:, :, None], cols[:, None, :]]


def _arrow_schur(A: np.ndarray, ncam: int):
    """The blocks of A (_arrow_blocks), each piece's block inverted and V^-1 W^T per piece, and the shared
    parameters' Schur complement U - sum W V^-1 W^T."""
    shared, cols, U, W, V = _arrow_blocks(A, ncam)
    V_inv = np.linalg.inv(V)
    G = V_inv @ W.transpose(0, 2, 1)  # (pieces, 3, shared)
    return shared, cols, W, V_inv, G, U - np.einsum("kcj,kjd->cd", W, G)


def arrow_solve(A: np.ndarray, b: np.ndarray, ncam: int) -> np.ndarray:
    """np.linalg.solve(A, b) for the plane fit's normal equations (ARROW_MIN_PARAMS)."""
    if len(A) < ARROW_MIN_PARAMS:
        return np.linalg.solve(A, b)
    shared, cols, W, V_inv, G, S = _arrow_schur(A, ncam)
    b_piece = b[cols]
    x_shared = np.linalg.solve(S, b[shared] - np.einsum("kjc,kj->c", G, b_piece))
    x = np.empty(len(A))
    x[shared] = x_shared
    x[cols] = np.einsum("kij,kj->ki", V_inv, b_piece - np.einsum("kcj,c->kj", W, x_shared))
    return x


def arrow_inverse(A: np.ndarray, ncam: int) -> np.ndarray:
    """np.linalg.inv(A) for the plane fit's normal equations (ARROW_MIN_PARAMS): with S the shared
    parameters' Schur complement and G_k = V_k^-1 W_k^T, the shared block is S^-1, a piece's with the
    shared ones -G_k S^-1 and two pieces' G_k S^-1 G_l^T, plus V_k^-1 on a piece's own block."""
    if len(A) < ARROW_MIN_PARAMS:
        return np.linalg.inv(A)
    shared, cols, W, V_inv, G, S = _arrow_schur(A, ncam)
    S_inv = np.linalg.inv(S)
    G_all = G.reshape(-1, len(shared))  # piece columns in order
    cross = -G_all @ S_inv
    out = np.empty_like(A)
    out[np.ix_(shared, shared)] = S_inv
    out[np.ix_(cols.ravel(), shared)] = cross
    out[np.ix_(shared, cols.ravel())] = cross.T
    pieces = -cross @ G_all.T
    k = len(cols)
    blocks = pieces.reshape(k, 3, k, 3)
    blocks[np.arange(k), :, np.arange(k), :] += V_inv
    out[np.ix_(cols.ravel(), cols.ravel())] = pieces
    return out


def psd(c: np.ndarray) -> np.ndarray:
    """c symmetrised with no negative variance (a covariance less a part of it, rounded)."""
    vals, vecs = np.linalg.eigh((c + c.T) / 2)
    return (vecs * np.maximum(vals, 0.0)) @ vecs.T


# Each sticker's edges also sit a little in or out on their own: its share of a tone curve's
# bias is not exactly its blur's share, and once blur passes ~1/6 of a cell it bends a sticker's
# edges toward its bits. All four corners move together, so the fit cannot average it away as it
# does independent corner noise, and the residuals barely show it (the sticker's own piece pose
# absorbs most): it is carried as one independent offset per sticker, propagated linearly into
# every parameter. Sizes (px): EDGE_OFFSET_BIAS x the sticker's share of the bias, and
# EDGE_OFFSET_DEFOCUS per blur-cell past the onset (tests/bench/robust.py, two scene seeds:
# shared plane errors of 3-4 sigma under gamma 2.2 and defocus 1 px without it).
EDGE_OFFSET_BIAS = 0.5
EDGE_OFFSET_DEFOCUS = 2.5
EDGE_OFFSET_ONSET = 0.22  # blur sigma / cell (sharp Tornado renders: 0.24-0.29, so a little there too)


def _edge_offset_sd(stickers: list[StickerObs], bias_px: float, shares: np.ndarray) -> np.ndarray:
    """Standard size (px) of each sticker's own edge offset (shares: each one's share of the bias,
    bias_shares)."""
    out = []
    for s, share in zip(stickers, shares):
        blur_cells = s.blur_px / max(s.side_px / 7.0, 0.5)
        out.append(math.hypot(EDGE_OFFSET_BIAS * abs(bias_px) * float(share),
                              EDGE_OFFSET_DEFOCUS * max(0.0, blur_cells - EDGE_OFFSET_ONSET)))
    return np.array(out)


# The stickers' own edge offsets also show in the residuals, as far as the fit did not absorb
# them: each sticker's residual along its outward column (all four corners in or out together)
# against the residual in its other directions. A tone curve that is not a power law (an S-curve)
# moves each sticker's edges by a share that depends on its own black and white levels, so it
# varies with the table's lighting in a way no per-image bias or blur model predicts; this term
# measures it instead (tests/bench/robust.py, scene seeds 11 and 29: Tornado tables under an
# S-curve had every piece 3-5 sigma off through a shared plane error).
SEEN_OFFSET_MIN_STICKERS = 4


def energy_along(col: np.ndarray, res: np.ndarray) -> np.ndarray:
    """Per sticker (rows of its 8 corner coordinates): the residual energy res holds along col."""
    return np.einsum("sn,sn->s", col, res) ** 2 / np.maximum(np.einsum("sn,sn->s", col, col), 1e-12)


def _offset_along(rw: np.ndarray, Jw: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per sticker (n): the whitened residual energy along its outward column (its four corners in or
    out together) and that column's squared length."""
    col = Jw[:8 * n].reshape(n, 8, -1)[:, :, -1]
    return energy_along(col, rw[:8 * n].reshape(n, 8)), np.einsum("sn,sn->s", col, col)


def _offset_free_chi2(rw: np.ndarray, Jw: np.ndarray, owner: np.ndarray, dof: int) -> float:
    """The whitened residuals' chi^2 per degree of freedom, without each sticker's own edge offset
    when the stickers are enough to measure those apart (_seen_edge_offset_sd, _edge_offset_cov)."""
    n = len(owner) // 4
    total = float(rw @ rw)
    if n < SEEN_OFFSET_MIN_STICKERS:
        return total / dof
    along, _ = _offset_along(rw, Jw, n)
    return (total - float(along.sum())) / max(1, dof - n)


# The noise factor scales the corner noise model to what the picture shows, and what matters is the
# noise in the moves that shift poses: each sticker's four corners shifted or turned together. A
# sticker's other moves (its edges in or out together: its own edge offset, carried apart by
# _edge_offset_cov; its square bent out of shape) move no pose, yet were most of the residuals where a
# lamp's glare or a tone curve bends every edge, and the noise factor they read widened every piece:
# varied tuning tables (synth/variety.py, 8 per game), glare: per-sticker shape errors 0.15-0.2 px
# against shifts and turns of 0.08-0.09 (render truth), Kayak river tiles' median error 0.17 sigma;
# 0.5 sigma held 75.6 % of all errors there (69.1 % measured in the rigid moves; the other conditions
# within 1 point, 2 sigma >= 96.7 %, max |error|/sigma 2.9). So the factor is measured in the stickers' rigid moves, the fit's share of
# them taken off their degrees of freedom, when at least RIGID_MIN_DOF remain; else without each
# sticker's edge offset (when the stickers are enough to measure those, SEEN_OFFSET_MIN_STICKERS),
# else over all the residuals.
RIGID_MIN_DOF = 8.0


def _rigid_modes(obs: np.ndarray) -> np.ndarray:
    """(n, 8, 3): each sticker's orthonormal moves of its four corners together: shifted in x, in y,
    and turned about its centre."""
    corners = obs.reshape(-1, 4, 2)
    n = len(corners)
    radial = corners - corners.mean(axis=1, keepdims=True)
    modes = np.zeros((n, 4, 2, 3))
    modes[:, :, 0, 0] = 1.0
    modes[:, :, 1, 1] = 1.0
    modes[:, :, 0, 2], modes[:, :, 1, 2] = -radial[..., 1], radial[..., 0]
    q, _ = np.linalg.qr(modes.reshape(n, 8, 3))
    return q


def _rigid_chi2(rw: np.ndarray, Jw: np.ndarray, cov: np.ndarray, obs: np.ndarray, owner: np.ndarray):
    """chi^2 per degree of freedom of the whitened residuals in each sticker's rigid moves only (what
    moves poses), or None when those leave too few degrees of freedom."""
    n = len(owner) // 4
    modes = _rigid_modes(obs[:4 * n])
    res = rw[:8 * n].reshape(n, 8)
    energy = float((np.einsum("snk,sn->sk", modes, res) ** 2).sum())
    # the trace of the fit's hat matrix in those moves, from each sticker's few parameters (the camera,
    # its piece's pose, the edge bias: a 250-sticker table has ~390)
    ncam = len(cov) - 3 * (int(owner.max()) if len(owner) else 0) - 1
    piece = owner[::4][:n]
    cols = np.concatenate([np.broadcast_to(np.arange(ncam), (n, ncam)),
                           (ncam + 3 * np.maximum(piece - 1, 0))[:, None] + np.arange(3), np.full((n, 1), len(cov) - 1)], axis=1)
    cols = np.minimum(cols, len(cov) - 1)  # the reference alone: its (zeroed) pose columns point anywhere
    rows = np.take_along_axis(Jw[:8 * n].reshape(n, 8, -1), cols[:, None, :], axis=2)
    rows[piece == 0, :, ncam:ncam + 3] = 0.0  # the reference piece is held: no pose columns
    proj = np.einsum("snk,snp->skp", modes, rows)
    taken = float(np.einsum("skp,spq,skq->", proj, cov[cols[:, :, None], cols[:, None, :]], proj))
    dof = 3.0 * n - taken
    if dof < RIGID_MIN_DOF:
        return None
    return energy / dof


def _seen_edge_offset_sd(rw: np.ndarray, Jw: np.ndarray, owner: np.ndarray) -> float:
    """One sd (bias px) of the stickers' own edge offsets as the whitened residuals rw show them."""
    n = len(owner) // 4
    if n < SEEN_OFFSET_MIN_STICKERS:
        return 0.0
    res = rw[:8 * n].reshape(n, 8)
    along, cc = _offset_along(rw, Jw, n)
    rest = np.einsum("sn,sn->s", res, res) - along
    # directions left free per sticker: 8 less the outward one less its share of its piece's pose (3)
    per_piece = np.bincount(owner[::4], minlength=int(owner.max()) + 1)[owner[::4]]
    noise_var = rest.sum() / max(float((7.0 - 3.0 / per_piece).sum()), 1.0)
    excess = float((along - noise_var).sum() / max(cc.sum(), 1e-12))
    return math.sqrt(max(excess, 0.0))


# Motion blur spreads the edges across its path only, and bends them toward the bits behind
# them, which differ on opposite sides: the sticker's whole square reads shifted. Its four corners
# move together, so residuals never show it (a piece's own pose absorbs it): carried as an
# independent shift per sticker in x and in y, CENTRE_SHIFT_STREAK px per cell of streak (the
# extra blur of its most blurred edge over its sharpest) past the onset, into the plane fit here
# and into pieces fitted on their own (vision/pipeline.py). Round blur is already in the corner
# noise and edge-offset terms; the streak is ~0.05-0.15 cell on sharp or defocused stickers and
# 0.2-0.4 under 7 px motion blur. Measured in tests/bench/robust.py under motion 7 px, scene seeds
# 11 and 29: without it Kang pieces were 2-7 sigma off (sigma 0.01-0.03 mm) and 4K Tornado tables
# 3 sigma off through the plane.
CENTRE_SHIFT_STREAK = 1.0
CENTRE_SHIFT_ONSET = 0.15  # streak / cell


def centre_shift_px(s: StickerObs) -> float:
    """Standard size (px, per axis) of a sticker's blur shift."""
    return CENTRE_SHIFT_STREAK * max(0.0, s.streak_px / max(s.side_px / 7.0, 0.5) - CENTRE_SHIFT_ONSET)


def _sticker_columns(owner: np.ndarray, ncam: int, npar: int) -> tuple[np.ndarray, np.ndarray]:
    """((stickers, ncam + 4) the parameters each sticker's corners depend on: the camera's, its piece's
    pose, the edge bias; (stickers,) whether it is on the reference piece, which has no pose columns:
    its three point at the edge bias, to be left out)."""
    piece = owner[::4]
    held = piece == 0
    pose = np.where(held, npar - 1, ncam + 3 * (piece - 1))[:, None] + np.where(held, 0, 1)[:, None] * np.arange(3)
    cam = np.broadcast_to(np.arange(ncam), (len(piece), ncam))
    return np.concatenate([cam, pose, np.full((len(piece), 1), npar - 1)], axis=1), held


def _propagated(cov: np.ndarray, patterns: np.ndarray, var: np.ndarray, cols: tuple[np.ndarray, np.ndarray]
                ) -> np.ndarray:
    """cov X^T diag(var) X cov: the parameters' covariance from independent errors of variance var
    along the patterns X (one row a sticker, zero outside its columns, cols: _sticker_columns). From
    ARROW_MIN_PARAMS parameters on, only the blocks the table pose keeps are formed (the camera's and
    each piece's own 3 x 3; the rest left 0), each pattern through its few columns: time linear in the
    stickers and parameters, where the whole product is cubic (a 247-sticker table: ~6 ms a term)."""
    if len(cov) < ARROW_MIN_PARAMS:
        moved = patterns @ cov
        return moved.T @ (moved * var[:, None])
    columns, held = cols
    ncam = columns.shape[1] - 4
    few = np.take_along_axis(patterns, columns, axis=1)
    few[held, ncam:ncam + 3] = 0.0  # the reference piece's placeholders
    # every pattern's camera and edge-bias columns (the same for all), then its own pose's
    shared = np.r_[np.arange(ncam), len(cov) - 1]
    moved = (few[:, np.r_[np.arange(ncam), ncam + 3]] @ cov[shared]
             + (few[:, None, ncam:ncam + 3] @ cov[columns[:, ncam:ncam + 3]])[:, 0])
    out = np.zeros_like(cov)
    out[:ncam, :ncam] = moved[:, :ncam].T @ (moved[:, :ncam] * var[:, None])
    piece = moved[:, ncam:len(cov) - 1].reshape(len(moved), -1, 3).transpose(1, 0, 2)  # (pieces, patterns, 3)
    at = ncam + np.arange(3 * piece.shape[0]).reshape(-1, 3)
    out[at[:, :, None], at[:, None, :]] = piece.transpose(0, 2, 1) @ (piece * var[None, :, None])
    return out


def _centre_shift_cov(cov: np.ndarray, Jw: np.ndarray, row_scale: np.ndarray, shift_px: np.ndarray,
                      cols: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Covariance of the fit's parameters from independent per-sticker shifts (sd px per axis);
    row_scale: each observation row's weight per px (sqrt(Huber weight) / sigma); cols: _sticker_columns."""
    n = len(shift_px)
    if not n or not shift_px.any():
        return np.zeros_like(cov)
    rows = Jw[:8 * n].reshape(n, 8, -1)
    scale = row_scale[:8 * n].reshape(n, 8)
    out = np.zeros_like(cov)
    for axis in (0, 1):
        out += _propagated(cov, np.einsum("snp,sn->sp", rows[:, axis::2], scale[:, axis::2]), shift_px ** 2, cols)
    return out


# Each sticker also reads a little turned as a whole: the edge fits bend toward the bits along
# each edge, differently on every sticker, so its four corners move together around its centre.
# A piece's own heading absorbs that turn (residuals never show it), but the reference piece's
# turn is the frame's heading: held by one sticker, it swings every far piece by its lever arm
# (webcam bench held-out seed 20261201, scene 933921258: the start gate's one 41 px sticker turned
# 3.4 mrad = 0.10 px at its corners, Tornado characters 970 mm away 3.1-3.4 mm off at sigma
# 0.8-0.9). Carried as an independent turn per sticker, TWIST_EXCESS of its corner sigma at each
# corner beyond what independent corner noise gives (sigma / 2): measured against render truth
# on the webcam bench's tuning seeds 7001/7002, clean 1080p, stickers of 36-60 px (the turn
# 0.035 px rms against 0.030 from the other corner residuals; smaller stickers show none).
TWIST_EXCESS = 0.3


def _twist_cov(cov: np.ndarray, Jw: np.ndarray, row_scale: np.ndarray, obs: np.ndarray,
               twist_px: np.ndarray, cols: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Covariance of the fit's parameters from independent per-sticker turns about each sticker's
    centre (sd px of tangential motion at its corners); row_scale and cols as in _centre_shift_cov."""
    n = len(twist_px)
    if not n or not np.any(twist_px):
        return np.zeros_like(cov)
    corners = obs[:4 * n].reshape(n, 4, 2)
    radial = corners - corners.mean(axis=1, keepdims=True)
    tangent = np.stack([-radial[..., 1], radial[..., 0]], axis=-1)
    tangent /= np.maximum(np.linalg.norm(tangent, axis=-1, keepdims=True), 1e-9)
    pattern = tangent.reshape(n, 8) * row_scale[:8 * n].reshape(n, 8)
    return _propagated(cov, np.einsum("snp,sn->sp", Jw[:8 * n].reshape(n, 8, -1), pattern),
                       np.asarray(twist_px, dtype=np.float64) ** 2, cols)


def _offset_gradient_cov(cov: np.ndarray, Jw: np.ndarray, obs: np.ndarray, seen_sd: float) -> np.ndarray:
    """Covariance from edge offsets that change smoothly across the picture, by seen_sd (bias px)
    from its middle to its furthest sticker in x and in y: lighting varies across a table, and
    under a tone curve that is not a power law each sticker's offset follows its brightness. Such a
    gradient reads as tilt, so residuals never show it; the stickers' seen spread sizes it."""
    n = len(obs) // 4
    if seen_sd <= 0 or n < SEEN_OFFSET_MIN_STICKERS:
        return np.zeros_like(cov)
    centres = obs.reshape(n, 4, 2).mean(axis=1)
    rel = centres - np.median(centres, axis=0)
    rel /= np.maximum(np.abs(rel).max(axis=0), 1e-9)
    col = Jw[:8 * n].reshape(n, 8, -1)[:, :, -1]
    out = np.zeros_like(cov)
    for axis in (0, 1):
        pattern = (col * rel[:, axis:axis + 1]).ravel()
        moved = cov @ (Jw[:8 * n].T @ pattern)
        out += np.outer(moved, moved) * seen_sd ** 2
    return out


def _edge_offset_cov(cov: np.ndarray, Jw: np.ndarray, offset_sd_px: np.ndarray,
                     cols: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Covariance of the fit's parameters from independent per-sticker edge offsets (sd px):
    cov J^T c_s per px of offset of sticker s, c_s its whitened outward column (the edge-bias
    column restricted to its eight rows, which carries its share of the bias); cols: _sticker_columns."""
    n = len(offset_sd_px)
    rows = Jw[:8 * n].reshape(n, 8, -1)
    unit = np.einsum("snp,sn->sp", rows, rows[:, :, -1])  # J^T c_s for each sticker
    return _propagated(cov, unit, np.asarray(offset_sd_px, dtype=np.float64) ** 2, cols)


HUBER_K = 3.0  # corners further than this many sigma are down-weighted


def _robust_cost(r: np.ndarray) -> float:
    d = np.sqrt((r.reshape(-1, 2) ** 2).sum(axis=1))
    return float(np.where(d <= HUBER_K, 0.5 * d ** 2, HUBER_K * d - 0.5 * HUBER_K ** 2).sum())


def _rvec_cov(R: np.ndarray, cov_cam: np.ndarray) -> np.ndarray:
    """Map the covariance of a left rotation increment to that of the rotation vector (numerically)."""
    rv0 = cv2.Rodrigues(R)[0].ravel()
    Jr = np.empty((3, 3))
    h = 1e-6
    for j in range(3):
        d = np.zeros(3)
        d[j] = h
        Jr[:, j] = (cv2.Rodrigues(cv2.Rodrigues(d)[0] @ R)[0].ravel() - rv0) / h
    T = np.eye(len(cov_cam))
    T[:3, :3] = Jr
    return T @ cov_cam @ T.T


@dataclass
class _State:
    R: np.ndarray
    t: np.ndarray
    f: float
    poses: np.ndarray  # (n_pieces, 3); row 0 = reference, held at 0
    k1: float = 0.0
    k2: float = 0.0
    bias: float = 0.0  # edge bias px (module docstring)


@dataclass
class _JacobianParts:
    """The plane fit's Jacobian, compact: corner (n, 2, ncam + 4) over [camera | own piece's
    pose | edge bias], piece_col (n,) where each corner's piece pose starts in the full vector
    (npar: the reference piece, held fixed), prior (rows, npar)."""

    corner: np.ndarray
    piece_col: np.ndarray
    prior: np.ndarray
    ncam: int
    npar: int


class _PlaneModel:
    """Reprojection residuals (whitened) and their analytic Jacobian for the joint plane fit."""

    def __init__(self, loc, zs, obs, sig, owner, n_pieces, intr: Intrinsics, nf: int, out_dirs: np.ndarray,
                 bias_prior_px: float | None = None):
        self.loc, self.zs, self.obs, self.sig, self.owner = loc, zs, obs, sig, owner
        self.bias_prior_px = bias_prior_px or EDGE_BIAS_PRIOR_PX
        self.bias_centre = 0.0  # the bias prior's centre (hold_bias)
        self.out_dirs = out_dirs
        self.n_pieces, self.intr, self.nf = n_pieces, intr, nf
        self.ratio = intr.fy / intr.fx
        self.ncam_count = 6 + nf
        self.mix = None  # (stickers, 8, 8): each sticker's whitening for its placement (set_placement)
        self.placement_cols = None  # (stickers, 8, 3): its residuals per sd of placement (x, y, turn)
        self.pose_cols = None  # (N, 2, 3): each corner's residual per unit of its piece's pose, last evaluated
        # where each corner's and each piece's Jacobian columns go in the full vector (_jacobian_parts,
        # normal_equations), and where each piece's corners start
        self._piece_col = self._piece_starts = self._piece_columns = None

    def residuals(self, st: _State, with_jac: bool = False):
        """Whitened residuals (2N [+2 prior rows]) and, on request, their Jacobian.

        Camera parameters: rotation increment (3), t (3), then with nf: f, k1, k2 (radial
        distortion about the image centre: u = f x (1 + k1 r^2 + k2 r^4) + cx).
        """
        r, parts = self.residuals_and_parts(st, with_jac)
        return r, (self.dense_jacobian(parts) if with_jac else None)

    def residuals_and_parts(self, st: _State, with_jac: bool = True):
        """Whitened residuals and, on request, the compact Jacobian (_JacobianParts)."""
        p = st.poses[self.owner]
        c, s = np.cos(p[:, 2]), np.sin(p[:, 2])
        lx, ly = self.loc[:, 0], self.loc[:, 1]
        X = np.stack([p[:, 0] + c * lx - s * ly, p[:, 1] + s * lx + c * ly, self.zs], axis=1)
        RX = X @ st.R.T
        Xc = RX + st.t
        fx = st.f if self.nf else self.intr.fx
        fy = fx * self.ratio if self.nf else self.intr.fy
        k1 = st.k1 if self.nf else 0.0
        k2 = st.k2 if self.nf else 0.0
        iz = 1.0 / Xc[:, 2]
        xn, yn = Xc[:, 0] * iz, Xc[:, 1] * iz
        r2 = xn * xn + yn * yn
        g = 1.0 + k1 * r2 + k2 * r2 * r2
        kk = 2.0 * (k1 + 2.0 * k2 * r2)  # dg/d(xn) = kk xn
        u = fx * xn * g + self.intr.cx
        v = fy * yn * g + self.intr.cy
        seen = self.obs + st.bias * self.out_dirs  # corners where they would be without the bias
        r = ((np.stack([u, v], axis=1) - seen) / self.sig[:, None]).ravel()
        if self.mix is not None:
            r = np.einsum("sij,sj->si", self.mix, r.reshape(-1, 8)).ravel()
        if self.nf:
            r = np.concatenate([r, self._prior(st)])
        r = np.concatenate([r, [(st.bias - self.bias_centre) / self.bias_prior_px, 0.0]])
        if not with_jac:
            return r, None
        return r, self._jacobian_parts(st, X, RX, (xn, yn, iz, r2, g, kk, fx, fy), (c, s, lx, ly))

    def _jacobian_parts(self, st: _State, X, RX, proj, rot_loc) -> "_JacobianParts":
        """Each corner's (2, q) Jacobian in the few parameters it depends on: the camera
        (ncam), its piece's pose (3; zero for the reference piece) and the edge bias (1); and the
        prior rows over all parameters."""
        xn, yn, iz, r2, g, kk, fx, fy = proj
        n = len(X)
        # d(u,v)/d(xn,yn) then d(xn,yn)/dXc
        A = np.empty((n, 2, 2))
        A[:, 0, 0] = fx * (g + kk * xn * xn)
        A[:, 0, 1] = fx * kk * xn * yn
        A[:, 1, 0] = fy * kk * xn * yn
        A[:, 1, 1] = fy * (g + kk * yn * yn)
        B = np.zeros((n, 2, 3))
        B[:, 0, 0] = iz
        B[:, 0, 2] = -xn * iz
        B[:, 1, 1] = iz
        B[:, 1, 2] = -yn * iz
        D = (A @ B) / self.sig[:, None, None]
        ncam = 6 + self.nf
        npar = ncam + 3 * (self.n_pieces - 1) + 1  # the last: edge bias
        J = np.zeros((n, 2, ncam + 4))
        J[:, :, -1] = -self.out_dirs / self.sig[:, None]
        # rotation (left increment): dXc/d(delta) = -[RX]x
        a = RX
        skew = np.zeros((n, 3, 3))
        skew[:, 0, 1], skew[:, 0, 2] = a[:, 2], -a[:, 1]
        skew[:, 1, 0], skew[:, 1, 2] = -a[:, 2], a[:, 0]
        skew[:, 2, 0], skew[:, 2, 1] = a[:, 1], -a[:, 0]
        J[:, :, 0:3] = D @ skew
        J[:, :, 3:6] = D
        if self.nf:
            J[:, 0, 6] = xn * g / self.sig
            J[:, 1, 6] = self.ratio * yn * g / self.sig
            J[:, 0, 7] = fx * xn * r2 / self.sig
            J[:, 1, 7] = fy * yn * r2 / self.sig
            J[:, 0, 8] = fx * xn * r2 * r2 / self.sig
            J[:, 1, 8] = fy * yn * r2 * r2 / self.sig
        c, s, lx, ly = rot_loc
        # piece pose: dX/dx = e1, dX/dy = e2, dX/dtheta = (-s lx - c ly, c lx - s ly, 0)
        dX = np.zeros((n, 3, 3))
        dX[:, 0, 0] = 1.0
        dX[:, 1, 1] = 1.0
        dX[:, 0, 2] = -s * lx - c * ly
        dX[:, 1, 2] = c * lx - s * ly
        J[:, :, ncam:ncam + 3] = D @ (st.R[None, :, :] @ dX)  # (n, 2, 3)
        self.pose_cols = J[:, :, ncam:ncam + 3].copy()
        J[self.owner == 0, :, ncam:ncam + 3] = 0.0  # the reference piece is held at the identity
        if self.mix is not None:
            J = (self.mix @ J.reshape(-1, 8, ncam + 4)).reshape(n, 2, ncam + 4)
        # where each compact column goes in the full parameter vector (the reference piece's
        # pose columns: a spare column past the end, dropped)
        if self._piece_col is None:  # fixed by the corners' owners: once a model
            self._piece_col = np.where(self.owner > 0, ncam + 3 * (self.owner - 1), npar)
        return _JacobianParts(J, self._piece_col, self._prior_rows(st, npar), ncam, npar)

    def placement_columns(self, st: _State, sd_mm: np.ndarray, sd_rad: np.ndarray) -> np.ndarray:
        """(stickers, 8, 3): how each sticker's eight whitened residuals move per sd of its placement
        on its piece: shifted in x and y, turned about its own centre (not its piece's origin)."""
        mix, self.mix = self.mix, None
        self.residuals_and_parts(st)
        self.mix = mix
        cols = self.pose_cols.reshape(-1, 8, 3)
        centre = self.loc.reshape(-1, 4, 2).mean(axis=1)
        th = st.poses[self.owner[::4], 2]
        cx = np.cos(th) * centre[:, 0] - np.sin(th) * centre[:, 1]
        cy = np.sin(th) * centre[:, 0] + np.cos(th) * centre[:, 1]
        turn = cols[:, :, 2] + cy[:, None] * cols[:, :, 0] - cx[:, None] * cols[:, :, 1]
        return np.stack([cols[:, :, 0] * sd_mm[:, None], cols[:, :, 1] * sd_mm[:, None],
                         turn * sd_rad[:, None]], axis=2)

    def hold_bias(self, centre_px: float, sd_px: float) -> None:
        """Centre the edge bias's prior on centre_px with sd sd_px (the placement refit, PLACEMENT_SHOWN)."""
        self.bias_centre, self.bias_prior_px = centre_px, sd_px

    def set_placement(self, st: _State, sd_mm: np.ndarray, sd_rad: np.ndarray, noise: float) -> None:
        """Weigh each sticker's residuals by its corner noise (scaled by noise) plus its placement,
        which moves its four corners together: whitening by (I + P P^T / noise^2)^(-1/2)."""
        P = self.placement_cols = self.placement_columns(st, sd_mm, sd_rad)
        C = np.eye(8)[None] + P @ P.transpose(0, 2, 1) / noise ** 2
        vals, vecs = np.linalg.eigh(C)
        self.mix = (vecs / np.sqrt(vals)[:, None, :]) @ vecs.transpose(0, 2, 1)

    def dense_jacobian(self, parts: "_JacobianParts") -> np.ndarray:
        """The full (2N + prior rows, npar) Jacobian."""
        n, ncam, npar = len(parts.corner), parts.ncam, parts.npar
        J = np.zeros((n, 2, npar + 3))  # 3 spare columns: the reference piece's
        J[:, :, :ncam] = parts.corner[:, :, :ncam]
        J[:, :, npar - 1] = parts.corner[:, :, -1]
        rows = np.arange(n)
        for j in range(3):
            J[rows, :, parts.piece_col + j] = parts.corner[:, :, ncam + j]
        return np.concatenate([J[:, :, :npar].reshape(2 * n, npar), parts.prior])

    def normal_equations(self, parts: "_JacobianParts", r: np.ndarray, wts: np.ndarray):
        """J^T W J and J^T W r with W the Huber weights, summed piece by piece from each corner's
        few non-zero columns (a 250-sticker table has ~390 parameters: the dense products cost
        ~25 ms an iteration)."""
        n, npar = len(parts.corner), parts.npar
        w = wts[:n]
        Jc = parts.corner
        Jt = Jc.transpose(0, 2, 1)
        per_corner = (Jt * w[:, None, None]) @ Jc
        grad = (Jt @ (w[:, None] * r[:2 * n].reshape(n, 2))[:, :, None])[:, :, 0]
        if self._piece_starts is None:  # fixed by the corners' owners: once a model
            owners, self._piece_starts = np.unique(self.owner, return_index=True)
            self._piece_columns = self._compact_columns(parts)[self._piece_starts]
        starts, idx = self._piece_starts, self._piece_columns
        A = np.zeros((npar + 3, npar + 3))  # 3 spare columns: the reference piece's
        g = np.zeros(npar + 3)
        blocks, pushes = np.add.reduceat(per_corner, starts, axis=0), np.add.reduceat(grad, starts, axis=0)
        w_prior = np.repeat(wts[n:], 2)
        if npar < ARROW_MIN_PARAMS:  # few pieces: one scatter-add, and the priors' dense product
            np.add.at(A, (idx[:, :, None], idx[:, None, :]), blocks)
            np.add.at(g, idx, pushes)
            A, g = A[:npar, :npar], g[:npar]
            A += parts.prior.T @ (parts.prior * w_prior[:, None])
            g += parts.prior.T @ (w_prior * r[2 * n:])
            return A, g
        # the shared columns (the camera's, the edge bias) summed over the pieces in their order and put
        # in every piece's block, so that one assignment writes each piece's own part once and the shared
        # part with the same sum from every piece (np.add.at takes ~1 ms on 120 pieces)
        shared = np.r_[np.arange(parts.ncam), parts.ncam + 3]
        blocks[:, shared[:, None], shared] = blocks[:, shared][:, :, shared].sum(axis=0)
        pushes[:, shared] = pushes[:, shared].sum(axis=0)
        A[idx[:, :, None], idx[:, None, :]] = blocks
        g[idx] = pushes
        A, g = A[:npar, :npar], g[:npar]
        on = np.flatnonzero(parts.prior.any(axis=0))  # the priors' few columns (focal, distortion, edge bias)
        prior = parts.prior[:, on]
        A[np.ix_(on, on)] += prior.T @ (prior * w_prior[:, None])
        g[on] += prior.T @ (w_prior * r[2 * n:])
        return A, g

    def _compact_columns(self, parts: "_JacobianParts") -> np.ndarray:
        """(n, q): each corner's compact Jacobian columns in the full parameter vector."""
        ncam, npar = parts.ncam, parts.npar
        pc = parts.piece_col[:, None] + np.arange(3)[None, :]
        cam = np.broadcast_to(np.arange(ncam), (len(pc), ncam))
        return np.concatenate([cam, pc, np.full((len(pc), 1), npar - 1)], axis=1)

    def _prior_rows(self, st: _State, npar: int) -> np.ndarray:
        """The prior rows of the Jacobian (focal, distortion, edge bias)."""
        rows = []
        if self.nf:
            Jprior = np.zeros((4, npar))  # 4 rows: the residuals are handled in (u, v) pairs
            Jprior[0, 6] = 1.0 / (st.f * self.intr.prior_log_f_sigma)
            Jprior[1, 7] = 1.0 / self.intr.prior_k1_sigma
            Jprior[2, 8] = 1.0 / self.intr.prior_k2_sigma
            rows.append(Jprior)
        Jbias = np.zeros((2, npar))
        Jbias[0, -1] = 1.0 / self.bias_prior_px
        rows.append(Jbias)
        return np.concatenate(rows)

    def _prior(self, st: _State) -> np.ndarray:
        f0 = self.intr.prior_f or self.intr.fx
        return np.array([math.log(max(st.f, 1e-6) / f0) / self.intr.prior_log_f_sigma,
                         st.k1 / self.intr.prior_k1_sigma, st.k2 / self.intr.prior_k2_sigma, 0.0])

    def apply(self, st: _State, delta: np.ndarray) -> _State:
        R = cv2.Rodrigues(delta[:3].reshape(3, 1))[0] @ st.R
        t = st.t + delta[3:6]
        f = st.f + (delta[6] if self.nf else 0.0)
        k1 = st.k1 + (delta[7] if self.nf else 0.0)
        k2 = st.k2 + (delta[8] if self.nf else 0.0)
        poses = st.poses.copy()
        poses[1:] += delta[6 + self.nf:-1].reshape(-1, 3)
        return _State(R, t, f, poses, k1, k2, st.bias + delta[-1])

    def weights(self, r: np.ndarray) -> np.ndarray:
        d = np.sqrt((r.reshape(-1, 2) ** 2).sum(axis=1))
        w = np.where(d <= HUBER_K, 1.0, HUBER_K / np.maximum(d, 1e-12))
        w[-(3 if self.nf else 1):] = 1.0  # the priors are not outliers
        return w

    def levenberg_marquardt(self, st: _State, iterations: int = 40):
        """(state, residuals, dense Jacobian, Huber weights) at the solution; self.normal: J^T W J there."""
        r, parts = self.residuals_and_parts(st)
        wts = self.weights(r)
        cost = _robust_cost(r)
        lam = 1e-3
        A = None  # the normal equations at (parts, r, wts), once formed
        for _ in range(iterations):
            A, g = self.normal_equations(parts, r, wts)
            damping = np.diag(A) + 1e-9
            on_diagonal = np.diag_indices(len(A))
            improved = False
            for _ in range(8):
                damped = A.copy()
                damped[on_diagonal] += lam * damping
                try:
                    delta = arrow_solve(damped, -g, self.ncam_count)
                except np.linalg.LinAlgError:
                    lam *= 10
                    continue
                cand = self.apply(st, delta)
                r2, parts2 = self.residuals_and_parts(cand)  # with its Jacobian: a step is seldom refused
                c2 = _robust_cost(r2) if np.all(np.isfinite(r2)) else np.inf
                if c2 < cost:
                    improved = True
                    st, lam = cand, max(lam / 5, 1e-9)
                    break
                lam *= 10
            if not improved:
                break
            r, parts, A = r2, parts2, None
            old, cost = cost, _robust_cost(r)
            wts = self.weights(r)
            if old - cost < 1e-8 * max(1.0, old):
                break
        self.normal = A if A is not None else self.normal_equations(parts, r, wts)[0]
        return st, r, self.dense_jacobian(parts), wts


# A multi-sticker piece whose stickers are this much further apart or closer than the catalog
# says (relative) is not as catalogued; measured per sticker, sizes and spacing agree within
# ~3 % even under blur and tone curves (tests/bench/robust.py); small stickers' own depths
# are less certain: LAYOUT_TOLERANCE_PX / side px more
LAYOUT_TOLERANCE = 0.08
LAYOUT_TOLERANCE_PX = 1.5
# below this side, one sticker's own depth is too loose to judge a layout (the plane fit's
# per-piece misfit still flags such a piece)
LAYOUT_MIN_SIDE_PX = 24.0


def layout_mismatches(groups: dict[str, list[StickerObs]], K: np.ndarray) -> dict[str, tuple[float, float]]:
    """Pieces whose sticker-to-sticker distance disagrees with the catalog: name -> (seen mm, catalog mm).

    Each sticker's own pose (IPPE, from its catalog size) gives its centre in camera
    coordinates without any table pose, so one wrong piece cannot hide behind the others.
    """
    out = {}
    for name, sts in groups.items():
        if len(sts) < 2 or min(s.side_px for s in sts) < LAYOUT_MIN_SIDE_PX:
            continue
        centres = []
        for s in sts:
            sols = ippe_square(s.ideal_px, s.size_mm, K)
            if not sols:
                break
            centres.append(np.mean([t for _, t, _ in sols], axis=0))
        if len(centres) != len(sts):
            continue
        local = [np.append(s.local_mm.mean(axis=0), s.z_mm) for s in sts]
        worst = None
        tolerance = LAYOUT_TOLERANCE + LAYOUT_TOLERANCE_PX / max(min(s.side_px for s in sts), 1.0)
        for i in range(len(sts)):
            for j in range(i + 1, len(sts)):
                seen = float(np.linalg.norm(centres[i] - centres[j]))
                cat = float(np.linalg.norm(local[i] - local[j]))
                if cat > 0 and abs(seen - cat) > tolerance * cat and (
                        worst is None or abs(seen - cat) > abs(worst[0] - worst[1])):
                    worst = (seen, cat)
        if worst is not None:
            out[name] = worst
    return out


# camera-file plausibility: refit with the focal length free when the stickers fit worse than
# this (rms, in corner sigmas), or when one Gauss-Newton step from the file's fit would move the
# focal length by FOCAL_SCORE_SIGMA of its sd and FOCAL_WARN_REL (TablePose.focal_offset_px: the
# stickers can tell the focal length, and it is not the file's); believe the stickers when they disagree by more
# than FOCAL_DISAGREE_SIGMA of their own estimate and FOCAL_DISAGREE_REL of the focal length
FOCAL_CHECK_RMS_SIGMA = 0.8
FOCAL_SCORE_SIGMA = 1.0
FOCAL_SCORE_SD_REL = 0.1
FOCAL_DISAGREE_SIGMA = 4.0
FOCAL_DISAGREE_REL = 0.02
# ... and warn, keeping the file's fit, when they disagree by more than FOCAL_WARN_SIGMA and
# FOCAL_WARN_REL: on the bundled stills with their true camera files the stickers' focal length is
# within 2 of its sd in 44 of 48 and within 3.2 in all, and the speed bench's Kayak session (its
# true file) reads 2.1-2.4 % short at 2.5-3.2 sd every frame; with a file 11 % off it is 2.3-360
# sd and 8-15 % off wherever the view's tilt fixes the focal length (straight down it does not:
# the camera's height takes the difference, and the stickers cannot tell, +-12-16 %). 4 % of
# focal length moved the bundled stills' pieces ~0.3 mm.
FOCAL_WARN_SIGMA = 2.0
FOCAL_WARN_REL = 0.04


def check_camera_file(groups: dict[str, list[StickerObs]], reference: str, intrinsics: Intrinsics,
                      tp: TablePose) -> tuple[TablePose, str | None]:
    """(the table pose to use, a warning or None): do the stickers agree with the camera file's
    focal length? A file from another camera at the same resolution fits them with a
    systematic misfit that no corner noise explains: refit with the focal length (and radial
    distortion) free, and when the stickers clearly say another focal length, use that fit,
    whose covariance carries the focal length's uncertainty. When they say so less clearly
    (beyond FOCAL_WARN_SIGMA), keep the file's and warn; either warning says what it costs
    the call: how far the flat pieces move between the two fits."""
    if intrinsics.focal_free:
        return tp, None
    # the step must also reach what a warning needs (FOCAL_WARN_REL): a true file's steps are 1-2.4 %
    # and often over 1 sd (a stream would refit every frame), a file 11 % off steps 8-15 %
    # and the stickers must fix the focal length to FOCAL_SCORE_SD_REL: straight down they cannot
    # (a 247-sticker table: +-21 %, a step of 1.1 sd refitted it every frame)
    score = abs(tp.focal_offset_px) >= max(FOCAL_SCORE_SIGMA * tp.focal_offset_sigma_px,
                                           FOCAL_WARN_REL * intrinsics.fx) \
        and tp.focal_offset_sigma_px <= FOCAL_SCORE_SD_REL * intrinsics.fx
    if tp.rms_sigma < FOCAL_CHECK_RMS_SIGMA and not score:
        return tp, None
    free = replace(intrinsics, focal_free=True, prior_f=intrinsics.fx)
    try:
        alt = solve_table_pose(groups, reference, free, f_init=intrinsics.fx)
    except (TablePoseError, np.linalg.LinAlgError, ValueError):
        return tp, None
    sigma_f = math.sqrt(max(float(alt.camera_cov[6, 6]), 1e-12))
    gap = abs(alt.f - intrinsics.fx)
    if gap < FOCAL_WARN_SIGMA * sigma_f or gap < FOCAL_DISAGREE_REL * intrinsics.fx:
        return tp, None
    said = (f"the stickers disagree with the camera file (focal length {intrinsics.fx:.0f} px, the stickers say "
            f"{alt.f:.0f} +- {sigma_f:.0f} px, {gap / sigma_f:.1f} sigma apart): is the camera file for this camera "
            f"and zoom? {focal_cost(tp, alt)}")
    if gap < FOCAL_DISAGREE_SIGMA * sigma_f:
        return tp, (said + "; positions use the camera file's" if gap >= FOCAL_WARN_REL * intrinsics.fx else None)
    return alt, said + "; positions use the stickers' estimate and sigma is widened to match"


def focal_cost(tp: TablePose, alt: TablePose) -> str:
    """What the focal length's disagreement costs the call: how far the flat pieces (and the camera's
    height over the table) move between the camera file's fit tp and the stickers' alt."""
    moved = {n: math.hypot(alt.piece_poses[n][0] - p[0], alt.piece_poses[n][1] - p[1])
             for n, p in tp.piece_poses.items() if n in alt.piece_poses}
    height = abs(float(alt.camera_centre()[2] - tp.camera_centre()[2]))
    worst = max(moved, key=moved.get) if moved else None
    pieces = (f"pieces move up to {moved[worst]:.2f} mm ({worst}) between the two" if worst and moved[worst] > 0
              else "the pieces' places hardly move")
    return (f"{pieces}, and the camera's height by {height:.0f} mm, which moves every raised piece's parallax "
            f"correction: a close call within that is less certain than its sigma says")


# Leave-one-out over the plane's stickers: the covariance of the joint fit assumes independent
# corner noise, but blur bends each sticker's corners together (its whole square reads shifted,
# scaled or tilted), and with few stickers that error hides in the camera pose and the piece
# poses rather than in the residuals. Refitting without each sticker in turn shows how much the
# answer rests on any one of them (tests/bench/robust.py, defocus 2 px: 3-4 sigma before).
# Run when the plane is weakly fixed by soft corners (each refit costs one plane fit):
# * few stickers that are also soft (a quarter cell and more: sharp renders read
#   0.1-0.3 of a cell, Kang's four big board stickers 0.1-0.16);
# * or strongly blurred stickers, however many (defocus 2 px at 1080p: 0.5-0.65).
# Pieces far outside the plane stickers' hull alone do not call for it: with sharp corners the
# fit's covariance already carries the lever arm (sample tornado/009: 7 stickers, a piece 0.56
# hull diameters outside, errors 0.2-0.4 mm; the refits said 0.7 mm and turned a measured
# "ahead" into "equidistant"). The hull distance is still measured, to name the cause.
JACKKNIFE_MAX_STICKERS = 12
JACKKNIFE_SOFT_BLUR_CELLS = 0.25
JACKKNIFE_BLUR_CELLS = 0.4  # median blur sigma / cell of the plane's stickers
JACKKNIFE_OUTSIDE_HULL = 0.5  # a piece this far outside the hull, in hull diameters (Kang tokens beside the board: <= 0.36)
JACKKNIFE_MAX_REFITS = 24
# two stickers still fix the plane (each one alone does, loosely): a plane of three, one of them
# moved by glare, is refitted on the other pairs (the Kang board with a corner washed out)
LEAVE_ONE_OUT_MIN_STICKERS = 2


@dataclass(frozen=True)
class PlaneSupport:
    """How well the plane's stickers fix it: count, median blur (cells), how far the furthest
    piece lies outside their convex hull (hull diameters), and whether that calls for refits."""

    stickers: int
    blur_cells: float
    outside_hull: float
    weak: bool

    def cause(self) -> str:
        if self.blur_cells > JACKKNIFE_SOFT_BLUR_CELLS:
            return f"the picture is blurred (edges spread over {self.blur_cells:.2f} of a sticker cell)"
        if self.outside_hull > JACKKNIFE_OUTSIDE_HULL:
            return "too few flat pieces in view, and pieces lie far outside them"
        return "too few flat pieces in view"


def plane_support(groups: dict[str, list[StickerObs]], all_pieces: dict[str, list[StickerObs]]) -> PlaneSupport:
    """PlaneSupport of the plane fitted to `groups`, for the pieces in `all_pieces`."""
    stickers = [s for sts in groups.values() for s in sts]
    blur_cells = [s.blur_px / max(s.side_px / 7.0, 0.5) for s in stickers if s.blur_px > 0]
    blur = float(np.median(blur_cells)) if blur_cells else 0.0
    centres = np.array([s.ideal_px.mean(axis=0) for s in stickers], dtype=np.float32)
    outside = 0.0
    if len(centres) >= 3:
        hull = cv2.convexHull(centres)
        diameter = float(max(np.ptp(centres[:, 0]), np.ptp(centres[:, 1]), 1.0))
        for sts in all_pieces.values():
            for s in sts:
                c = s.ideal_px.mean(axis=0)
                d = -cv2.pointPolygonTest(hull, (float(c[0]), float(c[1])), True)
                outside = max(outside, d / diameter)
    weak = (len(stickers) <= JACKKNIFE_MAX_STICKERS and blur > JACKKNIFE_SOFT_BLUR_CELLS) or blur > JACKKNIFE_BLUR_CELLS
    return PlaneSupport(len(stickers), blur, outside, weak)


def leave_one_out(groups: dict[str, list[StickerObs]], reference: str, tp: TablePose):
    """The table pose refitted without each plane sticker in turn (those the fit can spare:
    the reference piece keeps at least one, and LEAVE_ONE_OUT_MIN_STICKERS remain)."""
    keys = [(n, i) for n in tp.used_pieces for i in range(len(groups.get(n, [])))]
    for n, i in keys[:JACKKNIFE_MAX_REFITS]:
        fewer = {m: [s for j, s in enumerate(groups[m]) if not (m == n and j == i)] for m in tp.used_pieces}
        fewer = {m: sts for m, sts in fewer.items() if sts}
        if reference not in fewer or sum(map(len, fewer.values())) < LEAVE_ONE_OUT_MIN_STICKERS:
            continue
        try:
            yield solve_table_pose(fewer, reference, tp.intrinsics, f_init=tp.f if tp.intrinsics.focal_free else None)
        except (TablePoseError, np.linalg.LinAlgError, ValueError, cv2.error, FloatingPointError):
            continue
