"""Drawing an Observation over its image (`refcam observe --annotate OUT.png`).

Each piece's catalog footprint is placed at its pose (game frame, at its sticker
height) and projected through the camera pose the pipeline found, lens included
(Observation.frame["camera_pose"]); its name and sigma are written beside it.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from referee.catalog import Catalog, default_catalog
from referee.observation import Observation, PiecePose

OUTLINE = (40, 220, 40)  # BGR
UNCERTAIN = (0, 170, 255)
TEXT_BG = (0, 0, 0)
TEXT_FG = (255, 255, 255)


def footprint_in_frame(pose: PiecePose, catalog: Catalog) -> np.ndarray:
    """(N, 3) footprint outline of a piece in the game frame at its sticker height, mm."""
    spec = catalog.piece(pose.name)
    pts = np.array(spec.footprint_polygon(), dtype=np.float64)
    if spec.footprint.get("kind") == "wedge" and pose.face == "right-turn" and spec.attrs.get("type") == "top":
        pts[:, 1] *= -1  # turned over: the wedge opens the other way (catalog description)
    elif spec.footprint.get("kind") == "wedge" and pose.face == "left-turn" and spec.attrs.get("type") == "bottom":
        pts[:, 1] *= -1
    c, s = math.cos(math.radians(pose.theta_deg)), math.sin(math.radians(pose.theta_deg))
    xy = pts @ np.array([[c, s], [-s, c]]) + np.array([pose.x_mm, pose.y_mm])
    return np.column_stack([xy, np.full(len(xy), pose.z_mm)])


def project_to_image(pts3: np.ndarray, frame: dict) -> np.ndarray | None:
    """(N, 3) game-frame points -> (N, 2) image pixels through the observation's camera pose."""
    cam = frame.get("camera_pose") if frame else None
    if not cam:
        return None
    rvec = np.array(cam["rvec"], dtype=np.float64)
    tvec = np.array(cam["tvec"], dtype=np.float64)
    R = cv2.Rodrigues(rvec)[0]
    if np.any((pts3 @ R.T + tvec)[:, 2] <= 0):
        return None
    img, _ = cv2.projectPoints(pts3.reshape(-1, 1, 3), rvec, tvec, np.array(cam["camera_matrix"], dtype=np.float64),
                               np.array(cam["dist_coeffs"], dtype=np.float64))
    return img.reshape(-1, 2)


def draw_observation(image: np.ndarray, observation: Observation, camera=None, catalog: Catalog | None = None,
                     sigma_warn_mm: float = 1.0) -> np.ndarray:
    """A copy of the (H, W, 3) BGR image with every piece's outline, name and sigma drawn.

    camera: unused when the observation carries its camera pose (it always does from
    vision.pipeline.observe); kept for callers that pass it. Pieces whose sigma exceeds
    sigma_warn_mm are drawn in amber.
    """
    catalog = catalog or default_catalog()
    out = image.copy()
    h, w = out.shape[:2]
    scale = max(1.0, w / 1280.0)
    thick = max(1, int(round(1.5 * scale)))
    font = cv2.FONT_HERSHEY_SIMPLEX
    fs = 0.45 * scale
    for pose in observation.pieces:
        if not catalog.has_piece(pose.name):
            continue
        px = project_to_image(footprint_in_frame(pose, catalog), observation.frame)
        if px is None:
            continue
        colour = OUTLINE if pose.sigma_mm <= sigma_warn_mm else UNCERTAIN
        poly = np.round(px * 16).astype(np.int32).reshape(-1, 1, 2)
        cv2.polylines(out, [poly], True, colour, thick, cv2.LINE_AA, shift=4)
        ref = project_to_image(np.array([[pose.x_mm, pose.y_mm, pose.z_mm]]), observation.frame)
        head = project_to_image(np.array([[pose.x_mm + 15 * math.cos(math.radians(pose.theta_deg)),
                                           pose.y_mm + 15 * math.sin(math.radians(pose.theta_deg)), pose.z_mm]]),
                                observation.frame)
        if ref is None:
            continue
        r = tuple(int(round(v)) for v in ref[0])
        cv2.circle(out, r, max(2, thick + 1), colour, -1, cv2.LINE_AA)
        if head is not None:
            cv2.line(out, r, tuple(int(round(v)) for v in head[0]), colour, thick, cv2.LINE_AA)
        label = f"{pose.name.split('/', 1)[-1]} s={pose.sigma_mm:.2f}mm"
        (tw, th), base = cv2.getTextSize(label, font, fs, 1)
        x = int(np.clip(px[:, 0].max() + 4, 0, max(0, w - tw - 2)))
        y = int(np.clip(px[:, 1].min() + th, th + 2, h - 2))
        cv2.rectangle(out, (x - 1, y - th - 2), (x + tw + 1, y + base), TEXT_BG, -1)
        cv2.putText(out, label, (x, y), font, fs, TEXT_FG, 1, cv2.LINE_AA)
    lines = [f"frame: {observation.frame.get('anchor') or observation.frame.get('kind', '?')}"]
    lines += [w_[:110] for w_ in observation.warnings[:4]]
    y = int(22 * scale)
    for line in lines:
        (tw, th), base = cv2.getTextSize(line, font, fs, 1)
        cv2.rectangle(out, (4, y - th - 3), (8 + tw, y + base), TEXT_BG, -1)
        cv2.putText(out, line, (6, y), font, fs, TEXT_FG, 1, cv2.LINE_AA)
        y += th + base + 6
    return out
