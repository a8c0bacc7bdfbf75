"""Ordinary things a user hands refcam that used to end in a traceback or take minutes: a chess
board in view, a sheet of markers, a JPEG of thousands of scans, an output folder 2,000 levels
deep, a camera file with a focal length of 5e-324, a catalog whose words are objects."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from tests.conftest import run_cli
from tests.test_fuzz_classes import checkerboard, many_scan_jpeg, marker_sheet

REPO = Path(__file__).resolve().parents[1]
KANG_STILL = REPO / "samples" / "kang" / "004.jpg"
KANG_CAMERA = REPO / "samples" / "kang" / "004.camera.json"


def _one_line(code, err: str, *words: str) -> str:
    assert code == 2 and "Traceback" not in err, err
    lines = err.rstrip("\n").splitlines()
    assert len(lines) == 1 and lines[0].startswith("refcam: error: "), err
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("picture, words", [
    (lambda: checkerboard(3000, 2000, 20), "7253 square shapes"),  # a chess board: 7,253 outlines
    (lambda: marker_sheet(60, 60, 50), "square shapes"),  # 3,600 markers
])
def test_a_picture_too_busy_with_squares_is_one_line(tmp_path, capsys, picture, words):
    path = tmp_path / "busy.png"
    cv2.imwrite(str(path), picture())
    for command in (["observe"], ["kang", "state"]):
        _one_line(*run_cli(capsys, command + [path])[::2], words, "cannot tell")


def test_a_busy_picture_under_the_limit_is_read(tmp_path, capsys):
    """A sheet of 400 markers: more than any table, under the limit: read (no table corners)."""
    path = tmp_path / "sheet.png"
    cv2.imwrite(str(path), marker_sheet(20, 20, 50))
    _one_line(*run_cli(capsys, ["observe", path])[::2], "no refcam stickers")


def test_a_jpeg_of_thousands_of_scans_is_refused_before_decoding(tmp_path, capsys):
    path = tmp_path / "scans.jpg"
    path.write_bytes(many_scan_jpeg(5_000, 1))
    _one_line(*run_cli(capsys, ["observe", path])[::2], "JPEG of 5000 scans", "at most 100")
    ok = tmp_path / "ok.jpg"
    ok.write_bytes(many_scan_jpeg(100, 1))  # the limit: decoded
    from vision.imageio import load_image

    assert load_image(ok).shape == (120, 160, 3)


def test_an_output_folder_2000_levels_deep_is_one_line(tmp_path, capsys):
    deep = tmp_path.joinpath(*["d"] * 2000)
    _one_line(*run_cli(capsys, ["markers", "--game", "kang", "--out", deep])[::2],
              f"{len(deep.parts)} folders deep", "at most 256")


def test_a_focal_length_of_5e_324_is_refused_with_the_file(tmp_path, capsys):
    camera = json.loads(KANG_CAMERA.read_text())
    camera["camera_matrix"][1][1] = 5e-324
    path = tmp_path / "camera.json"
    path.write_text(json.dumps(camera))
    _one_line(*run_cli(capsys, ["observe", KANG_STILL, "--camera-file", path])[::2], "fy must be at least")


@pytest.mark.parametrize("field, value", [("family", {"x": 1}), ("description", ["x"]), ("game", 3)])
def test_a_catalog_word_that_is_not_text_is_one_line(tmp_path, capsys, monkeypatch, field, value):
    catalog = json.loads((REPO / "referee" / "data" / "catalog.json").read_text())
    catalog["families"][0][field] = value
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(catalog))
    monkeypatch.setenv("REFCAM_CATALOG", str(path))
    _one_line(*run_cli(capsys, ["markers", "--game", "kang", "--out", tmp_path / "out"])[::2],
              "REFCAM_CATALOG", f"{field} must be text")
