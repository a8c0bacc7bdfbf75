"""Fuzzing every route of the live page: random methods, paths, content types, bodies and
headers (Host, Origin, the access token) against a page bound beyond loopback.

Every answer must be below 500, carry the security headers, and, when an error, be JSON
with one line; and no request without the right token, an allowed Host, this page's Origin
and a JSON body may change the game or archive its log.

Short and seeded in `make test`; `make fuzz` runs the long campaign (HYPOTHESIS_PROFILE=long,
>= 10,000 requests, FUZZ_SCALE multiplies) and adds the outcomes by class and the process's
memory before and after to FUZZ_REPORT."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vision.sources import SessionSource
from vision.tracking import TrackerSettings
from webui.access import TOKEN_HEADER
from webui.app import create_app
from webui.http_guard import SECURITY_HEADERS
from webui.live import LiveEngine, LiveSettings

from tests.live_helpers import move_script, scripted_observe, write_session

LONG = os.environ.get("HYPOTHESIS_PROFILE") == "long"
SCALE = float(os.environ.get("FUZZ_SCALE", "1"))
LAN = "10.9.8.7"
TOKEN = "fuzz-token-0123456789abcdef"
OUTCOMES: Counter = Counter()

PATHS = ["/", "/api/state", "/api/config", "/api/settle", "/api/archive", "/api/archive/1", "/api/archive/x",
         "/settle/1.png", "/settle/1.png?download=1", "/settle/99999999999999999999.png", "/frame.jpg",
         "/events", "/stream.mjpg?frames=1", "/stream.mjpg?frames=-3", "/healthz", "/static/app.js",
         "/static/../app.py", "/static/%2e%2e/app.py", "/nowhere", "//", "/api/config?x=1"]
METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE"]
CONTENT_TYPES = [None, "application/json", "application/json; charset=utf-8", "APPLICATION/JSON", "text/plain",
                 "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "multipart/form-data",
                 "application/json; charset=latin-1", "text/json", "*/*", "application/jsonx"]
HOSTS = [f"{LAN}:8000", "127.0.0.1:8000", "localhost", "[::1]:8000", "evil.example", "evil.example:8000", "", "127.0.0.1.nip.io"]
ORIGINS = [None, "same", "http://evil.example", "null", "http://127.0.0.1:1", "file://", "http://[::1", "ftp://x"]
TOKENS = [None, TOKEN, "", "wrong", TOKEN + "x", TOKEN.upper(), "é" * 10]

HOSTILE_BODIES = [b"[" * 100_000 + b"]" * 100_000, b"[" * 5_000, b'{"game": 1' + b"0" * 400 + b"}", b'{"game": NaN}',
                  b'{"game": Infinity}', b'{"game": 1e999}', b"\xff\xfe\x00", b"\x00" * 100, b'{"game": "\\u0000"}',
                  b'{"game": "kayak"}', b'{"game": "tornado", "course": "splashway"}', b'{"weights": {"boat-1": 1e308}}',
                  b'{"game": "tornado", "weights": "boat-1=' + b"9" * 500 + b'"}', b"{}", b"", b"null", b"x" * 70_000]
JSON_LEAF = st.one_of(st.none(), st.booleans(), st.integers(-10**30, 10**30), st.floats(), st.text(max_size=12),
                      st.sampled_from(["kang", "kayak", "tornado", "splashway", "boat-1=2", "course", "weights", "game"]))
JSON_ANY = st.recursive(JSON_LEAF, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(["game", "course", "weights", "x", ""]) | st.text(max_size=6),
                                                 inner, max_size=4)), max_leaves=12)
BODIES = st.one_of(st.sampled_from(HOSTILE_BODIES), st.binary(max_size=200),
                   JSON_ANY.map(lambda v: json.dumps(v).encode()))


def examples(short: int, long: int) -> settings:
    return settings(max_examples=int(long * SCALE) if LONG else short, derandomize=not LONG, deadline=None,
                    database=None, suppress_health_check=list(HealthCheck), print_blob=True)


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return float("nan")  # pragma: no cover - not Linux


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    folder = write_session(tmp_path_factory.mktemp("fuzz") / "s", 30, game="kang")
    engine = LiveEngine(SessionSource(folder, realtime=False), scripted_observe(move_script("kang")),
                        LiveSettings(game="kang", tracker=TrackerSettings(stable_s=0.5)))
    app = create_app({"ENGINE": engine, "BIND_HOST": LAN, "TOKEN": TOKEN, "KEEPALIVE_S": 0.05})
    assert engine.done.wait(10)
    rss_before = rss_mb()
    yield app
    engine.stop()
    report = os.environ.get("FUZZ_REPORT")
    if report:
        path = Path(report)
        old = json.loads(path.read_text()) if path.exists() else {}
        merged = Counter(old.get("routes", {}))
        merged.update(OUTCOMES)
        old["routes"] = dict(merged)
        path.write_text(json.dumps(old, indent=2, sort_keys=True) + "\n")
        memory = {"requests": sum(OUTCOMES.values()), "rss_mb_before": round(rss_before, 1),
                  "rss_mb_after": round(rss_mb(), 1)}  # the test process: the app, and hypothesis itself
        path.with_name("fuzz-routes-memory.json").write_text(json.dumps(memory) + "\n")
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # the whole campaign's test process
        old = json.loads(path.read_text())
        old["_peak_rss_mb"] = max(float(old.get("_peak_rss_mb", 0.0)), round(peak, 1))
        path.write_text(json.dumps(old, indent=2, sort_keys=True) + "\n")


def allowed(request: dict) -> bool:
    """Whether the guard should let this change through (it may still be refused as bad input)."""
    host_ok = request["host"] not in ("evil.example", "evil.example:8000", "", "127.0.0.1.nip.io")
    origin_ok = request["origin"] in (None, "same")
    json_ok = (request["content_type"] or "").split(";")[0].strip().lower() == "application/json"
    return host_ok and origin_ok and request["token"] == TOKEN and json_ok


HEADER_CHARS = st.characters(min_codepoint=32, max_codepoint=126)  # what a header can carry at all
ANY_REQUEST = st.fixed_dictionaries({
    "method": st.sampled_from(METHODS), "path": st.sampled_from(PATHS) | st.text(max_size=20).map(lambda t: "/" + t),
    "content_type": st.sampled_from(CONTENT_TYPES) | st.text(HEADER_CHARS, max_size=20), "body": BODIES,
    "host": st.sampled_from(HOSTS), "origin": st.sampled_from(ORIGINS), "token": st.sampled_from(TOKENS)})
# half the requests pass the guard, so their bodies reach the safe loader and the routes
PROPER_CHANGE = st.fixed_dictionaries({
    "method": st.just("POST"), "path": st.sampled_from(["/api/config", "/api/settle"]),
    "content_type": st.sampled_from(CONTENT_TYPES[1:3]), "body": BODIES,
    "host": st.sampled_from(HOSTS[:4]), "origin": st.sampled_from([None, "same"]), "token": st.just(TOKEN)})
REQUESTS = st.one_of(ANY_REQUEST, PROPER_CHANGE)


def send(client, request: dict):
    headers = {"Host": request["host"]}
    if request["origin"] is not None:
        headers["Origin"] = f"http://{request['host']}" if request["origin"] == "same" else request["origin"]
    if request["token"] is not None:
        headers[TOKEN_HEADER] = request["token"]
    kwargs = {"data": request["body"], "headers": headers, "buffered": False}
    if request["content_type"] is not None:
        kwargs["content_type"] = request["content_type"]
    return client.open(request["path"], method=request["method"], **kwargs)


def check_response(response, request: dict) -> None:
    assert response.status_code < 500, (response.status_code, request, response.get_data()[:300])
    for name in SECURITY_HEADERS:
        assert name in response.headers, (name, request)
    if response.status_code >= 400 and request["method"] != "HEAD":
        error = json.loads(response.get_data())["error"]
        assert isinstance(error, str) and "\n" not in error and 0 < len(error) <= 300, error


@given(request=REQUESTS)
@examples(short=150, long=10_000)
def test_every_route_answers_below_500_and_only_a_proper_change_changes_anything(page, request):
    engine = page.extensions["refcam_engine"]
    client = page.test_client()
    before = (engine.game.id, len(engine.archives), next(iter(engine.archives), {}).get("n"))
    if request["path"].startswith(("/events", "/stream")) and request["method"] == "GET":
        request = dict(request, path="/stream.mjpg?frames=1")  # an endless stream would hold the test
    try:
        response = send(client, request)
    except (UnicodeError, ValueError):  # a header the test client itself cannot encode never reaches the server
        OUTCOMES["refused:unsendable"] += 1
        return
    code = response.status_code
    OUTCOMES[f"{'accepted' if code < 400 else 'refused' if code < 500 else 'FAILURE'}:{code}"] += 1
    try:
        check_response(response, request)
    finally:
        response.close()
    if not allowed(request) or request["method"] != "POST":
        assert (engine.game.id, len(engine.archives), next(iter(engine.archives), {}).get("n")) == before, request
    assert page.extensions["refcam_streams"].open == 0  # every closed stream gave its slot back
