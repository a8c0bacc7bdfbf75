"""A phone or an IP camera as the camera: MJPEG over HTTP read with the standard library,
a dropped stream reported as "camera lost" and reconnected, never a crash. Loopback only:
tests/mjpeg_server.py plays the phone."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from tests.mjpeg_server import BOUNDARY, MjpegServer, grey_jpeg
from vision import stream
from vision.session import read_session
from vision.stream import open_source
from vision.stream import MjpegCapture, StreamError, StreamSource, parse_camera, read_parts
from tests.conftest import run_cli

REPO = Path(__file__).resolve().parents[1]
SAMPLE_FRAME = REPO / "samples" / "sessions" / "tornado" / "frames" / "000000.jpg"
LEVELS = (40, 120, 200)



def level_of(img: np.ndarray) -> int:
    """Which grey frame this is (JPEG moves the mean by a level or two)."""
    return min(LEVELS, key=lambda lv: abs(float(img.mean()) - lv))


# --- the --camera value ---------------------------------------------------------------------

@pytest.mark.parametrize("value, expected", [("0", 0), ("2", 2), (" 1 ", 1), (3, 3),
                                             ("http://192.168.1.20:8080/video", "http://192.168.1.20:8080/video"),
                                             ("rtsp://cam.local:554/stream1", "rtsp://cam.local:554/stream1"),
                                             ("HTTPS://user:pw@cam/mjpeg", "HTTPS://user:pw@cam/mjpeg")])
def test_parse_camera_reads_an_index_or_a_url(value, expected):
    assert parse_camera(value) == expected


@pytest.mark.parametrize("value, message", [("-1", "indices start at 0"), ("webcam", "neither a camera index"),
                                            ("ftp://cam/video", "unsupported stream type 'ftp'"),
                                            ("http:///video", "names no host")])
def test_parse_camera_refuses_in_one_line(value, message):
    with pytest.raises(StreamError, match=message) as info:
        parse_camera(value)
    assert "\n" not in str(info.value)


def test_public_url_hides_the_password():
    assert stream.public_url("http://me:secret@10.0.0.5:8080/video") == "http://10.0.0.5:8080/video"


# --- the multipart parser -----------------------------------------------------------------

def _multipart(bodies, boundary=b"--frame", content_length=True) -> bytes:
    out = b"junk before the first boundary\r\n"
    for body in bodies:
        out += b"--" + boundary.lstrip(b"-") + b"\r\nContent-Type: image/jpeg\r\n"
        if content_length:
            out += b"Content-Length: %d\r\n" % len(body)
        out += b"\r\n" + body + b"\r\n"
    return out


@pytest.mark.parametrize("content_length", [True, False])
def test_read_parts_with_and_without_content_length(content_length):
    # bodies with CRLFs and boundary-like bytes inside must come back whole
    bodies = [b"\xff\xd8one\r\ntwo\xff\xd9", b"\xff\xd8--fram\r\n\r\nx\xff\xd9", b"\xff\xd8" + bytes(range(256)) + b"\xff\xd9"]
    data = _multipart(bodies, content_length=content_length) + b"--frame--\r\n"
    assert list(read_parts(io.BufferedReader(io.BytesIO(data)), b"frame")) == bodies


def test_read_parts_stops_at_a_torn_part():
    data = _multipart([b"\xff\xd8whole\xff\xd9"]) + b"--frame\r\nContent-Length: 500\r\n\r\n\xff\xd8half"
    assert list(read_parts(io.BufferedReader(io.BytesIO(data)), b"frame")) == [b"\xff\xd8whole\xff\xd9"]


@pytest.mark.parametrize("header, boundary", [("multipart/x-mixed-replace; boundary=--myboundary", b"myboundary"),
                                              ('multipart/x-mixed-replace;boundary="frame"', b"frame"),
                                              ("image/jpeg", None), ("multipart/x-mixed-replace", None)])
def test_boundary_from_the_content_type(header, boundary):
    assert stream._boundary(header) == boundary


# --- against a local MJPEG server --------------------------------------------------------------

@pytest.mark.parametrize("content_length", [True, False])
def test_mjpeg_capture_decodes_the_served_frames_in_order(content_length):
    sample = SAMPLE_FRAME.read_bytes()
    frames = [grey_jpeg(lv) for lv in LEVELS] + [sample]
    with MjpegServer(frames, content_length=content_length) as server:
        cap = MjpegCapture(server.url)
        got = [cap.read() for _ in range(4)]
        cap.release()
    assert all(ok for ok, _ in got)
    assert [level_of(img) for _, img in got[:3]] == list(LEVELS)
    expected = cv2.imdecode(np.frombuffer(sample, np.uint8), cv2.IMREAD_COLOR)
    assert np.array_equal(got[3][1], expected)


def test_not_mjpeg_and_http_errors_are_one_line_errors():
    with MjpegServer([grey_jpeg(40)], content_type="text/html") as server:
        with pytest.raises(StreamError, match="is not MJPEG .*text/html"):
            MjpegCapture(server.url)
        with pytest.raises(StreamError, match="HTTP 404"):
            MjpegCapture(server.url.replace("/video", "/nothing"))
    with pytest.raises(StreamError, match="cannot open stream"):
        MjpegCapture(server.url)  # the server is gone: connection refused


def test_a_dropped_stream_is_reported_lost_and_comes_back(monkeypatch):
    """First connection: 3 frames, then a torn part and the line goes dead; the next
    attempt is refused (HTTP 503); the third serves again. The consumer sees frames before
    and after, the status says "camera lost" then "camera back", and nothing raises."""
    monkeypatch.setattr(StreamSource, "BACKOFF_S", (0.05, 0.1))
    frames = [grey_jpeg(lv) for lv in LEVELS]
    statuses, warnings = [], []
    with MjpegServer(frames, plan=[("serve", 3), ("refuse", 503), ("serve", None)], fps=50) as server:
        source = open_source(camera=server.url)
        assert isinstance(source, StreamSource) and source.info.kind == "stream"
        assert source.info.frame_size == (160, 120)
        source.on_status, source.on_warning = statuses.append, warnings.append
        got, t_last = [], -1.0
        deadline = time.monotonic() + 10
        for t, img in source:
            assert t >= t_last
            t_last = t
            got.append(level_of(img))
            if source.reconnects >= 1 and len(got) >= 8 or time.monotonic() > deadline:
                break
        source.close()
    assert source.reconnects == 1 and server.connections == 3
    assert len(got) >= 8
    assert any(w.startswith("camera lost") for w in warnings)
    lost = [s for s in statuses if s.startswith("camera lost")]
    assert lost and "retrying in 0.05 s" in lost[0] and "retrying in 0.1 s" in lost[-1]
    assert statuses.index(lost[0]) < statuses.index(next(s for s in statuses if s.startswith("camera back")))


def test_closing_a_lost_stream_stops_retrying(monkeypatch):
    monkeypatch.setattr(StreamSource, "BACKOFF_S", (0.05,))
    with MjpegServer([grey_jpeg(40)], plan=[("serve", 2), ("refuse", 503)], fps=50) as server:
        source = StreamSource(server.url)
        it = iter(source)
        next(it)
        deadline = time.monotonic() + 5
        while not source.status.startswith("camera lost") and time.monotonic() < deadline:
            time.sleep(0.02)
        assert source.status.startswith("camera lost")
        t0 = time.monotonic()
        source.close()
        assert time.monotonic() - t0 < 2.0
        assert list(it) == []


# --- the commands ------------------------------------------------------------------------

def test_record_from_a_stream_url(tmp_path, capsys):
    with MjpegServer([grey_jpeg(lv) for lv in LEVELS], fps=20) as server:
        code, out, err = run_cli(capsys, ["record", "--camera", server.url, "--out", tmp_path / "rec",
                                          "--seconds", "0.6", "--json"])
    assert code == 0, err
    summary = json.loads(out)
    session = read_session(tmp_path / "rec")
    assert summary["frames"] == len(session.frames) >= 3
    assert session.header["source"] == f"stream {server.url}"


@pytest.mark.parametrize("command", [["record", "--out", "OUT"], ["calibrate", "--out", "OUT/c.json"]])
def test_commands_refuse_a_dead_or_wrong_url_in_one_line(tmp_path, capsys, command):
    with MjpegServer([grey_jpeg(40)], content_type="text/html") as server:
        url = server.url
        argv = [a.replace("OUT", str(tmp_path / "out")) for a in command] + ["--camera", url]
        code, out, err = run_cli(capsys, argv)
        assert code == 2 and err.count("\n") == 1 and "is not MJPEG" in err
    code, out, err = run_cli(capsys, argv)
    assert code == 2 and err.startswith("refcam: error: cannot open stream http://127.0.0.1:")
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_calibrate_live_from_a_stream_url(tmp_path, capsys):
    """calibrate --camera URL: a phone streaming the board from different angles."""
    from calibration import synthetic
    from calibration.camera import CameraModel

    cam = synthetic.DEFAULT_CAMERA
    rng = np.random.default_rng(3)
    frames = []
    for rvec, tvec in synthetic.varied_poses(8, rng):
        ok, buf = cv2.imencode(".jpg", synthetic.render_view(rvec, tvec, cam, rng=rng), [cv2.IMWRITE_JPEG_QUALITY, 92])
        frames += [buf.tobytes()] * 2  # each pose held for two frames, as a steady hand would
    with MjpegServer(frames, fps=30) as server:
        code, out, err = run_cli(capsys, ["calibrate", "--camera", server.url, "--views", 7,
                                          "--out", tmp_path / "phone.json"])
    assert code == 0, err
    assert "kept view 7/7" in out
    found = CameraModel.load(tmp_path / "phone.json")
    assert abs(found.K[0, 0] / cam.fx - 1) < 0.02 and abs(found.K[1, 1] / cam.fy - 1) < 0.02


def test_an_rtsp_url_that_does_not_answer_is_one_line(tmp_path):
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "webui.cli", "record", "--camera", "rtsp://127.0.0.1:9/stream",
                           "--out", str(tmp_path / "rec")], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert proc.returncode == 2
    assert proc.stderr.startswith("refcam: error: cannot open stream rtsp://127.0.0.1:9/stream")
    assert proc.stderr.count("\n") == 1 and not (tmp_path / "rec").exists()
