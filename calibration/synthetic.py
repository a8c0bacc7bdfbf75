"""Rendered ChArUco views with known intrinsics, distortion and pose (tests, benchmarks).

A view is made in one resampling step from the flat board picture: for every output
pixel p (supersampled), undistort p exactly (iterative inverse of the radtan model), map
the ideal pixel through the inverse plane homography K [r1 r2 t] to board millimetres,
then to board-picture pixels. Because the map is built from the distorted side, the
distortion is applied exactly as cv2.projectPoints models it.
(cv2.initUndistortRectifyMap gives the opposite map, ideal -> distorted coordinates, which
is what undistorting a photo needs, not what rendering one needs.)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import cv2
import numpy as np

from referee import safeload

from .charuco import board_image, board_size_mm, charuco_board


@dataclass(frozen=True)
class SyntheticCamera:
    image_size: tuple[int, int]  # (w, h)
    fx: float
    fy: float
    cx: float
    cy: float
    dist: tuple[float, float, float, float, float]  # k1, k2, p1, p2, k3

    @property
    def K(self) -> np.ndarray:
        return np.array([[self.fx, 0, self.cx], [0, self.fy, self.cy], [0, 0, 1]], dtype=np.float64)

    @property
    def dist_array(self) -> np.ndarray:
        return np.array(self.dist, dtype=np.float64)


DEFAULT_CAMERA = SyntheticCamera((1024, 768), 830.0, 826.0, 515.0, 379.0, (-0.12, 0.06, 0.0012, -0.0008, -0.01))


@lru_cache(maxsize=4)
def _undistorted_grid(camera: SyntheticCamera, supersample: int) -> np.ndarray:
    """(H*s, W*s, 2) normalised ideal coordinates (x/z, y/z) for every supersampled output pixel."""
    w, h = camera.image_size
    s = supersample
    # supersampled pixel q covers output coordinate p = (q + 0.5) / s - 0.5 (pixel centres at integers)
    us = (np.arange(w * s, dtype=np.float64) + 0.5) / s - 0.5
    vs = (np.arange(h * s, dtype=np.float64) + 0.5) / s - 0.5
    uu, vv = np.meshgrid(us, vs)
    pts = np.stack([uu.ravel(), vv.ravel()], axis=1).reshape(-1, 1, 2)
    criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 50, 1e-12)
    und = cv2.undistortPoints(pts, camera.K, camera.dist_array, criteria=criteria)
    return und.reshape(h * s, w * s, 2).astype(np.float32)


def pose_looking_at(distance_mm: float, tilt_x_deg: float, tilt_y_deg: float, spin_deg: float,
                    offset_mm: tuple[float, float] = (0.0, 0.0), board=None) -> tuple[np.ndarray, np.ndarray]:
    """rvec, tvec (3,) placing the board centre at (offset, distance) in the camera frame,
    turned by spin about its normal and tilted about the camera x then y axes."""
    board = board or charuco_board()
    w_mm, h_mm = board_size_mm(board)
    rz = cv2.Rodrigues(np.array([0.0, 0.0, np.radians(spin_deg)]))[0]
    rx = cv2.Rodrigues(np.array([np.radians(tilt_x_deg), 0.0, 0.0]))[0]
    ry = cv2.Rodrigues(np.array([0.0, np.radians(tilt_y_deg), 0.0]))[0]
    R = ry @ rx @ rz
    centre_board = np.array([w_mm / 2, h_mm / 2, 0.0])
    t = np.array([offset_mm[0], offset_mm[1], distance_mm]) - R @ centre_board
    return cv2.Rodrigues(R)[0].ravel(), t


def render_view(rvec, tvec, camera: SyntheticCamera = DEFAULT_CAMERA, board=None, supersample: int = 2,
                background: int = 110, noise_sigma: float = 2.0, blur_sigma: float = 0.6,
                rng: np.random.Generator | None = None, px_per_mm: float = 6.0,
                paper_margin_mm: float = 12.0) -> np.ndarray:
    """(H, W) uint8 photo of the board (on white paper with the given margin) at pose
    (rvec, tvec), board frame in mm."""
    board = board or charuco_board()
    pad = int(round(paper_margin_mm * px_per_mm))
    paper_margin_mm = pad / px_per_mm
    picture = cv2.copyMakeBorder(board_image(board, px_per_mm), pad, pad, pad, pad, cv2.BORDER_CONSTANT,
                                 value=255).astype(np.float32)
    # soften black/white a little, like paper under room light
    picture = 30.0 + picture * (210.0 / 255.0)
    R, _ = cv2.Rodrigues(np.asarray(rvec, dtype=np.float64))
    t = np.asarray(tvec, dtype=np.float64).ravel()
    plane_to_norm = np.column_stack([R[:, 0], R[:, 1], t])  # board (X, Y, 1) -> normalised (x, y, 1)
    norm_to_plane = np.linalg.inv(plane_to_norm)
    grid = _undistorted_grid(camera, supersample)
    h2, w2 = grid.shape[:2]
    # normalised (x, y, 1) -> board mm -> board-picture pixel (pixel u covers [u, u+1) / px_per_mm)
    mm_to_px = np.array([[px_per_mm, 0, paper_margin_mm * px_per_mm - 0.5],
                         [0, px_per_mm, paper_margin_mm * px_per_mm - 0.5], [0, 0, 1]])
    H = mm_to_px @ norm_to_plane
    maps = cv2.perspectiveTransform(grid.reshape(-1, 1, 2), H).reshape(h2, w2, 2)
    # rays that meet the board plane behind the camera must stay background
    behind = (grid[..., 0] * norm_to_plane[2, 0] + grid[..., 1] * norm_to_plane[2, 1] + norm_to_plane[2, 2]) <= 0
    maps[behind] = -1e6
    map_x, map_y = np.ascontiguousarray(maps[..., 0]), np.ascontiguousarray(maps[..., 1])
    big = cv2.remap(picture, map_x, map_y, cv2.INTER_LINEAR,
                    borderMode=cv2.BORDER_CONSTANT, borderValue=float(background))
    w, h = camera.image_size
    img = cv2.resize(big, (w, h), interpolation=cv2.INTER_AREA) if supersample > 1 else big
    if blur_sigma > 0:
        img = cv2.GaussianBlur(img, (0, 0), blur_sigma)
    if noise_sigma > 0:
        rng = rng or np.random.default_rng(0)
        img = img + rng.normal(0.0, noise_sigma, img.shape).astype(np.float32)
    return np.clip(img + 0.5, 0, 255).astype(np.uint8)


def varied_poses(n: int, rng: np.random.Generator | None = None, board=None) -> list[tuple[np.ndarray, np.ndarray]]:
    """n poses with tilts up to about 40 degrees in different directions, the board in view."""
    rng = rng or np.random.default_rng(1)
    poses = []
    for i in range(n):
        angle = 2 * np.pi * i / max(n, 1)
        tilt = 18.0 + 20.0 * ((i * 7) % 5) / 4  # 18..38 degrees
        tx, ty = tilt * np.cos(angle), tilt * np.sin(angle)
        spin = float(rng.uniform(-25, 25)) + (90.0 if i % 3 == 2 else 0.0)
        dist = float(rng.uniform(420, 560))
        off = (float(rng.uniform(-70, 70)), float(rng.uniform(-45, 45)))
        poses.append(pose_looking_at(dist, tx, ty, spin, off, board))
    return poses


def fronto_parallel_pose(distance_mm: float = 480.0, board=None):
    return pose_looking_at(distance_mm, 0.0, 0.0, 0.0, (0.0, 0.0), board)


TRUTH_CAMERA_NAME = "truth-camera.json"
MAX_SYNTHETIC_VIEWS = 100


def write_synthetic_views(out_dir, n: int, camera: SyntheticCamera = DEFAULT_CAMERA, seed: int = 7,
                          quality: int = 92) -> dict:
    """n rendered photos of the catalog's ChArUco board (JPEG, like a webcam's) in out_dir, and
    the camera they were rendered with as a camera file, so `refcam calibrate --images` can be
    tried, and checked against the truth, before a camera is at hand."""
    from pathlib import Path

    from referee.errors import InvalidInputError

    from .camera import CameraModel

    if not 1 <= n <= MAX_SYNTHETIC_VIEWS:
        raise InvalidInputError(f"--views {n} is out of range (1-{MAX_SYNTHETIC_VIEWS})")
    out = Path(out_dir)
    board = charuco_board()
    rng = np.random.default_rng(seed)
    paths = []
    for i, (rvec, tvec) in enumerate(varied_poses(n, rng, board)):
        img = render_view(rvec, tvec, camera, board=board, rng=rng)
        path = out / f"view-{i + 1:03d}.jpg"
        ok, encoded = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, quality])
        if not ok:
            raise InvalidInputError(f"cannot encode {path} as JPEG")
        paths.append(safeload.write_bytes(path, encoded.tobytes(), "synthetic view"))  # a full disk names the file
    truth = CameraModel.from_intrinsics(camera.image_size, camera.fx, camera.fy, camera.cx, camera.cy, camera.dist)
    truth = replace(truth, extra={"note": "the camera these synthetic views were rendered with (exact truth), "
                                          "not a calibration"})
    truth_path = out / TRUTH_CAMERA_NAME
    truth.save(truth_path)
    return {"views": [str(p) for p in paths], "truth_camera": str(truth_path), "image_size": list(camera.image_size)}
