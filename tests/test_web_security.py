"""Issue 15, the web side: who may change the live page, what a change must look like, what every
response carries, and that open streams cannot starve the page.

Each test names the defect it pins: CSRF with form, multipart and text/plain bodies and a
foreign Origin; DNS rebinding through the Host header; a no-op POST that used to clear the
rulings log; a real change that used to wipe it; bodies over the limit; missing headers;
40 streams that used to make `/` wait a minute."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
from pathlib import Path

import pytest

from vision.sources import SessionSource
from vision.tracking import TrackerSettings
from webui.access import TOKEN_HEADER, make_policy, page_urls, resolve_token
from webui.app import create_app
from webui.live import LiveEngine, LiveSettings

from referee.errors import InvalidInputError
from tests.live_helpers import move_script, scripted_observe, write_session

REPO = Path(__file__).resolve().parents[1]
TOKEN = "table-token-0123456789"


def make_app(tmp_path, recorder=None, **config):
    source = SessionSource(write_session(tmp_path / "s", 30, game="kang"), realtime=False)
    engine = LiveEngine(source, scripted_observe(move_script("kang")),
                        LiveSettings(game="kang", tracker=TrackerSettings(stable_s=0.5)), recorder=recorder)
    app = create_app({"TESTING": True, "ENGINE": engine, "START_ENGINE": False, "KEEPALIVE_S": 0.2, **config})
    return app, engine


@pytest.fixture
def app(tmp_path):
    app, engine = make_app(tmp_path)
    yield app
    engine.stop()


@pytest.fixture
def ruled(app):
    """The app after its replay ran: the rulings log holds entries."""
    engine = app.extensions["refcam_engine"]
    engine.start()
    assert engine.done.wait(10)
    assert len(engine.log) >= 1
    return app


def post_json(client, url, body, **headers):
    return client.post(url, data=json.dumps(body), content_type="application/json", headers=headers)


# --- CSRF and DNS rebinding -------------------------------------------------------------------
CSRF_BODIES = [
    ("application/x-www-form-urlencoded", b"game=kayak"),
    ("multipart/form-data; boundary=xx", b'--xx\r\nContent-Disposition: form-data; name="game"\r\n\r\nkayak\r\n--xx--\r\n'),
    ("text/plain", b"x"),
    ("application/json", b'{"game": "kayak"}'),
]


@pytest.mark.parametrize("content_type, body", CSRF_BODIES)
@pytest.mark.parametrize("url", ["/api/config", "/api/settle"])
def test_a_foreign_origin_cannot_post_anything(ruled, content_type, body, url):
    client, engine = ruled.test_client(), ruled.extensions["refcam_engine"]
    before = len(engine.log)
    r = client.post(url, data=body, content_type=content_type, headers={"Origin": "http://evil.example"})
    assert r.status_code == 403 and "another site" in r.get_json()["error"]
    r = client.post(url, data=body, content_type=content_type,
                    headers={"Origin": "http://127.0.0.1:9999", "Host": "127.0.0.1:8000"})  # another port: another site
    assert r.status_code == 403
    r = client.post(url, data=body, content_type=content_type, headers={"Sec-Fetch-Site": "cross-site"})
    assert r.status_code == 403
    assert engine.game.id == "kang" and len(engine.log) == before


@pytest.mark.parametrize("content_type, body", CSRF_BODIES[:3])
def test_forms_and_plain_text_are_refused_even_from_the_page_itself(ruled, content_type, body):
    """A form needs no CORS preflight: only a JSON body proves a script of this page sent it."""
    client, engine = ruled.test_client(), ruled.extensions["refcam_engine"]
    before = len(engine.log)
    r = client.post("/api/config", data=body, content_type=content_type,
                    headers={"Origin": "http://localhost", "Host": "localhost"})
    assert r.status_code == 415 and "application/json" in r.get_json()["error"]
    assert engine.game.id == "kang" and len(engine.log) == before


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "127.0.0.1.evil.example", "", "[::2]:80"])
def test_a_foreign_host_name_is_refused_on_every_route(app, host):
    """DNS rebinding: another site's name pointed at 127.0.0.1 arrives with that name as Host."""
    client = app.test_client()
    for r in (client.get("/", headers={"Host": host}), client.get("/api/state", headers={"Host": host}),
              post_json(client, "/api/config", {"game": "kayak"}, Host=host)):
        error = r.get_json()["error"]
        assert r.status_code == 403 and "does not answer to" in error
        assert not any(n in error.replace(host, "") for n in ("localhost", "127.0.0.1", "::1"))  # lists no names
    assert app.extensions["refcam_engine"].game.id == "kang"


@pytest.mark.parametrize("host", ["127.0.0.1:8000", "localhost:8000", "LOCALHOST", "[::1]:8000", "127.0.0.1"])
def test_loopback_names_are_answered(app, host):
    client = app.test_client()
    assert client.get("/", headers={"Host": host}).status_code == 200
    r = post_json(client, "/api/config", {"game": "kayak"}, Host=host, Origin=f"http://{host}")
    assert r.status_code == 200, r.get_json()


def test_beyond_loopback_every_change_needs_the_token(tmp_path):
    app, engine = make_app(tmp_path, BIND_HOST="192.168.7.9", TOKEN=TOKEN)
    client = app.test_client()
    lan = {"Host": "192.168.7.9:8000", "Origin": "http://192.168.7.9:8000"}
    assert client.get("/", headers=lan).status_code == 200  # watching needs no token
    assert client.get("/api/state", headers=lan).get_json()["access"]["token_required"] is True
    for given in (None, "", "wrong-token-0000000000", TOKEN[:-1], TOKEN + "x"):
        headers = dict(lan, **({TOKEN_HEADER: given} if given is not None else {}))
        r = post_json(client, "/api/config", {"game": "kayak"}, **headers)
        assert r.status_code == 403 and TOKEN_HEADER in r.get_json()["error"]
        assert post_json(client, "/api/settle", {}, **headers).status_code == 403
    assert engine.game.id == "kang"
    r = post_json(client, "/api/config", {"game": "kayak"}, **lan, **{TOKEN_HEADER: TOKEN})
    assert r.status_code == 200 and engine.game.id == "kayak"
    # a LAN client claiming to be 127.0.0.1 still needs the token
    r = post_json(client, "/api/config", {"game": "kang"}, Host="127.0.0.1:8000")
    assert r.status_code == 403
    engine.stop()


def test_a_token_is_made_at_start_beyond_loopback_and_printed_in_the_urls(monkeypatch):
    policy = make_policy("0.0.0.0")
    assert policy.token and len(policy.token) >= 24 and make_policy("0.0.0.0").token != policy.token
    urls = page_urls(policy, 8123)
    assert urls[0] == f"http://127.0.0.1:8123/?token={policy.token}"
    assert all(u.endswith(f":8123/?token={policy.token}") for u in urls)
    assert make_policy("127.0.0.1").token is None and page_urls(make_policy("127.0.0.1"), 80) == ["http://127.0.0.1:80/"]
    lan = make_policy("10.1.2.3", token=TOKEN)
    assert page_urls(lan, 80) == [f"http://10.1.2.3:80/?token={TOKEN}"] and "10.1.2.3" in lan.allowed_hosts
    monkeypatch.setenv("REFCAM_TOKEN", TOKEN)
    assert resolve_token(None) == TOKEN and resolve_token("given-token-xyz") == "given-token-xyz"
    for bad in ("short", "has space inside it", "x" * 300, "ünïcode-token"):
        with pytest.raises(InvalidInputError):
            resolve_token(bad)


def test_serve_prints_the_url_with_its_token(tmp_path):
    import subprocess
    import sys
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "webui.cli", "serve", "--port", str(port), "--fast", "--json", "--token", TOKEN]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    try:
        doc = json.loads(proc.stdout.readline())
        assert doc["url"] == f"http://127.0.0.1:{port}/?token={TOKEN}"
        req = urllib.request.Request(f"http://127.0.0.1:{port}/api/settle", data=b"{}", method="POST",
                                     headers={"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(req, timeout=10)
        assert refused.value.code == 403  # a token was given: it is needed even on loopback
    finally:
        proc.terminate()
        _out, err = proc.communicate(timeout=30)
    assert "Traceback" not in err and f"?token={TOKEN}" in err


# --- no change, no reset; a real change archives -----------------------------------------------
def test_a_post_that_changes_nothing_keeps_the_game_and_its_log(ruled):
    client, engine = ruled.test_client(), ruled.extensions["refcam_engine"]
    log, state = list(engine.log), engine.state
    for body in ({}, {"game": "kang"}, {"game": " kang "}):
        r = post_json(client, "/api/config", body)
        assert r.status_code == 200 and r.get_json()["changed"] is False
    assert list(engine.log) == log and engine.state is state and engine.archive_summaries() == []


def test_a_real_change_archives_the_log_and_serves_it(ruled):
    client, engine = ruled.test_client(), ruled.extensions["refcam_engine"]
    log = [e["seq"] for e in engine.log]
    r = post_json(client, "/api/config", {"game": "kayak"})
    assert r.status_code == 200 and r.get_json()["changed"] is True
    assert list(engine.log) == []
    summaries = client.get("/api/archive").get_json()["archives"]
    assert [(a["n"], a["game"], a["reason"], a["entries"]) for a in summaries] == [(1, "kang", "settings changed", len(log))]
    archived = client.get("/api/archive/1").get_json()
    assert [e["seq"] for e in archived["log"]] == log
    assert client.get("/api/state").get_json()["archives"][0]["entries"] == len(log)
    assert client.get("/api/archive/2").status_code == 404


def test_a_real_change_while_recording_writes_the_old_log_into_the_recording(tmp_path):
    from vision.session import SessionWriter

    recorder = SessionWriter(tmp_path / "rec", game="kang")
    app, engine = make_app(tmp_path, recorder=recorder)
    engine.start()
    assert engine.done.wait(10)
    n = len(engine.log)
    assert post_json(app.test_client(), "/api/config", {"game": "kayak"}).get_json()["changed"] is True
    written = json.loads((tmp_path / "rec" / "rulings-001.json").read_text())
    assert written["game"] == "kang" and len(written["log"]) == n and written["reason"] == "settings changed"
    engine.stop()


# --- bodies: limits and the safe loader ----------------------------------------------------------
def test_a_body_over_the_limit_is_413(app):
    client = app.test_client()
    big = b'{"game": "' + b"k" * 200_000 + b'"}'
    for body in (big, b"[" * 100_000 + b"]" * 100_000):
        r = client.post("/api/config", data=body, content_type="application/json")
        assert r.status_code == 413 and "at most" in r.get_json()["error"]
    chunked = client.post("/api/config", input_stream=__import__("io").BytesIO(big), content_type="application/json",
                          headers={"Transfer-Encoding": "chunked"})
    assert chunked.status_code in (400, 413)  # no length given: read up to the limit, never all of it
    assert app.extensions["refcam_engine"].game.id == "kang"


@pytest.mark.parametrize("body, says", [
    ("[" * 30_000 + "]" * 30_000, "deep"),  # 100,000 deep is over the size limit: 413
    ('{"game": ' * 50 + '"kang"' + "}" * 50, "deep"),
    ('{"game": 1' + "0" * 400 + "}", "digit"),
    ('{"game": "kang", "x": NaN}', "NaN"),
    ('{"game": Infinity}', "Infinity"),
    ('{"game": 1e999}', ""),
    ("[1, 2]", "JSON object"),
    ('"kang"', "JSON object"),
    ("12", "JSON object"),
    ('{"game": ["kang"]}', "game must be text"),
    ('{"game": "kang", "course": {"a": [1]}}', ""),
    ('{"game": "ka', ""),
    ('{"game": "tornado", "weights": "boat-1=' + "9" * 1000 + '"}', "weight"),  # found by the route fuzz: 1,061 chars
    ("\xff\xfe{}", ""),
])
def test_bad_json_bodies_are_400_with_one_line(app, body, says):
    client = app.test_client()
    data = body.encode("latin-1") if body.startswith("\xff") else body.encode()
    r = client.post("/api/config", data=data, content_type="application/json")
    assert r.status_code == 400, (r.status_code, r.get_data()[:200])
    error = r.get_json()["error"]
    assert "\n" not in error and len(error) <= 300 and says in error


def test_settle_takes_an_empty_object_only(app):
    client = app.test_client()
    for body in ("[]", '{"x": 1}', "3", "[" * 30_000):
        assert client.post("/api/settle", data=body, content_type="application/json").status_code == 400
    assert client.post("/api/settle", data="", content_type="application/json").status_code == 409  # no stable state yet


# --- headers on every response ---------------------------------------------------------------------
def test_security_headers_on_every_response(app):
    client = app.test_client()
    responses = [client.get("/"), client.get("/api/state"), client.get("/static/app.js"), client.get("/nowhere"),
                 client.get("/", headers={"Host": "evil.example"}), client.post("/api/config", data="x"),
                 client.put("/api/config"), client.get("/frame.jpg")]
    events = client.get("/events", buffered=False)
    responses.append(events)
    for r in responses:
        csp = r.headers.get("Content-Security-Policy", "")
        assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp
        assert r.headers["X-Content-Type-Options"] == "nosniff"
        assert r.headers["X-Frame-Options"] == "DENY" and r.headers["Referrer-Policy"] == "no-referrer"
        if r.status_code >= 400:
            assert set(r.get_json()) == {"error"} and "\n" not in r.get_json()["error"]
    events.close()


def test_the_page_has_no_inline_script_or_style():
    """The CSP allows only the page's own files: an inline script or style would be blocked."""
    for template in (REPO / "webui" / "templates").glob("*.html"):
        html = template.read_text()
        assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html), f"{template.name}: inline <script>"
        assert "<style" not in html and not re.search(r"\sstyle=", html), f"{template.name}: inline style"
        assert not re.search(r"\son[a-z]+=", html), f"{template.name}: inline event handler"
        assert "javascript:" not in html


# --- streams cannot starve the page --------------------------------------------------------------
def _open_stream(port: int, path: str) -> tuple[socket.socket, str]:
    """A GET on a raw socket, left open; returns the socket and the response head (status line first)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head and len(head) < 65536:
        chunk = sock.recv(4096)
        if not chunk:
            break
        head += chunk
    return sock, head.split(b"\r\n\r\n", 1)[0].decode("latin-1")


def _timed_get(port: int, path: str) -> tuple[int, float]:
    import http.client

    t0 = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        resp.read()
        return resp.status, time.monotonic() - t0
    finally:
        conn.close()


@contextlib.contextmanager
def real_server(app):
    """The app behind waitress as `refcam serve` runs it, on 127.0.0.1 (a free port); stops itself."""
    from webui.commands.serve import make_server, shutdown

    server = make_server(app, "127.0.0.1", 0)
    stopping = threading.Event()

    def run():
        try:
            server.run()
        except (OSError, ValueError):  # its sockets closed under select() by shutdown below
            if not stopping.is_set():
                raise

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield server.effective_port
    finally:
        stopping.set()
        shutdown(app.extensions["refcam_engine"], server)
        thread.join(timeout=5)
    assert not thread.is_alive()


def looping_app(tmp_path, **config):
    source = SessionSource(write_session(tmp_path / "s", 30, game="kang"), realtime=True, loop=True)
    engine = LiveEngine(source, scripted_observe(move_script("kang")), LiveSettings(game="kang"))
    return create_app({"ENGINE": engine, "KEEPALIVE_S": 0.5, **config})


def test_streams_over_the_cap_get_503_with_retry_after_and_a_closed_one_frees_its_slot(tmp_path):
    app = looping_app(tmp_path, MAX_STREAMS=2)
    with real_server(app) as port:
        a, status_a = _open_stream(port, "/events")
        b, status_b = _open_stream(port, "/stream.mjpg")
        assert " 200 " in status_a and " 200 " in status_b
        over, head = _open_stream(port, "/events")
        assert head.startswith("HTTP/1.1 503 ") and "\r\nRetry-After: 5" in head
        over.close()
        b.close()
        deadline = time.monotonic() + 5
        while app.extensions["refcam_streams"].open > 1 and time.monotonic() < deadline:
            time.sleep(0.1)  # the server notices the closed client at its next frame
        again, status = _open_stream(port, "/stream.mjpg")
        assert " 200 " in status
        for sock in (a, again):
            sock.close()


def test_fifty_open_streams_leave_the_page_answering_within_a_second(tmp_path):
    """Real sockets on 127.0.0.1: 25 MJPEG + 25 event streams held open, then `/` and the API."""
    app = looping_app(tmp_path)
    sockets = []
    with real_server(app) as port:
        try:
            statuses = []
            for i in range(50):
                sock, status = _open_stream(port, "/events" if i % 2 else "/stream.mjpg")
                sockets.append(sock)
                status = status.split("\r\n", 1)[0]
                statuses.append(status.split(" ")[1] if " " in status else status)
            held, refused = statuses.count("200"), statuses.count("503")
            assert held == app.config["MAX_STREAMS"] and held + refused == 50, statuses
            for path in ("/", "/api/state", "/healthz", "/api/archive"):
                status, seconds = _timed_get(port, path)
                assert status == 200 and seconds < 1.0, (path, seconds)
        finally:
            for sock in sockets:
                sock.close()


# --- memory: bounded keeps -----------------------------------------------------------------------
def test_settled_pictures_and_archives_are_bounded(ruled):
    client, engine = ruled.test_client(), ruled.extensions["refcam_engine"]
    ids = [post_json(client, "/api/settle", {}).get_json()["id"] for _ in range(20)]
    keep = ruled.config["SETTLE_KEEP"]
    assert [client.get(f"/settle/{n}.png").status_code for n in ids] == [404] * (20 - keep) + [200] * keep
    for i in range(engine.live.archive_keep + 5):
        engine.log.append({"type": "warning", "message": f"entry {i}"})
        engine.configure(game="kayak" if i % 2 == 0 else "kang")
    assert len(engine.archives) == engine.live.archive_keep
