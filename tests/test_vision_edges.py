"""The batched edge-line corner fit (vision/edges.py) gives what the one-sticker fit it replaced gave.

The reference below is detect's per-sticker fit as it was before batching (one sticker a call,
an SVD per edge). Both run on rendered stickers, sharp, blurred, under a tone curve, and cut by
the image border, from the true corners and from guesses up to a pixel off; corners, edge rms
and blur must agree within 1e-6 px, and a sticker one refuses the other refuses too.
"""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from referee.catalog import default_catalog
from tests.bench import synth
from vision import detect, edges

CAT = default_catalog()


def _reference_refine_corners(gray, corners):
    c, rms, blur = _reference_refine_edges(gray, corners)
    if rms > 0 and np.abs(c - corners).max() > edges.SECOND_ROUND_PX:
        c2, rms2, blur2 = _reference_refine_edges(gray, c)
        if rms2 > 0:
            return c2, rms2, blur2
    return c, rms, blur


def _reference_refine_edges(gray, corners):  # the pre-batching code, kept as it was
    c = np.asarray(corners, dtype=np.float64)
    gray_f = gray if gray.dtype == np.float32 else gray.astype(np.float32)
    edge_vec = np.roll(c, -1, axis=0) - c
    lengths = np.linalg.norm(edge_vec, axis=1)
    side = float(lengths.mean())
    if side < 6 or lengths.min() < 1e-6:
        return c, 0.0, 0.0
    cell = side / 7.0
    half_w = float(np.clip(0.75 * cell, 1.5, 6.0))
    n_along = int(np.clip(side * 1.5, 8, edges.MAX_PROFILES))
    n_across = int(np.ceil(half_w * 4)) * 2 + 1
    offsets = np.linspace(-half_w, half_w, n_across)
    step = offsets[1] - offsets[0]
    d = edge_vec / lengths[:, None]
    nrm = np.stack([-d[:, 1], d[:, 0]], axis=1)
    mids = c + edge_vec / 2
    flip = np.einsum("ij,ij->i", nrm, mids - c.mean(axis=0)) < 0
    nrm[flip] *= -1
    t = np.linspace(0.05, 0.95, n_along)
    base = c[:, None, :] + t[None, :, None] * edge_vec[:, None, :]
    pts = base[:, :, None, :] + offsets[None, None, :, None] * nrm[:, None, None, :]
    prof = cv2.remap(gray_f, pts[..., 0].reshape(4 * n_along, n_across).astype(np.float32),
                     pts[..., 1].reshape(4 * n_along, n_across).astype(np.float32),
                     interpolation=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE).astype(np.float64)
    half = n_across // 2
    black = prof[:, :half].min(axis=1)
    white = prof[:, half + 1:].max(axis=1)
    level = np.repeat(np.median(((black + white) / 2.0).reshape(4, n_along), axis=1), n_along)
    cross = (prof[:, :-1] < level[:, None]) & (prof[:, 1:] >= level[:, None])
    mid = (offsets[:-1] + offsets[1:]) / 2
    dist = np.where(cross, np.abs(mid)[None, :], np.inf)
    j = np.argmin(dist, axis=1)
    rows = np.arange(len(prof))
    ok = np.isfinite(dist[rows, j]) & ((white - black) > 15)
    p0, p1 = prof[rows, j], prof[rows, j + 1]
    pos = offsets[j] + (level - p0) / np.maximum(p1 - p0, 1e-9) * step
    slope = np.max(np.diff(prof, axis=1), axis=1) / step
    blur_each = (white - black) / np.maximum(slope, 1e-6) / math.sqrt(2 * math.pi)
    ok = ok.reshape(4, n_along)
    if (ok.sum(axis=1) < max(4, n_along // 3)).any():
        return c, 0.0, 0.0
    blur = float(np.median(blur_each.reshape(4, n_along)[ok]))
    from_corner = np.minimum(t, 1 - t)[None, :] * lengths[:, None]
    keep_from = np.minimum(np.maximum(0.1 * lengths, 2.5 * blur + 0.5), 0.3 * lengths)
    ok &= from_corner >= keep_from[:, None]
    edge_pts = base + pos.reshape(4, n_along)[:, :, None] * nrm[:, None, :]
    lines, residuals = [], []
    for k in range(4):
        e = edge_pts[k][ok[k]]
        if len(e) < 4:
            return c, 0.0, 0.0
        line, res = _reference_fit_line(e)
        keep = np.abs(res) < max(3 * np.median(np.abs(res)) * 1.4826, 0.3)
        if 4 <= keep.sum() < len(res):
            line, res = _reference_fit_line(e[keep])
        lines.append(line)
        residuals.append(res)
    out = np.empty((4, 2))
    for k in range(4):
        (p1_, n1), (p2_, n2) = lines[(k - 1) % 4], lines[k]
        A = np.array([n1, n2])
        if abs(np.linalg.det(A)) < 1e-9:
            return c, 0.0, 0.0
        p = np.linalg.solve(A, np.array([n1 @ p1_, n2 @ p2_]))
        if np.linalg.norm(p - c[k]) > max(2.0, 0.25 * side):
            return c, 0.0, 0.0
        out[k] = p
    rms = float(np.sqrt(np.mean(np.concatenate(residuals) ** 2)))
    return out, rms, blur


def _reference_fit_line(pts):
    m = pts.mean(axis=0)
    _, _, vt = np.linalg.svd(pts - m, full_matrices=False)
    n = vt[1]
    return (m, n), (pts - m) @ n


def _scene(blur_px: float, seed: int):
    rng = np.random.default_rng(seed)
    pieces = synth.tornado_scene(rng, catalog=CAT)
    cam = synth.look_at_camera(target=(400, 150, 0), distance_mm=1050, elevation_deg=55, hfov_deg=65)
    stickers = synth.scene_stickers(CAT, pieces)
    img = synth.render(cam, stickers, seed=seed, blur_px=blur_px)
    truth = np.array([synth.project(cam, c) for _, c in stickers])
    return detect.to_gray(img), truth


def _guesses(truth: np.ndarray, rng) -> np.ndarray:
    """The true corners, and guesses 0.4 and 1 px off, and a few degenerate quads."""
    near = truth + rng.uniform(-0.4, 0.4, truth.shape)
    far = truth + rng.uniform(-1.0, 1.0, truth.shape)
    tiny = truth.mean(axis=1, keepdims=True) + (truth - truth.mean(axis=1, keepdims=True)) * 0.1
    flat = truth.copy()
    flat[:, 1] = flat[:, 0]
    return np.concatenate([truth, near, far, tiny[:3], flat[:3]])


CONDITIONS = {
    "sharp": lambda g: g,
    "tone curve": lambda g: (255.0 * (g / 255.0) ** 2.2).astype(np.uint8),
    "cut by the border": lambda g: np.ascontiguousarray(g[140:900, 300:1500]),
}


@pytest.mark.parametrize("blur_px", [0.6, 2.0])
@pytest.mark.parametrize("condition", sorted(CONDITIONS))
def test_batched_fit_matches_the_one_sticker_fit(blur_px, condition):
    gray, truth = _scene(blur_px, seed=5)
    if condition == "cut by the border":
        truth = truth - np.array([300.0, 140.0])
    gray_f = CONDITIONS[condition](gray).astype(np.float32)
    guesses = _guesses(truth, np.random.default_rng(7))
    got_c, got_rms, got_blur = edges.refine_corners(gray_f, guesses)
    fitted = 0
    for k, guess in enumerate(guesses):
        ref_c, ref_rms, ref_blur = _reference_refine_corners(gray_f, guess)
        assert (got_rms[k] > 0) == (ref_rms > 0), k
        assert np.abs(got_c[k] - ref_c).max() < 1e-6, k
        assert abs(got_rms[k] - ref_rms) < 1e-6 and abs(got_blur[k] - ref_blur) < 1e-6, k
        fitted += ref_rms > 0
    assert fitted >= len(truth)  # most stickers are measurable: the comparison is not all refusals
    one = [edges.refine_edges(gray_f, g[None]) for g in guesses[:5]]
    many = edges.refine_edges(gray_f, guesses[:5])
    assert np.abs(np.array([o[0][0] for o in one]) - many[0]).max() < 1e-9


def test_no_stickers_no_work():
    c, rms, blur = edges.refine_corners(np.zeros((50, 50), np.float32), np.zeros((0, 4, 2)))
    assert c.shape == (0, 4, 2) and rms.shape == (0,) and blur.shape == (0,)
