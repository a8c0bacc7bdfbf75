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
from vision.table_pose import (EDGE_BIAS_THIN, StickerObs, bias_outward, bias_share, corner_outward,
                               edge_normals)

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


def _edge_offsets(corners: np.ndarray, true: np.ndarray) -> np.ndarray:
    """(4,) each edge's outward displacement from the true one (px): its two corners' mean along its normal."""
    n, d = edge_normals(true), corners - true
    return np.array([(d[k] + d[(k + 1) % 4]) / 2 @ n[k] for k in range(4)])


@pytest.mark.parametrize("game,tone", CASES)
def test_each_edge_takes_its_own_share(stages, game, tone):
    """A tilted view thins the cells across the edges facing the tilt, and a thin black border moves
    less under a tone curve (vision/table_pose.py EDGE_BIAS_THIN): corrected edge by edge, a sticker's
    four edges sit more alike against the truth than with one share for the whole sticker, most on
    the Tornado table seen 35 degrees off vertical."""
    tp, pairs, ideal = stages[(game, tone)]
    per_edge, one_share = [], []
    for s, u in pairs:
        true = ideal[u.marker_id]
        one = s.ideal_px + tp.edge_bias_px * bias_share(s, tp.edge_bias_blur_px) * corner_outward(s.ideal_px)
        per_edge.append(np.std(_edge_offsets(u.ideal_px, true)))
        one_share.append(np.std(_edge_offsets(one, true)))
    assert np.median(per_edge) < np.median(one_share), (np.median(per_edge), np.median(one_share))
    if game == "tornado":
        assert np.median(per_edge) < 0.95 * np.median(one_share), (np.median(per_edge), np.median(one_share))


def _foreshortened(edge_blur_px: tuple) -> StickerObs:
    """A square seen tilted: 21 px wide, 14 px tall (cells 3 and 2 px across its edges)."""
    corners = np.array([[0.0, 0.0], [21.0, 0.0], [21.0, 14.0], [0.0, 14.0]])
    return StickerObs(marker_id=1, piece="p", ideal_px=corners, local_mm=corners, z_mm=0.0, sigma_px=0.1,
                      size_mm=16.0, side_px=17.5, blur_px=0.8, edge_blur_px=edge_blur_px)


def test_bias_shares_by_hand():
    """Worked by hand: blur 0.8 px on every edge and the reference blur 0.8 px. The top and bottom
    edges have 2 px cells across them: share 1 - 0.7 x 0.8 / 2 = 0.72; the left and right edges 3 px:
    1 - 0.7 x 0.8 / 3 = 0.8133. Corner 0 (top left) moves up by the top's share and left by the left's."""
    assert EDGE_BIAS_THIN == 0.7
    moved = bias_outward(_foreshortened((0.8, 0.8, 0.8, 0.8)), 0.8)
    np.testing.assert_allclose(moved[0], [-(1 - 0.7 * 0.8 / 3), -(1 - 0.7 * 0.8 / 2)], atol=1e-9)
    np.testing.assert_allclose(moved[2], [1 - 0.7 * 0.8 / 3, 1 - 0.7 * 0.8 / 2], atol=1e-9)
    # a sticker's one share is its edges' mean
    assert bias_share(_foreshortened((0.8, 0.8, 0.8, 0.8)), 0.8) == pytest.approx((0.72 + (1 - 0.7 * 0.8 / 3)) / 2)


def test_unmeasured_edges_take_the_stickers_one_share():
    """A sticker whose edges' blurs were not measured (read from a matched drawing) keeps one share
    for its four edges: its blur against the reference, bounded."""
    s = _foreshortened(())
    np.testing.assert_allclose(bias_outward(s, 0.4), corner_outward(s.ideal_px) * 1.5)
    np.testing.assert_allclose(bias_outward(s, 0.8), corner_outward(s.ideal_px) * 1.0)
