"""The camera's own uncertainty as one field over the table.

Where the plane fit puts the camera (its turn, place and, without a camera file, focal length) is
uncertain (TablePose.camera_cov). Every piece is then read through that one camera, so the error it
gives a piece is the value, at the piece's place, of one smooth field over the table: two pieces
near each other get nearly the same error, which cancels when they are compared. This module
measures how fast that field can change across the table: the standard size of the difference
between its values at two places, per mm between them (camera_field_gradient). It is what is left
of the camera's term in the comparison of two pieces.

Numerically: the camera covariance's principal directions, one at a time; for each, where a table
point's own pixel lands on the table under the moved camera, and that shift's derivative along the
table at points over the pieces' area. Their sum of squares, largest over direction and place, gives
the gradient. Linear in the camera's error, as the covariance itself is.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from .table_pose import TablePose, intersect_plane_many

GRID = 5  # points across the pieces' area each way
STEP_MM = 20.0  # finite difference along the table


def _project(tp: TablePose, xy: np.ndarray, z: float) -> np.ndarray:
    """(N, 2) table points at height z -> ideal pixels under tp's camera."""
    P = np.column_stack([xy, np.full(len(xy), z)])
    Xc = P @ tp.R.T + np.asarray(tp.tvec, dtype=np.float64).ravel()
    K = tp.K()
    return np.column_stack([K[0, 0] * Xc[:, 0] / Xc[:, 2] + K[0, 2], K[1, 1] * Xc[:, 1] / Xc[:, 2] + K[1, 2]])


def _moved_camera(tp: TablePose, delta: np.ndarray):
    """(rvec, tvec, K) of tp's camera moved by delta in camera_cov's parameters (rvec, tvec[, f])."""
    rvec = np.asarray(tp.rvec, dtype=np.float64).ravel() + delta[:3]
    tvec = np.asarray(tp.tvec, dtype=np.float64).ravel() + delta[3:6]
    focal = tp.f + (delta[6] if len(delta) > 6 else 0.0)
    K = tp.intrinsics.K(focal if tp.intrinsics.focal_free else None)
    return rvec, tvec, K


def _principal_moves(tp: TablePose) -> list[np.ndarray]:
    """The camera's one-standard-deviation moves along each principal direction of camera_cov
    (independent of one another, so what they do adds in squares)."""
    cov = np.asarray(tp.camera_cov, dtype=np.float64)
    vals, vecs = np.linalg.eigh((cov + cov.T) / 2.0)
    return [math.sqrt(v) * vecs[:, k] for k, v in enumerate(vals) if v > 0]


def camera_field_gradient(tp: TablePose, xy: np.ndarray, heights) -> float:
    """Standard size (mm per mm) by which the camera's error at two table places differs, per mm
    between them: the largest over the area spanned by xy (reference frame, mm) at each height."""
    directions = _principal_moves(tp)
    if not directions or len(xy) == 0:
        return 0.0
    lo, hi = xy.min(axis=0), xy.max(axis=0)
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], GRID), np.linspace(lo[1], hi[1], GRID))
    points = np.column_stack([gx.ravel(), gy.ravel()])
    n = len(points)
    here = np.concatenate([points, points + (STEP_MM, 0.0), points + (0.0, STEP_MM)])  # each point and its steps
    moved = [_moved_camera(tp, delta) for delta in directions]
    worst = 0.0
    for z in sorted(set(float(h) for h in heights)):
        shifts = (intersect_plane_many(_project(tp, here, z), z, moved) - here).reshape(len(moved), 3, n, 2)
        M = np.zeros((n, 2, 2))
        for shift in shifts:
            J = np.stack([(shift[1] - shift[0]) / STEP_MM, (shift[2] - shift[0]) / STEP_MM], axis=2)  # (N, 2, 2)
            M += np.einsum("nki,nkj->nij", J, J)
        worst = max(worst, float(np.linalg.eigvalsh(M)[:, -1].max()))
    return math.sqrt(worst)


def in_game_frame(R: np.ndarray, tvec, frame_pose) -> tuple[np.ndarray, np.ndarray]:
    """(R, t) of a camera at (R, tvec) in the reference frame, as seen from the reported frame,
    which stands at frame_pose (x0, y0, phi) in it."""
    x0, y0, phi = frame_pose
    Rz = np.eye(3)
    Rz[:2, :2] = [[math.cos(phi), -math.sin(phi)], [math.sin(phi), math.cos(phi)]]
    return R @ Rz, R @ np.array([x0, y0, 0.0]) + np.asarray(tvec, dtype=np.float64).ravel()


def _game_camera(rvec, tvec, K: np.ndarray, frame_pose) -> np.ndarray:
    """The 3x4 projection game-frame mm -> ideal pixels of a camera at (rvec, tvec) in the
    reference frame (in_game_frame)."""
    R, t = in_game_frame(cv2.Rodrigues(np.asarray(rvec, dtype=np.float64).reshape(3, 1))[0], tvec, frame_pose)
    return K @ np.column_stack([R, t])


def camera_field(tp: TablePose, frame_pose) -> dict:
    """Observation.frame['camera_field']: the camera as a 3x4 projection of game-frame mm (x, y, z)
    to ideal pixels, and the same camera moved by one standard deviation along each principal
    direction of camera_cov. A table point at height z is read through the moved camera where its
    pixel meets that height: the difference is the camera's error there, one direction at a time
    (referee.camera_field evaluates it; the directions are independent, so their squares add)."""
    moved = [_game_camera(*_moved_camera(tp, delta), frame_pose) for delta in _principal_moves(tp)]
    here = _game_camera(tp.rvec, tp.tvec, tp.K(), frame_pose)
    scale = 1.0 / here[2, 3] if abs(here[2, 3]) > 1e-12 else 1.0  # keep numbers of a printable size

    def rows(P: np.ndarray) -> list[list[float]]:
        return [[float(f"{v:.12g}") for v in row] for row in P * scale]

    return {"camera": rows(here), "moved": [rows(P) for P in moved]}
