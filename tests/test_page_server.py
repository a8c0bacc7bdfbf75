"""The server side of the page (issue 12): the one status, game time, phones' addresses and
QR codes, and the command-line wiring (serve --camera URL, --record keeps the camera file,
--catalog on every game command, replay refusing another game's pieces)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vision.sources import SessionSource
from vision.tracking import TrackerSettings
from webui.app import create_app
from webui.live import LiveEngine, LiveSettings
from webui.phone import beyond_loopback, page_urls, qr_svg, qr_terminal

from tests.live_helpers import move_script, scripted_observe, write_session

REPO = Path(__file__).resolve().parents[1]


def _engine(tmp_path, n=30):
    source = SessionSource(write_session(tmp_path / "s", n), realtime=False)
    return LiveEngine(source, scripted_observe(move_script("kang")),
                      LiveSettings(game="kang", tracker=TrackerSettings(stable_s=0.5)))


def _events(sub) -> list[dict]:
    out = []
    while (ev := sub.get(timeout=0)) is not None:
        out.append(ev)
    return out


def test_one_status_says_when_the_source_ended_and_rulings_carry_game_time(tmp_path):
    engine = _engine(tmp_path)
    sub = engine.events.subscribe()
    engine.start()
    assert engine.done.wait(10)
    events = _events(sub)
    shown = [e["shown"] for e in events if e["type"] == "status"]
    assert shown[-1] == "source ended" and "stable" in shown and "in play" in shown
    rulings = [e for e in events if e["type"] == "ruling"]
    assert rulings and all(e["game_t"] == pytest.approx(e["ruling"]["t"] - engine.game_t0) for e in rulings)
    assert engine.status_event()["shown"] == "source ended"
    engine.source_status = "camera lost: x; retrying"
    engine.done.clear()
    assert engine.shown_status() == "camera lost"
    engine.error = "the file went away"
    assert engine.shown_status() == "error"


def test_phone_addresses_carry_the_token_only_for_who_has_it(tmp_path):
    engine = _engine(tmp_path)
    app = create_app({"TESTING": True, "ENGINE": engine, "START_ENGINE": False, "ACCESS_TOKEN": "s3cret",
                      "BIND_HOST": "192.0.2.7", "BIND_PORT": 8123})
    client = app.test_client()
    watcher = client.get("/api/phone").get_json()
    assert watcher["urls"] == ["http://192.0.2.7:8123/"]
    holder = client.get("/api/phone", headers={"X-Refcam-Token": "s3cret"}).get_json()
    assert holder["urls"] == ["http://192.0.2.7:8123/?token=s3cret"]
    assert client.get("/api/phone", headers={"X-Refcam-Token": "guess"}).get_json()["urls"] == watcher["urls"]
    svg = client.get("/phone-qr.svg?token=s3cret")
    assert svg.status_code == 200 and svg.mimetype == "image/svg+xml" and svg.data.startswith(b"<svg")
    engine.stop()


def test_no_phone_addresses_on_loopback(tmp_path):
    engine = _engine(tmp_path)
    app = create_app({"TESTING": True, "ENGINE": engine, "START_ENGINE": False, "BIND_HOST": "127.0.0.1",
                      "BIND_PORT": 8000})
    client = app.test_client()
    assert client.get("/api/phone").get_json()["urls"] == []
    assert client.get("/phone-qr.svg").status_code == 404
    engine.stop()


def test_addresses_and_qr_codes():
    assert not beyond_loopback("127.0.0.1") and not beyond_loopback("::1") and not beyond_loopback("localhost")
    assert beyond_loopback("0.0.0.0") and beyond_loopback("192.168.1.4")
    assert page_urls("192.168.1.4", 8000, "a b") == ["http://192.168.1.4:8000/?token=a+b"]
    assert page_urls("fe80::1", 80) == ["http://[fe80::1]:80/"]
    art = qr_terminal("http://192.168.1.4:8000/?token=abc").splitlines()
    width = len(art[0])
    assert all(len(line) == width for line in art) and abs(2 * len(art) - width) <= 1  # square
    assert b"<svg" in qr_svg("x")


def test_serve_camera_takes_an_index_or_url_and_refuses_anything_else(capsys):
    from webui.cli import main

    assert main(["serve", "--camera", "ftp://phone/video"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unsupported stream type" in err


def test_serve_record_keeps_the_sources_camera_file(tmp_path):
    import argparse

    from webui.commands.serve import build_engine_config, register

    folder = write_session(tmp_path / "s", 3)
    camera = json.loads((REPO / "samples" / "sessions" / "kang" / "camera.json").read_text())
    camera["image_size"] = [64, 48]  # the test session's frame size, with intrinsics that fit it
    camera["camera_matrix"] = [[60.0, 0.0, 32.0], [0.0, 60.0, 24.0], [0.0, 0.0, 1.0]]
    (folder / "camera.json").write_text(json.dumps(camera))
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["serve", "--replay", str(folder), "--record", str(tmp_path / "rec")])
    config = build_engine_config(args)
    try:
        assert (tmp_path / "rec" / "camera.json").read_text() == (folder / "camera.json").read_text()
    finally:
        config["SOURCE"].close()
        config["RECORDER"].close()


def test_catalog_option_on_serve_replay_and_game_commands():
    from webui.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices
    for name in ("serve", "replay", "rank"):
        assert "--catalog" in sub[name]._option_string_actions, name


def test_replay_with_another_games_pieces_names_their_game(capsys):
    from webui.cli import main

    folder = REPO / "samples" / "sessions" / "kang"
    if not (folder / "manifest.jsonl").is_file():
        pytest.skip("no bundled Kang session")
    assert main(["replay", str(folder), "--game", "tornado"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "these are Kang pieces" in err and "--game kang" in err
