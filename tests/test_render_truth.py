"""Renderer truth: projection agrees with cv2.projectPoints, the image shows each sticker where the
truth says (edge profiles and the ArUco detector), occlusion bookkeeping, determinism.

The helpers at the top are shared with the other test_render_* and test_samples_* modules.
"""

from __future__ import annotations

import numpy as np


def aruco_detector(small: bool = True, wide_refinement: bool = False, fine_bits: bool = False):
    """DICT_5X5_1000 detector with sub-pixel corners.

    small: minimum perimeter lowered so 15-20 px stickers in a 4K frame are still tried;
    fine_bits: thresholds at more window sizes and reads the bits with 8 px per cell
    (the default 4 misreads some blurred 20 px stickers, but this pass in turn drops a
    few large ones, hence detect() runs both); wide_refinement: cornerSubPix over half a
    cell (the default 0.3 cell leaves ~0.3 px errors on tilted markers, even on an
    independent 16x-supersampled reference)."""
    import cv2

    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    if small:
        params.minMarkerPerimeterRate = 0.005
    if fine_bits:
        params.adaptiveThreshWinSizeStep = 4
        params.perspectiveRemovePixelPerCell = 8
    if wide_refinement:
        params.cornerRefinementWinSize = 8
        params.relativeCornerRefinmentWinSize = 0.5
        params.cornerRefinementMinAccuracy = 0.01
        params.cornerRefinementMaxIterations = 100
    return cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_5X5_1000), params)


def _detect_once(image, **kw) -> dict[int, np.ndarray]:
    corners, ids, _ = aruco_detector(**kw).detectMarkers(image)
    if ids is None:
        return {}
    return {int(i): c.reshape(4, 2).astype(np.float64) for i, c in zip(ids.ravel(), corners)}


def detect(image: np.ndarray, small: bool = True, wide_refinement: bool = False) -> dict[int, np.ndarray]:
    """Marker id -> (4, 2) corners found in a BGR image. With `small`, a second pass with
    fine_bits adds the markers the first one missed."""
    found = _detect_once(image, small=small, wide_refinement=wide_refinement)
    if small:
        for mid, c in _detect_once(image, small=True, wide_refinement=wide_refinement, fine_bits=True).items():
            found.setdefault(mid, c)
    return found


def simple_scene(size=(640, 480), pose=None, dist=(-0.06, 0.015, 0.0005, -0.0004, 0.0), clean=True) -> dict:
    """A small Kang scene seen from about 45 cm: board, three tokens, one loose marker."""
    scene = {
        "game": "kang",
        "camera": {"image_size": list(size),
                   "camera_matrix": [[size[0] * 0.95, 0, size[0] / 2 + 3], [0, size[0] * 0.95, size[1] / 2 - 2], [0, 0, 1]],
                   "dist_coeffs": list(dist),
                   "pose": pose or {"position_mm": [40, -160, 520], "look_at_mm": [0, 0, 0], "roll_deg": 4}},
        "table": {"size_mm": [900, 800], "colour": "#c4a078", "texture_seed": 5},
        "pieces": [{"name": "kang/board", "x_mm": 0, "y_mm": 0, "theta_deg": 0},
                   {"name": "kang/small-1", "x_mm": -100, "y_mm": -100, "theta_deg": 0, "face": "front"},
                   {"name": "kang/large-2", "x_mm": 60, "y_mm": 20, "theta_deg": 30, "face": "back"},
                   {"name": "kang/medium-3", "x_mm": 20, "y_mm": -200, "theta_deg": -20}],
        "markers": [{"id": 700, "size_mm": 30, "x_mm": -60, "y_mm": 200, "theta_deg": 15, "z_mm": 0}],
    }
    if clean:
        scene["effects"] = {"noise_sigma": 0, "blur_sigma": 0, "lighting": {"gradient": 0, "vignette": 0}}
    return scene


def _gray(bgr) -> float:
    b, g, r = bgr
    return 0.299 * r + 0.587 * g + 0.114 * b


from synth.draw import INK, PAPER  # noqa: E402

GRAY_PAPER, GRAY_INK = _gray(PAPER), _gray(INK)


def edge_offsets(gray: np.ndarray, sticker: dict, camera: dict, samples=(0.25, 0.4, 0.6, 0.75)) -> list[float]:
    """Signed distances (px) between the truth edge and the 50 % crossing of the image
    intensity along the edge normal, for the four outer edges of a sticker's black square.

    The outer border cell is black along the whole edge and the quiet zone white beyond
    it, so the crossing is a clean step whatever the code bits are."""
    import cv2
    from scipy.ndimage import map_coordinates

    K = np.array(camera["camera_matrix"])
    dist = np.array(camera["dist_coeffs"])
    rvec, tvec = np.array(camera["rvec"]), np.array(camera["tvec"])
    corners = np.array(sticker["corners_mm"])
    centre = corners.mean(axis=0)
    out = []
    for k in range(4):
        a, b = corners[k], corners[(k + 1) % 4]
        for f in samples:
            p3 = a + f * (b - a)
            q3 = a + (f + 0.01) * (b - a)
            inward = centre + (p3 - centre) * 0.9  # toward the marker centre
            pts, _ = cv2.projectPoints(np.array([p3, q3, inward]).reshape(-1, 1, 3), rvec, tvec, K, dist)
            p, q, c = pts.reshape(3, 2)
            t = (q - p) / np.linalg.norm(q - p)
            n = np.array([-t[1], t[0]])
            if n @ (c - p) < 0:
                n = -n  # n points into the black border
            cell = sticker["side_px"] / 7
            s = np.linspace(-0.45 * cell, 0.45 * cell, 91)
            xy = p[None, :] + s[:, None] * n[None, :]
            prof = map_coordinates(gray, [xy[:, 1], xy[:, 0]], order=1)
            mid = (GRAY_PAPER + GRAY_INK) / 2
            idx = np.nonzero((prof[:-1] >= mid) & (prof[1:] < mid))[0]
            assert len(idx) >= 1, f"no edge crossing for sticker {sticker['id']}"
            i = idx[0]
            frac = (prof[i] - mid) / (prof[i] - prof[i + 1])
            out.append(float(s[i] + frac * (s[i + 1] - s[i])))
    return out


def test_truth_corners_agree_with_projectpoints_from_the_catalog():
    """Corners computed here from the catalog and a camera given as rvec/tvec, projected
    with cv2.projectPoints, match the truth to 0.05 px."""
    import cv2

    from referee.catalog import default_catalog
    from synth.render import render_scene

    cat = default_catalog()
    R = np.array([[1, 0, 0], [0, -1, 0], [0, 0, -1]], dtype=np.float64)
    rot, _ = cv2.Rodrigues(np.array([0.25, -0.1, 0.05]))
    R = rot @ R
    rvec = cv2.Rodrigues(R)[0].ravel()
    centre = np.array([30.0, -200.0, 560.0])
    tvec = -R @ centre
    scene = simple_scene(pose={"rvec": rvec.tolist(), "tvec": tvec.tolist()})
    _, truth = render_scene(scene)
    K = np.array(scene["camera"]["camera_matrix"], dtype=np.float64)
    dist = np.array(scene["camera"]["dist_coeffs"])
    by_id = {s["id"]: s for s in truth["stickers"]}
    checked = 0
    for p in scene["pieces"]:
        spec = cat.piece(p["name"])
        z = 4.0 if p["name"].startswith("kang/") and p["name"] != "kang/board" and abs(p["y_mm"]) < 170 else None
        for st in spec.stickers:
            if st.marker_id not in by_id:
                continue
            a = np.radians(p["theta_deg"])
            loc = np.array(st.corners_local())
            wx = p["x_mm"] + np.cos(a) * loc[:, 0] - np.sin(a) * loc[:, 1]
            wy = p["y_mm"] + np.sin(a) * loc[:, 0] + np.cos(a) * loc[:, 1]
            zz = z if z is not None else st.top_z_mm
            pts = np.column_stack([wx, wy, np.full(4, zz)])
            expected, _ = cv2.projectPoints(pts.reshape(-1, 1, 3), rvec, tvec, K, dist)
            got = np.array(by_id[st.marker_id]["corners_px"])
            assert np.abs(expected.reshape(4, 2) - got).max() < 0.05, st.marker_id
            assert np.allclose(by_id[st.marker_id]["corners_mm"], pts, atol=1e-3)
            checked += 1
    assert checked == 7  # 4 board corners + 3 token faces showing


def test_look_at_camera_sits_where_asked_and_looks_at_the_target():
    import cv2

    from synth.render import render_scene

    scene = simple_scene(dist=(0, 0, 0, 0, 0))
    _, truth = render_scene(scene)
    cam = truth["camera"]
    assert np.allclose(cam["position_mm"], scene["camera"]["pose"]["position_mm"], atol=1e-2)
    K = np.array(cam["camera_matrix"])
    px, _ = cv2.projectPoints(np.zeros((1, 1, 3)), np.array(cam["rvec"]), np.array(cam["tvec"]), K, np.zeros(5))
    assert np.allclose(px.ravel(), K[:2, 2], atol=1e-6)  # the look-at point is on the optical axis


def test_image_edges_lie_on_the_truth_edges():
    """Independent of any detector: the black square's outer edges cross 50 % grey where
    the truth projection (with lens distortion) puts them. An area-sampled image read
    back with bilinear interpolation cannot place a step better than ~0.1 px at every
    phase, so the bound is on the worst edge (0.2 px) and on the bias (mean)."""
    import cv2

    from synth.render import render_scene

    scene = simple_scene()
    image, truth = render_scene(scene)
    assert truth["supersample"] == 3
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float64)
    offsets = []
    for st in truth["stickers"]:
        if st["visible"]:
            offsets += edge_offsets(gray, st, truth["camera"])
    offsets = np.array(offsets)
    assert len(offsets) >= 96
    assert np.abs(offsets).max() < 0.2, np.abs(offsets).max()
    assert np.abs(offsets).mean() < 0.07
    assert abs(offsets.mean()) < 0.03


def test_detector_finds_every_visible_sticker_at_its_truth_corners():
    """A clean, well-resolved render (stickers 35-75 px): cv2.aruco with sub-pixel
    refinement lands within 0.4 px of the truth corners, 0.2 px on average (its own
    refinement, not the render, limits this: see test_image_edges_lie_on_the_truth_edges)."""
    from synth.render import render_scene

    image, truth = render_scene(simple_scene(size=(1280, 960)))
    found = detect(image, small=False, wide_refinement=True)
    errors = []
    visible = [st for st in truth["stickers"] if st["visible"]]
    assert len(visible) >= 7 and min(st["side_px"] for st in visible) > 34
    for st in visible:
        assert st["id"] in found, f"sticker {st['id']} ({st['side_px']:.1f} px) not detected"
        errors.append(np.linalg.norm(found[st["id"]] - np.array(st["corners_px"]), axis=1))
    errors = np.concatenate(errors)
    assert errors.max() < 0.4, errors.max()
    assert errors.mean() < 0.2, errors.mean()
    assert set(found) <= {s["id"] for s in truth["stickers"]}  # nothing invented


def line_of_sight(scene: dict, x: float, y: float, z: float, height: float) -> np.ndarray:
    """The point at `height` that hides (x, y, z) from a look-at camera."""
    cam = np.array(scene["camera"]["pose"]["position_mm"], dtype=np.float64)
    target = np.array([x, y, z])
    return cam + (target - cam) * (cam[2] - height) / (cam[2] - target[2])


def test_hand_over_a_token_is_marked_occluded_and_hides_it():
    from synth.render import render_scene

    scene = simple_scene()
    palm = line_of_sight(scene, 60.0, 20.0, 4.0, 120.0)  # over kang/large-2 as the camera sees it
    scene["occluders"] = [{"kind": "hand", "x_mm": palm[0], "y_mm": palm[1], "theta_deg": 200, "z_mm": 120,
                           "arm_length_mm": 600}]
    image, truth = render_scene(scene)
    by_id = {s["id"]: s for s in truth["stickers"]}
    hidden = by_id[41]  # kang/large-2 back face, under the palm
    assert hidden["occluded"] and not hidden["visible"] and hidden["visible_fraction"] < 0.05
    assert 41 not in detect(image)
    assert by_id[10]["visible"] and by_id[10]["visible_fraction"] == 1.0  # SW board corner, far from the hand
    # a marker partly covered reports the share left uncovered
    blob = line_of_sight(scene, -60.0, 215.0, 0.0, 50.0)
    scene["occluders"] = [{"kind": "ellipse", "centre_mm": [blob[0], blob[1]], "axes_mm": [40, 30], "z_mm": 50}]
    _, truth = render_scene(scene)
    part = {s["id"]: s for s in truth["stickers"]}[700]
    assert part["occluded"] and 0.05 < part["visible_fraction"] < 0.95


def test_stickers_outside_the_frame_are_not_called_visible():
    from synth.render import render_scene

    scene = simple_scene(pose={"position_mm": [0, 120, 300], "look_at_mm": [0, 120, 0]})
    _, truth = render_scene(scene)
    for st in truth["stickers"]:
        inside = all(0 <= x <= 639 and 0 <= y <= 479 for x, y in st["corners_px"])
        if st["visible"]:
            assert inside
    assert any(not st["in_image"] for st in truth["stickers"])


def test_kang_token_height_depends_on_the_board():
    from synth.render import render_scene

    _, truth = render_scene(simple_scene())
    z = {p["name"]: p["z_mm"] for p in truth["pieces"]}
    assert z["kang/small-1"] == 4.0 and z["kang/large-2"] == 4.0  # on the board
    assert z["kang/medium-3"] == 2.0  # in A's start zone
    assert z["kang/board"] == 2.0


def test_render_is_deterministic():
    from synth.render import render_scene

    scene = simple_scene(clean=False)
    a, ta = render_scene(scene)
    b, tb = render_scene(scene)
    assert np.array_equal(a, b) and ta == tb
    assert a.shape == (480, 640, 3) and a.dtype == np.uint8
