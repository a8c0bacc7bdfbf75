"""Camera geometry for the renderer: pose from a look-at description, pinhole
projection, and the exact per-pixel inverse of the lens distortion.

The renderer paints an ideal (distortion-free) pinhole picture and then bends it
with the lens model, so every output pixel needs the ideal pixel it shows. That is
the *inverse* of the radial-tangential model (cv2.projectPoints applies the model
forward: ideal -> distorted). cv2.initUndistortRectifyMap(K, dist, None, K, ...) gives
the forward map (ideal pixel -> distorted pixel), so remapping with it would bend the
picture the wrong way; the inverse is solved here with cv2.undistortPoints iterated to
convergence and checked against the forward model, so a rendered sticker lands exactly
where cv2.projectPoints puts its corners.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from referee.errors import InvalidInputError

UNDISTORT_TOLERANCE_PX = 0.01  # worst forward-model residual accepted for the inverse map


def look_at_pose(position_mm, look_at_mm, roll_deg: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """World->camera rotation (3, 3) and translation (3,) for a camera at position_mm
    looking at look_at_mm.

    With roll 0 the image "up" is the world +y direction as far as the view allows
    (a camera straight overhead sees +x to the right and +y up); roll_deg turns the
    camera about its optical axis, counter-clockwise as seen in the image.
    """
    c = np.asarray(position_mm, dtype=np.float64)
    f = np.asarray(look_at_mm, dtype=np.float64) - c
    norm = np.linalg.norm(f)
    if norm < 1e-9:
        raise InvalidInputError("camera pose: position_mm and look_at_mm coincide")
    z_c = f / norm
    down_hint = np.array([0.0, -1.0, 0.0])
    y_c = down_hint - (down_hint @ z_c) * z_c
    if np.linalg.norm(y_c) < 1e-6:  # looking along y: use -z as "down" instead
        down_hint = np.array([0.0, 0.0, -1.0])
        y_c = down_hint - (down_hint @ z_c) * z_c
    y_c /= np.linalg.norm(y_c)
    x_c = np.cross(y_c, z_c)
    a = math.radians(roll_deg)
    # rotate the image axes about the optical axis
    x_r = math.cos(a) * x_c - math.sin(a) * y_c
    y_r = math.sin(a) * x_c + math.cos(a) * y_c
    R = np.vstack([x_r, y_r, z_c])
    t = -R @ c
    return R, t


def rodrigues(R: np.ndarray) -> np.ndarray:
    import cv2

    return cv2.Rodrigues(np.asarray(R, dtype=np.float64))[0].ravel()


def rotation(rvec) -> np.ndarray:
    import cv2

    return cv2.Rodrigues(np.asarray(rvec, dtype=np.float64).reshape(3, 1))[0]


def camera_centre(R: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Camera position in the world (3,)."""
    return -R.T @ t


def tilt_deg(R: np.ndarray) -> float:
    """Angle between the optical axis and straight down."""
    return math.degrees(math.acos(max(-1.0, min(1.0, -R[2, 2]))))


def project_ideal(points_world: np.ndarray, K: np.ndarray, R: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pinhole projection without distortion.

    points_world: (N, 3) mm. Returns (N, 2) pixels and (N,) depths (camera z, mm).
    """
    pc = points_world @ R.T + t
    z = pc[:, 2]
    safe = np.where(np.abs(z) < 1e-9, 1e-9, z)
    u = K[0, 0] * pc[:, 0] / safe + K[0, 1] * pc[:, 1] / safe + K[0, 2]
    v = K[1, 1] * pc[:, 1] / safe + K[1, 2]
    return np.stack([u, v], axis=1), z


def distort_normalized(x: np.ndarray, y: np.ndarray, dist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The radial-tangential model (k1, k2, p1, p2, k3) on normalised coordinates."""
    k1, k2, p1, p2, k3 = (list(dist) + [0.0] * 5)[:5]
    r2 = x * x + y * y
    radial = 1 + r2 * (k1 + r2 * (k2 + r2 * k3))
    xd = x * radial + 2 * p1 * x * y + p2 * (r2 + 2 * x * x)
    yd = y * radial + p1 * (r2 + 2 * y * y) + 2 * p2 * x * y
    return xd, yd


MAP_GRID_PX = 2  # the inverse is solved exactly on this grid and interpolated linearly between


def _solve_inverse(us: np.ndarray, vs: np.ndarray, fx, fy, cx, cy, skew, dist) -> tuple[np.ndarray, np.ndarray]:
    """Ideal pixels of the distorted pixel grid us x vs: cv2.undistortPoints iterated to
    convergence (its default stops after 5 iterations, too early for exact renders)."""
    import cv2

    vv, uu = np.meshgrid(vs, us, indexing="ij")
    K = np.array([[fx, skew, cx], [0.0, fy, cy], [0.0, 0.0, 1.0]])
    pts = np.stack([uu, vv], axis=-1).reshape(-1, 1, 2)
    out = cv2.undistortPoints(pts, K, dist, P=K,
                              criteria=(cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 100, 1e-12))
    out = out.reshape(len(vs), len(us), 2).astype(np.float64)
    return out[..., 0], out[..., 1]


@lru_cache(maxsize=3)
def _ideal_source_map_cached(key: tuple) -> tuple[np.ndarray, np.ndarray]:
    import cv2

    w, h, fx, fy, cx, cy, skew, dist = key
    dist = np.array(dist, dtype=np.float64)
    g = MAP_GRID_PX
    # exact inverse on a coarse grid reaching one cell past the frame on every side
    us = np.arange(-g, w + 2 * g, g, dtype=np.float64)
    vs = np.arange(-g, h + 2 * g, g, dtype=np.float64)
    cu, cv = _solve_inverse(us, vs, fx, fy, cx, cy, skew, dist)
    # separable linear interpolation in float64 (cv2.remap would quantise positions to 1/32 cell)
    fxs = (np.arange(w, dtype=np.float64) + g) / g
    i0 = np.floor(fxs).astype(np.int64)
    ax = (fxs - i0)[None, :]
    fys = (np.arange(h, dtype=np.float64) + g) / g
    j0 = np.floor(fys).astype(np.int64)
    ay = (fys - j0)[:, None]
    map_x = np.empty((h, w), np.float32)
    map_y = np.empty((h, w), np.float32)
    for coarse, out in ((cu, map_x), (cv, map_y)):
        rows_x = coarse[:, i0] * (1 - ax) + coarse[:, i0 + 1] * ax  # (n coarse rows, w)
        for r0 in range(0, h, 256):
            r1 = min(h, r0 + 256)
            out[r0:r1] = rows_x[j0[r0:r1]] * (1 - ay[r0:r1]) + rows_x[j0[r0:r1] + 1] * ay[r0:r1]
    # check against the forward model, which is what projectPoints uses
    worst = 0.0
    step = max(1, 1_000_000 // max(w, 1))
    for r0 in range(0, h, step):
        xi = (map_x[r0:r0 + step].astype(np.float64) - cx) / fx
        yi = (map_y[r0:r0 + step].astype(np.float64) - cy) / fy
        xi -= skew * yi / fx
        xr, yr = distort_normalized(xi, yi, dist)
        u = xr * fx + skew * yr + cx
        v = yr * fy + cy
        rows = np.arange(r0, min(h, r0 + step), dtype=np.float64)[:, None]
        worst = max(worst, float(np.max(np.abs(u - np.arange(w)[None, :]))), float(np.max(np.abs(v - rows))))
    if not worst < UNDISTORT_TOLERANCE_PX:
        raise InvalidInputError(
            f"camera dist_coeffs {list(map(float, dist))} are too strong to invert over the image "
            f"(residual {worst:.3g} px); use a milder distortion")
    map_x.setflags(write=False)
    map_y.setflags(write=False)
    return map_x, map_y


def ideal_source_map(K: np.ndarray, dist: np.ndarray, size: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """For every pixel of the distorted (w, h) image, the ideal pinhole pixel it shows.

    Returns map_x, map_y: (h, w) float32, ready for cv2.remap of the ideal image.
    """
    w, h = int(size[0]), int(size[1])
    key = (w, h, float(K[0, 0]), float(K[1, 1]), float(K[0, 2]), float(K[1, 2]), float(K[0, 1]),
           tuple(float(d) for d in np.asarray(dist).ravel()))
    return _ideal_source_map_cached(key)
