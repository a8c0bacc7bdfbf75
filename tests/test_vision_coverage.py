"""Is sigma honest? Per-axis position errors against truth over pictures with known poses.

Targets (SPEC: rulings use 2 sigma bands): at least 90 % of per-axis errors within
2 sigma, and sigma not inflated: at most 99 % within 0.5 sigma. Synthetic pictures always
run; the rendered samples (samples/, made by `make samples`) when they are present.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from calibration.camera import CameraModel
from referee.catalog import default_catalog
from tests.bench import synth
from vision import detect
from vision.pipeline import observe

CAT = default_catalog()
SAMPLES = Path(__file__).resolve().parents[1] / "samples"


def _synthetic_cases():
    rng = np.random.default_rng(2024)
    cases = []
    for k in range(6):
        if k % 2 == 0:
            pieces = synth.tornado_scene(rng, catalog=CAT)
            target = (400.0, 150.0, 0.0)
        else:
            pieces = [synth.SynthPiece(f"kayak/tile-{t}", 160.0 * t, 40.0 * float(rng.integers(-1, 2)) if 0 < t < 7
                                       else 0.0, 0.0, ("A-upstream", "A-downstream")) for t in range(8)]
            pieces += [synth.SynthPiece(f"kayak/pawn-{i + 1}", float(rng.uniform(0, 1100)),
                                        float(rng.uniform(-70, 70)), 0.0, ("main",)) for i in range(4)]
            target = (560.0, 0.0, 0.0)
        cam = synth.look_at_camera(target=target, distance_mm=float(rng.uniform(950, 1150)),
                                   elevation_deg=float(rng.uniform(50, 65)), azimuth_deg=float(rng.uniform(-110, -70)),
                                   hfov_deg=65)
        img = synth.render(cam, synth.scene_stickers(CAT, pieces), seed=k, blur_px=float(rng.uniform(0.5, 0.9)))
        cases.append((img, cam.camera_model(), {p.name: (p.x_mm, p.y_mm) for p in pieces}))
    return cases


@pytest.fixture(scope="module")
def synthetic_cases():
    return _synthetic_cases()


def _errors(cases, with_camera):
    z, err = [], []
    for img, camera, truth in cases:
        obs = observe(img, camera if with_camera else None, catalog=CAT)
        assert obs.frame["game_frame"]
        for p in obs.pieces:
            ex, ey = p.x_mm - truth[p.name][0], p.y_mm - truth[p.name][1]
            # renders stick every sticker exactly: the measurement's own term (without the placement tolerance)
            z += [abs(ex) / p.measure_sigma_mm, abs(ey) / p.measure_sigma_mm]
            err.append(math.hypot(ex, ey))
    return np.array(z), np.array(err)


@pytest.mark.parametrize("with_camera", [True, False])
def test_sigma_coverage_on_synthetic_pictures(synthetic_cases, with_camera):
    z, err = _errors(synthetic_cases, with_camera)
    assert len(z) >= 120
    assert (z <= 2).mean() >= 0.90, f"only {100 * (z <= 2).mean():.1f} % within 2 sigma"
    assert (z <= 0.5).mean() <= 0.99, "sigma is inflated"
    if with_camera:  # the accuracy the Tornado ranking relies on (1080p, camera file)
        assert np.median(err) <= 0.5 and np.percentile(err, 95) <= 1.5 and err.max() <= 3.0


def _sample_stills(resolution, games):
    index = SAMPLES / "index.json"
    if not index.exists():
        pytest.skip("samples/ not generated (run `make samples`)")
    stills = [s for s in json.loads(index.read_text())["stills"]
              if s["resolution"] == resolution and s["game"] in games]
    if not stills:
        pytest.skip(f"no {resolution} samples of {games}")
    return stills


def test_sigma_coverage_on_rendered_samples():
    """All 1080p stills of Kayak Chaos and Tornado Splash (elevated pawns and boats), camera file from the truth."""
    from vision.imageio import load_image
    z, radial = [], []
    for still in _sample_stills("1080p", ("kayak", "tornado")):
        truth = json.loads((SAMPLES / still["truth"]).read_text())
        cam = truth["camera"]
        camera = CameraModel.from_json({k: cam[k] for k in ("image_size", "camera_matrix", "dist_coeffs")})
        img = load_image(SAMPLES / still["image"])
        obs = observe(img, camera, game=still["game"], catalog=CAT, detections=detect.detect_all(img, CAT))
        if not obs.frame["game_frame"]:
            continue  # anchor out of view: poses are not in the truth's frame
        poses = {p["name"]: p for p in truth["pieces"]}
        for p in obs.pieces:
            t = poses[p.name]
            # renders stick every sticker exactly: the measurement's own term (without the placement tolerance)
            z += [abs(p.x_mm - t["x_mm"]) / p.measure_sigma_mm, abs(p.y_mm - t["y_mm"]) / p.measure_sigma_mm]
            radial.append(math.hypot(p.x_mm - t["x_mm"], p.y_mm - t["y_mm"]) / p.measure_sigma_mm)
    z, radial = np.array(z), np.array(radial)
    assert len(z) >= 60
    assert (z <= 2).mean() >= 0.90
    assert (z <= 0.5).mean() <= 0.99
    # the stricter reading: the 2-D position error, not each axis, within 2 sigma
    assert (radial <= 2).mean() >= 0.90, f"only {100 * (radial <= 2).mean():.1f} % of position errors within 2 sigma"
    assert (radial <= 0.5).mean() <= 0.99
