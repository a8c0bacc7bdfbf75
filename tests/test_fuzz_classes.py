"""Fuzzing the input classes that once cost seconds per byte or crashed an ordinary photo:

* strings full of escaped quotes (up to 1 MB) in every JSON file refcam reads and every POST
  route of the page (the depth scan's regular expression once took the square of their length);
* checkerboards and dense sheets of markers (a warp size assertion; a detector quadratic in its
  candidates);
* progressive JPEGs of thousands of scans;
* every numeric field of a render scene at and past its declared range;
* bad camera URLs, and catalogs whose names and words are not text.

Each input must end in a value or one line (exit 0 or 2), never a traceback, and cost at most
HANG_CPU_S of CPU (a hang, for a file under 1 MB). Short and seeded in `make test`; `make fuzz`
runs the long campaign (HYPOTHESIS_PROFILE=long, FUZZ_SCALE multiplies) and adds the outcomes to
FUZZ_REPORT with test_fuzz_loaders' report."""

from __future__ import annotations

import contextlib
import copy
import json
import resource
import struct

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.errors import RefcamError
from tests.test_fuzz_loaders import (CAMERA, CATALOG, COURSE, LONG, MANIFEST_HEADER, OBSERVATION, SCENE,
                                     check_loader, examples, fuzz_report, record, run_cli)

__all__ = ["fuzz_report"]  # the module's report fixture (autouse) comes with the import

HANG_CPU_S = 10.0  # CPU seconds for one input under 1 MB
MAX_ESCAPED_BYTES = 1_000_000


@contextlib.contextmanager
def cpu_bound(target: str, seconds: float = HANG_CPU_S):
    """The CPU time (this process, every thread) one input costs must stay under `seconds`."""
    def cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    start = cpu()
    yield
    spent = cpu() - start
    if spent > seconds:
        record(target, "FAILURE:hang")
    assert spent <= seconds, f"{target}: {spent:.1f} s of CPU"


# --- escaped quotes in every JSON argument ------------------------------------------------------
@st.composite
def escaped_quotes(draw) -> str:
    """A JSON string (or the start of one) of n escaped quotes, n up to MAX_ESCAPED_BYTES / 2."""
    n = draw(st.one_of(st.integers(0, 2_000), st.integers(2_000, MAX_ESCAPED_BYTES // 2)))
    body = "\\\"" * n
    ending = draw(st.sampled_from(['"', "", '\\', '"]', '"}']))
    return '"' + body + ending


def _with_string(base, text: str, where: int) -> str:
    """base as JSON with its where-th value replaced by the raw text (or the whole file being it)."""
    doc = copy.deepcopy(base)
    marker = "@@ESCAPED@@"
    slots = []

    def walk(node):
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, value in items:
            slots.append((node, key))
            walk(value)

    walk(doc)
    if not slots or where % (len(slots) + 1) == len(slots):
        return text
    node, key = slots[where % (len(slots) + 1)]
    node[key] = marker
    return json.dumps(doc).replace(f'"{marker}"', text, 1)


def _loaders():
    from calibration.camera import CameraModel
    from referee.catalog import load_user_catalog
    from referee.kang.commands import load_position
    from synth.render import load_scene
    from vision.session import read_session

    def course(path):
        from referee.tornado.course_spec import load_course
        return load_course(str(path))

    def session(path):
        folder = path.parent / "session"
        folder.mkdir(exist_ok=True)
        (folder / "manifest.jsonl").write_text(json.dumps(MANIFEST_HEADER) + "\n" + path.read_text() + "\n")
        return read_session(folder)

    return {"camera file": (CAMERA, CameraModel.load), "scene": (SCENE, load_scene),
            "observation": (OBSERVATION, _observation),
            "course": (COURSE, course), "catalog": (CATALOG, load_user_catalog),
            "manifest line": ({"frame": "frames/000000.jpg", "t": 0.0}, session),
            "kang position file": ({"board": "x"}, lambda p: load_position(str(p)))}


def _observation(path):
    from webui.tools import load_observation_file

    return load_observation_file(str(path))


LOADERS = sorted(_loaders())


@pytest.mark.parametrize("target", LOADERS)
@given(text=escaped_quotes(), where=st.integers(0, 10_000))
@examples(short=3, long=300)
def test_escaped_quotes_in_every_json_file(tmp_path_factory, target, text, where):
    base, load = _loaders()[target]
    path = tmp_path_factory.mktemp("esc") / ("position.json" if "position" in target else "input.json")
    path.write_text(_with_string(base, text, where))
    with cpu_bound(f"escaped quotes: {target}"):
        check_loader(f"escaped quotes: {target}", lambda: load(path))


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    from tests.test_fuzz_routes import LAN, TOKEN
    from vision.sources import SessionSource
    from webui.app import create_app
    from webui.live import LiveEngine, LiveSettings
    from tests.live_helpers import move_script, scripted_observe, write_session

    folder = write_session(tmp_path_factory.mktemp("fuzzpost") / "s", 10, game="kang")
    engine = LiveEngine(SessionSource(folder, realtime=False), scripted_observe(move_script("kang")),
                        LiveSettings(game="kang"))
    app = create_app({"ENGINE": engine, "BIND_HOST": LAN, "TOKEN": TOKEN, "KEEPALIVE_S": 0.05})
    assert engine.done.wait(10)
    yield app
    engine.stop()


@pytest.mark.parametrize("route", ["/api/config", "/api/declare", "/api/settle"])
@given(text=escaped_quotes(), key=st.sampled_from(["game", "course", "weights", "pieces", "x"]))
@examples(short=3, long=300)
def test_escaped_quotes_in_every_post(page, route, text, key):
    from tests.test_fuzz_routes import LAN, TOKEN
    from webui.access import TOKEN_HEADER

    body = ('{"' + key + '": ' + text + "}").encode()
    host = f"{LAN}:8000"
    with cpu_bound(f"escaped quotes: POST {route}"):
        response = page.test_client().post(route, data=body, content_type="application/json",
                                           headers={"Host": host, "Origin": f"http://{host}", TOKEN_HEADER: TOKEN})
    code = response.status_code
    record(f"escaped quotes: POST {route}", f"{'accepted' if code < 400 else 'refused' if code < 500 else 'FAILURE'}"
                                            f":{code}")
    assert code < 500, response.get_data()[:300]
    if len(body) > 64 * 1024:
        assert code == 413
    if code >= 400:
        error = json.loads(response.get_data())["error"]
        assert "\n" not in error and len(error) <= 300


# --- busy pictures ------------------------------------------------------------------------------
def checkerboard(width: int, height: int, square: int) -> np.ndarray:
    y, x = np.mgrid[0:height, 0:width]
    return ((((x // square) + (y // square)) % 2) * 255).astype(np.uint8)


def marker_sheet(columns: int, rows: int, pitch: int) -> np.ndarray:
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    side = max(8, pitch * 3 // 4)
    sheet = np.full((rows * pitch, columns * pitch), 255, np.uint8)
    for i in range(rows):
        for j in range(columns):
            marker = cv2.aruco.generateImageMarker(dictionary, (i * columns + j) % 50, side)
            sheet[i * pitch + 2:i * pitch + 2 + side, j * pitch + 2:j * pitch + 2 + side] = marker
    return sheet


BUSY = st.one_of(
    st.tuples(st.just("checkerboard"), st.integers(200, 3000), st.integers(200, 2000), st.integers(6, 60)),
    st.tuples(st.just("markers"), st.integers(5, 70), st.integers(5, 60), st.integers(30, 60)))


@given(picture=BUSY, command=st.sampled_from(["observe", "rank", "kang state", "kayak state"]))
@examples(short=2, long=60)
def test_checkerboards_and_marker_sheets_in_every_image_command(tmp_path_factory, picture, command):
    kind, a, b, c = picture
    image = checkerboard(a, b, c) if kind == "checkerboard" else marker_sheet(a, b, c)
    path = tmp_path_factory.mktemp("busy") / "busy.png"
    cv2.imwrite(str(path), image)
    argv = command.split() + [path] + (["--course", "roundabout-river"] if command == "rank" else [])
    with cpu_bound(f"busy picture: {command}"):
        run_cli(f"busy picture: {command}", argv)


def many_scan_jpeg(scans: int, seed: int) -> bytes:
    """A progressive JPEG whose last scan is repeated until it holds `scans` scans."""
    rng = np.random.default_rng(seed)
    picture = rng.integers(0, 256, (120, 160, 3), dtype=np.uint8)
    ok, buf = cv2.imencode(".jpg", picture, [cv2.IMWRITE_JPEG_PROGRESSIVE, 1])
    data = buf.tobytes()
    last = data.rfind(b"\xff\xda")
    extra = max(0, scans - data.count(b"\xff\xda"))
    return data[:-2] + data[last:-2] * extra + b"\xff\xd9"


@given(scans=st.one_of(st.integers(1, 200), st.integers(200, 60_000)), seed=st.integers(0, 100))
@examples(short=3, long=100)
def test_many_scan_jpegs(tmp_path_factory, scans, seed):
    from vision import stream
    from vision.imageio import decode_image

    data = many_scan_jpeg(scans, seed)
    if len(data) > 1_000_000:
        data = data[:1_000_000 - 2] + b"\xff\xd9"
    path = tmp_path_factory.mktemp("scans") / "scans.jpg"
    path.write_bytes(data)
    with cpu_bound("many-scan JPEG"):
        check_loader("many-scan JPEG", lambda: decode_image(data, str(path)))
        stream.decode_frame(data)  # a camera's frame: decoded or dropped, never seconds
        run_cli("many-scan JPEG: observe", ["observe", path])


# --- render's numbers ---------------------------------------------------------------------------
EXTREMES = [0, -1, 0.5, 1, 8, 9, 20, 20.5, 100, 1e4, 1e5, 1.5e5, 1e9, 1e10, -1e10, 2**31, 1e300, -0.0]
NUMERIC_FIELDS = [("effects", "blur_sigma"), ("effects", "supersample"), ("effects", "noise_sigma"),
                  ("effects", "jpeg_quality"), ("effects", "seed"), ("table", "size_mm", 0), ("table", "size_mm", 1),
                  ("table", "theta_deg"), ("table", "centre_mm", 0), ("table", "texture_seed"),
                  ("camera", "pose", "rvec", 0), ("camera", "pose", "tvec", 2), ("pieces", 0, "x_mm"),
                  ("pieces", 0, "y_mm"), ("pieces", 0, "theta_deg"), ("effects", "lighting", "gradient"),
                  ("effects", "lighting", "brightness")]


def _set(doc, path, value) -> None:
    node = doc
    for key in path[:-1]:
        if isinstance(node, dict):
            node = node.setdefault(key, {} if not isinstance(key, int) else [])
        else:
            node = node[key]
    if isinstance(node, list) and path[-1] >= len(node):
        node.extend([0.0] * (path[-1] + 1 - len(node)))
    node[path[-1]] = value


@given(changes=st.lists(st.tuples(st.sampled_from(NUMERIC_FIELDS), st.sampled_from(EXTREMES)), min_size=1,
                        max_size=3))
@examples(short=3, long=150)
def test_render_numeric_fields_at_and_past_their_ranges(tmp_path_factory, changes):
    scene = copy.deepcopy(SCENE)
    scene["camera"]["image_size"] = [640, 360]  # the numbers are under test, not the size
    matrix = scene["camera"].get("camera_matrix")
    if matrix:
        scene["camera"]["camera_matrix"] = [[matrix[0][0] / 3, 0, matrix[0][2] / 3], [0, matrix[1][1] / 3,
                                            matrix[1][2] / 3], [0, 0, 1]]
    for path, value in changes:
        if path[:3] == ("camera", "pose", "rvec") or path[:3] == ("camera", "pose", "tvec"):
            scene["camera"]["pose"] = {"rvec": [3.0, 0.0, 0.0], "tvec": [0.0, 0.0, 1200.0]}
        _set(scene, path, value)
    folder = tmp_path_factory.mktemp("render")
    (folder / "scene.json").write_text(json.dumps(scene))
    with cpu_bound("render numbers", 30.0):  # a render itself takes a few seconds
        run_cli("render numbers", ["render", folder / "scene.json", folder / "out.jpg"])


# --- camera URLs and catalogs -------------------------------------------------------------------
URL_PARTS = st.sampled_from(["http://", "https://", "rtsp://", "ftp://", "", "http:///", "http://[::1", "http://[",
                             "http://user:pw@", "http://:@", "HTTP://", "http://127.0.0.1:", "http://[::1]:99999"])
URLS = st.tuples(URL_PARTS, st.text(max_size=30), st.sampled_from(["", "/video", "?pwd=secret x", "#f", ":abc",
                                                                    "\x1b[2J", "\n", "/%00"])).map("".join)


@given(url=URLS)
@examples(short=40, long=2_000)
def test_bad_camera_urls_are_one_line_without_the_password(url):
    from vision.stream import parse_camera, public_url

    def parse():
        try:
            parse_camera(url)
        except RefcamError as exc:
            assert "secret" not in str(exc) and "pw@" not in str(exc)
            raise
        public_url(url)

    check_loader("camera URL", parse)


@given(field=st.sampled_from(["family", "game", "description"]),
       value=st.one_of(st.dictionaries(st.text(max_size=3), st.integers(), max_size=2), st.lists(st.integers(),
                                                                                                max_size=2),
                       st.integers(), st.none(), st.text(max_size=20)),
       which=st.integers(0, 40))
@examples(short=10, long=300)
def test_catalogs_whose_names_and_words_are_not_text(tmp_path_factory, field, value, which):
    from referee.catalog import load_user_catalog

    catalog = copy.deepcopy(CATALOG)
    family = catalog["families"][which % len(catalog["families"])]
    family[field] = value
    path = tmp_path_factory.mktemp("cat") / "catalog.json"
    path.write_text(json.dumps(catalog))
    check_loader("catalog text fields", lambda: load_user_catalog(path))


def test_many_scan_jpeg_builder_makes_what_it_says():
    data = many_scan_jpeg(500, 1)
    assert data.count(b"\xff\xda") == 500 and data.startswith(b"\xff\xd8") and data.endswith(b"\xff\xd9")
    assert struct.unpack(">H", data[2:4])  # a marker segment follows SOI


# --- every lie of the camera server, through `record` -----------------------------------------
def _camera_modes() -> list[str]:
    from tests.fault_server import ALL_MODES

    short = ("not-http", "huge-chunk", "good-then-frozen", "flaky")
    return list(ALL_MODES) if LONG else list(short)


@pytest.mark.parametrize("mode", _camera_modes())
def test_record_on_every_lying_camera_ends_on_time_in_one_line(tmp_path, mode):
    """`record --seconds 1.5` on each of the fault server's 34 behaviours (a password in the URL):
    exit 0 with a recording, or 2 with one line; on time whatever the camera does (start-up's
    deadlines plus the seconds asked); the password never in any output."""
    import time

    from tests.fault_server import FaultServer

    with FaultServer(seconds=20) as server:
        url = server.url(mode).replace("http://", "http://viewer:pw-s3cret@") + "?pwd=pw-s3cret"
        t0 = time.monotonic()
        code, out, err = run_cli(f"camera: record ({mode})", ["record", "--camera", url, "--out",
                                                              tmp_path / "session", "--seconds", "1.5"])
        took = time.monotonic() - t0
    assert "pw-s3cret" not in out + err, err
    assert took < 20.0, (mode, took)  # start-up gives up within 5 + 3 s; recording stops at 1.5 s
