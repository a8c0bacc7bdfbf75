"""Sticker detection: small markers found, corners sub-pixel, unknown ids kept apart."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from referee.catalog import default_catalog
from tests.bench import synth
from vision import detect

CAT = default_catalog()


@pytest.fixture(scope="module")
def tornado_picture():
    rng = np.random.default_rng(21)
    pieces = synth.tornado_scene(rng, catalog=CAT)
    cam = synth.look_at_camera(target=(400, 150, 0), distance_mm=1050, elevation_deg=55, hfov_deg=65)
    stickers = synth.scene_stickers(CAT, pieces)
    stickers.append((777, synth.sticker_world_corners(CAT, synth.SynthPiece("tornado/boat-1", 200, -200, 10,
                                                                             ("main",)), 200)))  # not in catalog
    img = synth.render(cam, stickers, seed=3, blur_px=0.7)
    truth = {mid: synth.project(cam, c) for mid, c in stickers}
    return img, truth


def test_detector_parameters_are_opencv_parameters():
    p = detect.detector_parameters()
    assert isinstance(p, cv2.aruco.DetectorParameters)
    assert p.cornerRefinementMethod == cv2.aruco.CORNER_REFINE_SUBPIX
    assert p.minMarkerPerimeterRate < cv2.aruco.DetectorParameters().minMarkerPerimeterRate
    assert detect.detector_parameters(refine="apriltag").cornerRefinementMethod == cv2.aruco.CORNER_REFINE_APRILTAG


def test_small_stickers_found_with_subpixel_corners(tornado_picture):
    img, truth = tornado_picture
    result = detect.detect_all(img, CAT)
    found = {d.marker_id: d for d in result.detections}
    assert 777 in result.unknown_ids and 777 not in found
    sides = {mid: float(np.mean(np.linalg.norm(c - np.roll(c, -1, axis=0), axis=1))) for mid, c in truth.items()}
    h, w = img.shape[:2]
    inside = {mid for mid, c in truth.items() if c.min() > 5 and c[:, 0].max() < w - 5 and c[:, 1].max() < h - 5}
    wanted = [mid for mid in inside if mid != 777 and sides[mid] >= 16]
    assert len(wanted) > 15
    assert set(wanted) <= set(found), sorted((m, round(sides[m], 1)) for m in set(wanted) - set(found))
    errs = np.concatenate([np.linalg.norm(found[m].corners - truth[m], axis=1) for m in found])
    assert np.median(errs) < 0.2 and errs.max() < 1.0
    for d in result.detections:
        assert d.corners.shape == (4, 2) and d.side_px > 10


def test_refined_corners_beat_opencv_defaults(tornado_picture):
    img, truth = tornado_picture
    d0 = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_5X5_1000))
    corners, ids, _ = d0.detectMarkers(img)
    base = np.concatenate([np.linalg.norm(c.reshape(4, 2) - truth[int(i)], axis=1)
                           for c, i in zip(corners, ids.ravel()) if int(i) in truth])
    ours = detect.detect_markers(img, CAT)
    mine = np.concatenate([np.linalg.norm(d.corners - truth[d.marker_id], axis=1) for d in ours])
    assert len(ours) > len(ids.ravel())
    assert np.median(mine) < 0.5 * np.median(base)


def test_edge_refinement_recovers_a_shifted_corner_guess():
    cam = synth.look_at_camera(image_size=(320, 240), target=(0, 0, 0), distance_mm=300, elevation_deg=70,
                               hfov_deg=50, dist=(0, 0, 0, 0, 0))
    h = 10.0
    corners3 = np.array([[-h, h, 0], [h, h, 0], [h, -h, 0], [-h, -h, 0]])
    img = synth.render(cam, [(205, corners3)], blur_px=0.8, noise=1.0, jpeg_quality=None, supersample=6)
    truth = synth.project(cam, corners3)
    guess = truth + np.array([[0.6, -0.4], [-0.5, 0.5], [0.4, 0.6], [-0.6, -0.3]])
    gray = detect.to_gray(img).astype(np.float32)
    refined, rms = detect.refine_corners_by_edges(gray, guess)
    from_truth, _ = detect.refine_corners_by_edges(gray, truth)
    assert rms > 0
    assert np.abs(refined - from_truth).max() < 0.05  # converges from a guess 0.7 px off
    assert np.abs(refined - truth).max() < 0.25  # a narrow quiet zone biases a blurred edge slightly inward


def test_grey_input_and_no_catalog():
    img = np.full((200, 200), 255, np.uint8)
    marker = cv2.aruco.generateImageMarker(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_5X5_1000), 654, 70)
    img[60:130, 60:130] = marker
    dets = detect.detect_markers(img, None)
    assert [d.marker_id for d in dets] == [654]
    assert np.allclose(dets[0].corners[0], (59.5, 59.5), atol=0.3)


@pytest.mark.parametrize("turn", [0, 1, 2, 3])
def test_second_pass_reads_give_corners_in_marker_order(turn):
    """Hard and soft reads of a candidate whose corners start at any of the 4 corners."""
    cam = synth.look_at_camera(image_size=(320, 240), target=(0, 0, 0), distance_mm=300, elevation_deg=70,
                               hfov_deg=50, dist=(0, 0, 0, 0, 0))
    h = 8.0
    corners3 = np.array([[-h, h, 0], [h, h, 0], [h, -h, 0], [-h, -h, 0]])
    img = synth.render(cam, [(205, corners3)], blur_px=0.8, noise=0, jpeg_quality=None)
    truth = synth.project(cam, corners3)
    gray = detect.to_gray(img).astype(np.float32)
    allowed = tuple(sorted(CAT.known_ids()))
    dic = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_5X5_1000)

    class NoHardRead:  # forces the soft (template) read
        markerSize = 5

        def identify(self, *args):
            return False, 0, 0

    for d in (dic, NoHardRead()):
        marker_id, corners, rms, _ = detect._decode_quad(gray, np.roll(truth, turn, axis=0), d, detect.DICTIONARY,
                                                      allowed)
        assert marker_id == 205 and rms > 0
        assert np.abs(corners - truth).max() < 0.5


def test_identify_by_table_is_opencvs_identify():
    d = cv2.aruco.getPredefinedDictionary(detect.DICTIONARY)
    rng = np.random.default_rng(4)
    for mid in [0, 1, 200, 777, 999] + rng.integers(0, 1000, 5).tolist():
        bits = (d.generateImageMarker(int(mid), 7, borderBits=1)[1:-1, 1:-1] > 127).astype(np.uint8)
        for turn in range(4):
            b = np.rot90(bits, turn).copy()
            ok, idx, rot = d.identify(b, 0.0)
            assert ok and detect._identify(d, detect.DICTIONARY, b) == (True, int(idx), int(rot))
            b[2, 2] ^= 1  # one bit off: no exact match for either
            assert d.identify(b, 0.0)[0] == detect._identify(d, detect.DICTIONARY, b)[0]
    for _ in range(10):
        b = (rng.random((5, 5)) > 0.5).astype(np.uint8)
        ok, idx, rot = d.identify(b, 0.0)
        assert detect._identify(d, detect.DICTIONARY, b) == ((True, int(idx), int(rot)) if ok else (False, -1, 0))


def test_a_frames_grey_is_converted_once_and_never_stale():
    rng = np.random.default_rng(4)
    frame = rng.integers(0, 256, (120, 160, 3), dtype=np.uint8)
    grey = detect.to_gray(frame)
    assert np.array_equal(grey, cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY))
    assert detect.to_gray(frame) is grey  # the same frame again: the same grey, not converted anew
    with pytest.raises(ValueError):
        grey[0, 0] = 1  # shared between callers: nobody may change it under another
    twin = frame.copy()  # another array with the same pixels: converted on its own
    assert detect.to_gray(twin) is not grey and np.array_equal(detect.to_gray(twin), grey)
    frame[0, 0] = 255 - frame[0, 0]  # written to in place, at a pixel of the sparse check
    fresh = detect.to_gray(frame)
    assert fresh is not grey and np.array_equal(fresh, cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY))


def _rect(x0: float, y0: float, w: float, h: float) -> np.ndarray:
    return np.array([[x0, y0], [x0 + w, y0], [x0 + w, y0 + h], [x0, y0 + h]], dtype=np.float64)


def test_the_second_look_re_segments_only_quads_shaped_like_a_square_seen_obliquely():
    # a 25 x 10 rectangle: sides 2.5x apart, area 250 against a mean side of 17.5 (0.82): the last kept;
    # 25.5 x 10 is over 2.5x; a rhombus of side 20 at 30 degrees has area 200 against 400 (0.5): dropped
    rhombus = np.array([[0, 0], [20, 0], [20 + 20 * np.cos(np.pi / 6), 10], [20 * np.cos(np.pi / 6), 10]])
    quads = np.stack([_rect(0, 0, 20, 20), _rect(0, 0, 25, 10), _rect(0, 0, 25.5, 10), rhombus])
    assert detect._about_square(quads).tolist() == [True, True, False, False]


def test_the_second_look_needs_black_and_white_in_a_candidates_box():
    gray = np.full((60, 60), 100, np.uint8)
    gray[10, 10] = 100 + detect.SECOND_PASS_MIN_RANGE - 1  # one box spans 49 levels
    gray[40, 40] = 100 + detect.SECOND_PASS_MIN_RANGE  # the other 50
    boxes = np.stack([_rect(8.2, 8.2, 6, 6), _rect(38.2, 38.2, 6, 6)])
    assert detect._black_and_white(gray, boxes).tolist() == [False, True]


def test_a_candidate_beside_a_read_sticker_is_apart_only_when_their_boxes_do_not_meet():
    read = _rect(100, 100, 20, 20)[None]
    # pixel boxes: the candidate's corners go out to whole pixels (floor, ceil), the read one's stay
    quads = np.stack([_rect(120.5, 100, 10, 10),   # box from x 120: touches x = 120, no overlap
                      _rect(119.5, 100, 10, 10),   # box from x 119: overlaps
                      _rect(60, 60, 70, 70)])      # holds the read sticker
    assert detect._boxes_overlap(quads, read).tolist() == [False, True, True]
