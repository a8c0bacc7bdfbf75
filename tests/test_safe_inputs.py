"""Regression tests for issue 15, items 3 to 8: hostile files end in one line and exit 2,
pictures are sized before they are decoded, truncation is the decoder's verdict, calibrate
keeps its own pictures, a vanished source is an error (not a freeze or a spinning loop),
and native decoders never write to stderr."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee import safeload
from referee.errors import InvalidInputError, RefcamError
from tests.conftest import run_cli
from tests.live_helpers import FakeCapture, write_grey_video

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples"
STILL = SAMPLES / "tornado" / "001.jpg"
STILL_CAMERA = SAMPLES / "tornado" / "001.camera.json"
KANG_SCENE = SAMPLES / "kang" / "000.scene.json"
DEEP = "[" * 100_000 + "]" * 100_000
BIG_INT = "1" + "0" * 400



def one_line_error(code, err: str, *quoted: str) -> str:
    assert code == 2, err
    assert "Traceback" not in err, err
    lines = err.rstrip("\n").splitlines()
    assert len(lines) == 1 and lines[0].startswith("refcam: error: "), err
    for q in quoted:
        assert q in lines[0], lines[0]
    return lines[0]


def refcam_subprocess(*argv, timeout: float = 120) -> tuple[int, str, str]:
    """A separate process: native decoders write to file descriptor 2, which capsys cannot see."""
    proc = subprocess.run([sys.executable, "-m", "webui.cli", *map(str, argv)], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)
    return proc.returncode, proc.stdout, proc.stderr


def write_session(folder: Path, lines: list, frames: int = 3) -> Path:
    (folder / "frames").mkdir(parents=True)
    for i in range(frames):
        img = np.full((48, 64, 3), 40 + i, np.uint8)
        (folder / "frames" / f"{i:06d}.png").write_bytes(cv2.imencode(".png", img)[1].tobytes())
    header = {"refcam_session": 1, "game": "kang", "fps": 10.0}
    body = [json.dumps(header)] + [x if isinstance(x, str) else json.dumps(x) for x in lines]
    (folder / "manifest.jsonl").write_text("\n".join(body) + "\n")
    return folder


# --- the safe loader itself --------------------------------------------------------------------
@pytest.mark.parametrize("text, words", [
    (DEEP, "nests deeper than 64 levels"),
    ('{"a":' * 100_000 + "1" + "}" * 100_000, "nests deeper than 64 levels"),
    ("[" * 100_000, "nests deeper"),  # unbalanced: still no RecursionError
    (BIG_INT, "401-digit integer"),
    ('{"rms_px": NaN}', "holds NaN"),
    ('[Infinity]', "holds Infinity"),
    ('[-1e400]', "beyond the range of a number"),
    ("{", "not JSON (line 1"),
])
def test_parse_json_refuses_in_one_line(text, words):
    with pytest.raises(InvalidInputError) as err:
        safeload.parse_json(text, "test.json")
    assert words in str(err.value) and "test.json" in str(err.value) and "\n" not in str(err.value)


def test_parse_json_reads_ordinary_documents_and_strings_full_of_brackets():
    doc = {"a": [1, 2.5, {"b": "[[[[{{ \" ]]"}], "c": None, "d": -3}
    assert safeload.parse_json(json.dumps(doc)) == doc
    assert safeload.parse_json("[" * 64 + "]" * 64) is not None
    with pytest.raises(InvalidInputError):
        safeload.parse_json("[" * 65 + "]" * 65)


def test_read_bytes_names_loops_folders_missing_and_oversized_files(tmp_path):
    loop = tmp_path / "loop.json"
    os.symlink("loop.json", loop)
    big = tmp_path / "big.json"
    big.write_text(" " * 2000)
    cases = [(loop, "symlink loop"), (tmp_path, "is a folder"), (tmp_path / "absent.json", "no such"),
             (big, "is 2000 bytes; refcam reads at most 1000 bytes")]
    for path, words in cases:
        with pytest.raises(InvalidInputError, match=words):
            safeload.read_bytes(path, "test file", max_bytes=1000)
    with pytest.raises(InvalidInputError, match="NUL"):
        safeload.read_bytes("a\x00b.json", "test file")
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(InvalidInputError, match="^test file .*fifo.json is a FIFO \\(named pipe\\), not a regular file$"):  # never blocks
        safeload.read_bytes(fifo, "test file")


def test_typed_field_helpers():
    assert safeload.number(3, "x", lo=0, hi=5) == 3.0
    assert safeload.integer(4.0, "n") == 4
    assert safeload.numbers([1, 2], 2, "v") == [1.0, 2.0]
    assert safeload.text("frames/1.png", "frame") == "frames/1.png"
    assert safeload.optional({"fps": None}, "fps", safeload.number, "fps", default=7) == 7
    for call, words in [(lambda: safeload.number("4", "fps"), 'fps must be a number, got "4"'),
                        (lambda: safeload.number(True, "fps"), "must be a number"),
                        (lambda: safeload.number(9, "fps", hi=5), "at most 5"),
                        (lambda: safeload.number(0, "fps", lo=0, lo_open=True), "above 0"),
                        (lambda: safeload.integer(1.5, "n"), "whole number"),
                        (lambda: safeload.numbers([1], 2, "v"), "list of 2 numbers"),
                        (lambda: safeload.text("a\x00b", "frame"), "NUL"),
                        (lambda: safeload.text(123, "frame"), "must be text, got 123"),
                        (lambda: safeload.mapping([], "doc"), "JSON object")]:
        with pytest.raises(InvalidInputError, match=words):
            call()


# --- every JSON loader, through the command line ----------------------------------------------
def _obs_doc() -> dict:
    scene = json.loads((SAMPLES / "tornado" / "001.scene.json").read_text())
    return {"game": "tornado", "pieces": [{**p, "sigma_mm": 0.3} for p in scene["pieces"]]}


LOADER_COMMANDS = {
    "camera file": lambda f, tmp: ["observe", STILL, "--camera-file", f],
    "scene file": lambda f, tmp: ["render", f, tmp / "out.jpg"],
    "observation file": lambda f, tmp: ["rank", f, "--course", "roundabout-river"],
    "course file": lambda f, tmp: ["rank", tmp / "obs.json", "--course", f],
}


@pytest.mark.parametrize("loader", sorted(LOADER_COMMANDS))
@pytest.mark.parametrize("content, words", [(DEEP, "nests deeper than 64 levels"),
                                            ('{"x": ' + BIG_INT + "}", "401-digit integer")])
def test_deep_or_huge_json_in_every_loader_is_one_line(capsys, tmp_path, loader, content, words):
    # 100,000-deep nesting used to raise RecursionError, a 400-digit integer OverflowError
    (tmp_path / "obs.json").write_text(json.dumps(_obs_doc()))
    path = tmp_path / "hostile.json"
    path.write_text(content)
    code, _, err = run_cli(capsys, LOADER_COMMANDS[loader](path, tmp_path))
    one_line_error(code, err, loader, str(path), words)


def test_deep_json_in_a_session_manifest_and_the_catalog(tmp_path):
    from referee.catalog import Catalog
    from vision.session import SessionError, read_session

    folder = write_session(tmp_path / "s", [DEEP, {"frame": "frames/000000.png", "t": 0.0}])
    with pytest.raises(SessionError, match="line 2 nests deeper"):
        read_session(folder)
    (folder / "manifest.jsonl").write_text(DEEP + "\n")  # the header itself
    with pytest.raises(SessionError, match="line 1 nests deeper"):
        read_session(folder)
    path = tmp_path / "catalog.json"
    path.write_text(DEEP)
    with pytest.raises(RefcamError, match="nests deeper"):
        Catalog.load(path)


@pytest.mark.parametrize("rms, words", [("[1]", "rms_px must be a number, got [1]"),  # was TypeError
                                        ("Infinity", "holds Infinity"),  # was LinAlgError
                                        ('"0.3"', "rms_px must be a number"),
                                        ("-1", "rms_px must be at least 0")])
def test_camera_file_rms(capsys, tmp_path, rms, words):
    text = STILL_CAMERA.read_text().rstrip().rstrip("}")
    text = text.replace('"rms_px"', '"old_rms_px"') + f', "rms_px": {rms}}}'
    path = tmp_path / "camera.json"
    path.write_text(text)
    code, _, err = run_cli(capsys, ["observe", STILL, "--camera-file", path])
    one_line_error(code, err, words)


@pytest.mark.parametrize("where, value, words", [
    (("camera_matrix", 0, 2), 9.6e302, "cx must be at most"),  # the table pose overflowed
    (("camera_matrix", 1, 1), 1e300, "fy must be at most"),
    (("dist_coeffs", 0), 1e200, "dist_coeffs[0] must be at most"),
])
def test_extreme_finite_camera_values(capsys, tmp_path, where, value, words):
    cam = json.loads(STILL_CAMERA.read_text())
    node = cam
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    path = tmp_path / "camera.json"
    path.write_text(json.dumps(cam))
    code, _, err = run_cli(capsys, ["observe", STILL, "--camera-file", path])
    one_line_error(code, err, words)


@pytest.mark.parametrize("change, words", [
    (lambda s: s["pieces"][0].update(y_mm=1e308), "y_mm must be within"),  # overflowed in the projection
    (lambda s: s["camera"]["camera_matrix"][0].__setitem__(2, 9.6e302), "cx must be at most"),
    (lambda s: s["table"].update(size_mm=[1e9, 1e9]), "table size_mm must be at most"),  # tried 1.7 EiB
    (lambda s: s["effects"].update(lighting=[1]), "lighting must be an object"),
])
def test_extreme_scene_values(capsys, tmp_path, change, words):
    scene = json.loads(KANG_SCENE.read_text())
    change(scene)
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(scene))
    code, _, err = run_cli(capsys, ["render", path, tmp_path / "out.jpg"])
    one_line_error(code, err, words)
    assert not (tmp_path / "out.jpg").exists()


@pytest.mark.parametrize("change, words", [
    (lambda d: d["pieces"][1].update(y_mm=1e308), "beyond"),
    (lambda d: d.update(unknown_markers=["a"]), "unknown_markers"),  # was ValueError from int()
    (lambda d: d.update(image_size=[1, 2, 3]), "image_size"),
])
def test_extreme_observation_values(capsys, tmp_path, change, words):
    doc = _obs_doc()
    change(doc)
    path = tmp_path / "obs.json"
    path.write_text(json.dumps(doc))
    code, _, err = run_cli(capsys, ["rank", path, "--course", "roundabout-river"])
    one_line_error(code, err, words)


# --- session manifests -----------------------------------------------------------------------
@pytest.mark.parametrize("line, words", [
    ({"frame": None, "t": 0.1}, "frame must be text, got null"),
    ({"frame": 123, "t": 0.1}, "frame must be text, got 123"),
    ({"frame": ["frames/000000.png"], "t": 0.1}, "frame must be text"),
    ({"frame": "frames/\x00.png", "t": 0.1}, "NUL"),
    ({"frame": "frames/000000.png", "t": "0.1"}, "t must be a number"),
    ({"frame": "frames/000000.png", "t": 1e300}, "t must be at most"),
    ({"t": 0.1}, 'needs "frame" and "t"'),
])
def test_bad_manifest_lines_are_one_line(capsys, tmp_path, line, words):
    folder = write_session(tmp_path / "s", [line, {"frame": "frames/000001.png", "t": 0.2}])
    code, _, err = run_cli(capsys, ["replay", folder, "--quick"])
    one_line_error(code, err, "manifest", words)


def test_fps_must_be_a_number(capsys, tmp_path):
    folder = write_session(tmp_path / "s", [{"frame": "frames/000000.png", "t": 0.0}])
    text = (folder / "manifest.jsonl").read_text().replace('"fps": 10.0', '"fps": "4"')
    (folder / "manifest.jsonl").write_text(text)
    code, _, err = run_cli(capsys, ["replay", folder, "--quick"])
    one_line_error(code, err, 'fps must be a number, got "4"')


def test_a_frame_that_is_a_symlink_loop_is_skipped_with_a_warning(tmp_path):
    from vision.session import read_session

    folder = write_session(tmp_path / "s", [{"frame": "frames/000000.png", "t": 0.0},
                                            {"frame": "frames/loop.png", "t": 0.1},
                                            {"frame": "frames/000001.png", "t": 0.2}])
    os.symlink("loop.png", folder / "frames" / "loop.png")
    session = read_session(folder)
    assert [f.path.name for f in session.frames] == ["000000.png", "000001.png"]
    assert any("loop.png" in w and "symlink loop" in w for w in session.warnings)


# --- pictures ----------------------------------------------------------------------------------
def _png_header(width: int, height: int, depth: int, colour: int) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    ihdr = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IEND", b"")


@pytest.mark.parametrize("width, height, depth, colour, words", [
    (12000, 12000, 16, 0, "more pixels than refcam reads"),  # the 0.8 MB PNG that took 7.6 GB
    (3800, 3800, 16, 6, "MB to decode"),  # 14.4 Mpx passes the pixel cap; 16-bit RGBA needs 217 MB
    (3900, 3900, 8, 3, "MB to decode"),  # a palette is expanded to BGRA, then copied to BGR: 106 MB
])
def test_a_picture_is_sized_from_its_header_before_decoding(capsys, tmp_path, monkeypatch, width, height, depth,
                                                             colour, words):
    def never(*args, **kwargs):
        raise AssertionError("decoded a picture that is too large")

    monkeypatch.setattr(cv2, "imdecode", never)
    path = tmp_path / "huge.png"
    path.write_bytes(_png_header(width, height, depth, colour))
    code, _, err = run_cli(capsys, ["observe", path])
    one_line_error(code, err, str(path), words)


def test_16_bit_pictures_are_converted_by_integer_shift(tmp_path):
    from vision.imageio import load_image

    grey = np.arange(64 * 48, dtype=np.uint32).reshape(48, 64).astype(np.uint16) * 21
    path = tmp_path / "g16.png"
    assert cv2.imwrite(str(path), grey)
    img = load_image(path)
    assert img.dtype == np.uint8 and img.shape == (48, 64, 3)
    assert np.array_equal(img[:, :, 1], (grey >> 8).astype(np.uint8))


@pytest.fixture
def cut_and_padded(tmp_path):
    data = STILL.read_bytes()
    cut = tmp_path / "cut.jpg"
    cut.write_bytes(data[:int(len(data) * 0.45)] + b"\xff\xd9")  # looks whole: ends with an end marker
    padded = tmp_path / "padded.jpg"
    padded.write_bytes(data + bytes(range(65)))  # a whole JPEG and 65 bytes after it
    return cut, padded


def test_truncation_is_the_decoders_verdict(tmp_path, cut_and_padded):
    from vision.imageio import ImageReadError, load_image

    cut, padded = cut_and_padded
    with pytest.raises(ImageReadError, match="truncated JPEG"):  # was accepted with 5 of 14 pieces
        load_image(cut)
    assert np.array_equal(load_image(padded), load_image(STILL))  # was refused as truncated


def test_decoder_chatter_never_reaches_stderr(tmp_path, cut_and_padded):
    # libjpeg used to print "Corrupt JPEG data: premature end of data segment" before refcam's line
    cut, padded = cut_and_padded
    code, _, err = refcam_subprocess("observe", cut)
    assert code == 2 and len(err.strip().splitlines()) == 1 and err.startswith("refcam: error: "), err
    assert "truncated JPEG" in err
    extraneous = tmp_path / "extraneous.jpg"  # libjpeg warns "3 extraneous bytes before marker": still whole
    data = STILL.read_bytes()
    extraneous.write_bytes(data[:-2] + b"\x00\x00\x00\xff\xd9")
    code, out, err = refcam_subprocess("observe", extraneous, "--camera-file", STILL_CAMERA)
    assert code == 0 and err == "", err
    assert "tornado/boat-2" in out


# --- calibrate --out -------------------------------------------------------------------------
def test_calibrate_out_never_overwrites_one_of_its_images(capsys, tmp_path):
    views = tmp_path / "views"
    views.mkdir()
    shutil.copyfile(STILL, views / "view-00.png")
    before = (views / "view-00.png").read_bytes()
    code, _, err = run_cli(capsys, ["calibrate", "--images", views, "--out", views / "view-00.png"])
    one_line_error(code, err, "would overwrite", "view-00.png")
    assert (views / "view-00.png").read_bytes() == before


# --- sources ---------------------------------------------------------------------------------
def _drain_in_thread(source, seconds: float = 10.0):
    """Iterate a source on a thread; returns (frames seen, the exception it ended with, finished?)."""
    result = {"n": 0, "exc": None}

    def run():
        try:
            for _ in source:
                result["n"] += 1
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            result["exc"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    finished = not t.is_alive()
    if not finished:
        source.close()
        t.join(5)
    return result["n"], result["exc"], finished


@pytest.mark.parametrize("realtime", [False, True])
def test_a_session_deleted_during_a_looping_replay_is_an_error_not_a_spin(tmp_path, realtime):
    from vision.sources import SessionSource, SourceError

    folder = write_session(tmp_path / "s", [{"frame": f"frames/{i:06d}.png", "t": i / 10} for i in range(3)])
    source = SessionSource(folder, realtime=realtime, loop=True)
    states = []
    source.on_state = lambda state, message: states.append((state, message))
    it = iter(source)
    next(it)
    shutil.rmtree(folder)
    n, exc, finished = _drain_in_thread(_Rest(it))
    assert finished, "the replay kept going on a deleted session"
    assert isinstance(exc, SourceError) and "vanished" in str(exc)
    assert source.state == "error" and states[-1][0] == "error" and "vanished" in source.status


class _Rest:
    """The rest of an iterator already started, as an iterable."""

    def __init__(self, it):
        self.it = it

    def __iter__(self):
        return self.it

    def close(self):
        pass


def test_a_looping_replay_whose_frames_all_fail_stops_with_an_error(tmp_path):
    from vision.sources import SessionSource, SourceError

    folder = write_session(tmp_path / "s", [{"frame": f"frames/{i:06d}.png", "t": i / 10} for i in range(3)])
    for f in (folder / "frames").iterdir():
        f.write_text("not a picture\n")
    source = SessionSource(folder, realtime=False, loop=True)
    n, exc, finished = _drain_in_thread(source)
    assert finished and n == 0 and isinstance(exc, SourceError) and "none of its 3 frames" in str(exc)
    assert source.state == "error"


def test_a_replay_that_ends_says_so(tmp_path):
    from vision.sources import SessionSource

    folder = write_session(tmp_path / "s", [{"frame": f"frames/{i:06d}.png", "t": i / 10} for i in range(3)])
    source = SessionSource(folder, realtime=False)
    assert len(list(source)) == 3 and source.state == "ended" and "finished" in source.state_message


def test_a_video_deleted_before_its_next_lap_is_an_error(tmp_path):
    from vision.sources import SourceError, VideoSource

    path = write_grey_video(tmp_path / "clip.avi", 4)
    source = VideoSource(path, realtime=False, loop=True)
    it = iter(source)
    next(it)
    path.unlink()
    n, exc, finished = _drain_in_thread(_Rest(it))
    assert finished and isinstance(exc, SourceError) and "vanished" in str(exc)
    assert source.state == "error"


class StandInCapture(FakeCapture):
    """FakeCapture that counts how often it is opened and can raise when opened."""

    opens = 0

    def __init__(self, world):
        StandInCapture.opens += 1
        if world.get("raise_on_open"):
            raise RuntimeError("backend fell over")
        super().__init__(world)


def test_a_lost_camera_is_retried_with_backoff_and_reported(monkeypatch):
    from vision.sources import CameraSource

    monkeypatch.setattr(CameraSource, "RETRY_S", 0.02)
    monkeypatch.setattr(CameraSource, "MAX_RETRY_S", 0.16)
    world = {"plugged": True, "n": 0}
    source = CameraSource(0, capture_factory=lambda i: StandInCapture(world))
    states = []
    source.on_state = lambda state, message: states.append((state, message))
    it = iter(source)
    next(it)
    world["plugged"] = False
    world["raise_on_open"] = True  # an unplugged device can make the backend raise: still retried
    deadline = time.monotonic() + 5
    while not any(m.endswith("0.16 s") for _, m in states) and time.monotonic() < deadline:
        time.sleep(0.01)
    opens = StandInCapture.opens
    time.sleep(0.5)
    assert StandInCapture.opens - opens <= 4  # one try per 0.16 s at most: no busy loop
    lost = [m for s, m in states if s == "lost"]
    assert source.state == "lost" and source.status.startswith("camera lost: camera 0")
    pauses = [float(m.rsplit("retrying in ", 1)[1].split()[0]) for m in lost]
    assert pauses == [0.02, 0.04, 0.08, 0.16]  # doubling, then capped
    world.update(plugged=True, raise_on_open=False)
    got = []
    reader = threading.Thread(target=lambda: got.append(next(it)), daemon=True)
    reader.start()
    reader.join(5)
    assert got and source.state == "running" and "back" in source.status
    source.close()
