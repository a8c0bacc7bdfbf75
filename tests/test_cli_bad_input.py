"""Bad input through the `refcam` command line, as a demanding user types it.

Every case must end with exactly one stderr line "refcam: error: ..." that quotes the bad
input, exit code 2, no traceback, and must leave the user's own files as they were.
Valid pictures of other kinds (grey, RGBA, 16-bit) must still be observed.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from webui.cli import main
from tests.conftest import run_cli

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples"
STILL = SAMPLES / "tornado" / "001.jpg"  # roundabout-river, every course piece in view
STILL_CAMERA = SAMPLES / "tornado" / "001.camera.json"
STILL_4K_CAMERA = SAMPLES / "tornado" / "002.camera.json"
KANG_STILL = SAMPLES / "kang" / "000.jpg"
KANG_SCENE = SAMPLES / "kang" / "000.scene.json"
KANG_SESSION = SAMPLES / "sessions" / "kang"



def run_subprocess(argv: list, timeout: float = 60) -> tuple[int, str, str]:
    """A separate process, for faults that would kill the test process (OpenCV crashes) or
    that native code writes straight to file descriptor 2."""
    proc = subprocess.run([sys.executable, "-m", "webui.cli", *map(str, argv)], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)
    return proc.returncode, proc.stdout, proc.stderr


def assert_one_line_error(code, err: str, *quoted: str) -> str:
    assert code == 2, err
    assert "Traceback" not in err, err
    lines = err.rstrip("\n").splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("refcam: error: "), err
    for q in quoted:
        assert q in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def files(tmp_path):
    """Copies of a sample still, its camera file and a scene in a scratch folder (the tests may try
    to destroy them), plus the odd files a user has lying around."""
    f = {
        "image": tmp_path / "photo.jpg",
        "camera": tmp_path / "camera.json",
        "scene": tmp_path / "scene.json",
        "empty": tmp_path / "empty.jpg",
        "folder": tmp_path / "folder.jpg",
        "list_camera": tmp_path / "list-camera.json",
    }
    shutil.copyfile(STILL, f["image"])
    shutil.copyfile(STILL_CAMERA, f["camera"])
    shutil.copyfile(KANG_SCENE, f["scene"])
    f["empty"].write_bytes(b"")
    f["folder"].mkdir()
    f["list_camera"].write_text("[1, 2, 3]\n")
    return f


# --- outputs that would destroy an input ------------------------------------------------------

@pytest.mark.parametrize("argv, victim, quoted", [
    (["observe", "{image}", "--annotate", "{image}"], "image", "--annotate"),
    (["observe", "{image}", "--camera-file", "{camera}", "--annotate", "{image}"], "image", "the image"),
    (["rank", "{image}", "--camera-file", "{camera}", "--course", "roundabout-river", "--annotate", "{image}"],
     "image", "the image"),
    (["render", "{scene}", "{tmp}/out.jpg", "--truth", "{scene}"], "scene", "the scene"),
    (["render", "{scene}", "{tmp}/out.jpg", "--truth", "{tmp}/./out.jpg"], None, "the output image"),
])
def test_an_output_never_overwrites_an_input(capsys, files, tmp_path, argv, victim, quoted):
    names = {k: str(v) for k, v in files.items()} | {"tmp": str(tmp_path)}
    argv = [a.format(**names) for a in argv]
    before = files[victim].read_bytes() if victim else None
    code, _, err = run_cli(capsys, argv)
    assert_one_line_error(code, err, quoted, "would overwrite")
    if victim:
        assert files[victim].read_bytes() == before
    assert not (tmp_path / "out.jpg").exists()


def test_render_default_truth_beside_out_never_overwrites_the_scene(capsys, files, tmp_path):
    scene = tmp_path / "out.truth.json"  # the truth file `render scene out.jpg` would write
    shutil.copyfile(files["scene"], scene)
    before = scene.read_bytes()
    code, _, err = run_cli(capsys, ["render", scene, tmp_path / "out.jpg"])
    assert_one_line_error(code, err, str(scene), "would overwrite the scene")
    assert scene.read_bytes() == before


# --- scene and camera files ---------------------------------------------------------------------

def _scene_with(files, tmp_path, change) -> Path:
    scene = json.loads(files["scene"].read_text())
    change(scene)
    path = tmp_path / "changed.scene.json"
    path.write_text(json.dumps(scene))
    return path


@pytest.mark.parametrize("change, quoted", [
    (lambda s: s["camera"].update(image_size=[1920.5, 1080]), "1920.5"),
    (lambda s: s["table"].update(size_mm=[-1600, 1000]), "-1600"),
    (lambda s: s["pieces"].append({"name": "kang/giant-9", "x_mm": 0, "y_mm": 0, "theta_deg": 0}), "kang/giant-9"),
    (lambda s: s["pieces"].append(dict(s["pieces"][1])), "kang/medium-1"),  # twice
    (lambda s: s.pop("camera"), "camera"),
])
def test_bad_scene(capsys, files, tmp_path, change, quoted):
    scene = _scene_with(files, tmp_path, change)
    code, _, err = run_cli(capsys, ["render", scene, tmp_path / "out.jpg"])
    assert_one_line_error(code, err, quoted)
    assert not (tmp_path / "out.jpg").exists()


def test_scene_too_large_to_render(files, tmp_path):
    # the process used to be killed by the kernel's OOM killer: run it apart from pytest
    scene = _scene_with(files, tmp_path, lambda s: s["camera"].update(image_size=[100000, 100000]))
    code, _, err = run_subprocess(["render", scene, tmp_path / "out.jpg"])
    assert_one_line_error(code, err, "100000x100000")


@pytest.mark.parametrize("image_size", [[1920.5, 1080], ["Infinity", 1080], [True, 1080]])
def test_camera_file_image_size_must_be_whole_pixels(capsys, files, tmp_path, image_size):
    cam = json.loads(files["camera"].read_text())
    cam["image_size"] = [float("inf") if v == "Infinity" else v for v in image_size]
    path = tmp_path / "odd-camera.json"
    path.write_text(json.dumps(cam))  # Python writes inf as Infinity, as a careless tool might
    code, _, err = run_cli(capsys, ["observe", files["image"], "--camera-file", path])
    assert_one_line_error(code, err, str(path), "image_size")


@pytest.mark.parametrize("argv", [
    ["rank", "{image}", "--camera-file", str(STILL_4K_CAMERA)],
    ["observe", "{image}", "--camera-file", str(STILL_4K_CAMERA)],
    ["replay", str(KANG_SESSION), "--camera-file", str(STILL_4K_CAMERA)],
])
def test_a_camera_file_for_another_size_is_named(capsys, files, argv):
    argv = [a.format(image=files["image"]) for a in argv]
    code, _, err = run_cli(capsys, argv)
    assert_one_line_error(code, err, str(STILL_4K_CAMERA), "3840x2160")


# --- images ---------------------------------------------------------------------------------------

def test_image_of_the_wrong_game_says_what_it_shows(capsys):
    code, _, err = run_cli(capsys, ["rank", KANG_STILL, "--course", "splashway"])
    assert_one_line_error(code, err, "no tornado stickers", "kang")


@pytest.mark.parametrize("argv, quoted", [
    (["observe", "{empty}"], "empty.jpg"),
    (["observe", "{folder}"], "folder.jpg"),
    (["observe", "{tiny}"], "1x1"),
    (["observe", "{image}", "--camera-file", "{list_camera}"], "list-camera.json"),
    (["observe", "{image}", "--camera-file", "{folder}"], "folder.jpg"),
    (["observe", "{image}", "--game", "KANG"], "'KANG'"),
    (["observe", "{image}", "--annotate", "/proc/refcam-annotated.png"], "/proc/refcam-annotated.png"),
    (["rank", "{image}", "--camera-file", "{camera}", "--course", "roundabout-river",
      "--annotate", "/proc/refcam-annotated.png"], "/proc/refcam-annotated.png"),
    (["rank", "{image}", "--weights", "boat-1=abc"], "boat-1=abc"),
    (["rank", "{image}", "--weights", "boat-9=2"], "boat-9"),
    (["rank", "{image}", "--course", "{course_missing_key}"], "course-missing-key.json"),
    (["render", "{scene}", "/proc/refcam-out.jpg"], "/proc/refcam-out.jpg"),
    (["markers", "--game", "kang", "--out", "/proc/refcam-markers"], "/proc/refcam-markers"),
    (["markers", "--game", "KANG", "--out", "{tmp}/m"], "'KANG'"),
])
def test_bad_arguments_and_files(capsys, files, tmp_path, argv, quoted):
    tiny = tmp_path / "tiny.png"
    cv2.imwrite(str(tiny), np.zeros((1, 1, 3), np.uint8))
    course = tmp_path / "course-missing-key.json"
    course.write_text(json.dumps({"id": "my-course"}))  # no "sequence"
    names = {k: str(v) for k, v in files.items()} | {"tmp": str(tmp_path), "tiny": str(tiny),
                                                     "course_missing_key": str(course)}
    code, _, err = run_cli(capsys, [a.format(**names) for a in argv])
    assert_one_line_error(code, err, quoted)


@pytest.mark.parametrize("kind", ["grey-jpeg", "rgba-png", "16bit-png", "16bit-grey-png"])
def test_other_kinds_of_valid_picture_are_observed(capsys, tmp_path, kind):
    bgr = cv2.imread(str(STILL))
    pictures = {
        "grey-jpeg": ("g.jpg", cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)),
        "rgba-png": ("a.png", cv2.cvtColor(bgr, cv2.COLOR_BGR2BGRA)),
        "16bit-png": ("c16.png", bgr.astype(np.uint16) * 257),
        "16bit-grey-png": ("g16.png", cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY).astype(np.uint16) * 257),
    }
    name, pixels = pictures[kind]
    path = tmp_path / name
    assert cv2.imwrite(str(path), pixels)
    code, out, err = run_cli(capsys, ["observe", path, "--camera-file", STILL_CAMERA, "--json"])
    assert code == 0, err
    converted = {p["name"] for p in json.loads(out)["pieces"]}
    code, out, err = run_cli(capsys, ["observe", STILL, "--camera-file", STILL_CAMERA, "--json"])
    assert code == 0, err
    original = {p["name"] for p in json.loads(out)["pieces"]}
    assert len(original) >= 8 and converted == original


# --- cameras, hosts, ports, sessions --------------------------------------------------------------

@pytest.mark.parametrize("command", [["serve"], ["record", "--out", "{tmp}/rec"], ["calibrate", "--out", "{tmp}/c.json"]])
@pytest.mark.parametrize("index, quoted", [("-1", "-1"), ("99999999999999999999", "99999999999999999999")])
def test_camera_index_that_cannot_exist(tmp_path, command, index, quoted):
    # -1 used to crash OpenCV (segmentation fault, exit 139); a huge one raised cv2.error
    argv = [a.format(tmp=tmp_path) for a in command] + ["--camera", index]
    code, _, err = run_subprocess(argv)
    assert_one_line_error(code, err, quoted)
    assert not (tmp_path / "rec").exists()


@pytest.mark.parametrize("host", ["999.1.1.1", "no.such.host.invalid", ""])
def test_serve_host_that_does_not_resolve(capsys, tmp_path, host):
    code, _, err = run_cli(capsys, ["serve", "--host", host, "--port", "8999", "--record", tmp_path / "rec"])
    assert_one_line_error(code, err, f"--host {host!r}" if host else "--host: empty value")
    assert not (tmp_path / "rec").exists()  # refused before the recording was opened


@pytest.mark.parametrize("argv, quoted", [
    (["serve", "--port", "99999"], "99999"),
    (["serve", "--port", "0"], "--port 0"),
    (["serve", "--replay", "{tmp}/no-such-session"], "no-such-session"),
    (["replay", "{tmp}/no-such-session"], "no-such-session"),
    (["serve", "--weights", "boat-1=3,boat-1=4"], "boat-1=3,boat-1=4"),
    (["replay", str(KANG_SESSION), "--weights", "boat-2=1,tornado/boat-2=5"], "boat-2"),
    (["replay", str(KANG_SESSION), "--stable-s", "-1"], "--stable-s -1"),  # replay used to run with these
    (["replay", str(KANG_SESSION), "--stable-s", "1e9"], "--stable-s 1000000000"),
    (["replay", str(KANG_SESSION), "--course", "moon-river"], "'moon-river'"),
    (["serve", "--course", "{tmp}/my-course.json"], "my-course.json"),  # serve now reads course files, as rank
])
def test_bad_serve_and_replay_settings(capsys, tmp_path, argv, quoted):
    (tmp_path / "my-course.json").write_text(json.dumps({"id": "mine", "sequence": [{"kind": "start-gate"}]}))
    code, _, err = run_cli(capsys, [a.format(tmp=tmp_path) for a in argv])
    assert_one_line_error(code, err, quoted)


def test_serve_video_that_is_not_a_video(tmp_path):
    # FFmpeg used to add its own "[mjpeg @ 0x...] No JPEG data found" lines on stderr
    text = tmp_path / "clip.mp4"
    text.write_text("not a video\n")
    code, _, err = run_subprocess(["serve", "--video", text])
    assert_one_line_error(code, err, str(text))


def test_serve_video_that_is_a_folder(capsys, tmp_path):
    code, _, err = run_cli(capsys, ["serve", "--video", tmp_path])
    assert_one_line_error(code, err, str(tmp_path), "folder")


def test_recording_into_a_folder_that_already_holds_files(tmp_path):
    folder = tmp_path / "holiday-photos"
    folder.mkdir()
    (folder / "frames").mkdir()
    (folder / "frames" / "000000.jpg").write_bytes(b"the user's own picture")
    (folder / "notes.txt").write_text("keep me\n")
    # a subprocess: before the fix this started serving (and never returned)
    code, _, err = run_subprocess(["serve", "--record", folder, "--port", "8999"], timeout=30)
    assert_one_line_error(code, err, str(folder), "not empty")
    assert sorted(p.name for p in folder.rglob("*")) == ["000000.jpg", "frames", "notes.txt"]
    assert (folder / "frames" / "000000.jpg").read_bytes() == b"the user's own picture"


def test_recording_into_an_existing_session_is_refused(tmp_path):
    folder = tmp_path / "session"
    shutil.copytree(KANG_SESSION, folder)
    before = (folder / "manifest.jsonl").read_bytes()
    code, _, err = run_subprocess(["serve", "--record", folder, "--port", "8999"], timeout=30)
    assert_one_line_error(code, err, str(folder), "already holds a session")
    assert (folder / "manifest.jsonl").read_bytes() == before


# --- --json on every command (SPEC section 4) -------------------------------------------------------

def test_serve_json_prints_one_document_once_listening(tmp_path):
    import socket
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "webui.cli", "serve", "--port", str(port), "--fast", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    try:
        doc = json.loads(proc.stdout.readline())
        assert doc["url"] == f"http://127.0.0.1:{port}/" and doc["port"] == port and doc["game"] == "tornado"
        with urllib.request.urlopen(doc["url"], timeout=10) as page:
            assert page.status == 200
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=30)
    assert out.strip() == "", out  # nothing else on stdout
    assert "Traceback" not in err, err


@pytest.mark.parametrize("host, url", [("127.0.0.1", "http://127.0.0.1:8000/"), ("0.0.0.0", "http://127.0.0.1:8000/"),
                                       ("::1", "http://[::1]:8000/"), ("::", "http://127.0.0.1:8000/")])
def test_serve_page_url(host, url):
    from webui.commands.serve import page_url

    assert page_url(host, 8000) == url


# --- file names a shell lets through -----------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["observe", "{tmp}/no\nsuch.jpg"],
    ["replay", "{tmp}/no\r\nsession"],
    ["render", "{tmp}/no\nscene.json", "{tmp}/out.jpg"],
    ["serve", "--video", "{tmp}/no\nclip.mp4"],
])
def test_a_line_break_in_a_file_name_keeps_the_error_on_one_line(capsys, tmp_path, argv):
    code, _, err = run_cli(capsys, [a.format(tmp=tmp_path) for a in argv])
    assert_one_line_error(code, err, "\\n")


# --- observation files given to `rank` ----------------------------------------------------------------

@pytest.fixture(scope="module")
def observation_doc(tmp_path_factory):
    """`refcam observe --json` of a sample still whose course pieces are all in view."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["observe", str(STILL), "--camera-file", str(STILL_CAMERA), "--json"]) == 0
    return json.loads(out.getvalue())


def _boat(doc) -> dict:
    return next(p for p in doc["pieces"] if p["name"].startswith("tornado/boat-"))


@pytest.mark.parametrize("change, quoted", [
    (lambda d: _boat(d).update(x_mm=float("nan")), "holds NaN"),  # used to rank the boat "outside"; now refused as it is read
    (lambda d: _boat(d).update(sigma_mm=-1.0), "sigma_mm -1.0"),  # used to narrow the equidistance band
    (lambda d: d.update(warnings="oops"), "'warnings'"),  # used to print one warning per character
    (lambda d: d.update(pieces={}), "'pieces' list"),
    (lambda d: _boat(d).pop("x_mm"), "has no 'x_mm'"),
])
def test_bad_observation_file(capsys, tmp_path, observation_doc, change, quoted):
    doc = json.loads(json.dumps(observation_doc))
    change(doc)
    path = tmp_path / "observation.json"
    path.write_text(json.dumps(doc))
    code, _, err = run_cli(capsys, ["rank", path, "--course", "roundabout-river"])
    assert_one_line_error(code, err, str(path), quoted)


def test_two_boats_with_the_same_id_in_an_observation_file(capsys, tmp_path, observation_doc):
    doc = json.loads(json.dumps(observation_doc))
    doc["pieces"].append(dict(_boat(doc)))
    path = tmp_path / "observation.json"
    path.write_text(json.dumps(doc))
    code, _, err = run_cli(capsys, ["rank", path, "--course", "roundabout-river"])
    assert_one_line_error(code, err, "two boats with the same id", _boat(doc)["name"])


def test_good_observation_file_still_ranks(capsys, tmp_path, observation_doc):
    path = tmp_path / "observation.json"
    path.write_text(json.dumps(observation_doc))
    code, out, err = run_cli(capsys, ["rank", path, "--course", "roundabout-river", "--json"])
    assert code == 0, err
    assert len(json.loads(out)["ranking"]) >= 2


def test_version(capsys):
    code, out, _ = run_cli(capsys, ["--version"])
    assert code == 0 and out.startswith("refcam ")


def _subcommands() -> dict:
    from webui.cli import build_parser

    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    return dict(action.choices)


def _leaf_commands() -> dict:
    """Every runnable command: `refcam NAME`, and `refcam GAME NAME` under a game's group."""
    import argparse

    out = {}
    for name, parser in _subcommands().items():
        groups = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not groups:
            out[name] = parser
        for group in groups:
            out.update({f"{name} {sub}": p for sub, p in group.choices.items()})
    return out


@pytest.mark.parametrize("command", sorted(_leaf_commands()))
def test_every_command_has_help_and_json(capsys, command):
    code, out, _ = run_cli(capsys, [*command.split(), "--help"])
    assert code == 0 and out.startswith(f"usage: refcam {command}")
    options = {s for a in _leaf_commands()[command]._actions for s in a.option_strings}
    assert "--json" in options  # SPEC section 4: all commands accept --json


def _png_header_only(width: int, height: int) -> bytes:
    """A PNG whose header claims width x height grey pixels (no pixel data: never decoded)."""
    import struct
    import zlib

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IEND", b"")


@pytest.mark.parametrize("width, height", [(14000, 13000), (30000, 30000)])
def test_a_picture_larger_than_any_camera_is_refused_before_decoding(capsys, tmp_path, width, height):
    # a 1 MB PNG of 30000x30000 used to take 7 GB of memory and 30 s before "no stickers"
    path = tmp_path / "huge.png"
    path.write_bytes(_png_header_only(width, height))
    code, _, err = run_cli(capsys, ["observe", path])
    assert_one_line_error(code, err, str(path), "more pixels than refcam reads")


@pytest.mark.parametrize("argv, quoted", [
    (["observe", str(STILL), "--camera-file", ""], "--camera-file"),  # used to run without the camera file
    (["observe", str(STILL), "--annotate", ""], "--annotate"),  # used to skip the picture silently
    (["markers", "--game", "kang", "--out", ""], "--out"),  # used to write into the current folder
    (["serve", "--record", ""], "--record"),  # used to serve without recording
    (["render", str(KANG_SCENE), ""], "out"),  # used to raise ValueError (traceback)
    (["rank", str(STILL), "--history", str(STILL), ""], "--history"),
])
def test_an_empty_value_is_refused(capsys, tmp_path, monkeypatch, argv, quoted):
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(capsys, argv)
    assert_one_line_error(code, err, f"argument {quoted}: empty value")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("content, quoted", [
    ("text", "is a text file"),
    ("truncated", "truncated JPEG"),  # imread half-decoded it, and libjpeg added its own stderr line
])
def test_calibrate_on_a_picture_that_is_not_whole(tmp_path, content, quoted):
    views = tmp_path / "views"
    views.mkdir()
    bad = views / "view-01.jpg"
    bad.write_bytes(b"not a picture\n" if content == "text" else STILL.read_bytes()[:5000])
    code, _, err = run_subprocess(["calibrate", "--images", views, "--out", tmp_path / "camera.json"])
    assert_one_line_error(code, err, str(bad), quoted)
    assert not (tmp_path / "camera.json").exists()


@pytest.mark.parametrize("damage, quoted", [
    ("last-frame-text", "000055.jpg is a text file"),  # the last frame's warning used to be lost
    ("outside", "outside the session folder"),  # used to be read (any file of the user's)
])
def test_replay_reports_every_bad_frame(capsys, tmp_path, damage, quoted):
    session = tmp_path / "session"
    shutil.copytree(KANG_SESSION, session)
    if damage == "last-frame-text":
        (session / "frames" / "000055.jpg").write_text("hi\n")
    else:
        with open(session / "manifest.jsonl", "a") as fh:
            fh.write(json.dumps({"frame": "../../../../etc/hostname", "t": 99.0}) + "\n")
    code, out, err = run_cli(capsys, ["replay", session, "--quick", "--json"])
    assert code == 0, err
    assert isinstance(json.loads(out), list)
    warnings = [l for l in err.splitlines() if l.startswith("refcam: warning:")]
    assert len(warnings) == 1 and quoted in warnings[0], err


# --- the page's settings endpoint -------------------------------------------------------------------

@pytest.fixture
def page(tmp_path):
    from tests.live_helpers import move_script, scripted_observe, write_session
    from vision.sources import SessionSource
    from vision.tracking import TrackerSettings
    from webui.app import create_app
    from webui.live import LiveEngine, LiveSettings

    source = SessionSource(write_session(tmp_path / "s", 5, game="kang"), realtime=False)
    engine = LiveEngine(source, scripted_observe(move_script("kang")),
                        LiveSettings(game="kang", tracker=TrackerSettings(stable_s=0.5)))
    app = create_app({"TESTING": True, "ENGINE": engine, "START_ENGINE": False, "KEEPALIVE_S": 0.2})
    yield app.test_client()
    engine.stop()


@pytest.mark.parametrize("body, quoted", [
    ({"weights": {"boat-1": "abc"}}, "abc"),  # these three used to answer 500 with a traceback in the log
    ({"weights": 5}, "weights"),
    ({"course": 5}, "course"),
    ([1, 2], "JSON object"),
])
def test_page_settings_with_bad_values_answer_400(page, body, quoted):
    r = page.post("/api/config", json=body)
    assert r.status_code == 400 and quoted in r.get_json()["error"]


def test_page_settings_take_weights_as_an_object(page):
    r = page.post("/api/config", json={"game": "tornado", "weights": {"boat-1": 3, "boat-2": 1}})
    assert r.status_code == 200, r.get_json()
    options = {o["name"]: o["value"] for o in r.get_json()["config"]["options"]}
    assert options["weights"] == "boat-1=3.0,boat-2=1.0"


def test_serve_accepts_a_course_file(tmp_path):
    from webui.cli import build_parser
    from webui.commands.serve import build_engine_config

    course = tmp_path / "my-course.json"
    shutil.copyfile(REPO / "referee" / "data" / "courses" / "splashway.json", course)
    args = build_parser().parse_args(["serve", "--course", str(course), "--fast"])
    config = build_engine_config(args)
    try:
        assert config["OPTIONS"]["course"] == str(course)
    finally:
        config["SOURCE"].close()


def test_serve_replay_takes_the_sessions_own_course_as_replay_does():
    """Issue 21: the page replaying a session uses its course.json unless --course is given."""
    from webui.cli import build_parser
    from webui.commands.serve import build_engine_config

    session = SAMPLES / "sessions" / "tornado-race"
    if not (session / "course.json").is_file():
        pytest.skip("the race session is not generated (make samples)")
    said = io.StringIO()
    config = build_engine_config(build_parser().parse_args(["serve", "--replay", str(session), "--fast"]), said)
    try:
        assert config["OPTIONS"]["course"] == str(session / "course.json")
    finally:
        config["SOURCE"].close()
    assert "course.json is used" in said.getvalue()


def test_rank_on_another_course_is_refused_naming_what_contradicts_it(capsys):
    # samples/tornado/000.jpg is Raindrop Road: the course given does not fit the pieces in view
    # (issue 21), with or without --strict
    for strict in ([], ["--strict"]):
        code, _, err = run_cli(capsys, ["rank", SAMPLES / "tornado" / "000.jpg", "--course", "tornado-circuit"]
                               + strict)
        assert_one_line_error(code, err, "'tornado-circuit'", "does not fit the pieces in view", "raindrop-road")


def test_rank_without_course_identifies_it_from_the_pieces_in_view(capsys):
    code, out, err = run_cli(capsys, ["rank", SAMPLES / "tornado" / "000.jpg", "--camera-file",
                                      SAMPLES / "tornado" / "000.camera.json", "--json"])
    doc = json.loads(out)
    assert code == 0 and doc["course"] == "raindrop-road"
    assert any(w.startswith("no --course given: the pieces in view fit only raindrop-road") for w in doc["warnings"])


def test_rank_without_course_and_nothing_to_tell_lists_the_courses(capsys, tmp_path):
    path = tmp_path / "obs.json"
    path.write_text(json.dumps({"game": "tornado", "frame": {}, "pieces": [
        {"name": "tornado/boat-1", "x_mm": 0, "y_mm": 0, "theta_deg": 0, "sigma_mm": 0.5}]}))
    code, _, err = run_cli(capsys, ["rank", path])
    assert_one_line_error(code, err, "fit 4 courses", "raindrop-road", "splashway", "pass --course")


@pytest.mark.parametrize("weights,needle", [("boat-1=-3", ">= 0"), ("boat-2=1,boat-2=5", "two weights")])
def test_rank_weights_are_checked_like_serve(weights, needle, capsys, tmp_path):
    """rank, serve and replay read --weights through one parser (referee.tornado.standings)."""
    path = tmp_path / "obs.json"
    path.write_text(json.dumps({"game": "tornado", "pieces": [], "frame": {}}))
    assert main(["rank", str(path), "--weights", weights]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("refcam: error:") and needle in err and "\n" not in err


def test_rank_course_that_is_a_folder(capsys, tmp_path):
    path = tmp_path / "obs.json"
    path.write_text(json.dumps({"game": "tornado", "pieces": [], "frame": {}}))
    assert main(["rank", str(path), "--course", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "is a folder" in err and str(tmp_path) in err and "\n" not in err
