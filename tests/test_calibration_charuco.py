"""ChArUco calibration: recovery of known intrinsics from rendered views, refusal of
degenerate view sets, live-capture view selection, and bad input through the CLI."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from calibration import charuco, synthetic
from calibration.camera import CameraModel
from webui.cli import main

CAM = synthetic.DEFAULT_CAMERA


def _write_views(folder, poses, seed=0, camera=CAM):
    folder.mkdir(parents=True, exist_ok=True)
    for i, (rvec, tvec) in enumerate(poses):
        img = synthetic.render_view(rvec, tvec, camera, rng=np.random.default_rng(seed + i))
        cv2.imwrite(str(folder / f"view-{i:02d}.png"), img)
    return folder


@pytest.fixture(scope="module")
def varied_folder(tmp_path_factory):
    return _write_views(tmp_path_factory.mktemp("views") / "varied", synthetic.varied_poses(10))


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("refcam: error: ") and "Traceback" not in err, err
    return err


def test_renderer_matches_project_points():
    """The synthetic views put the corners where cv2.projectPoints says (distortion included)."""
    board = charuco.charuco_board()
    for i, (rvec, tvec) in enumerate(synthetic.varied_poses(3, np.random.default_rng(7))):
        img = synthetic.render_view(rvec, tvec, CAM, rng=np.random.default_rng(i))
        view = charuco.detect_view(img, board)
        assert view is not None and view.n_corners == 24
        proj, _ = cv2.projectPoints(view.object_points, rvec, tvec, CAM.K, CAM.dist_array)
        err = np.linalg.norm(proj.reshape(-1, 2) - view.corners, axis=1)
        assert err.mean() < 0.25 and err.max() < 0.6


def test_recovers_known_intrinsics(varied_folder, tmp_path, capsys):
    out = tmp_path / "camera.json"
    assert main(["calibrate", "--images", str(varied_folder), "--out", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    cam = CameraModel.load(out)
    K = cam.K
    assert cam.image_size == CAM.image_size
    assert abs(K[0, 0] / CAM.fx - 1) < 0.01
    assert abs(K[1, 1] / CAM.fy - 1) < 0.01
    assert abs(K[0, 2] - CAM.cx) < 5 and abs(K[1, 2] - CAM.cy) < 5
    assert cam.rms_px == pytest.approx(report["rms_px"], abs=1e-3) and cam.rms_px < 0.5
    assert report["views_used"] == 10 and cam.extra["views_used"] == 10
    assert len(cam.extra["per_view_rms"]) == 10
    assert cam.extra["intrinsics_std"]["fx"] < 0.005 * CAM.fx
    # the distortion model reproduces the true one where the board was seen (centre to 0.4 of the half-diagonal)
    pts = np.array([[CAM.cx + dx, CAM.cy + dy] for dx in (-200, 0, 200) for dy in (-150, 0, 150)], np.float64)
    und_true = cv2.undistortPoints(pts.reshape(-1, 1, 2), CAM.K, CAM.dist_array, P=CAM.K)
    und_est = cv2.undistortPoints(pts.reshape(-1, 1, 2), K, cam.dist, P=CAM.K)
    assert np.abs(und_true - und_est).max() < 2.0


def test_human_readable_report(varied_folder, tmp_path, capsys):
    assert main(["calibrate", "--images", str(varied_folder), "--out", str(tmp_path / "c.json")]) == 0
    text = capsys.readouterr().out
    assert text.startswith("Calibrated: ") and "is good to use" in text.splitlines()[0]  # the verdict first
    assert "calibrated from 10 views" in text and "RMS reprojection error" in text


def test_refuses_five_views(varied_folder, tmp_path, capsys):
    five = tmp_path / "five"
    five.mkdir()
    for p in sorted(varied_folder.iterdir())[:5]:
        (five / p.name).write_bytes(p.read_bytes())
    cv2.imwrite(str(five / "blank.png"), np.full((CAM.image_size[1], CAM.image_size[0]), 120, np.uint8))
    assert main(["calibrate", "--images", str(five), "--out", str(tmp_path / "c.json")]) == 2
    err = _one_line_error(capsys)
    assert "only 5 usable views" in err and "blank.png" in err
    assert not (tmp_path / "c.json").exists()


def test_refuses_identical_fronto_parallel_views(tmp_path, capsys):
    folder = _write_views(tmp_path / "same", [synthetic.fronto_parallel_pose()] * 8)
    assert main(["calibrate", "--images", str(folder), "--out", str(tmp_path / "c.json")]) == 2
    assert "nearly one angle" in _one_line_error(capsys)


def test_refuses_fronto_parallel_views_at_different_places(tmp_path, capsys):
    poses = [synthetic.pose_looking_at(420 + 25 * i, 2.0 * (i % 2), -2.0 * (i % 3 == 0), 10 * i,
                                       (-60 + 17 * i, 30 - 9 * i)) for i in range(8)]
    folder = _write_views(tmp_path / "flat", poses)
    assert main(["calibrate", "--images", str(folder), "--out", str(tmp_path / "c.json")]) == 2
    assert "nearly one angle" in _one_line_error(capsys)


def test_refuses_views_all_tilted_about_one_image_axis(tmp_path, capsys):
    """Planes that all contain the camera's x direction leave fx unconstrained (Sturm and Maybank)."""
    poses = [synthetic.pose_looking_at(480 + 20 * i, 15 + 5 * (i % 4), 0, 30 * i, (-50 + 20 * i, 0)) for i in range(8)]
    folder = _write_views(tmp_path / "one-axis", poses)
    assert main(["calibrate", "--images", str(folder), "--out", str(tmp_path / "c.json")]) == 2
    err = _one_line_error(capsys)
    assert "nearly one angle" in err or "do not pin down" in err


def test_refuses_when_board_is_nowhere(tmp_path, capsys):
    folder = tmp_path / "none"
    folder.mkdir()
    rng = np.random.default_rng(3)
    for i in range(3):
        cv2.imwrite(str(folder / f"{i}.jpg"), rng.integers(0, 255, (240, 320), dtype=np.uint8))
    assert main(["calibrate", "--images", str(folder), "--out", str(tmp_path / "c.json")]) == 2
    assert "not found in any of the 3 images" in _one_line_error(capsys)


def test_refuses_images_of_different_sizes(varied_folder, tmp_path, capsys):
    folder = tmp_path / "mixed"
    folder.mkdir()
    for p in sorted(varied_folder.iterdir())[:6]:
        (folder / p.name).write_bytes(p.read_bytes())
    cv2.imwrite(str(folder / "zz-small.png"), np.full((480, 640), 120, np.uint8))
    assert main(["calibrate", "--images", str(folder), "--out", str(tmp_path / "c.json")]) == 2
    err = _one_line_error(capsys)
    assert "differ in size" in err and "zz-small.png" in err and "640x480" in err


def test_refuses_empty_and_missing_folders(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["calibrate", "--images", str(tmp_path / "empty"), "--out", str(tmp_path / "c.json")]) == 2
    assert "no images" in _one_line_error(capsys)
    assert main(["calibrate", "--images", str(tmp_path / "nope"), "--out", str(tmp_path / "c.json")]) == 2
    assert "does not exist" in _one_line_error(capsys)


def test_refuses_unreadable_image(tmp_path, capsys):
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "broken.jpg").write_bytes(b"not a jpeg")
    assert main(["calibrate", "--images", str(folder), "--out", str(tmp_path / "c.json")]) == 2
    assert "broken.jpg" in _one_line_error(capsys)


def test_refuses_unwritable_out_before_working(varied_folder, tmp_path, capsys):
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    assert main(["calibrate", "--images", str(varied_folder), "--out", str(blocker / "camera.json")]) == 2
    assert "cannot write camera file" in _one_line_error(capsys)
    assert main(["calibrate", "--images", str(varied_folder), "--out", str(tmp_path)]) == 2
    assert "is a folder" in _one_line_error(capsys)


def test_missing_camera_is_a_one_line_error(tmp_path, capsys):
    assert main(["calibrate", "--camera", "57", "--out", str(tmp_path / "c.json")]) == 2
    assert "cannot open camera 57" in _one_line_error(capsys)


def test_camera_is_checked_before_the_out_path(tmp_path, capsys):
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    assert main(["calibrate", "--camera", "57", "--out", str(blocker / "c.json")]) == 2
    assert "cannot open camera 57" in _one_line_error(capsys)
    assert main(["calibrate", "--camera", "-1", "--out", str(tmp_path / "c.json")]) == 2
    assert "-1" in _one_line_error(capsys)


def test_live_capture_releases_the_camera_on_bad_out(tmp_path, monkeypatch, capsys):
    from webui.commands import calibrate as cmd

    cap = _FakeCapture([])
    monkeypatch.setattr(cmd, "open_camera", lambda index: cap)
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    assert main(["calibrate", "--camera", "0", "--out", str(blocker / "c.json")]) == 2
    assert "cannot write camera file" in _one_line_error(capsys)
    assert cap.released and cap.reads == 0


def test_needs_images_or_camera(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["calibrate", "--out", str(tmp_path / "c.json")])
    assert exc.value.code == 2
    _one_line_error(capsys)


# --- live-capture view selection on synthetic frames -------------------------------------

def test_view_selector_keeps_distinct_views_only():
    poses = synthetic.varied_poses(4, np.random.default_rng(5))
    blank = np.full((CAM.image_size[1], CAM.image_size[0]), 120, np.uint8)
    frames, expected_kept = [], []
    for i, (rvec, tvec) in enumerate(poses):
        frames.append(synthetic.render_view(rvec, tvec, CAM, rng=np.random.default_rng(100 + i)))
        expected_kept.append(len(frames) - 1)
        frames.append(synthetic.render_view(rvec, tvec, CAM, rng=np.random.default_rng(200 + i)))  # same pose again
        frames.append(blank)  # board out of view
    events = []
    selector = charuco.ViewSelector(target=10)
    kept = charuco.select_views(iter(frames), selector,
                                on_frame=lambda i, f, v, k, why: events.append((i, k, why)))
    assert [i for i, k, _ in events if k] == expected_kept
    assert len(kept) == 4
    reasons = {why for _, k, why in events if not k}
    assert reasons == {"too similar to a kept view", "board not found"}


def test_view_selector_stops_at_target_and_on_request():
    poses = synthetic.varied_poses(5, np.random.default_rng(9))
    frames = [synthetic.render_view(r, t, CAM, rng=np.random.default_rng(i)) for i, (r, t) in enumerate(poses)]
    seen = []

    def counting():
        for f in frames:
            seen.append(1)
            yield f

    kept = charuco.select_views(counting(), charuco.ViewSelector(target=2))
    assert len(kept) == 2 and len(seen) == 2
    stop_after = iter([False, False, False, True, True, True])
    kept = charuco.select_views(iter(frames), charuco.ViewSelector(target=10), should_stop=lambda: next(stop_after))
    assert len(kept) == 3


def test_view_selector_rejects_a_partly_seen_board():
    rvec, tvec = synthetic.pose_looking_at(300, 20, 10, 0, (172, 0))  # board mostly off the right edge
    view = charuco.detect_view(synthetic.render_view(rvec, tvec, CAM), charuco.charuco_board())
    assert view is not None and charuco.MIN_CORNERS_PER_VIEW <= view.n_corners < 12
    selector = charuco.ViewSelector(min_corners=12)
    assert selector.why_rejected(view) == f"only {view.n_corners} corners seen"
    assert selector.offer(view) is False and not selector.kept


# --- the live loop, with a stand-in camera --------------------------------------------------

class _FakeCapture:
    """Plays frames like cv2.VideoCapture.read(); then fails reads, or raises Ctrl-C."""

    def __init__(self, frames, interrupt_at=None):
        self.frames = list(frames)
        self.interrupt_at = interrupt_at
        self.reads = 0
        self.released = False

    def read(self):
        self.reads += 1
        if self.interrupt_at is not None and self.reads > self.interrupt_at:
            raise KeyboardInterrupt
        if self.frames:
            return True, self.frames.pop(0)
        return False, None

    def release(self):
        self.released = True


@pytest.fixture(scope="module")
def live_frames():
    poses = synthetic.varied_poses(9, np.random.default_rng(21))
    frames = []
    for i, (rvec, tvec) in enumerate(poses):
        img = synthetic.render_view(rvec, tvec, CAM, rng=np.random.default_rng(300 + i))
        frames += [img, img.copy()]  # every pose seen twice, as a steady hand would
    return frames


def test_live_capture_stops_at_target_and_writes_camera_file(live_frames, tmp_path, monkeypatch, capsys):
    from webui.commands import calibrate as cmd

    cap = _FakeCapture(live_frames)
    monkeypatch.setattr(cmd, "open_camera", lambda index: cap)
    out = tmp_path / "live.json"
    saved = tmp_path / "kept"
    assert main(["calibrate", "--camera", "0", "--out", str(out), "--views", "7", "--save-views", str(saved)]) == 0
    text = capsys.readouterr().out
    assert "kept view 7/7" in text and "calibrated from 7 views" in text
    assert cap.released and cap.reads == 13  # 7th distinct pose is frame 13; no frame read after it
    assert len(list(saved.glob("*.png"))) == 7
    cam = CameraModel.load(out)
    assert abs(cam.K[0, 0] / CAM.fx - 1) < 0.02 and abs(cam.K[1, 1] / CAM.fy - 1) < 0.02


def test_live_capture_ctrl_c_calibrates_with_views_so_far(live_frames, tmp_path, monkeypatch, capsys):
    from webui.commands import calibrate as cmd

    cap = _FakeCapture(live_frames, interrupt_at=14)
    monkeypatch.setattr(cmd, "open_camera", lambda index: cap)
    out = tmp_path / "live.json"
    assert main(["calibrate", "--camera", "0", "--out", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["views_used"] == 7
    assert "stopped; calibrating with the views kept so far" in captured.err
    assert cap.released


def test_live_capture_too_few_views_is_refused(live_frames, tmp_path, monkeypatch, capsys):
    from webui.commands import calibrate as cmd

    cap = _FakeCapture(live_frames[:6])  # three poses, then the camera stops delivering
    monkeypatch.setattr(cmd, "open_camera", lambda index: cap)
    assert main(["calibrate", "--camera", "0", "--out", str(tmp_path / "c.json")]) == 2
    assert "only 3 usable views" in _one_line_error(capsys)


def test_refuses_views_whose_intrinsics_stay_uncertain(varied_folder, tmp_path, capsys, monkeypatch):
    """The post-solve check: with a (deliberately) impossible bar on the focal length's
    standard deviation, even a good set is refused, naming the uncertainty."""
    monkeypatch.setattr(charuco, "MAX_FOCAL_REL_STD", 1e-6)
    assert main(["calibrate", "--images", str(varied_folder), "--out", str(tmp_path / "c.json")]) == 2
    assert "do not pin down the focal length" in _one_line_error(capsys)


def test_camera_file_seeds_the_solver_and_must_match_the_mode(varied_folder, tmp_path, capsys):
    seed = tmp_path / "seed.json"
    CameraModel.from_intrinsics(CAM.image_size, 800, 800, 512, 384).save(seed)
    out = tmp_path / "c.json"
    assert main(["calibrate", "--images", str(varied_folder), "--out", str(out), "--camera-file", str(seed)]) == 0
    capsys.readouterr()
    assert abs(CameraModel.load(out).K[0, 0] / CAM.fx - 1) < 0.01
    CameraModel.from_intrinsics((640, 480), 800, 800, 320, 240).save(seed)
    assert main(["calibrate", "--images", str(varied_folder), "--out", str(out), "--camera-file", str(seed)]) == 2
    assert "640x480" in _one_line_error(capsys)
    seed.write_text("{not json")
    assert main(["calibrate", "--images", str(varied_folder), "--out", str(out), "--camera-file", str(seed)]) == 2
    assert "not JSON" in _one_line_error(capsys)
