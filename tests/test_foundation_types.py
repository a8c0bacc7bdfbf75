"""Observation JSON round-trips; the camera file refuses what it cannot use; sessions survive a crash."""

import json

import pytest

from calibration.camera import CameraFileError, CameraModel
from referee.errors import InvalidInputError
from referee.observation import Observation, PiecePose
from vision.session import SessionError, SessionWriter, read_session


def test_observation_round_trip():
    obs = Observation(pieces=(PiecePose("tornado/boat-1", (200,), 10.0, -5.25, 90.0, 5.0, 0.4, 0.5, None, 22.0),),
                      frame={"anchor": "tornado/start-gate"}, unknown_markers=(999,), warnings=("w",), game="tornado")
    again = Observation.from_json(json.loads(json.dumps(obs.to_json())))
    assert again.pieces == obs.pieces and again.frame == obs.frame and again.warnings == obs.warnings
    assert again.piece("tornado/boat-1").y_mm == -5.25 and again.piece("nope") is None


def test_observation_refuses_garbage():
    with pytest.raises(InvalidInputError):
        Observation.from_json({"pieces": [{"name": "x"}]})
    with pytest.raises(InvalidInputError):
        Observation.from_json([1, 2])


GOOD = {"image_size": [1920, 1080], "camera_matrix": [[1200, 0, 960], [0, 1200, 540], [0, 0, 1]],
        "dist_coeffs": [0.01, -0.02, 0, 0, 0], "model": "pinhole-radtan", "rms_px": 0.3, "note": "kept"}


def test_camera_file_round_trip(tmp_path):
    cam = CameraModel.from_json(GOOD)
    path = tmp_path / "camera.json"
    cam.save(path)
    again = CameraModel.load(path)
    assert again == cam and again.extra == {"note": "kept"} and again.K[0, 0] == 1200


@pytest.mark.parametrize("change,message", [
    ({"camera_matrix": [[1, 0], [0, 1]]}, "3x3"),
    ({"dist_coeffs": [0, 0, 0]}, "5 values"),
    ({"image_size": [1920]}, "image_size"),
    ({"model": "fisheye"}, "unsupported model"),
    ({"camera_matrix": [[-5, 0, 1], [0, 5, 1], [0, 0, 1]]}, "pinhole"),
])
def test_camera_file_wrong_shape(change, message):
    with pytest.raises(CameraFileError, match=message):
        CameraModel.from_json({**GOOD, **change})


def test_camera_file_size_mismatch():
    cam = CameraModel.from_json(GOOD)
    assert cam.check_image_size(1920, 1080) is cam
    with pytest.raises(CameraFileError, match="1920x1080 images but the image is 1280x720"):
        cam.check_image_size(1280, 720)


def test_camera_file_not_json(tmp_path):
    p = tmp_path / "c.json"
    p.write_text("hello")
    with pytest.raises(CameraFileError, match="not JSON"):
        CameraModel.load(p)


def test_session_survives_a_torn_last_line(tmp_path):
    with SessionWriter(tmp_path / "s", game="kang", fps=5) as w:
        for i in range(3):
            w.add_encoded(b"\xff\xd8fake\xff\xd9", t=i * 0.2)
    manifest = tmp_path / "s" / "manifest.jsonl"
    manifest.write_text(manifest.read_text() + '{"frame": "frames/000003.jp')  # killed mid-write
    (tmp_path / "s" / "frames" / "000001.jpg").unlink()
    s = read_session(tmp_path / "s")
    assert [f.t for f in s.frames] == [0.0, 0.4] and s.game == "kang"
    assert any("incomplete" in w for w in s.warnings) and any("000001" in w for w in s.warnings)


def test_session_manifest_not_json(tmp_path):
    (tmp_path / "manifest.jsonl").write_text("this is not json\n")
    with pytest.raises(SessionError, match="not JSON"):
        read_session(tmp_path)


def test_session_writer_refuses_existing_session(tmp_path):
    SessionWriter(tmp_path / "s").close()
    with pytest.raises(SessionError, match="already holds"):
        SessionWriter(tmp_path / "s")


def test_session_writer_keeps_the_camera_file(tmp_path):
    """serve --record / record --camera-file: the recording carries the lens it was taken through."""
    cam = tmp_path / "cam.json"
    cam.write_text('{"marker": "the source camera file"}')
    with SessionWriter(tmp_path / "s", game="kang", camera_file=cam, source="camera 0"):
        pass
    s = read_session(tmp_path / "s")
    assert s.camera_file == tmp_path / "s" / "camera.json"
    assert s.camera_file.read_text() == cam.read_text()
    assert s.header["source"] == "camera 0" and "camera_file" not in s.header


def test_session_writer_refuses_a_missing_camera_file(tmp_path):
    with pytest.raises(SessionError, match="cannot copy camera file"):
        SessionWriter(tmp_path / "s", camera_file=tmp_path / "nope.json")
