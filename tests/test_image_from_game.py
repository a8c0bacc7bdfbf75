"""Observation.image_from_game, the one game-frame -> image mapping vision hands over,
lands on the true sticker corners of bundled stills (samples/*/NNN.truth.json).

With a camera file the mapping is the camera's full projection; without one, the lens
the plane fit estimated. Both must put every visible sticker corner (at its own height)
within a few pixels of where the renderer put it; the 3x3 homography must do so for the
flat stickers. Figures over all bundled stills: vision.pipeline._image_from_game.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from referee.observation import ImageFromGame, Observation

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
STILLS = ("tornado/000", "kang/001", "kayak/000")


def _observe(still: str, use_camera: bool):
    truth_path = SAMPLES / f"{still}.truth.json"
    if not truth_path.exists():
        pytest.skip(f"samples/{still} is not rendered yet (make samples)")
    from calibration.camera import CameraModel
    from vision.imageio import load_image
    from vision.pipeline import observe

    truth = json.loads(truth_path.read_text())
    camera = CameraModel.from_json(truth["camera"], "truth camera") if use_camera else None
    obs = observe(load_image(SAMPLES / f"{still}.jpg"), camera)
    assert obs.frame["game_frame"], f"{still}: the game's anchor should be in view"
    return truth, obs


def _corner_errors(truth: dict, project) -> tuple[list[float], list[float]]:
    """Pixel distances of every visible sticker corner: (flat stickers, raised stickers)."""
    flat, raised = [], []
    for st in truth["stickers"]:
        if not st["visible"]:
            continue
        got = project([(c[0], c[1]) for c in st["corners_mm"]], st["z_mm"])
        errors = [math.dist(g, t) for g, t in zip(got, st["corners_px"])]
        (flat if st["z_mm"] <= 2.0 else raised).extend(errors)
    return flat, raised


@pytest.mark.parametrize("use_camera", [True, False], ids=["camera-file", "no-camera-file"])
@pytest.mark.parametrize("still", STILLS)
def test_mapping_lands_on_the_true_sticker_corners(still, use_camera):
    truth, obs = _observe(still, use_camera)
    mapping = obs.image_from_game
    assert isinstance(mapping, ImageFromGame) and mapping.camera is not None
    flat, raised = _corner_errors(truth, mapping.project)
    errors = np.array(flat + raised)
    assert len(flat) >= 8
    limit = 2.0 if use_camera else 5.0
    print(f"{still} camera={use_camera}: rms {math.sqrt(np.mean(errors ** 2)):.2f} px, max {errors.max():.2f} px")
    assert errors.max() < limit, errors.max()


@pytest.mark.parametrize("still", STILLS)
def test_homography_alone_lands_on_the_flat_sticker_corners(still):
    truth, obs = _observe(still, use_camera=False)
    plane_only = ImageFromGame(obs.image_from_game.homography)
    flat, _raised = _corner_errors(truth, lambda pts, z: plane_only.project(pts))
    assert flat and float(np.median(flat)) < 3.0 and max(flat) < 12.0, (np.median(flat), max(flat))


def test_mapping_survives_the_observation_json():
    _truth, obs = _observe("tornado/000", use_camera=True)
    again = Observation.from_json(json.loads(json.dumps(obs.to_json())))
    points = [(0.0, 0.0), (300.0, -120.0)]
    for a, b in zip(obs.image_from_game.project(points, 5.0), again.image_from_game.project(points, 5.0)):
        assert math.dist(a, b) < 1e-3


def test_far_points_do_not_fold_back_into_the_picture():
    """A barrel lens polynomial turns back far off the axis: an extended line's far end must
    still land far outside the image, not inside it."""
    K = (1000.0, 0.0, 960.0, 0.0, 1000.0, 540.0, 0.0, 0.0, 1.0)
    R = (1.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, -1.0)  # looking straight down at the table
    mapping = ImageFromGame(homography=K, camera=K + R + (0.0, 0.0, 700.0) + (-0.3, 0.0, 0.0, 0.0, 0.0))
    (u_near, _v), (u_mid, _w), (u_far, _z) = mapping.project([(100.0, 0.0), (1300.0, 0.0), (4000.0, 0.0)])
    assert 960.0 < u_near < 1920.0
    assert u_mid > 1920.0 and u_far > u_mid, (u_mid, u_far)
