"""`refcam observe` through the CLI: output, --json, --annotate, and every bad input -> exit 2, one line."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from referee.catalog import default_catalog
from tests.bench import synth
from webui.cli import main

CAT = default_catalog()


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    """A small kayak table picture (1280x720), its camera file and truth."""
    folder = tmp_path_factory.mktemp("observe")
    pieces = [synth.SynthPiece("kayak/tile-0", 0, 0, 0, ("A-upstream", "A-downstream")),
              synth.SynthPiece("kayak/tile-1", 160, 40, 180, ("B-upstream", "B-downstream")),
              synth.SynthPiece("kayak/pawn-1", 20, 30, 0, ("main",)),
              synth.SynthPiece("kayak/pawn-3", 170, -40, 90, ("main",))]
    cam = synth.look_at_camera(image_size=(1280, 720), target=(80, 0, 0), distance_mm=600, elevation_deg=60,
                               hfov_deg=60)
    img = synth.render(cam, synth.scene_stickers(CAT, pieces), seed=1)
    image = folder / "table.jpg"
    cv2.imwrite(str(image), img, [cv2.IMWRITE_JPEG_QUALITY, 95])
    camera = folder / "camera.json"
    cam.camera_model().save(camera)
    return {"folder": folder, "image": image, "camera": camera, "pieces": {p.name: p for p in pieces}, "cam": cam}


def run(capsys, *argv):
    code = main(["observe", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_output_has_the_spec_fields(scene, capsys):
    code, out, err = run(capsys, scene["image"], "--camera-file", scene["camera"], "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["game"] == "kayak" and doc["frame"]["anchor"] == "kayak/tile-0"
    names = {p["name"] for p in doc["pieces"]}
    assert names == set(scene["pieces"])
    for p in doc["pieces"]:
        for key in ("name", "marker_ids", "x_mm", "y_mm", "theta_deg", "z_mm", "sigma_mm"):
            assert key in p
        t = scene["pieces"][p["name"]]
        assert abs(p["x_mm"] - t.x_mm) < 4 * p["sigma_mm"] + 0.2
        assert abs(p["y_mm"] - t.y_mm) < 4 * p["sigma_mm"] + 0.2
    assert doc["unknown_markers"] == [] and isinstance(doc["warnings"], list)


def test_table_output_and_annotate(scene, capsys, tmp_path):
    out_png = tmp_path / "ann.png"
    code, out, err = run(capsys, scene["image"], "--camera-file", scene["camera"], "--annotate", out_png)
    assert code == 0, err
    assert "kayak/pawn-3" in out and "sigma mm" in out and "size px" in out
    ann = cv2.imread(str(out_png))
    src = cv2.imread(str(scene["image"]))
    assert ann.shape == src.shape and np.abs(ann.astype(int) - src.astype(int)).sum() > 0


def test_without_camera_file_warns(scene, capsys):
    code, out, err = run(capsys, scene["image"], "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert not doc["frame"]["camera_file"]
    assert any("no camera file" in w for w in doc["warnings"])


def _one_line_error(code, err):
    assert code == 2
    lines = err.rstrip("\n").splitlines()
    assert len(lines) == 1 and lines[0].startswith("refcam: error: ")
    return lines[0]


@pytest.mark.parametrize("kind", ["truncated", "empty", "text", "missing"])
def test_not_an_image(scene, capsys, tmp_path, kind):
    bad = tmp_path / "bad.jpg"
    if kind == "truncated":
        data = scene["image"].read_bytes()
        bad.write_bytes(data[: len(data) // 2])
    elif kind == "empty":
        bad.write_bytes(b"")
    elif kind == "text":
        bad.write_text("not a picture\n")
    code, out, err = run(capsys, bad, "--json")
    line = _one_line_error(code, err)
    assert "bad.jpg" in line


def test_camera_file_with_wrong_shape(scene, capsys, tmp_path):
    cam = json.loads(scene["camera"].read_text())
    cam["camera_matrix"] = [[1, 0], [0, 1]]
    f = tmp_path / "cam.json"
    f.write_text(json.dumps(cam))
    line = _one_line_error(*run(capsys, scene["image"], "--camera-file", f)[::2])
    assert "3x3" in line


def test_camera_file_for_another_image_size(scene, capsys, tmp_path):
    cam = json.loads(scene["camera"].read_text())
    cam["image_size"] = [1920, 1080]
    f = tmp_path / "cam.json"
    f.write_text(json.dumps(cam))
    line = _one_line_error(*run(capsys, scene["image"], "--camera-file", f)[::2])
    assert "1920x1080" in line and "1280x720" in line


def test_no_known_stickers(capsys, tmp_path):
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), np.full((480, 640, 3), 200, np.uint8))
    line = _one_line_error(*run(capsys, blank)[::2])
    assert "no refcam stickers" in line


def test_id_seen_twice_is_left_out_with_a_warning(scene, capsys, tmp_path):
    cam = scene["cam"]
    pieces = list(scene["pieces"].values())
    twin = synth.SynthPiece("kayak/pawn-3", 100, 60, 0, ("main",))
    img = synth.render(cam, synth.scene_stickers(CAT, pieces + [twin]), seed=2)
    path = tmp_path / "twice.jpg"
    cv2.imwrite(str(path), img, [cv2.IMWRITE_JPEG_QUALITY, 95])
    code, out, err = run(capsys, path, "--camera-file", scene["camera"], "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert "kayak/pawn-3" not in {p["name"] for p in doc["pieces"]}
    assert any("142" in w and "left out" in w for w in doc["warnings"])


def test_bad_annotate_path(scene, capsys, tmp_path):
    line = _one_line_error(*run(capsys, scene["image"], "--annotate", tmp_path / "ann.gif")[::2])
    assert "ann.gif" in line
