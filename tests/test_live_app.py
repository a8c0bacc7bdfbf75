"""The live engine and the Flask app, with a scripted observe (no vision) and the Flask test client."""

import json
import time

import pytest

from vision.sources import SessionSource
from vision.tracking import TrackerSettings
from webui.app import create_app
from webui.live import Broadcaster, LiveEngine, LiveSettings


from tests.live_helpers import move_script, scripted_observe, unpluggable_camera_engine, wait_for, write_session


@pytest.fixture(autouse=True)
def state_only_kang():
    """These tests drive the engine with the state-only game on Kang pieces (what a game
    without a rules engine gets); Kang's own engine is tested in test_kang_*."""
    from referee.registry import register, unregister
    from referee.state_only import StateOnlyGame

    register(StateOnlyGame("kang", "Kang"))
    yield
    unregister("kang")


def make_engine(tmp_path, n=30, realtime=False, game="kang"):
    folder = write_session(tmp_path / "s", n, game=game)
    source = SessionSource(folder, realtime=realtime)
    settings = LiveSettings(game=game, tracker=TrackerSettings(stable_s=0.5))
    return LiveEngine(source, scripted_observe(move_script(game)), settings)


@pytest.fixture
def app(tmp_path):
    engine = make_engine(tmp_path)
    app = create_app({"TESTING": True, "ENGINE": engine, "START_ENGINE": False, "KEEPALIVE_S": 0.2})
    yield app
    engine.stop()


@pytest.fixture
def client(app):
    return app.test_client()


def run_to_end(engine):
    engine.start()
    assert engine.done.wait(10)


def test_engine_rules_on_each_new_stable_state(tmp_path):
    engine = make_engine(tmp_path)
    sub = engine.events.subscribe()
    run_to_end(engine)
    events = []
    while (ev := sub.get(timeout=0)) is not None:
        events.append(ev)
    rulings = [e["ruling"] for e in events if e["type"] == "ruling"]
    assert [r["summary"].split(" ")[:2] for r in rulings] == [
        ["kang/large-1", "appeared"], ["kang/small-1", "appeared"], ["kang/small-1", "moved"]]
    moved = rulings[2]
    assert "from a1" in moved["summary"] and "to e1" in moved["summary"]
    assert moved["legal"] is None and "no rules engine yet" in moved["rule"]
    assert all(e["entry_ms"] is not None for e in events if e["type"] == "ruling")
    statuses = [e["status"] for e in events if e["type"] == "status"]
    assert "stable" in statuses and "in play" in statuses
    assert engine.state_json()["data"]["pieces"][1]["where"].startswith("e1")


def test_page_renders_with_the_controls(client):
    html = client.get("/").get_data(as_text=True)
    assert "Kang" in html and 'id="live"' in html and "/stream.mjpg" in html
    assert 'id="log"' in html and "Game settings" in html
    assert 'id="settle"' in html


def test_events_stream_sends_backlog_then_live_rulings(app, client):
    engine = app.extensions["refcam_engine"]
    run_to_end(engine)
    resp = client.get("/events", buffered=False)
    assert resp.mimetype == "text/event-stream"
    chunks = []
    for chunk in resp.response:
        chunks.append(chunk.decode())
        if sum(c.count("event: ruling") for c in chunks) >= 3:
            break
    resp.close()
    text = "".join(chunks)
    assert "event: config" in text and "event: state" in text and "event: status" in text
    data = [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]
    assert [d["ruling"]["summary"] for d in data if d["type"] == "ruling"][-1].startswith("kang/small-1 moved")


def test_mjpeg_stream_sends_jpeg_parts(app, client):
    engine = app.extensions["refcam_engine"]
    run_to_end(engine)
    resp = client.get("/stream.mjpg?frames=2", buffered=False)
    assert resp.mimetype == "multipart/x-mixed-replace"
    body = b"".join(resp.response)
    assert body.count(b"--frame\r\nContent-Type: image/jpeg") == 2
    assert b"\xff\xd8" in body
    assert client.get("/frame.jpg").data[:2] == b"\xff\xd8"


def test_two_clients_both_get_every_ruling(tmp_path):
    engine = make_engine(tmp_path)
    a, b = engine.events.subscribe(), engine.events.subscribe()
    run_to_end(engine)

    def rulings(sub):
        out = []
        while (ev := sub.get(timeout=0)) is not None:
            if ev["type"] == "ruling":
                out.append(ev["seq"])
        return out

    ra, rb = rulings(a), rulings(b)
    assert len(ra) == 3 and ra == rb


def test_slow_client_drops_old_frames_not_new():
    bc = Broadcaster(maxsize=1)
    slow = bc.subscribe()
    for i in range(10):
        bc.publish(i)
    assert slow.get(timeout=0) == 9 and slow.dropped == 9
    bc.close()
    with pytest.raises(StopIteration):
        slow.get(timeout=1)


def test_config_form_switches_game_and_refuses_bad_weights(app, client):
    r = client.post("/api/config", json={"game": "kayak"})
    assert r.status_code == 200 and r.get_json()["config"]["game"] == "kayak"
    r = client.post("/api/config", json={"game": "tornado", "weights": "boat-1=heavy"})
    assert r.status_code == 400 and "not a number" in r.get_json()["error"]
    r = client.post("/api/config", json={"game": "chess"})
    assert r.status_code == 400 and "chess" in r.get_json()["error"]


def test_settle_needs_a_stable_state_then_serves_a_png_from_memory(app, client, tmp_path):
    r = client.post("/api/settle", json={})
    assert r.status_code == 409 and "no stable state" in r.get_json()["error"]
    engine = app.extensions["refcam_engine"]
    run_to_end(engine)
    r = client.post("/api/settle", json={})
    assert r.status_code == 200
    info = r.get_json()
    png = client.get(info["png"])
    assert png.mimetype == "image/png" and png.data[:8] == b"\x89PNG\r\n\x1a\n"
    dl = client.get(info["download"])
    assert "attachment" in dl.headers["Content-Disposition"]
    assert client.get("/settle/999.png").status_code == 404


def test_looping_replay_starts_a_new_game(tmp_path):
    folder = write_session(tmp_path / "s", 30)
    source = SessionSource(folder, realtime=False, loop=True)
    engine = LiveEngine(source, scripted_observe(move_script("kang")), LiveSettings(game="kang"))
    sub = engine.events.subscribe()
    engine.start()
    deadline = time.monotonic() + 10
    seen = []
    def enough():
        return "restart" in [e["type"] for e in seen] and sum(e["type"] == "ruling" for e in seen) >= 6

    while not enough() and time.monotonic() < deadline:
        ev = sub.get(timeout=0.5)
        if ev is not None:
            seen.append(ev)
    engine.stop()
    kinds = [e["type"] for e in seen]
    assert "restart" in kinds
    after = [e["ruling"]["summary"] for e in seen[kinds.index("restart"):] if e["type"] == "ruling"]
    assert after[:2] == [r["ruling"]["summary"] for r in seen if r["type"] == "ruling"][:2]  # appeared again


def test_observe_errors_become_warnings_not_crashes(tmp_path):
    from referee.errors import InvalidInputError

    folder = write_session(tmp_path / "s", 5)

    def broken(image, camera, game):
        raise InvalidInputError("camera file x.json is for 1280x720 images but the image is 64x48")

    engine = LiveEngine(SessionSource(folder, realtime=False), broken, LiveSettings(game="kang"))
    sub = engine.events.subscribe()
    run_to_end(engine)
    warnings = []
    while (ev := sub.get(timeout=0)) is not None:
        if ev["type"] == "warning":
            warnings.append(ev["message"])
    assert warnings == ["cannot observe this frame: camera file x.json is for 1280x720 images but the image is 64x48"]
    assert engine.frames_in == 5


def test_camera_lost_mid_session_is_reported_and_the_log_kept(monkeypatch):
    engine, world, sub = unpluggable_camera_engine(monkeypatch)
    engine.start()
    wait_for(sub, lambda e: e["type"] == "ruling", 5.0)
    world["plugged"] = False
    lost = wait_for(sub, lambda e: e["type"] == "status" and "lost" in e["source_status"], 5.0)
    assert lost["source_status"].startswith("camera lost: camera 0 stopped delivering frames; retrying in ")
    world["plugged"] = True
    wait_for(sub, lambda e: e["type"] == "status" and "back" in e["source_status"], 5.0)
    assert [e["ruling"]["summary"] for e in engine.backlog() if e["type"] == "ruling"] == [
        "kang/small-1 appeared at a1 (-100, -100) mm"]  # the log survived the outage
    engine.stop()


def test_record_frames_writes_a_replayable_session(tmp_path):
    from vision.session import SessionWriter
    from webui.commands.record import record_frames

    folder = write_session(tmp_path / "s", 12)
    with SessionWriter(tmp_path / "rec", game="kang") as writer:
        n = record_frames(SessionSource(folder, realtime=False), writer, seconds=0.55)
    assert n == 6  # frames at 0.0 .. 0.5 s
    replayed = list(SessionSource(tmp_path / "rec", realtime=False))
    assert [round(t, 2) for t, _ in replayed] == [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]


def test_page_takes_course_ids_not_paths(client, tmp_path):
    """A course path typed into the page would let anyone who reaches it probe the server's files."""
    r = client.post("/api/config", json={"game": "tornado", "course": str(tmp_path / "x.json")})
    assert r.status_code == 400 and "--course" in r.get_json()["error"]
    assert client.post("/api/config", json={"game": "tornado", "course": "splashway"}).status_code == 200
