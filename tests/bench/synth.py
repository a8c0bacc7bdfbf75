"""Small synthetic table pictures with exact truth, for vision unit tests and tuning.

Not the product renderer (synth.render): this draws only stickers (black square,
white quiet zone) on a plain table, exactly where a known pinhole + radtan camera
sees them, so the geometry and the detector can be tested before and alongside the
rendered samples. Each output pixel (supersampled) is undistorted, its ray is cut
with the sticker's plane z = top height, and the marker bit pattern is read there;
so perspective, parallax and distortion are exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import cv2
import numpy as np

from referee.catalog import Catalog, default_catalog


@dataclass
class SynthCamera:
    image_size: tuple[int, int]
    K: np.ndarray
    dist: np.ndarray
    rvec: np.ndarray  # table(game) frame -> camera
    tvec: np.ndarray

    def camera_model(self):
        from calibration.camera import CameraModel
        return CameraModel.from_intrinsics(self.image_size, self.K[0, 0], self.K[1, 1], self.K[0, 2], self.K[1, 2],
                                           tuple(self.dist), rms_px=0.0)


def look_at_camera(image_size=(1920, 1080), hfov_deg=62.0, target=(0.0, 0.0, 0.0), distance_mm=1000.0,
                   elevation_deg=55.0, azimuth_deg=-90.0, dist=(0.05, -0.08, 0.0, 0.0, 0.02)) -> SynthCamera:
    """A camera at `distance_mm` from `target`, `elevation_deg` above the table, looking at it.

    azimuth_deg: direction from the target to the camera, seen from above (-90 = camera at -y).
    """
    w, h = image_size
    f = (w / 2) / math.tan(math.radians(hfov_deg) / 2)
    K = np.array([[f, 0, w / 2 - 0.5 + 3.1], [0, f, h / 2 - 0.5 - 2.3], [0, 0, 1]], dtype=np.float64)
    el, az = math.radians(elevation_deg), math.radians(azimuth_deg)
    tgt = np.array(target, dtype=np.float64)
    eye = tgt + distance_mm * np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])
    zc = tgt - eye
    zc /= np.linalg.norm(zc)
    up = np.array([0.0, 0.0, 1.0])
    xc = np.cross(zc, up)
    if np.linalg.norm(xc) < 1e-6:
        xc = np.array([1.0, 0.0, 0.0])
    xc /= np.linalg.norm(xc)
    yc = np.cross(zc, xc)
    R = np.array([xc, yc, zc])  # rows: camera axes in table coordinates
    rvec, _ = cv2.Rodrigues(R)
    tvec = -R @ eye
    return SynthCamera((w, h), K, np.array(dist, dtype=np.float64), rvec.ravel(), tvec.ravel())


@dataclass
class SynthPiece:
    name: str
    x_mm: float
    y_mm: float
    theta_deg: float
    slots: tuple[str, ...]  # which sticker slots are visible (face up)
    z_mm: dict = field(default_factory=dict)  # marker id -> top height


def sticker_world_corners(catalog: Catalog, piece: SynthPiece, marker_id: int) -> np.ndarray:
    """(4, 3) table-frame corners TL, TR, BR, BL of a sticker's black square."""
    st = catalog.sticker(marker_id)
    c, s = math.cos(math.radians(piece.theta_deg)), math.sin(math.radians(piece.theta_deg))
    z = piece.z_mm.get(marker_id, st.top_z_mm)
    out = []
    for lx, ly in st.corners_local():
        out.append((piece.x_mm + c * lx - s * ly, piece.y_mm + s * lx + c * ly, z))
    return np.array(out)


@lru_cache(maxsize=2048)
def _marker_bits(marker_id: int) -> np.ndarray:
    """(9, 9) float: 1 = white, over the black square plus a 1-cell quiet zone ring... (7x7 marker + ring)."""
    d = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_5X5_1000)
    img = cv2.aruco.generateImageMarker(d, marker_id, 7, borderBits=1)  # 7x7 cells, 1 px per cell
    out = np.ones((9, 9), dtype=np.float64)
    out[1:8, 1:8] = img / 255.0
    return out


def render(camera: SynthCamera, stickers: list[tuple[int, np.ndarray]], *, supersample: int = 3,
           blur_px: float = 0.6, noise: float = 2.0, jpeg_quality: int | None = 92, seed: int = 0,
           table_grey: float = 0.45) -> np.ndarray:
    """(H, W, 3) BGR uint8 picture of stickers [(marker_id, (4, 3) world corners TL,TR,BR,BL)]."""
    w, h = camera.image_size
    rng = np.random.default_rng(seed)
    img = np.full((h, w), table_grey, dtype=np.float64)
    R, _ = cv2.Rodrigues(np.asarray(camera.rvec, dtype=np.float64))
    t = np.asarray(camera.tvec, dtype=np.float64)
    cam_centre = -R.T @ t
    for marker_id, corners in stickers:
        corners = np.asarray(corners, dtype=np.float64)
        z = corners[:, 2].mean()
        origin = corners[3]  # BL
        ex = (corners[2] - corners[3])  # BL -> BR : marker +x
        ey = (corners[0] - corners[3])  # BL -> TL : marker +y
        side = np.linalg.norm(ex)
        ex, ey = ex / side, ey / np.linalg.norm(ey)
        cell = side / 7.0
        # quiet zone: one cell around the square
        quad = np.array([origin - cell * ex - cell * ey, origin + (side + cell) * ex - cell * ey,
                         origin + (side + cell) * ex + (side + cell) * ey, origin - cell * ex + (side + cell) * ey])
        proj, _ = cv2.projectPoints(quad, camera.rvec, camera.tvec, camera.K, camera.dist)
        proj = proj.reshape(-1, 2)
        x0, y0 = np.floor(proj.min(axis=0)).astype(int) - 2
        x1, y1 = np.ceil(proj.max(axis=0)).astype(int) + 3
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
        if x1 <= x0 or y1 <= y0:
            continue
        s = supersample
        us = (np.arange((x1 - x0) * s) + 0.5) / s - 0.5 + x0
        vs = (np.arange((y1 - y0) * s) + 0.5) / s - 0.5 + y0
        uu, vv = np.meshgrid(us, vs)
        pts = np.stack([uu.ravel(), vv.ravel()], axis=1).reshape(-1, 1, 2)
        und = cv2.undistortPoints(pts, camera.K, camera.dist, None, None,
                                  criteria=(cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 20, 1e-10)).reshape(-1, 2)
        rays_c = np.concatenate([und, np.ones((len(und), 1))], axis=1)
        rays_w = rays_c @ R  # R.T @ ray for each row
        lam = (z - cam_centre[2]) / rays_w[:, 2]
        P = cam_centre[None, :] + lam[:, None] * rays_w
        rel = P - origin[None, :]
        mx = rel @ ex / cell  # marker cells from BL, +x right
        my = rel @ ey / cell  # +y up
        bits = _marker_bits(marker_id)
        col = np.floor(mx).astype(int) + 1
        row = 7 - np.floor(my).astype(int)  # image row 1..7 for the marker, 0 and 8 quiet zone
        inside = (col >= 0) & (col <= 8) & (row >= 0) & (row <= 8)
        val = np.full(len(mx), np.nan)
        val[inside] = bits[row[inside], col[inside]] * 0.92 + 0.04
        val = val.reshape(len(vs), len(us))
        patch = img[y0:y1, x0:x1]
        vv_ = val.reshape(y1 - y0, s, x1 - x0, s)
        covered = ~np.isnan(vv_)
        frac = covered.mean(axis=(1, 3))
        mean_val = np.where(covered, vv_, 0.0).sum(axis=(1, 3)) / np.maximum(covered.sum(axis=(1, 3)), 1)
        img[y0:y1, x0:x1] = patch * (1 - frac) + mean_val * frac
    if blur_px > 0:
        img = cv2.GaussianBlur(img, (0, 0), blur_px)
    img = img * 255.0 + rng.normal(0, noise, img.shape)
    out = np.clip(np.round(img), 0, 255).astype(np.uint8)
    out = cv2.cvtColor(out, cv2.COLOR_GRAY2BGR)
    if jpeg_quality:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, jpeg_quality])
        out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out


def project(camera: SynthCamera, pts3d: np.ndarray) -> np.ndarray:
    p, _ = cv2.projectPoints(np.asarray(pts3d, dtype=np.float64), camera.rvec, camera.tvec, camera.K, camera.dist)
    return p.reshape(-1, 2)


def tornado_scene(rng: np.random.Generator, n_boats: int = 6, catalog: Catalog | None = None) -> list[SynthPiece]:
    """Start gate at the origin, finish line, curve markers, boats and racing cards spread over ~1.2 m."""
    cat = catalog or default_catalog()
    pieces = [SynthPiece("tornado/start-gate", 0, 0, 0, ("left", "right")),
              SynthPiece("tornado/finish-line", float(rng.uniform(-80, 80)), float(rng.uniform(380, 480)), 180,
                         ("left", "right"))]
    for k in range(3):
        pieces.append(SynthPiece(f"tornado/curve-marker-{k + 1}", float(rng.uniform(300, 900)),
                                 float(rng.uniform(-150, 600)), float(rng.uniform(0, 360)), ("main",)))
    used = [(p.x_mm, p.y_mm) for p in pieces]
    for k in range(n_boats):
        for _ in range(50):
            x, y = float(rng.uniform(-100, 900)), float(rng.uniform(-250, 600))
            if all(math.hypot(x - a, y - b) > 70 for a, b in used):
                break
        used.append((x, y))
        pieces.append(SynthPiece(f"tornado/boat-{k + 1}", x, y, float(rng.uniform(-180, 180)), ("main",)))
    for k in range(4):
        for _ in range(50):
            x, y = float(rng.uniform(-100, 900)), float(rng.uniform(-250, 600))
            if all(math.hypot(x - a, y - b) > 140 for a, b in used):
                break
        used.append((x, y))
        pieces.append(SynthPiece(f"tornado/card-{k + 1}-0{k + 1}", x, y, float(rng.uniform(-180, 180)),
                                 ("rear", "front")))
    assert all(cat.has_piece(p.name) for p in pieces)
    return pieces


def scene_stickers(catalog: Catalog, pieces: list[SynthPiece]) -> list[tuple[int, np.ndarray]]:
    out = []
    for p in pieces:
        spec = catalog.piece(p.name)
        for slot in p.slots:
            st = spec.sticker(slot)
            out.append((st.marker_id, sticker_world_corners(catalog, p, st.marker_id)))
    return out


def still_tornado_table(scene_seed: int, blur_px: float, jpeg_quality: int | None = None,
                        noise_seeds=(1, 2), catalog: Catalog | None = None) -> list[np.ndarray]:
    """A Tornado table seen by the same camera once for each noise seed (a table at rest: fresh sensor
    noise each time, and a JPEG of that quality when given), as grey frames."""
    catalog = catalog or default_catalog()
    pieces = tornado_scene(np.random.default_rng(scene_seed), catalog=catalog)
    cam = look_at_camera(target=(400, 150, 0), distance_mm=1050, elevation_deg=55, hfov_deg=65)
    stickers = scene_stickers(catalog, pieces)
    out = []
    for seed in noise_seeds:
        image = render(cam, stickers, seed=seed, blur_px=blur_px)
        if jpeg_quality is not None:
            image = cv2.imdecode(cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, jpeg_quality])[1],
                                 cv2.IMREAD_COLOR)
        out.append(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image)
    return out
