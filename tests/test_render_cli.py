"""`refcam render`: a good scene renders with its truth; each bad input is one line and exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_render_truth import simple_scene
from webui.cli import main

SMALL = (160, 120)


def _scene(**changes) -> dict:
    scene = simple_scene(size=SMALL)
    scene["effects"]["supersample"] = 1
    scene.update(changes)
    return scene


def _run(capsys, tmp_path: Path, scene, out: str | Path | None = None, raw: str | None = None, extra=()):
    path = tmp_path / "scene.json"
    path.write_text(raw if raw is not None else json.dumps(scene))
    code = main(["render", str(path), str(out or tmp_path / "out.jpg"), *extra])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def _assert_bad(code, err, *needles):
    assert code == 2
    lines = err.rstrip("\n").splitlines()
    assert len(lines) == 1 and lines[0].startswith("refcam: error: "), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def test_render_writes_image_and_truth_and_reports_json(capsys, tmp_path):
    import cv2

    code, out, err = _run(capsys, tmp_path, _scene(), extra=["--json"])
    assert code == 0, err
    summary = json.loads(out)
    assert summary["truth"] == str(tmp_path / "out.truth.json")
    image = cv2.imread(str(tmp_path / "out.jpg"))
    assert image.shape == (SMALL[1], SMALL[0], 3)
    truth = json.loads((tmp_path / "out.truth.json").read_text())
    assert truth["image_size"] == list(SMALL) and len(truth["stickers"]) == summary["stickers"]
    assert {p["name"] for p in truth["pieces"]} == {p["name"] for p in _scene()["pieces"]}


def test_render_truth_path_option(capsys, tmp_path):
    code, _, err = _run(capsys, tmp_path, _scene(), extra=["--truth", str(tmp_path / "t.json")])
    assert code == 0, err
    assert json.loads((tmp_path / "t.json").read_text())["refcam_truth"] == 1


def test_unknown_piece_name(capsys, tmp_path):
    scene = _scene()
    scene["pieces"].append({"name": "kang/giant-1", "x_mm": 0, "y_mm": 0})
    _assert_bad(*_run(capsys, tmp_path, scene)[::2], "'kang/giant-1'")


def test_duplicate_piece(capsys, tmp_path):
    scene = _scene()
    scene["pieces"].append({"name": "kang/small-1", "x_mm": 100, "y_mm": 100})
    _assert_bad(*_run(capsys, tmp_path, scene)[::2], "duplicate piece", "'kang/small-1'")


def test_duplicate_marker_id(capsys, tmp_path):
    scene = _scene()
    scene["markers"].append({"id": 20, "size_mm": 20, "x_mm": 0, "y_mm": 250})  # kang/small-1 front
    _assert_bad(*_run(capsys, tmp_path, scene)[::2], "duplicate marker id 20")
    scene = _scene()
    scene["markers"].append(dict(scene["markers"][0]))
    _assert_bad(*_run(capsys, tmp_path, scene)[::2], "duplicate marker id 700")


@pytest.mark.parametrize("where, value, needle", [
    ("table", {"size_mm": [-900, 800]}, "table size_mm"),
    ("table", {"size_mm": [900, 0]}, "table size_mm"),
    ("marker", 0, "size_mm"),
    ("marker", -5, "size_mm"),
    ("image", [0, 120], "image_size"),
    ("image", [-160, 120], "image_size"),
])
def test_negative_or_zero_size(capsys, tmp_path, where, value, needle):
    scene = _scene()
    if where == "table":
        scene["table"].update(value)
    elif where == "marker":
        scene["markers"][0]["size_mm"] = value
    else:
        scene["camera"]["image_size"] = value
    _assert_bad(*_run(capsys, tmp_path, scene)[::2], needle)


def test_malformed_json(capsys, tmp_path):
    _assert_bad(*_run(capsys, tmp_path, None, raw='{"game": "kang", "pieces": [')[::2], "not JSON")
    _assert_bad(*_run(capsys, tmp_path, None, raw="[1, 2]")[::2], "JSON object")


def test_missing_scene_file(capsys, tmp_path):
    code = main(["render", str(tmp_path / "nope.json"), str(tmp_path / "o.jpg")])
    _assert_bad(code, capsys.readouterr().err, "nope.json")


def test_output_folder_that_cannot_be_written(capsys, tmp_path):
    _assert_bad(*_run(capsys, tmp_path, _scene(), out=tmp_path / "missing" / "o.jpg")[::2], "does not exist")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    _assert_bad(*_run(capsys, tmp_path, _scene(), out=blocker / "o.jpg")[::2], "cannot write")
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        try:
            _assert_bad(*_run(capsys, tmp_path, _scene(), out=locked / "o.jpg")[::2], "not writable")
        finally:
            locked.chmod(0o700)


def test_other_bad_values_are_one_line_errors(capsys, tmp_path):
    for change, needle in (({"game": "chess"}, "unknown game"),
                           ({"effects": {"jpeg_quality": 150}}, "jpeg_quality"),
                           ({"occluders": [{"kind": "cloud", "z_mm": 50}]}, "unknown kind")):
        _assert_bad(*_run(capsys, tmp_path, _scene(**change))[::2], needle)
    scene = _scene()
    scene["pieces"][1]["face"] = "sideways"
    _assert_bad(*_run(capsys, tmp_path, scene)[::2], "no face")


def test_real_process_exit_code(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    proc = subprocess.run([sys.executable, "-m", "webui.cli", "render", str(bad), str(tmp_path / "o.jpg")],
                          capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1])
    assert proc.returncode == 2
    assert proc.stderr.startswith("refcam: error: ") and len(proc.stderr.strip().splitlines()) == 1
