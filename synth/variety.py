"""Tables the σ model and the phantom guard were not fitted to: varied print, table, light,
camera and foreign boards, split into a tuning set and a held-out set.

Every varied setting has a range; each range is cut into four equal bins, and the tuning set
draws only from bins 0 and 2, the held-out set only from bins 1 and 3, so no held-out value was
ever seen while tuning (discrete choices, table colours and board kinds, alternate the same way).
Seeds are split too (TUNING_SEED, HELD_OUT_SEED). Calibrate on "tuning"; report on "held-out".

What varies (scene effects and scene builders, synth/render.py):
* the stickers' print: paper white (level and tint), ink black, ink spread past the design's
  edges (mm; a printer's dot gain, which grows every black square and which no catalog size says);
* the table: colour and the contrast of its grain;
* the light: gradient strength and direction, vignette, brightness;
* the camera: distance (a factor on the scene builder's) and tilt from vertical;
* the lens's own blur and the sensor's noise;
* boards of other systems on the table (ChArUco 4x4 and 6x6, AprilTag, ArUco grids, a
  chessboard), and, in foreign_scene, such boards alone, small, for the phantom checks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

SETS = ("tuning", "held-out")
TUNING_SEED = 1100
HELD_OUT_SEED = 5300
# setting -> (low, high); each cut in 4 bins: tuning 0 and 2, held-out 1 and 3
RANGES = {
    "paper_level": (205.0, 252.0),  # grey level of the paper
    "paper_tint": (-14.0, 14.0),  # > 0 warm (yellowish), < 0 cool
    "ink_level": (8.0, 72.0),
    "ink_spread_mm": (-0.06, 0.14),
    "texture_contrast": (0.3, 2.6),
    "light_gradient": (0.0, 0.6),
    "light_direction_deg": (0.0, 360.0),
    "vignette": (0.0, 0.45),
    "brightness": (0.72, 1.12),
    "distance_factor": (0.82, 1.3),
    "tilt_deg": (12.0, 50.0),
    "lens_blur_px": (0.3, 0.95),
    "sensor_noise": (0.8, 3.5),
}
TABLE_COLOURS = ["#c49a6c", "#8a6a4f", "#6f7f8f", "#dcd6cc", "#a8845e", "#3f4a3c", "#d2b48c", "#5a4636",
                 "#b9a58f", "#e8e4dc"]
BOARD_KINDS_BY_SET = {
    "tuning": ("charuco-6x6", "apriltag-25h9", "aruco-4x4-grid", "chessboard"),
    "held-out": ("charuco-4x4", "charuco-4x4-small", "apriltag-36h11", "aruco-original-grid"),
}


def _bins(which: str) -> tuple[int, int]:
    if which not in SETS:
        raise ValueError(f"unknown set {which!r} (choose one of: {', '.join(SETS)})")
    return (0, 2) if which == "tuning" else (1, 3)


def draw_setting(rng: np.random.Generator, name: str, which: str) -> float:
    """A value of setting `name` from the bins of set `which`."""
    lo, hi = RANGES[name]
    width = (hi - lo) / 4
    b = int(rng.choice(_bins(which)))
    return float(lo + width * (b + rng.uniform(0, 1)))


def _choose(rng: np.random.Generator, items, which: str):
    """An item from the half of `items` that belongs to set `which` (even places: tuning)."""
    half = items[0 if which == "tuning" else 1::2]
    return half[int(rng.integers(len(half)))]


@dataclass(frozen=True)
class Variety:
    """One table's varied settings (see the module docstring)."""

    paper_rgb: tuple[int, int, int]
    ink_rgb: tuple[int, int, int]
    ink_spread_mm: float
    table_colour: str
    texture_contrast: float
    lighting: dict
    distance_factor: float
    tilt_deg: float
    lens_blur_px: float
    sensor_noise: float

    @classmethod
    def draw(cls, rng: np.random.Generator, which: str) -> "Variety":
        s = {name: draw_setting(rng, name, which) for name in RANGES}
        p, t = s["paper_level"], s["paper_tint"]
        paper = tuple(int(np.clip(round(v), 0, 255)) for v in (p + t * 0.4, p + t * 0.1, p - t))
        ink = tuple(int(np.clip(round(s["ink_level"] + d), 0, 255)) for d in rng.normal(0, 4, 3))
        lighting = {"gradient": s["light_gradient"], "direction_deg": s["light_direction_deg"],
                    "vignette": s["vignette"], "brightness": s["brightness"]}
        return cls(paper, ink, round(s["ink_spread_mm"], 4), _choose(rng, TABLE_COLOURS, which),
                   s["texture_contrast"], lighting, s["distance_factor"], s["tilt_deg"], s["lens_blur_px"],
                   s["sensor_noise"])

    def apply(self, scene: dict) -> dict:
        """The scene (a scene builder's) with these settings: print, table, light, lens, noise, and
        the camera moved along its azimuth to this distance factor and tilt."""
        out = dict(scene)
        eff = dict(scene.get("effects", {}))
        eff.update(lighting=dict(self.lighting), blur_sigma=self.lens_blur_px, noise_sigma=self.sensor_noise,
                   print={"paper": list(self.paper_rgb), "ink": list(self.ink_rgb),
                          "ink_spread_mm": self.ink_spread_mm})
        out["effects"] = eff
        out["table"] = dict(scene.get("table", {}), colour=self.table_colour, texture_contrast=self.texture_contrast)
        out["camera"] = _moved_camera(scene["camera"], self.distance_factor, self.tilt_deg)
        return out


def _moved_camera(camera: dict, distance_factor: float, tilt_deg: float) -> dict:
    pose = camera["pose"]
    pos, look = np.asarray(pose["position_mm"], float), np.asarray(pose["look_at_mm"], float)
    v = pos - look
    d = float(np.linalg.norm(v)) * distance_factor
    az = math.atan2(v[1], v[0])
    tilt = math.radians(tilt_deg)
    new = look + d * np.array([math.sin(tilt) * math.cos(az), math.sin(tilt) * math.sin(az), math.cos(tilt)])
    return dict(camera, pose=dict(pose, position_mm=[float(x) for x in new]))


def boards_beside(rng: np.random.Generator, scene: dict, which: str, n: int = 2, catalog=None) -> list[dict]:
    """Up to n foreign boards of set `which` on the table, clear of every piece."""
    from shapely.geometry import box
    from shapely.affinity import rotate, translate

    from .scenes import piece_polygon
    from referee.catalog import default_catalog

    catalog = catalog or default_catalog()
    taken = [piece_polygon(catalog, p).buffer(15) for p in scene["pieces"]]
    cx, cy = scene["table"].get("centre_mm", [0.0, 0.0])
    tw, th = scene["table"].get("size_mm", [1000.0, 800.0])
    out = []
    for k in range(n):
        kind = BOARD_KINDS_BY_SET[which][int(rng.integers(4))]
        width = float(rng.uniform(60, 180))
        for _ in range(60):
            x, y = cx + rng.uniform(-0.45, 0.45) * tw, cy + rng.uniform(-0.45, 0.45) * th
            theta = float(rng.uniform(-180, 180))
            shape = translate(rotate(box(-width / 2, -width / 2, width / 2, width / 2), theta), x, y)
            if not any(shape.intersects(t) for t in taken):
                taken.append(shape)
                out.append({"kind": kind, "x_mm": float(x), "y_mm": float(y), "theta_deg": theta,
                            "width_mm": width, "seed": int(rng.integers(1 << 20))})
                break
    return out


def variety_scene(builder, game_index: int, i: int, which: str, resolution: str = "1080p",
                  boards: bool = True) -> tuple[dict, Variety]:
    """Table i of a game from set `which`: builder(rng, resolution) -> scene (a bench scene
    builder), varied, with foreign boards beside the pieces. Deterministic in (set, game, i)."""
    base = TUNING_SEED if which == "tuning" else HELD_OUT_SEED
    rng = np.random.default_rng([base, game_index, i])
    variety = Variety.draw(rng, which)
    scene = variety.apply(builder(rng, resolution))
    if boards:
        scene["boards"] = boards_beside(rng, scene, which, n=int(rng.integers(0, 3)))
    return scene, variety


def foreign_scene(rng: np.random.Generator, which: str, resolution=(1920, 1080)) -> dict:
    """A table with only boards of other systems on it, some small (their markers 12-40 px),
    seen by a webcam from 0.4-1.0 m: any refcam sticker read here is a phantom."""
    from .scenes import random_intrinsics
    from .camera import look_at_pose  # noqa: F401  (validates the pose when rendered)

    K, dist = random_intrinsics(rng, tuple(resolution))
    boards = []
    for k in range(int(rng.integers(2, 5))):
        boards.append({"kind": BOARD_KINDS_BY_SET[which][int(rng.integers(4))],
                       "x_mm": float(rng.uniform(-260, 260)), "y_mm": float(rng.uniform(-150, 150)),
                       "theta_deg": float(rng.uniform(-180, 180)), "width_mm": float(rng.uniform(40, 200)),
                       "seed": int(rng.integers(1 << 20))})
    height = float(rng.uniform(400, 1000))
    tilt = math.radians(rng.uniform(0, 45))
    az = rng.uniform(0, 2 * math.pi)
    pos = [height * math.tan(tilt) * math.cos(az), height * math.tan(tilt) * math.sin(az), height]
    v = Variety.draw(rng, which)
    return {"game": "kang", "pieces": [], "boards": boards,
            "camera": {"image_size": list(resolution), "camera_matrix": K.tolist(), "dist_coeffs": dist.tolist(),
                       "pose": {"position_mm": pos, "look_at_mm": [0.0, 0.0, 0.0]}},
            "table": {"size_mm": [1400.0, 1000.0], "colour": v.table_colour, "texture_contrast": v.texture_contrast,
                      "texture_seed": int(rng.integers(10_000))},
            "effects": {"lighting": dict(v.lighting), "blur_sigma": v.lens_blur_px, "noise_sigma": v.sensor_noise,
                        "seed": int(rng.integers(1 << 30))}}
