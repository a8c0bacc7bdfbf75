"""Parallax-correct piece poses with an honest uncertainty.

A sticker on a 15 mm kayak pawn seen 35 degrees off vertical sits ~10 mm away from
where a table-plane mapping would put it, so each sticker's corners are cut with the
plane at the sticker's own height (catalog top_z_mm). Every sticker of one piece is
fitted together: the piece pose (x, y, theta) that best reprojects all its corners,
given the camera pose.

Uncertainty (per piece, 3x3 covariance of x, y, theta):
* corner noise: sigma_px per corner (corner_sigma_px: grows for small and blurred
  markers), propagated through the reprojection Jacobian, (J^T J)^-1, scaled by the noise these
  pieces' own residuals show (pooled, _pieces_noise2) or each piece's own where larger;
* camera pose: the table fit's own covariance, propagated with the sensitivity of the
  piece pose to the camera parameters, S = -(Jp^T Jp)^-1 Jp^T Jc;
* a small floor (print registration), so no sigma is 0;
* (vision/pipeline.py) when few or blurred stickers fix the plane, the spread of the pose over
  refits without each sticker in turn, where it is larger.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from .table_pose import (NOISE_FACTOR_FLOOR, StickerObs, TablePose, corner_outward, energy_along, fit_rigid_2d,
                         intersect_plane)

# Corner noise model (px): sqrt(base^2 + (k_small / side)^2 + (k_blur * edge_rms)^2
# + (k_defocus * max(0, blur / cell - onset))^2), fitted on synthetic and rendered pictures (see
# tests/bench/accuracy.py and tests/bench/robust.py). The last term: once the blur
# passes ~1/6 of a cell, the bits next to the black border pull its edges and the
# rounded corners bend them; measured corner errors then grow about linearly with
# blur / cell, not with the scatter of the edge points, which stays small.
CORNER_SIGMA_BASE_PX = 0.05
CORNER_SIGMA_SMALL = 1.2
CORNER_SIGMA_BLUR = 0.25
CORNER_SIGMA_DEFOCUS = 2.6
CORNER_DEFOCUS_ONSET = 0.16  # blur sigma / cell
# Position floor (mm): a printer's registration. It was 0.05 mm, a margin that on clean renders
# was larger than the whole measured error (0.5 sigma then held 85 % of errors at 1080p, 78 % at
# 4K); print scale is measured by the plane fit's edge bias, placement errors of a multi-sticker
# piece show in its layout residuals.
POSITION_FLOOR_MM = 0.01
THETA_FLOOR_DEG = 0.05


def corner_sigma_px(side_px: float, edge_rms_px: float = 0.0, source: str = "full", blur_px: float = 0.0) -> float:
    """Standard uncertainty of one detected corner coordinate, in pixels (blur_px: the blur
    sigma measured across the marker's edges)."""
    blur_cells = blur_px / max(side_px / 7.0, 0.5)
    s = math.sqrt(CORNER_SIGMA_BASE_PX ** 2 + (CORNER_SIGMA_SMALL / max(side_px, 4.0)) ** 2
                  + (CORNER_SIGMA_BLUR * edge_rms_px) ** 2 + (CORNER_SIGMA_DEFOCUS * max(0.0, blur_cells - CORNER_DEFOCUS_ONSET)) ** 2)
    if edge_rms_px == 0.0:
        s *= 2.0  # edge refinement failed: OpenCV's own corners are coarser
    return s


@dataclass
class PieceFit:
    pose: tuple[float, float, float]  # x, y (mm), theta (rad) in the table-pose reference frame
    cov: np.ndarray  # (3, 3)
    rms_sigma: float  # rms whitened reprojection residual
    # d(pose)/d(camera: rvec, tvec[, f, k1, k2]) at the fit: how the pose follows a small change of
    # the table pose (vision/pipeline.py moves it with each leave-one-out refit of the plane)
    camera_sensitivity: np.ndarray | None = None


def _project(Xc, fx, fy, cx, cy, k1=0.0, k2=0.0):
    """(..., 3) points in the camera's frame -> (..., 2) pixels; the lens (fx, fy, k1, k2) numbers, or
    arrays that broadcast over the leading axes (one camera each)."""
    xn, yn = Xc[..., 0] / Xc[..., 2], Xc[..., 1] / Xc[..., 2]
    r2 = xn * xn + yn * yn
    g = 1.0 + k1 * r2 + k2 * r2 * r2
    return np.stack([fx * xn * g + cx, fy * yn * g + cy], axis=-1)


def fit_piece(stickers: list[StickerObs], tp: TablePose, z_override: float | None = None) -> PieceFit:
    """Pose of one piece from its stickers with the camera fixed at tp (Gauss-Newton on reprojection)."""
    return fit_pieces([stickers], tp, [z_override])[0]


class _Corners:
    """Every corner of several pieces' stickers, piece after piece, and their reprojection residuals.

    All pieces are fitted at once with numpy (a Kang board has a dozen tokens a frame; per-piece
    Python calls cost more than the arithmetic)."""

    def __init__(self, groups: list[list[StickerObs]], tp: TablePose, z_overrides):
        counts = np.array([4 * len(sts) for sts in groups])
        self.starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        self.owner = np.repeat(np.arange(len(groups)), counts)
        flat = [s for sts in groups for s in sts]
        self.loc = np.concatenate([s.local_mm for s in flat])
        self.zs = np.concatenate([np.full(4, z if z is not None else s.z_mm)
                                  for sts, z in zip(groups, z_overrides) for s in sts])
        self.obs = np.concatenate([s.ideal_px for s in flat])
        self.sig = np.repeat(np.array([s.sigma_px for s in flat]), 4)
        self.tp = tp
        self.nf = tp._ncam - 6  # 3 (f, k1, k2) without a camera file
        self.cam = np.concatenate([tp.rvec, tp.tvec] + ([np.array([tp.f, tp.k1, tp.k2])] if self.nf else []))

    def initial_poses(self) -> np.ndarray:
        """(n_pieces, 3): each piece's rigid fit of its corners cut with the plane at their height,
        weighted by 1 / sigma^2."""
        world = intersect_plane(self.obs, self.zs, self.tp.rvec, self.tp.tvec, self.tp.K())
        w = 1.0 / self.sig ** 2
        return np.array([fit_rigid_2d(self.loc[a:b], world[a:b], w[a:b]) for a, b in self._bounds()])

    def _bounds(self):
        ends = np.append(self.starts[1:], len(self.obs))
        return list(zip(self.starts, ends))

    def _points(self, poses: np.ndarray, copies: int = 1) -> np.ndarray:
        """(copies x n_corners, 3) table points of the corners with the pieces at poses ((copies x
        n_pieces, 3): copies sets of poses one after the other)."""
        owner = self.owner if copies == 1 else (self.owner + (self.owner.max() + 1) * np.arange(copies)[:, None]).ravel()
        p = poses[owner]
        c, s = np.cos(p[:, 2]), np.sin(p[:, 2])
        lx, ly = np.tile(self.loc[:, 0], copies), np.tile(self.loc[:, 1], copies)
        return np.stack([p[:, 0] + c * lx - s * ly, p[:, 1] + s * lx + c * ly, np.tile(self.zs, copies)], axis=1)

    def _lens(self, cams: np.ndarray):
        """(fx, fy, k1, k2) of each camera (rows of cams), (k, 1) arrays (they broadcast over (k, corners)),
        or the camera file's numbers."""
        intr = self.tp.intrinsics
        if not self.nf:
            return intr.fx, intr.fy, 0.0, 0.0
        fx = cams[:, 6:7]
        return fx, fx * (intr.fy / intr.fx), cams[:, 7:8], cams[:, 8:9]

    def resid(self, cam_p: np.ndarray, poses: np.ndarray, copies: int = 1) -> np.ndarray:
        """(n_corners, 2) whitened residuals with the camera at cam_p and the pieces at poses;
        (copies, n_corners, 2) for copies sets of poses at once (poses: (copies x n_pieces, 3))."""
        out = self.resid_cameras(cam_p[None], poses, copies)
        return out[:, 0] if copies > 1 else out[0]

    def resid_cameras(self, cams: np.ndarray, poses: np.ndarray, copies: int = 1) -> np.ndarray:
        """(cameras, n_corners, 2) whitened residuals with the camera at each row of cams and the
        pieces at poses; (copies, cameras, n_corners, 2) for copies sets of poses (resid)."""
        R = np.stack([cv2.Rodrigues(c[:3])[0] for c in cams])
        Xc = np.matmul(self._points(poses, copies)[None], R.transpose(0, 2, 1)) + cams[:, None, 3:6]
        fx, fy, k1, k2 = self._lens(cams)
        intr = self.tp.intrinsics
        proj = _project(Xc.reshape(len(cams), copies, -1, 3).transpose(1, 0, 2, 3), fx, fy, intr.cx, intr.cy, k1, k2)
        out = (proj - self.obs) / self.sig[:, None]
        return out if copies > 1 else out[0]

    def piece_jacobian(self, poses: np.ndarray):
        """Residuals (n, 2) and their forward-difference Jacobian (n, 2, 3) in each corner's piece pose
        (the poses and their three steps evaluated together)."""
        steps = (1e-4, 1e-4, 1e-6)
        stacked = np.tile(poses, (4, 1)).reshape(4, -1, 3)
        for j, h in enumerate(steps):
            stacked[j + 1, :, j] += h
        r = self.resid(self.cam, stacked.reshape(-1, 3), copies=4)
        r0 = r[0]
        J = np.empty(r0.shape + (3,))
        for j, h in enumerate(steps):
            J[:, :, j] = (r[j + 1] - r0) / h
        return r0, J

    def offset_energy(self, r: np.ndarray) -> np.ndarray:
        """(n_corners,): each sticker's whitened residual energy along its outward direction (its four
        corners in or out together: its own edge offset, which moves no centre; the plane fit carries
        it apart, table_pose._edge_offset_cov), put on its first corner."""
        out = (corner_outward(self.obs.reshape(-1, 4, 2)) / self.sig.reshape(-1, 4)[:, :, None]).reshape(-1, 8)
        energy = np.zeros(len(self.obs))
        energy[::4] = energy_along(out, r.reshape(-1, 8))
        return energy

    def per_piece(self, values: np.ndarray) -> np.ndarray:
        """Sum over each piece's corners (first axis)."""
        return np.add.reduceat(values, self.starts, axis=0)


def _solve3(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(k, 3) solutions of k 3x3 normal equations (least-norm where one is singular)."""
    try:
        return np.linalg.solve(A, b[..., None])[..., 0]
    except np.linalg.LinAlgError:
        return np.array([np.linalg.lstsq(a, v, rcond=None)[0] for a, v in zip(A, b)])


def fit_pieces(groups: list[list[StickerObs]], tp: TablePose, z_overrides=None, pooled: int | None = None
               ) -> list[PieceFit]:
    """fit_piece for several pieces at once: Gauss-Newton on each piece's reprojection with the
    camera fixed at tp, then its covariance (corner noise plus the camera pose's). pooled: how many
    of the groups (the first ones; all by default) measure the pooled noise of pieces fitted on their
    own (_pieces_noise2); the others ride along, each fitted as it would be alone."""
    if not groups:
        return []
    corners = _Corners(groups, tp, z_overrides or [None] * len(groups))
    poses = corners.initial_poses()
    active = np.ones(len(groups), dtype=bool)
    for _ in range(6):
        r, J = corners.piece_jacobian(poses)
        A = corners.per_piece(np.einsum("nki,nkj->nij", J, J))
        g = corners.per_piece(np.einsum("nki,nk->ni", J, r))
        step = _solve3(A, -g)
        poses[active] += step[active]
        active &= ~((np.abs(step[:, :2]).max(axis=1) < 1e-5) & (np.abs(step[:, 2]) < 1e-8))
        if not active.any():
            break
    r, Jp = corners.piece_jacobian(poses)
    cam = corners.cam
    steps = np.array([1e-7] * 3 + [1e-4] * 3 + [1e-3, 1e-6, 1e-6])[:len(cam)]
    stepped = np.tile(cam, (len(cam), 1))
    stepped[np.arange(len(cam)), np.arange(len(cam))] += steps
    Jc = np.ascontiguousarray(((corners.resid_cameras(stepped, poses) - r) / steps[:, None, None]).transpose(1, 2, 0))
    A = corners.per_piece(np.einsum("nki,nkj->nij", Jp, Jp))
    JpJc = corners.per_piece(np.einsum("nki,nkj->nij", Jp, Jc))
    rr = corners.per_piece((r ** 2).sum(axis=1)) - corners.per_piece(corners.offset_energy(r))
    A_inv = np.linalg.inv(A + 1e-12 * np.eye(3))
    dofs = np.array([max(1, 7 * len(sts) - 3) for sts in groups])  # each sticker's own edge offset left out
    noise2 = _pieces_noise2(tp, rr[:pooled], dofs[:pooled])
    out = []
    for k, sts in enumerate(groups):
        chi2 = float(rr[k]) / dofs[k]
        # the image's measured noise level (table fit), or this piece's own when it fits worse
        S = -A_inv[k] @ JpJc[k]
        cov = A_inv[k] * max(noise2, chi2) + S @ tp.camera_cov @ S.T
        out.append(PieceFit(pose=(float(poses[k, 0]), float(poses[k, 1]), float(poses[k, 2])), cov=cov,
                            rms_sigma=float(math.sqrt(chi2)), camera_sensitivity=S))
    return out


# The corner noise of pieces fitted on their own is measured on their own stickers, pooled over the
# picture's such pieces when there are enough of them: the plane fit's noise factor speaks for the
# flat pieces' stickers (a Kang board's four big ones, river tiles, a gate), which a lamp's glare or
# their size make noisier or cleaner than the pieces'. Each sticker's own edge offset (its four
# corners in or out together) moves no piece and is left out. Varied tuning tables (synth/variety.py,
# 4 per game): 0.5 sigma clean 71.5 -> 67.4 %, noise 15 74.8 -> 72.3 %, glare 84.1 -> 81.5 %, 2 sigma
# >= 97 % throughout.
POOLED_NOISE_MIN_PIECES = 4
# The pooled level is floored as an unbiased plane fit's (NOISE_FACTOR_FLOOR), not at the plane fit's
# raised floor under a tone curve or blur (BIASED_NOISE_FLOOR). That floor was meant for the shift a
# tone curve leaves in a lone sticker's centre, which hides in its pose and never in its residuals.
# Measured against the renders' true corners (varied tuning tables, 4 per game, 1080p), that shift is
# no larger under a tone curve or blur than on clean pictures, where the plain floor holds: rms 0.45
# of a centre's modelled sd clean, 0.69 gamma 2.2, 0.62 sRGB-like, 0.29 defocus 1 px, 0.57 noise 15
# (medians 0.011-0.020 px). With the raised floor, the Kang tokens' own sigma under a tone curve was
# 5-7 times their error. Tuning tables, 0.5 sigma: sRGB-like 63.6 -> 58.4 %, defocus 1 70.1 -> 64.6 %,
# webcam chain 1080p 77.2 -> 64.9 %, 720p -> 60.8 %; 2 sigma >= 96 %, no piece newly confidently
# wrong there or on the default bench (tests/bench/robust.py). A piece whose own residuals are larger
# keeps its own level, and the camera's share (the plane fit's covariance) keeps the raised floor.
LONE_PIECE_NOISE_FLOOR = NOISE_FACTOR_FLOOR


def _pieces_noise2(tp: TablePose, rr: np.ndarray, dofs: np.ndarray) -> float:
    """The squared noise factor for pieces fitted on their own: their pooled residuals' chi^2 (rr: each
    piece's whitened residual energy, dofs its degrees of freedom), floored at LONE_PIECE_NOISE_FLOOR,
    kept on tp for later fits of some of them (a piece's sigma does not depend on which others it was
    fitted with); the plane fit's own factor when the pieces are too few, or its floor is unknown."""
    if getattr(tp, "pieces_noise2", None) is not None:
        return tp.pieces_noise2
    if getattr(tp, "noise_floor", None) is None or len(rr) < POOLED_NOISE_MIN_PIECES:
        return getattr(tp, "noise_factor", 1.0) ** 2
    tp.pieces_noise2 = max(LONE_PIECE_NOISE_FLOOR ** 2, float(rr.sum()) / float(dofs.sum()))
    return tp.pieces_noise2


def fit_by_centres(stickers: list[StickerObs], tp: TablePose) -> PieceFit:
    """Pose of a piece whose stickers are not as far apart as its catalog says: the midpoint and
    direction of its sticker centres on the table (a reprojection fit would lean toward the
    nearer, larger sticker). Its covariance is fit_piece's at the image's noise level (the
    layout misfit does not move the midpoint), doubled in sigma for using centres only."""
    fit = fit_piece(stickers, tp)
    K = tp.K()
    local = np.array([s.local_mm.mean(axis=0) for s in stickers])
    world = np.array([intersect_plane(s.ideal_px, s.z_mm, tp.rvec, tp.tvec, K).mean(axis=0) for s in stickers])
    noise = getattr(tp, "noise_factor", 1.0) ** 2
    cov = fit.cov * (4.0 * noise / max(noise, fit.rms_sigma ** 2))
    return PieceFit(fit_rigid_2d(local, world), cov, fit.rms_sigma)


def with_frame_uncertainty(pose, cov: np.ndarray, frame_pose, frame_cov: np.ndarray) -> np.ndarray:
    """A pose's covariance plus that of the frame it will be expressed in (the frame's position
    and, through the lever arm to the pose, its heading), both in the current frame."""
    J = np.array([[1.0, 0.0, -(pose[1] - frame_pose[1])], [0.0, 1.0, pose[0] - frame_pose[0]], [0.0, 0.0, 1.0]])
    return cov + J @ frame_cov @ J.T


# sigma_mm is one figure per axis, as if the error were round. When one sticker holds the frame,
# its heading's uncertainty swings every far piece across its lever arm: an error along one line,
# shared by those pieces, the largest there is on sharp pictures. With the mean variance such an
# error passes 3 sigma in 3.4 % of pictures, a round one in 1.1 % (exp(-9/2)): its sigma is raised
# to where the line's tail matches, 1.1 % two-sided being 2.54 sd, so sigma^2 >= (2.54/3)^2 = 0.72
# of the long axis's variance (webcam bench held-out seed 20261201, scene 933921258: Tornado
# characters 3.1-3.4 mm off, 3.6 sigma by the mean, 2.4 by the long axis). Applied on every piece
# it made 0.5 sigma hold 0.8-3.3 points more of the held-out errors (robust_heldout) for no
# confidently wrong piece there, so only frames held by one sticker take it (long_axis).
LONG_AXIS_SHARE = (2.54 / 3.0) ** 2


def sigma_from_cov(cov: np.ndarray, long_axis: bool = False) -> tuple[float, float]:
    """(sigma_mm per axis, isotropic; sigma_theta_deg) from a (3, 3) covariance, plus the floors;
    long_axis: at least LONG_AXIS_SHARE of the long axis's variance (an error along one line)."""
    var_xy = max(0.0, float(cov[0, 0] + cov[1, 1]) / 2.0)
    if long_axis:
        xy = np.asarray(cov, dtype=np.float64)[:2, :2]
        var_xy = max(var_xy, LONG_AXIS_SHARE * float(np.linalg.eigvalsh((xy + xy.T) / 2.0)[-1]))
    sigma_mm = math.sqrt(var_xy + POSITION_FLOOR_MM ** 2)
    sigma_th = math.sqrt(math.degrees(math.sqrt(max(0.0, float(cov[2, 2])))) ** 2 + THETA_FLOOR_DEG ** 2)
    return sigma_mm, sigma_th


def transform_pose(pose, cov, frame):
    """Express a (x, y, theta) pose and its covariance in another frame.

    frame: (x0, y0, phi) = that frame's origin and heading in the current frame.
    """
    x0, y0, phi = frame
    c, s = math.cos(-phi), math.sin(-phi)
    dx, dy = pose[0] - x0, pose[1] - y0
    new = (c * dx - s * dy, s * dx + c * dy, pose[2] - phi)
    Rm = np.eye(3)
    Rm[:2, :2] = [[c, -s], [s, c]]
    return new, Rm @ cov @ Rm.T


def wrap_deg(a: float) -> float:
    return (a + 180.0) % 360.0 - 180.0
