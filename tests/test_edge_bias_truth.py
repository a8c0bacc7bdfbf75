"""The tone curve's edge bias, each sticker's scale and its corners, against the render's truth.

A camera's tone curve moves every black square's edges in or out (x ** 2.2 darkens the blurred
edge: squares read large; x ** (1 / 2.2): small). vision/table_pose.py estimates that bias in the
plane fit and moves every sticker's corners back by its share (unbias_sticker); the pipeline then
uses those corners for every piece. A test audit flipped the sign of that correction and every
test passed: these compare each stage with the renderer's exact corners.

Truth: the rendered corners (synth/render.py), undistorted with the true camera; a sticker's edge
offset is the mean of its corners' displacement along their outward directions (per edge, px).
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from referee.catalog import default_catalog
from synth.render import render_scene
from tests.bench.accuracy import camera_of
from tests.bench.robust import degrade
from tests.bench.vision_scenes import BUILDERS
from vision import detect, pipeline
from vision.table_pose import corner_outward

W, H = 1920, 1080
TONES = {"gamma 2.2 dark": -1, "tone sRGB-like": +1}  # sign of the bias (> 0: squares read small)


@pytest.fixture(scope="module")
def stages():
    """{(game, tone): (table pose, raw stickers, corrected stickers, truth ideal corners by id)}."""
    catalog = default_catalog()
    out = {}
    for game, seed in (("kang", 3), ("tornado", 5)):
        image, truth = render_scene(BUILDERS[game](np.random.default_rng(seed), "1080p"), catalog=catalog)
        camera = camera_of(truth)
        K, dist = np.array(truth["camera"]["camera_matrix"]), np.array(truth["camera"]["dist_coeffs"])
        ideal = {s["id"]: cv2.undistortPoints(np.array(s["corners_px"]).reshape(-1, 1, 2), K, dist, P=K).reshape(4, 2)
                 for s in truth["stickers"] if s["visible"]}
        for tone in TONES:
            warnings: list[str] = []
            result = detect.detect_all(degrade(image, tone), catalog)
            g, by_piece = pipeline._detect(result, catalog, game, W, H, warnings)
            intr, raw = pipeline._undistort(by_piece, catalog, camera, W, H, warnings)
            plane = pipeline._plane(raw, catalog, g, intr, camera, W, H, warnings)
            pairs = [(s, u) for n, sts in raw.items() for s, u in zip(sts, plane.obs_by_piece[n])]
            out[(game, tone)] = (plane.tp, pairs, ideal)
    return out


def _edge_offset(corners: np.ndarray, true: np.ndarray) -> float:
    """Mean outward displacement of a square's edges from the true ones (px)."""
    return float(((corners - true) * corner_outward(true)).sum(axis=1).mean() / 2)


def _scale_error(corners: np.ndarray, true: np.ndarray) -> float:
    """Relative size error of a square (its corners' mean distance from its centre)."""
    size = np.linalg.norm(corners - corners.mean(axis=0), axis=1).mean()
    return float(size / np.linalg.norm(true - true.mean(axis=0), axis=1).mean() - 1.0)


CASES = [(g, t) for g in ("kang", "tornado") for t in TONES]


@pytest.mark.parametrize("game,tone", CASES)
def test_estimated_edge_bias_matches_the_render(stages, game, tone):
    tp, pairs, ideal = stages[(game, tone)]
    seen = -np.median([_edge_offset(s.ideal_px, ideal[s.marker_id]) for s, _ in pairs])
    assert np.sign(seen) == TONES[tone] and abs(seen) > 0.15  # the curve really moves the edges
    assert np.sign(tp.edge_bias_px) == TONES[tone]
    assert abs(tp.edge_bias_px - seen) < 0.2 * abs(seen) + 0.03, (tp.edge_bias_px, seen)


@pytest.mark.parametrize("game,tone", CASES)
def test_corrected_stickers_have_their_true_scale(stages, game, tone):
    _, pairs, ideal = stages[(game, tone)]
    raw = np.median([_scale_error(s.ideal_px, ideal[s.marker_id]) for s, _ in pairs])
    fixed = np.median([_scale_error(u.ideal_px, ideal[u.marker_id]) for _, u in pairs])
    assert abs(raw) > 0.005  # a tone curve changes every square's size by ~1 %
    assert abs(fixed) < 0.25 * abs(raw), (raw, fixed)
    # and every sticker's own offset is mostly gone, not only the median
    offsets = np.array([_edge_offset(u.ideal_px, ideal[u.marker_id]) for _, u in pairs])
    assert np.percentile(np.abs(offsets), 90) < 0.12, offsets


@pytest.mark.parametrize("game,tone", CASES)
def test_corrected_corners_are_closer_to_the_truth(stages, game, tone):
    _, pairs, ideal = stages[(game, tone)]
    rms = lambda c, t: float(np.sqrt(((c - t) ** 2).sum(axis=1).mean()))  # noqa: E731
    raw = np.mean([rms(s.ideal_px, ideal[s.marker_id]) for s, _ in pairs])
    fixed = np.mean([rms(u.ideal_px, ideal[u.marker_id]) for _, u in pairs])
    assert fixed < 0.6 * raw and fixed < 0.25, (raw, fixed)
