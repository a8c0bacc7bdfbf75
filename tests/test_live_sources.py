"""Frame sources: session replay (real time, fast, skipping bad frames), video files, a camera that vanishes."""

import json
import threading
import time

import numpy as np
import pytest

from referee.errors import RefcamError
from vision.sources import CameraSource, SessionSource, SourceError, VideoSource
from vision.stream import open_source

from tests.live_helpers import FakeCapture, frame_number, write_grey_video, write_session


def test_fast_replay_yields_every_frame_with_manifest_times(tmp_path):
    write_session(tmp_path / "s", 12)
    src = SessionSource(tmp_path / "s", realtime=False)
    got = list(src)
    assert [frame_number(img) for _, img in got] == list(range(12))
    assert [round(t, 3) for t, _ in got] == [round(i / 10, 3) for i in range(12)]
    assert got[0][1].shape == (48, 64, 3) and got[0][1].dtype == np.uint8
    assert src.info.kind == "session" and src.info.game == "kang" and src.info.frame_count == 12


def test_real_time_replay_follows_the_manifest_clock(tmp_path):
    write_session(tmp_path / "s", 6)  # 0.5 s of frames
    t0 = time.monotonic()
    n = sum(1 for _ in SessionSource(tmp_path / "s", realtime=True))
    elapsed = time.monotonic() - t0
    assert n == 6
    assert elapsed >= 0.45  # never ahead of the recording's own clock


def test_real_time_replay_passes_over_frames_a_slow_consumer_cannot_take(tmp_path):
    write_session(tmp_path / "s", 20)  # 2 s at 10 fps
    src = SessionSource(tmp_path / "s", realtime=True)
    numbers = []
    for t, img in src:
        numbers.append(frame_number(img))
        time.sleep(0.25)  # a consumer at 4 fps
    assert numbers[0] == 0 and numbers[-1] == 19
    assert len(numbers) < 14 and src.frames_skipped == 20 - len(numbers)
    assert numbers == sorted(numbers)


def test_real_time_clock_starts_after_the_consumers_first_frame(tmp_path):
    write_session(tmp_path / "s", 10)
    src = SessionSource(tmp_path / "s", realtime=True)
    numbers = []
    for t, img in src:
        numbers.append(frame_number(img))
        if len(numbers) == 1:
            time.sleep(0.5)  # warm-up on the first frame
    assert numbers == list(range(10)) and src.frames_skipped == 0


def test_missing_and_corrupt_frames_are_skipped_with_a_warning(tmp_path):
    folder = write_session(tmp_path / "s", 10)
    (folder / "frames" / "000003.png").unlink()
    (folder / "frames" / "000005.png").write_bytes(b"\x89PNG\r\n\x1a\n not really a picture")
    src = SessionSource(folder, realtime=False)
    seen = []
    src.on_warning = seen.append
    numbers = [frame_number(img) for _, img in src]
    assert numbers == [0, 1, 2, 4, 6, 7, 8, 9]
    assert any("000003.png" in w and "missing" in w for w in seen)
    assert any("000005.png" in w and "skipped" in w for w in seen)


def test_manifest_that_is_not_json_is_a_clear_error(tmp_path):
    folder = write_session(tmp_path / "s", 3)
    (folder / "manifest.jsonl").write_text("this is not json\n")
    with pytest.raises(RefcamError, match="not JSON"):
        SessionSource(folder)


def test_looping_replay_restarts_and_says_so(tmp_path):
    write_session(tmp_path / "s", 3)
    src = SessionSource(tmp_path / "s", realtime=False, loop=True)
    restarts = []
    src.on_restart = lambda: restarts.append(1)
    got = []
    for t, img in src:
        got.append((t, frame_number(img)))
        if len(got) == 7:
            src.close()
    assert [n for _, n in got] == [0, 1, 2, 0, 1, 2, 0]
    assert all(b[0] > a[0] for a, b in zip(got, got[1:]))  # time keeps running forward
    assert len(restarts) == 2


def test_video_file_source(tmp_path):
    path = write_grey_video(tmp_path / "clip.avi", 8)
    src = VideoSource(path, realtime=False)
    frames = list(src)
    assert len(frames) == 8
    assert frames[-1][0] == pytest.approx(0.7, abs=1e-6)
    assert src.info.fps == pytest.approx(10.0)


def test_video_file_that_is_not_a_video(tmp_path):
    bad = tmp_path / "x.mp4"
    bad.write_text("nope")
    with pytest.raises(SourceError, match="not a readable video"):
        VideoSource(bad)
    with pytest.raises(SourceError, match="no such video"):
        VideoSource(tmp_path / "absent.mp4")


def test_camera_index_that_does_not_exist():
    with pytest.raises(SourceError, match="camera 57 does not exist"):
        open_source(camera=57)


def test_camera_keeps_only_the_newest_frame_and_survives_being_unplugged(monkeypatch):
    world = {"plugged": True, "n": 0}
    monkeypatch.setattr(CameraSource, "RETRY_S", 0.05)
    src = CameraSource(0, capture_factory=lambda i: FakeCapture(world))
    statuses = []
    src.on_status = statuses.append
    it = iter(src)
    next(it)
    time.sleep(0.2)  # the consumer is slow: the grabber replaces, never queues
    t, img = next(it)
    assert src.frames_dropped > 5
    assert int(img[0, 0, 0]) >= (world["n"] - 2) % 256
    world["plugged"] = False
    deadline = time.monotonic() + 3
    while not any("lost" in s for s in statuses) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert any("lost" in s for s in statuses)
    assert any("lost" in w for w in src.warnings)
    world["plugged"] = True
    got = []
    reader = threading.Thread(target=lambda: got.append(next(it)))
    reader.start()
    reader.join(timeout=3)
    assert got, "frames resume once the camera is back"
    assert any("back" in s for s in statuses)
    src.close()


def test_recording_cut_off_by_kill_replays_up_to_its_last_whole_frame(tmp_path):
    import os
    import signal
    import subprocess
    import sys

    folder = tmp_path / "rec"
    code = f"""
import sys, time, numpy as np, cv2
from vision.session import SessionWriter
w = SessionWriter({str(folder)!r}, game="kang", fps=50)
ok, buf = cv2.imencode('.jpg', np.full((240, 320, 3), 128, np.uint8))
data = buf.tobytes()
i = 0
while True:
    w.add_encoded(data, i / 50.0)
    i += 1
    if i == 5:
        print('ready', flush=True)
"""
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, cwd=os.getcwd())
    assert proc.stdout.readline().strip() == b"ready"
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=5)
    src = SessionSource(folder, realtime=False)
    frames = list(src)
    assert len(frames) >= 5
    assert all(img.shape == (240, 320, 3) for _, img in frames)
    lines = (folder / "manifest.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["refcam_session"] == 1
    assert len(frames) == len(src.session.frames)  # every listed frame is whole
