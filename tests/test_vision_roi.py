"""vision/roi.py: following stickers between whole-frame passes gives the whole-frame answer."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from referee.catalog import default_catalog
from tests.bench import synth
from vision import detect, roi

CAT = default_catalog()


@pytest.fixture(scope="module")
def two_frames():
    """One table rendered twice with fresh sensor noise (a table at rest)."""
    return synth.still_tornado_table(11, blur_px=0.7, catalog=CAT)


# follow refits from last frame's corners (two rounds where a whole frame's second pass fits one),
# so its corners differ from a whole frame's by a little of the noise; regions runs the detector
@pytest.mark.parametrize("mode,tol,tol_second", [("follow", 0.03, 0.25), ("regions", 0.001, 0.001)])
def test_a_table_at_rest_is_followed_to_the_whole_frame_answer(two_frames, mode, tol, tol_second):
    first, second = two_frames
    follower = roi.RoiDetector(CAT, settings=roi.RoiSettings(mode=mode, hold_px=0.0, reuse_still=False))  # the follow itself
    follower.detect(first)
    got = follower.detect(second)
    assert follower.full_passes == 1 and follower.roi_passes == 1
    whole = detect.detect_all(second, CAT)
    assert [d.marker_id for d in got.detections] == [d.marker_id for d in whole.detections]
    assert len(got.detections) > 15
    for g, w in zip(got.detections, whole.detections):
        assert g.source == w.source
        assert np.abs(g.corners - w.corners).max() < (tol if w.source == "full" else tol_second), g.marker_id
        assert g.edge_rms_px > 0 and g.blur_px > 0
        # the per-edge blurs feed the motion streak of the sigma model: the live page's followed
        # stickers carry them as a whole-frame pass does (else the page's sigma loses that term)
        if "edge_blur_px" in w.extra:
            assert np.allclose(g.extra["edge_blur_px"], w.extra["edge_blur_px"], rtol=0.1, atol=0.05), g.marker_id


def test_at_rest_stickers_keep_their_corners_and_a_moved_one_is_given_where_it_is(two_frames):
    """hold_px: a followed sticker within it of where it was given out keeps those corners (the same
    result, so the table's fit is not done again); one moved further is given out where it is now."""
    first, second = two_frames
    follower = roi.RoiDetector(CAT)
    one = follower.detect(first)
    two = follower.detect(second)
    assert two is one and follower.roi_passes == 1  # fresh noise moves a corner ~0.05 px: all held
    whole = detect.detect_all(second, CAT)
    for g, w in zip(two.detections, whole.detections):
        assert np.abs(g.corners - w.corners).max() < follower.settings.hold_px + 0.25
    shifted = np.ascontiguousarray(np.roll(second, 1, axis=1))  # every sticker 1 px right: beyond hold_px
    follower._reference = follower._shrink(shifted)  # the motion check would catch it: test the follow itself
    three = follower.detect(shifted)
    assert follower.full_passes == 1 and three is not one
    for g, w in zip(three.detections, one.detections):
        assert np.abs(g.corners - w.corners - (1.0, 0.0)).max() < 0.3, g.marker_id


def test_a_moved_sticker_forces_a_whole_frame_pass(two_frames):
    first, second = two_frames
    follower = roi.RoiDetector(CAT)
    follower.detect(first)
    shifted = np.ascontiguousarray(np.roll(second, 4, axis=1))  # every sticker 4 px right
    follower._reference = follower._shrink(shifted)  # the motion check would catch it: test the follow itself
    follower.detect(shifted)
    assert follower.full_passes == 2


def _reference_reads_as(gray_f, corners, marker_id):
    """roi.reads_as one sticker at a time, as it was before the batched read."""
    n = roi._bits(marker_id, detect.DICTIONARY).shape[0]
    H = cv2.getPerspectiveTransform(np.array([[0, 0], [n, 0], [n, n], [0, n]], np.float32),
                                    corners.astype(np.float32))
    pts = cv2.perspectiveTransform(roi._read_points(n).reshape(-1, 1, 2), H).reshape(-1, 2)
    hh, ww = gray_f.shape
    if pts[:, 0].min() < 0 or pts[:, 1].min() < 0 or pts[:, 0].max() > ww - 1 or pts[:, 1].max() > hh - 1:
        return False
    vals = cv2.remap(gray_f, pts[:, :1].T.copy(), pts[:, 1:].T.copy(), cv2.INTER_LINEAR).ravel()
    cells, ring = vals[:n * n].reshape(n, n), vals[n * n:]
    border = np.concatenate([cells[0], cells[-1], cells[1:-1, 0], cells[1:-1, -1]])
    black, white = float(np.median(border)), float(np.median(ring))
    if white - black < 25:
        return False
    thr = (black + white) / 2.0
    if int((border > thr).sum()) > 1:
        return False
    want = roi._bits(marker_id, detect.DICTIONARY)
    return int(((cells[1:-1, 1:-1] > thr) != want[1:-1, 1:-1]).sum()) <= roi.MAX_BIT_ERRORS


def test_batched_bit_read_matches_the_one_sticker_read(two_frames):
    gray_f = two_frames[1].astype(np.float32)
    found = detect.detect_all(gray_f.astype(np.uint8), CAT).detections
    corners = [d.corners for d in found]
    ids = [d.marker_id for d in found]
    # right ids, wrong ids, a quarter turn, half-size squares, and squares hanging off the image
    corners += [d.corners for d in found] + [np.roll(d.corners, 1, axis=0) for d in found]
    ids += [i + 1 for i in ids] + ids[:len(found)]
    corners += [d.centre + (d.corners - d.centre) * 0.5 for d in found] + [d.corners - d.centre + 2 for d in found]
    ids += ids[:len(found)] * 2
    got = roi.reads_as_many(gray_f, np.array(corners), ids)
    want = np.array([_reference_reads_as(gray_f, c, i) for c, i in zip(corners, ids)])
    assert (got == want).all()
    assert want[:len(found)].all() and not want[len(found):].any()
    assert roi.reads_as(gray_f, found[0].corners, found[0].marker_id)


def sticker_put_down() -> tuple[int, list[np.ndarray]]:
    """A Tornado table without and with one sticker (its id): the same sensor noise in both frames,
    so only the sticker put down changes pixels."""
    pieces = synth.tornado_scene(np.random.default_rng(11), catalog=CAT)
    cam = synth.look_at_camera(target=(400, 150, 0), distance_mm=1050, elevation_deg=55, hfov_deg=65)
    stickers = synth.scene_stickers(CAT, pieces)
    new_id = max(mid for mid, _ in stickers)
    return new_id, [detect.to_gray(synth.render(cam, s, seed=4, blur_px=0.7, jpeg_quality=None))
                    for s in ([s for s in stickers if s[0] != new_id], stickers)]


@pytest.mark.parametrize("mode", ["follow", "regions"])
def test_a_sticker_put_down_is_found_by_searching_only_what_changed(mode):
    new_id, frames = sticker_put_down()
    follower = roi.RoiDetector(CAT, settings=roi.RoiSettings(mode=mode))
    assert new_id not in {d.marker_id for d in follower.detect(frames[0]).detections}
    got = follower.detect(frames[1])
    assert follower.full_passes == 1 and follower.changed_passes == 1
    whole = detect.detect_all(frames[1], CAT)
    assert [d.marker_id for d in got.detections] == [d.marker_id for d in whole.detections]
    assert new_id in {d.marker_id for d in got.detections}
    for g, w in zip(got.detections, whole.detections):
        searched = mode == "regions" or g.marker_id == new_id
        assert np.abs(g.corners - w.corners).max() < (0.001 if searched else 0.03 if w.source == "full" else 0.25)
    settle = follower.settings.settle_frames
    for _ in range(settle):  # nothing changed since: where it changed is searched again a few frames
        assert [d.marker_id for d in follower.detect(frames[1]).detections] == [d.marker_id for d in got.detections]
    assert follower.full_passes == 1 and follower.changed_passes == 1 + settle
    follower.detect(frames[1])  # then followed (or found in regions) without a search
    assert follower.full_passes == 1 and follower.changed_passes == 1 + settle and follower.roi_passes == 2 + settle


def test_a_large_change_is_searched_in_the_whole_frame(two_frames):
    first, second = two_frames
    follower = roi.RoiDetector(CAT)
    follower.detect(first)
    follower.detect(np.ascontiguousarray(255 - second))  # every cell changed
    assert follower.full_passes == 2 and follower.changed_passes == 0


def test_a_sticker_lost_where_nothing_changed_forces_a_whole_frame_pass():
    new_id, frames = sticker_put_down()
    follower = roi.RoiDetector(CAT, settings=roi.RoiSettings(mode="regions"))
    first = follower.detect(frames[0])
    # a sticker the crops cannot find again (its place shows none) although nothing changed there
    far = max(first.detections, key=lambda d: np.linalg.norm(d.centre - first.detections[-1].centre))
    ghost = detect.Detection(marker_id=far.marker_id + 1, corners=far.corners + (0, 60), side_px=far.side_px)
    follower._last = detect.DetectionResult(first.detections + (ghost,), first.unknown_ids)
    follower.detect(frames[1])
    assert follower.full_passes == 2 and follower.changed_passes == 0


def test_whole_frames_hold_still_stickers_and_give_a_moved_one_where_it_is(two_frames):
    """mode "whole": the detector on every frame, each sticker within hold_px of where it was last
    given out kept as it was (the last result itself when all held); moved beyond it, given out anew."""
    first, second = two_frames
    whole = roi.RoiDetector(CAT, settings=roi.RoiSettings(mode="whole"))
    one = whole.detect(first)
    assert whole.detect(second) is one and whole.full_passes == 2  # fresh noise: every corner within 0.25 px
    shifted = np.ascontiguousarray(np.roll(second, 1, axis=1))  # every sticker 1 px right: beyond hold_px
    three = whole.detect(shifted)
    fresh = detect.detect_all(shifted, CAT)
    assert three is not one and [d.marker_id for d in three.detections] == [d.marker_id for d in fresh.detections]
    for g, w in zip(three.detections, fresh.detections):
        assert np.abs(g.corners - w.corners).max() < 1e-9, g.marker_id  # this frame's own reading
    unheld = roi.RoiDetector(CAT, settings=roi.RoiSettings(mode="whole", hold_px=0.0, reuse_still=False))
    unheld.detect(first)
    again = unheld.detect(second)
    assert again is not one and all(np.abs(g.corners - w.corners).max() < 1e-9
                                    for g, w in zip(again.detections, detect.detect_all(second, CAT).detections))


@pytest.mark.parametrize("mode", ["follow", "regions", "whole"])
def test_a_stream_checks_for_busy_pictures_wherever_the_frame_changed(two_frames, mode, monkeypatch):
    """The busy-picture guard is skipped on a frame unchanged since one passed it, never on a frame
    that changed: a chessboard put beside the table is refused as a lone photo of it is, and again
    on every frame it stays."""
    from tests.test_fuzz_classes import checkerboard
    from vision.image_guard import TooBusyError, check_square_shapes

    first, second = two_frames
    board = checkerboard(first.shape[1], first.shape[0], 12)
    busy = np.where(np.arange(first.shape[1])[None, :] < first.shape[1] // 2, board, first).astype(np.uint8)
    with pytest.raises(TooBusyError):
        detect.detect_all(busy, CAT)
    checked = []
    monkeypatch.setattr(detect, "check_square_shapes", lambda g: checked.append(g.shape) or
                        check_square_shapes(g))
    follower = roi.RoiDetector(CAT, settings=roi.RoiSettings(mode=mode, full_every=1))
    follower.detect(first)
    follower.detect(second)  # unchanged but for noise: no guard (a whole-frame pass in each mode)
    follower.detect(first)
    assert [s for s in checked if s == first.shape] == [first.shape]  # crops (regions) are checked each
    for _ in range(2):
        with pytest.raises(TooBusyError):
            follower.detect(busy)
    assert len(follower.detect(second).detections) > 15  # the board taken away: read again


def test_a_crop_searched_again_while_the_table_settles_is_not_checked_again(two_frames, monkeypatch):
    """Mode follow: a change is searched in a crop, its guard run once; the quiet frames after search
    the crop again (settle_frames) without the guard; a chessboard put down in a part of the frame
    is refused in its crop, on every frame it stays."""
    from tests.test_fuzz_classes import checkerboard
    from vision.image_guard import TooBusyError, check_square_shapes

    first, second = two_frames
    checked = []
    monkeypatch.setattr(detect, "check_square_shapes", lambda g: checked.append(g.shape) or check_square_shapes(g))
    follower = roi.RoiDetector(CAT, settings=roi.RoiSettings(mode="follow", settle_frames=3))
    follower.detect(first)
    moved = second.copy()
    moved[900:960, 1700:1760] = 255 - moved[900:960, 1700:1760]  # something changed in one corner
    follower.detect(moved)
    assert follower.changed_passes == 1 and len(checked) == 2  # the whole first frame, then the crop
    for _ in range(3):
        follower.detect(moved)  # settling: the crop searched again, not checked again
    assert follower.changed_passes == 4 and len(checked) == 2
    h, w = first.shape
    busy = moved.copy()
    busy[:600, :1200] = checkerboard(1200, 600, 11)  # 2,863 squares: over the limit, in under 0.8 of the frame
    for _ in range(2):
        with pytest.raises(TooBusyError):
            follower.detect(busy)
        assert checked[-1] != first.shape  # refused in the crop around it
        assert checked[-1] != first.shape  # refused in the crop around it


def test_busy_parts_that_add_up_over_frames_are_refused_together(two_frames, monkeypatch):
    """Mode whole: a part that changed is checked alone, the frame's outlines bounded by the last whole
    check plus every part checked since; two boards put down one after the other, each under the
    limit alone, are refused together once the bound passes the limit (a whole check then)."""
    from tests.test_fuzz_classes import checkerboard
    from vision.image_guard import TooBusyError, check_square_shapes, square_shapes

    first, second = two_frames
    checked = []
    monkeypatch.setattr(detect, "check_square_shapes", lambda g: checked.append(g.shape) or check_square_shapes(g))
    stream = roi.RoiDetector(CAT, settings=roi.RoiSettings(mode="whole"))
    stream.detect(first)
    one_board = second.copy()
    one_board[:500, :800] = checkerboard(800, 500, 12)
    both = one_board.copy()
    both[580:, 1000:] = checkerboard(920, 500, 11)
    assert square_shapes(one_board) < 2500 < square_shapes(both)
    stream.detect(one_board)  # under the limit: read, its part checked alone
    assert checked[-1] != first.shape and len(checked) == 2
    with pytest.raises(TooBusyError):
        stream.detect(both)
    assert checked[-1] == first.shape  # the bound passed the limit: the whole frame checked
