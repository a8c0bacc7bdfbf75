"""The speed-ups after detection (issue 14) give what the plain computations give: the batched
piece fits, the plane fit's piece-by-piece normal equations, their arrow-form solve and inverse and
its per-sticker error terms' blocks, the overlay's batched outlines and label spots, and the
pipelined live engine."""

from __future__ import annotations

import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from tests.live_helpers import move_script, scripted_observe, write_session

SAMPLES = Path(__file__).resolve().parents[1] / "samples"


def _still(game: str, with_camera: bool, n: str = "004"):
    from calibration.camera import CameraModel

    image = cv2.imread(str(SAMPLES / game / f"{n}.jpg"))
    camera = CameraModel.load(SAMPLES / game / f"{n}.camera.json") if with_camera else None
    return image, camera


@pytest.mark.parametrize("with_camera", [True, False])
def test_plane_fit_normal_equations_are_the_dense_products(monkeypatch, with_camera):
    """On a Tornado still (gate and cards: several flat pieces), with the focal length known and free."""
    from vision import table_pose
    from webui.live import pipeline_observe

    seen = []
    real = table_pose._PlaneModel.levenberg_marquardt

    def checked(model, state, iterations=40):
        r, J = model.residuals(state, True)
        wts = model.weights(r)
        w2 = np.repeat(wts, 2)
        r2, parts = model.residuals_and_parts(state)
        A, g = model.normal_equations(parts, r2, wts)
        seen.append((np.abs(A - J.T @ (J * w2[:, None])).max() / np.abs(A).max(),
                     np.abs(g - J.T @ (w2 * r)).max() / np.abs(g).max(),
                     np.array_equal(model.dense_jacobian(parts), J), J.shape[1]))
        return real(model, state, iterations)

    monkeypatch.setattr(table_pose._PlaneModel, "levenberg_marquardt", checked)
    image, camera = _still("tornado", with_camera, "001")
    obs = pipeline_observe(image, camera, None)
    assert obs.pieces and seen
    for dA, dg, same_J, npar in seen:
        assert same_J and dA < 1e-12 and dg < 1e-10, (dA, dg, npar)
    assert max(npar for *_, npar in seen) > 7  # several flat pieces, not only the reference


@pytest.mark.parametrize("ncam, pieces", [(6, 30), (9, 40), (6, 123)])
def test_arrow_solve_and_inverse_are_the_dense_ones(ncam, pieces):
    """The plane fit's normal equations solved and inverted through their arrow form (the shared
    camera and edge-bias parameters, each piece's own 3 x 3 block) equal numpy's dense routines."""
    from vision import table_pose

    rng = np.random.default_rng(ncam + pieces)
    npar = ncam + 3 * pieces + 1
    assert npar >= table_pose.ARROW_MIN_PARAMS  # the arrow path, not the dense fall-back
    A = 1e-3 * np.eye(npar)
    for k in range(pieces):  # each of a piece's corners: the camera, the edge bias and its own pose
        rows = np.zeros((8, npar))
        rows[:, :ncam], rows[:, -1] = rng.normal(size=(8, ncam)), rng.normal(size=8)
        rows[:, ncam + 3 * k:ncam + 3 * k + 3] = 50.0 * rng.normal(size=(8, 3))
        A += rows.T @ rows
    b = rng.normal(size=npar)
    x = table_pose.arrow_solve(A, b, ncam)
    assert np.abs(x - np.linalg.solve(A, b)).max() <= 1e-12 * np.abs(x).max()
    inverse = np.linalg.inv(A)
    assert np.abs(table_pose.arrow_inverse(A, ncam) - inverse).max() <= 1e-12 * np.abs(inverse).max()


def test_propagated_blocks_are_the_dense_products():
    """The plane fit's per-sticker error terms through the few columns of each sticker: the camera's
    block and each piece's own 3 x 3 block are those of the dense cov X^T diag(var) X cov."""
    from vision import table_pose

    rng = np.random.default_rng(7)
    ncam, pieces = 6, 40
    npar = ncam + 3 * pieces + 1
    owner = np.repeat(np.arange(pieces + 1), 4 * 2)  # two stickers a piece, the reference (0) too
    cols, held = table_pose._sticker_columns(owner, ncam, npar)
    patterns = np.zeros((len(cols), npar))
    for k, (c, h) in enumerate(zip(cols, held)):
        use = np.r_[c[:ncam], c[-1]] if h else c  # the reference has no pose columns
        patterns[k, use] = rng.normal(size=len(use))
    root = rng.normal(size=(npar, npar))
    cov = root @ root.T / npar + np.eye(npar)
    var = rng.uniform(0.1, 2.0, len(patterns))
    dense = cov @ patterns.T @ np.diag(var) @ patterns @ cov
    got = table_pose._propagated(cov, patterns, var, (cols, held))
    scale = np.abs(dense).max()
    assert np.abs(got[:ncam, :ncam] - dense[:ncam, :ncam]).max() <= 1e-12 * scale
    for k in range(pieces):
        at = slice(ncam + 3 * k, ncam + 3 * k + 3)
        assert np.abs(got[at, at] - dense[at, at]).max() <= 1e-12 * scale


def test_batched_piece_fits_are_the_one_by_one_fits(monkeypatch):
    from vision import pieces, pipeline
    from webui.live import pipeline_observe

    compared = []
    real = pipeline._fits

    def checked(obs_by_piece, plane, catalog, reference_fit=False):
        fits, reference = real(obs_by_piece, plane, catalog, reference_fit)
        for name, (fit, z) in fits.items():
            alone = pieces.fit_pieces([obs_by_piece[name]], plane.tp, [z])[0]
            compared.append(name)
            assert np.allclose(fit.pose, alone.pose, rtol=0, atol=1e-9), name
            assert np.allclose(fit.cov, alone.cov, rtol=1e-9, atol=1e-15), name
            assert math.isclose(fit.rms_sigma, alone.rms_sigma, rel_tol=1e-9, abs_tol=1e-12), name
        if reference_fit:  # the fit reference, fitted in the same batch for the frame's gauge
            compared.append(plane.solve_ref)
            assert np.allclose(pipeline._gauge_of(reference, plane), pipeline.frame_gauge_cov(plane), rtol=1e-9,
                               atol=1e-15)
        return fits, reference

    monkeypatch.setattr(pipeline, "_fits", checked)
    image, camera = _still("kang", True)
    pipeline_observe(image, camera, None)
    assert len(compared) >= 3  # the tokens off the plane fit, fitted together


def test_outlines_of_one_shape_are_stepped_as_one_by_one():
    from referee.observation import PiecePose
    from webui.overlay import _steps, _stepped_outlines, piece_to_game

    rng = np.random.default_rng(4)
    card = np.array([[-55.0, -30.0], [55.0, -30.0], [55.0, 30.0], [-55.0, 30.0]])  # 60 mm: 3 whole steps
    poses = [PiecePose(name=f"c{i}", marker_ids=(), x_mm=float(x), y_mm=float(y), theta_deg=float(t), z_mm=0.0,
                       sigma_mm=0.1, sigma_theta_deg=0.1)
             for i, (x, y, t) in enumerate(zip(rng.uniform(-500, 500, 60), rng.uniform(-300, 300, 60),
                                               np.concatenate([np.zeros(10), rng.uniform(-180, 180, 50)])))]
    sized = [(False, p, card) for p in poses]
    for (_, p, local), got in zip(sized, _stepped_outlines(sized)):
        want = _steps(piece_to_game(p, local), True)
        assert got.shape == want.shape and np.array_equal(got, want), p.name


def test_label_spots_are_the_first_free_ones_in_ring_order():
    from webui.labels import _DIRECTIONS, _RINGS, Box, LabelPlacer

    rng = np.random.default_rng(9)
    img = np.zeros((400, 600, 3), np.uint8)
    for _ in range(20):
        placer = LabelPlacer(img.copy())
        for x0, y0 in rng.uniform(0, 560, (12, 2)):
            placer.reserve(Box(x0, y0 * 0.66, x0 + 40, y0 * 0.66 + 20))
        anchor = rng.uniform(0, 600), rng.uniform(0, 400)
        tw, th, base = placer.size("piece-7")
        bw, bh = tw + 2 * placer.pad, th + base + 2 * placer.pad
        want = None
        for ring in _RINGS:  # the placer's rule, spot by spot
            for dx, dy in _DIRECTIONS:
                cx, cy = anchor[0] + dx * ring * bh + np.sign(dx) * bw / 2, anchor[1] + dy * ring * bh
                box = Box(cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2, "piece-7")
                if want is None and placer._free(box):
                    want = (box, ring > _RINGS[0])
        assert placer._spot("piece-7", anchor) == want


@pytest.fixture
def state_only_kang():
    from referee.registry import register, unregister
    from referee.state_only import StateOnlyGame

    register(StateOnlyGame("kang", "Kang"))
    yield
    unregister("kang")


def _run(tmp_path, pipelined: bool):
    from vision.sources import SessionSource
    from vision.tracking import TrackerSettings
    from webui.live import LiveEngine, LiveSettings

    folder = write_session(tmp_path / ("p" if pipelined else "s"), 30, game="kang")
    engine = LiveEngine(SessionSource(folder, realtime=False), scripted_observe(move_script("kang")),
                        LiveSettings(game="kang", tracker=TrackerSettings(stable_s=0.5), pipelined=pipelined))
    frames, events = engine.frames.subscribe(), engine.events.subscribe()
    jpegs, rulings = [], []
    for t, image in engine.source:
        engine.process(t, image)
        assert engine.drain(5.0)
        while (jpeg := frames.get(timeout=0)) is not None:
            jpegs.append(jpeg)
    while (ev := events.get(timeout=0)) is not None:
        if ev["type"] == "ruling":
            rulings.append(ev["ruling"]["summary"])
    drawer = engine._drawer
    engine.stop()
    return jpegs, rulings, drawer


def test_pipelined_engine_draws_every_frame_in_order_and_rules_the_same(tmp_path, state_only_kang):
    sync_jpegs, sync_rulings, no_drawer = _run(tmp_path, pipelined=False)
    jpegs, rulings, drawer = _run(tmp_path, pipelined=True)
    assert no_drawer is None and drawer is not None and not drawer._thread.is_alive()  # stop() ended it
    assert len(sync_jpegs) == 30 and jpegs == sync_jpegs
    assert rulings == sync_rulings and len(rulings) == 3


def test_a_still_tables_picture_is_published_again_not_drawn_again(monkeypatch):
    """The live page's picture of a still table (frames that differ by sensor noise only) is the last
    one published again, not drawn and encoded again; a hand coming in is drawn at once."""
    from pathlib import Path

    import webui.overlay
    from calibration.camera import CameraModel
    from vision.sources import SessionSource
    from webui.live import LiveEngine, LiveSettings, tracking_observe

    folder = Path(__file__).resolve().parents[1] / "samples" / "sessions" / "kang"
    source = SessionSource(folder, realtime=False)
    camera = CameraModel.load(source.info.camera_file) if source.info.camera_file else None
    drawn = []
    render = webui.overlay.render_overlay
    monkeypatch.setattr(webui.overlay, "render_overlay", lambda *a, **k: drawn.append(1) or render(*a, **k))
    engine = LiveEngine(source, tracking_observe(), LiveSettings(game="kang", camera=camera))
    sub = engine.frames.subscribe()
    frames = [image for _, (t, image) in zip(range(8), source)]
    jpegs = []
    for k, image in enumerate(frames):
        engine.process(0.25 * k, image)
        jpegs.append(sub.get(timeout=0))
    assert all(j is not None for j in jpegs)
    repeated = [k for k in range(1, 8) if jpegs[k] == jpegs[k - 1]]
    assert len(repeated) >= 3 and len(drawn) == 8 - len(repeated)  # each repeat not drawn
    hand = frames[-1].copy()
    hand[200:400, 300:500] = (90, 120, 170)  # a hand over part of the table
    engine.process(2.0, hand)
    assert sub.get(timeout=0) != jpegs[-1] and len(drawn) == 9 - len(repeated)
    engine.stop()
