"""Scene descriptions for the vision benchmark and tests, drawn by the product renderer.

Prefers synth.scenes (random legal scenes) when it exists; otherwise builds simple
scenes here: every piece family of a game spread over the table, seen by a webcam
0.6-1.2 m away at 25-45 degrees from vertical, with a realistic lens.
"""

from __future__ import annotations

import math

import numpy as np

from referee.catalog import default_catalog

RESOLUTIONS = {"720p": (1280, 720), "1080p": (1920, 1080), "4k": (3840, 2160)}


def webcam(image_size, hfov_deg, position, look_at, dist=(0.04, -0.06, 0.0005, -0.0004, 0.0)) -> dict:
    w, h = image_size
    f = (w / 2) / math.tan(math.radians(hfov_deg) / 2)
    return {"image_size": [w, h], "camera_matrix": [[f, 0, w / 2 - 0.5 + w * 0.004], [0, f, h / 2 - 0.5 - h * 0.003],
                                                      [0, 0, 1]],
            "dist_coeffs": list(dist), "pose": {"position_mm": list(position), "look_at_mm": list(look_at)}}


def _spread(rng, n, box, min_gap, used):
    out = []
    for _ in range(n):
        for _ in range(200):
            x, y = rng.uniform(box[0], box[1]), rng.uniform(box[2], box[3])
            if all(math.hypot(x - a, y - b) > max(min_gap, r) for a, b, r in used):
                break
        used.append((x, y, min_gap))
        out.append((float(x), float(y)))
    return out


def tornado_scene(rng: np.random.Generator, resolution: str = "1080p", course_len_mm: float = 1400.0) -> dict:
    """Start gate at the origin, the course running +x over course_len_mm."""
    L = course_len_mm
    used = [(0.0, 0.0, 180.0)]
    pieces = [{"name": "tornado/start-gate", "x_mm": 0.0, "y_mm": 0.0, "theta_deg": 0.0}]
    fx, fy = _spread(rng, 1, (L * 0.2, L * 0.45, 250, 300), 100, used)[0]
    pieces.append({"name": "tornado/finish-line", "x_mm": fx, "y_mm": fy, "theta_deg": 180.0 + rng.uniform(-10, 10)})
    used.append((fx, fy, 180.0))
    box = (-30, L - 200, -230, 300)
    for k, (x, y) in enumerate(_spread(rng, 2, box, 250, used)):
        pieces.append({"name": f"tornado/curve-marker-{k + 1}", "x_mm": x, "y_mm": y, "theta_deg": rng.uniform(0, 360)})
    for k, (x, y) in enumerate(_spread(rng, 6, box, 60, used)):
        pieces.append({"name": f"tornado/boat-{k + 1}", "x_mm": x, "y_mm": y, "theta_deg": rng.uniform(-180, 180)})
    for k, (x, y) in enumerate(_spread(rng, 5, box, 130, used)):
        pieces.append({"name": f"tornado/card-{k % 6 + 1}-{k + 1:02d}", "x_mm": x, "y_mm": y,
                       "theta_deg": rng.uniform(-180, 180)})
    size = RESOLUTIONS[resolution]
    centre = np.array([(L - 230) / 2, 35.0])
    dist = rng.uniform(1050, 1250)
    tilt = math.radians(rng.uniform(25, 40))
    az = rng.uniform(-0.4, 0.4) - math.pi / 2
    pos = [centre[0] + dist * math.sin(tilt) * math.cos(az), centre[1] + dist * math.sin(tilt) * math.sin(az),
           dist * math.cos(tilt)]
    cam = webcam(size, 70.0, pos, [centre[0], centre[1], 0.0])
    return {"game": "tornado", "camera": cam, "pieces": pieces,
            "table": {"size_mm": [L + 400, 1000.0], "centre_mm": [float(centre[0]), 40.0]},
            "effects": {"seed": int(rng.integers(1 << 30)), "blur_sigma": float(rng.uniform(0.4, 0.9)),
                        "noise_sigma": 2.0}}


def kayak_scene(rng: np.random.Generator, resolution: str = "1080p") -> dict:
    """The river: 8 tiles end to end along +x from the Start tile, pawns on it."""
    pieces = []
    cat = default_catalog()
    tile_len = float(cat.family("kayak/tile")["footprint"]["size_mm"][0])
    for k in range(8):
        shift = 0.0 if k in (0, 7) else float(rng.integers(-1, 2)) * 40.0
        rot = 0.0 if k in (0, 7) else float(rng.choice([0.0, 180.0]))
        pieces.append({"name": f"kayak/tile-{k}", "x_mm": k * tile_len + rng.normal(0, 0.5),
                       "y_mm": shift + rng.normal(0, 0.5), "theta_deg": rot + rng.normal(0, 0.3),
                       "face": str(rng.choice(["A", "B"]))})
    pieces[0].update(x_mm=0.0, y_mm=0.0, theta_deg=0.0)
    for k in range(4):
        t = rng.integers(0, 8)
        pieces.append({"name": f"kayak/pawn-{k + 1}", "x_mm": float(t * tile_len + rng.uniform(-60, 60)),
                       "y_mm": float(rng.uniform(-80, 80)), "theta_deg": float(rng.uniform(-180, 180))})
    size = RESOLUTIONS[resolution]
    centre = np.array([3.5 * tile_len, 0.0])
    dist = rng.uniform(850, 1100)
    tilt = math.radians(rng.uniform(25, 40))
    az = rng.uniform(-0.3, 0.3) - math.pi / 2
    pos = [centre[0] + dist * math.sin(tilt) * math.cos(az), centre[1] + dist * math.sin(tilt) * math.sin(az),
           dist * math.cos(tilt)]
    return {"game": "kayak", "camera": webcam(size, 70.0, pos, [centre[0], centre[1], 0.0]), "pieces": pieces,
            "table": {"size_mm": [1600.0, 900.0], "centre_mm": [float(centre[0]), 0.0]},
            "effects": {"seed": int(rng.integers(1 << 30)), "blur_sigma": float(rng.uniform(0.4, 0.9))}}


def kang_scene(rng: np.random.Generator, resolution: str = "1080p") -> dict:
    pieces = [{"name": "kang/board", "x_mm": 0.0, "y_mm": 0.0, "theta_deg": 0.0}]
    squares = [(f, r) for f in range(1, 7) for r in range(1, 7)]
    rng.shuffle(squares)
    sizes = ["small", "medium", "large"]
    k = 0
    for sz in sizes:
        for i in range(1, 5):
            name = f"kang/{sz}-{i}"
            if k < 7:
                f, r = squares[k]
                x, y = (f - 3.5) * 40 + rng.normal(0, 3), (r - 3.5) * 40 + rng.normal(0, 3)
            else:
                x, y = rng.uniform(-150, 150), (-1 if k % 2 else 1) * rng.uniform(200, 260)
            k += 1
            pieces.append({"name": name, "x_mm": float(x), "y_mm": float(y), "theta_deg": float(rng.uniform(-180, 180)),
                           "face": str(rng.choice(["front", "back"]))})
    size = RESOLUTIONS[resolution]
    dist = rng.uniform(600, 800)
    tilt = math.radians(rng.uniform(20, 40))
    az = rng.uniform(-0.5, 0.5) - math.pi / 2
    pos = [dist * math.sin(tilt) * math.cos(az), dist * math.sin(tilt) * math.sin(az), dist * math.cos(tilt)]
    return {"game": "kang", "camera": webcam(size, 70.0, pos, [0.0, 0.0, 0.0]), "pieces": pieces,
            "table": {"size_mm": [1000.0, 900.0], "centre_mm": [0.0, 0.0]},
            "effects": {"seed": int(rng.integers(1 << 30)), "blur_sigma": float(rng.uniform(0.4, 0.9))}}


BUILDERS = {"tornado": tornado_scene, "kayak": kayak_scene, "kang": kang_scene}
