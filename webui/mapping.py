"""TEMPORARY: fills Observation.image_from_game until vision computes it (issue 8, section 3).

This is the one place webui works out where game-frame points land in the image; the
overlay and the explanation pictures only read ``observation.image_from_game``. When the
vision pipeline fills that field itself, this module goes (``fill_image_from_game`` keeps
a mapping that is already there).

The fit is the photo finish's: sticker centres found in the image paired with where the
observation puts them (catalog placements), a RANSAC plane homography; with a camera file
the centres are undistorted first and the homography is turned into the full projection
(K, R, t, distortion) so lines follow the lens. Without enough stickers it falls back to
the pipeline's own table-plane homography (``frame["image_from_game"]``).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from referee.catalog import default_catalog
from referee.observation import ImageFromGame, Observation

MIN_MATCHES = 4
FLAT_STICKER_MM = 2.0  # stickers higher than this stand off the table plane


def fill_image_from_game(observation: Observation, camera=None) -> Observation:
    if observation.image_from_game is not None:
        return observation
    mapping = fit_image_from_game(observation, camera)
    return replace(observation, image_from_game=mapping) if mapping is not None else observation


def fit_image_from_game(observation: Observation, camera=None) -> ImageFromGame | None:
    H = _sticker_homography(observation, camera)
    if H is None:
        return _pipeline_homography(observation)
    if camera is None:
        return ImageFromGame(tuple(float(v) for v in (H / H[2, 2]).ravel()))
    return _with_camera(H, camera)


def _sticker_homography(observation: Observation, camera) -> np.ndarray | None:
    import cv2

    catalog = default_catalog()
    src, dst = [], []
    for d in observation.extra.get("detections") or ():
        try:
            marker_id, corners = int(d["id"]), np.asarray(d["corners"], dtype=float).reshape(4, 2)
        except (KeyError, TypeError, ValueError):
            continue
        st = catalog.sticker(marker_id)
        if st is None or st.top_z_mm > FLAT_STICKER_MM:
            continue
        pose = observation.piece(st.piece)
        if pose is None or marker_id not in pose.marker_ids:
            continue
        c, s = np.cos(np.radians(pose.theta_deg)), np.sin(np.radians(pose.theta_deg))
        src.append((pose.x_mm + c * st.x_mm - s * st.y_mm, pose.y_mm + s * st.x_mm + c * st.y_mm))
        dst.append(tuple(corners.mean(axis=0)))
    if len(src) < MIN_MATCHES:
        return None
    if camera is not None:
        dst = cv2.undistortPoints(np.array(dst, float).reshape(-1, 1, 2), camera.K, camera.dist, None,
                                  camera.K).reshape(-1, 2).tolist()
    H, _mask = cv2.findHomography(np.array(src, float), np.array(dst, float), cv2.RANSAC, 8.0)
    return H if H is not None and np.all(np.isfinite(H)) else None


def _pipeline_homography(observation: Observation) -> ImageFromGame | None:
    frame = observation.frame if isinstance(observation.frame, dict) else {}
    try:
        H = np.array(frame.get("image_from_game"), dtype=float)
    except (TypeError, ValueError):
        return None
    if H.shape != (3, 3) or not np.all(np.isfinite(H)):
        return None
    return ImageFromGame(tuple(float(v) for v in H.ravel()))


def _with_camera(H: np.ndarray, camera) -> ImageFromGame:
    """A plane homography to ideal pixels as a camera pose: H ~ K [r1 r2 t]."""
    K = camera.K
    M = np.linalg.solve(K, H)
    lam = 1.0 / np.linalg.norm(M[:, 0])
    if M[2, 2] * lam < 0:  # the table lies in front of the camera
        lam = -lam
    r1, r2, t = M[:, 0] * lam, M[:, 1] * lam, M[:, 2] * lam
    U, _s, Vt = np.linalg.svd(np.column_stack([r1, r2, np.cross(r1, r2)]))
    R = U @ Vt
    dist = list(np.asarray(camera.dist, float).ravel()[:5]) + [0.0] * max(0, 5 - np.asarray(camera.dist).size)
    cam = tuple(float(v) for v in list(K.ravel()) + list(R.ravel()) + list(t) + dist)
    return ImageFromGame(tuple(float(v) for v in (H / H[2, 2]).ravel()), cam)
