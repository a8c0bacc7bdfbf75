"""`refcam markers --charuco --views N`: synthetic photos of the board that `refcam calibrate
--images` turns back into the camera they were rendered with."""

from __future__ import annotations

import json

from calibration.camera import CameraModel
from calibration.charuco import MIN_VIEWS
from webui.cli import main


def run_cli(capsys, argv):
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_calibrate_on_synthetic_views_recovers_the_truth(tmp_path, capsys):
    views = tmp_path / "views"
    code, out, err = run_cli(capsys, ["markers", "--charuco", "--views", 10, "--out", views, "--json"])
    assert code == 0, err
    info = json.loads(out)["charuco_views"]
    assert len(info["views"]) == 10 and len(list(views.glob("view-*.jpg"))) == 10
    truth = CameraModel.load(info["truth_camera"])
    code, out, err = run_cli(capsys, ["calibrate", "--images", views, "--out", tmp_path / "cam.json", "--json"])
    assert code == 0, err
    assert json.loads(out)["views_used"] == 10  # the truth file in the folder is not taken for a view
    found = CameraModel.load(tmp_path / "cam.json")
    assert found.image_size == truth.image_size
    for (r, c) in ((0, 0), (1, 1), (0, 2), (1, 2)):  # fx, fy, cx, cy
        assert abs(found.K[r, c] / truth.K[r, c] - 1) < 0.02, (r, c, found.K[r, c], truth.K[r, c])
    assert abs(found.dist[0] - truth.dist[0]) < 0.05  # k1


def test_views_need_charuco_and_a_sane_count(tmp_path, capsys):
    code, _, err = run_cli(capsys, ["markers", "--game", "kang", "--views", 5, "--out", tmp_path / "a"])
    assert code == 2 and "--views goes with --charuco" in err and err.count("\n") == 1
    code, _, err = run_cli(capsys, ["markers", "--charuco", "--views", 0, "--out", tmp_path / "b"])
    assert code == 2 and "--views 0 is out of range" in err
    code, out, _ = run_cli(capsys, ["markers", "--charuco", "--views", MIN_VIEWS - 1, "--out", tmp_path / "c"])
    assert code == 0 and f"calibrate needs at least {MIN_VIEWS} views" in out
