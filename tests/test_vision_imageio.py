"""vision.imageio.load_image: whole pictures in, clear one-line errors for everything else."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from referee.errors import InvalidInputError
from vision.imageio import load_image


def _jpeg_bytes() -> bytes:
    img = np.zeros((40, 60, 3), np.uint8)
    img[10:30, 20:40] = (0, 128, 255)
    ok, buf = cv2.imencode(".jpg", img)
    assert ok
    return buf.tobytes()


def test_reads_jpeg_and_png_as_bgr(tmp_path):
    jpg = tmp_path / "a.jpg"
    jpg.write_bytes(_jpeg_bytes())
    img = load_image(jpg)
    assert img.shape == (40, 60, 3) and img.dtype == np.uint8
    grey = tmp_path / "g.png"
    cv2.imwrite(str(grey), np.full((20, 30), 77, np.uint8))
    g = load_image(grey)
    assert g.shape == (20, 30, 3) and int(g[5, 5, 1]) == 77


@pytest.mark.parametrize("content, words", [
    (b"", "empty"),
    (b"hello, this is a text file\n", "text file"),
    (None, "truncated JPEG"),
    (b"\x89PNG\r\n\x1a\n" + b"\x00" * 40, "truncated PNG"),
    (bytes(range(256)) * 4, "not an image"),
])
def test_bad_files_raise_one_line(tmp_path, content, words):
    if content is None:
        data = _jpeg_bytes()
        content = data[: len(data) * 2 // 3]
    p = tmp_path / "bad.jpg"
    p.write_bytes(content)
    with pytest.raises(InvalidInputError) as err:
        load_image(p)
    msg = str(err.value)
    assert words in msg and "\n" not in msg and str(p) in msg


def test_missing_file(tmp_path):
    with pytest.raises(InvalidInputError, match="no such image file"):
        load_image(tmp_path / "nope.jpg")
