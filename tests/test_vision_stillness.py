"""vision/stillness.py: a sticker whose pixels are unchanged is handed on; one that moved a tenth of a
pixel or more is measured again."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from referee.catalog import default_catalog
from tests.bench import synth
from vision import detect, roi
from vision.stillness import StillStickers

CAT = default_catalog()


@pytest.fixture(scope="module")
def frames():
    """One table rendered twice with fresh sensor noise and JPEG (a table at rest), as grey."""
    return synth.still_tornado_table(5, blur_px=0.8, jpeg_quality=80, catalog=CAT)


def shifted(gray: np.ndarray, dx: float, dy: float = 0.0, turn_deg: float = 0.0) -> np.ndarray:
    """The picture moved by (dx, dy) px and turned about its centre (bilinear)."""
    h, w = gray.shape
    m = cv2.getRotationMatrix2D((w / 2, h / 2), turn_deg, 1.0)
    m[:, 2] += (dx, dy)
    return cv2.warpAffine(gray, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def test_still_stickers_pass_and_moved_ones_do_not(frames):
    first, second = frames
    dets = detect.detect_all(first, CAT).detections
    assert len(dets) > 15
    still = StillStickers()
    still.remember(first, dets)
    assert all(still.unchanged(second, d.marker_id) is d for d in dets)  # fresh noise and JPEG: the same
    # the boundary: a tenth of a pixel may pass, from 0.15 px on nothing does, whichever way it moved
    for moved in (shifted(second, 0.15), shifted(second, 0.0, -0.15), shifted(second, 0.3, 0.3),
                  shifted(second, 2.0), shifted(second, 0.0, turn_deg=0.05)):
        passed = [d.marker_id for d in dets if still.unchanged(moved, d.marker_id) is not None]
        if moved is not None and passed:  # only a turn moves stickers near its centre by less than 0.1 px
            centre = np.array(first.shape[::-1]) / 2
            for d in dets:
                if d.marker_id in passed:
                    r = np.linalg.norm(d.corners - centre, axis=1).max()
                    assert r * np.radians(0.05) < 0.15, (d.marker_id, r)
    assert not [d for d in dets if still.unchanged(shifted(second, 0.15), d.marker_id) is not None]


def test_a_hand_over_a_sticker_or_a_shadow_is_a_change(frames):
    first, second = frames
    dets = detect.detect_all(first, CAT).detections
    still = StillStickers()
    still.remember(first, dets)
    d = dets[0]
    x0, y0 = np.floor(d.corners.min(axis=0)).astype(int)
    covered = second.copy()
    covered[y0:y0 + 4, x0:x0 + 4] = 180  # a fingertip on one corner
    assert still.unchanged(covered, d.marker_id) is None
    darker = (second.astype(np.float32) * 0.9).astype(np.uint8)  # a shadow: 10 % less light
    assert all(still.unchanged(darker, x.marker_id) is None for x in dets)
    # the detector saw it elsewhere: another sticker of that id, not this one
    assert still.unchanged(second, d.marker_id, near=d.corners + 3.0) is None


def test_a_slow_drift_adds_up_against_the_kept_pixels(frames):
    """Moved 0.06 px a frame: each frame alone passes against the last, but the kept pixels are those
    it was measured on, so within a few frames it is measured again."""
    first, second = frames
    dets = detect.detect_all(first, CAT).detections
    still = StillStickers()
    still.remember(first, dets)
    passing = [sum(still.unchanged(shifted(second, 0.06 * k), d.marker_id) is not None for d in dets)
               for k in range(1, 5)]
    assert passing[-1] == 0 and passing == sorted(passing, reverse=True)


@pytest.mark.parametrize("mode", ["follow", "whole"])
def test_a_stream_hands_still_stickers_on_and_reads_moved_ones_where_they_are(frames, mode):
    first, second = frames
    stream = roi.RoiDetector(CAT, settings=roi.RoiSettings(mode=mode, hold_px=0.0))
    one = stream.detect(first)
    two = stream.detect(second)
    before = {d.marker_id: d for d in one.detections}
    handed_on = [d for d in two.detections if d.source == before.get(d.marker_id, d).source == "full" and d.marker_id in before]
    same = [d for d in handed_on if np.array_equal(d.corners, before[d.marker_id].corners)]
    # most pass (a sticker whose box the JPEG changed more is measured again) and each one that did was reused
    assert len(handed_on) > 15 and len(same) >= 0.8 * len(handed_on) and stream._still.reused >= len(same)
    moved = np.ascontiguousarray(shifted(second, 0.2))
    got = stream.detect(moved)
    fresh = detect.detect_all(moved, CAT)
    assert [d.marker_id for d in got.detections] == [d.marker_id for d in fresh.detections]
    tol = 1e-9 if mode == "whole" else 0.08  # follow refits from the last corners (a little of the noise)
    for g, w in zip(got.detections, fresh.detections):
        assert np.abs(g.corners - w.corners).max() < (tol if w.source == "full" else 0.25), g.marker_id


def test_whole_frames_keep_a_sticker_no_pass_read_while_its_pixels_are_unchanged(frames, monkeypatch):
    """Mode whole: a sticker given out last frame that neither pass reads now (a small sticker at the
    edge of readability) is given out again while its pixels are as they were, as mode follow follows
    it; covered by a fingertip, it is gone from the frame."""
    first, second = frames
    stream = roi.RoiDetector(CAT, settings=roi.RoiSettings(mode="whole"))
    one = stream.detect(first)
    lost = one.detections[3]
    whole = detect.detect_all

    def missing_it(*args, **kwargs):
        got = whole(*args, **kwargs)
        return detect.DetectionResult(tuple(d for d in got.detections if d.marker_id != lost.marker_id),
                                      got.unknown_ids, got.second_pass_found)

    monkeypatch.setattr(detect, "detect_all", missing_it)
    two = stream.detect(second)
    assert any(d is lost for d in two.detections)
    covered = second.copy()
    x0, y0 = np.floor(lost.corners.min(axis=0)).astype(int)
    covered[y0:y0 + 5, x0:x0 + 5] = 200
    assert lost.marker_id not in {d.marker_id for d in stream.detect(covered).detections}
