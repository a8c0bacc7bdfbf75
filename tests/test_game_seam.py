"""The game seam (referee/game.py): a toy game registered from the tests runs through
`refcam replay`, the live engine and the page with no change to webui/; every game's step
is pure and its options round-trip; importing referee loads neither cv2 nor flask."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import subprocess
import sys

import pytest

from referee.game import Game
from referee.registry import games, get_game, register, unregister
from referee.observation import Observation
from tests.live_helpers import pose, scripted_observe, write_session
from tests.toy_game import GAME as COUNTER

N_FRAMES = 30


def counter_script() -> list[Observation]:
    """One piece (1 s), two pieces (1 s), four pieces (1 s): legal, then illegal."""
    one = (pose("kang/small-1", -100, -100),)
    two = one + (pose("kang/small-2", 0, 0),)
    four = two + (pose("kang/large-1", 60, 20), pose("kang/large-2", 100, 20))
    return [Observation(pieces=p, game="kang") for p in [one] * 10 + [two] * 10 + [four] * 10]


@pytest.fixture
def counter():
    register(COUNTER)
    yield COUNTER
    unregister(COUNTER.id)


@pytest.fixture
def session(tmp_path):
    return write_session(tmp_path / "s", N_FRAMES, game="kang")


def test_the_toy_game_satisfies_the_interface(counter):
    assert isinstance(counter, Game) and get_game("counter") is counter
    assert "counter" in [g.id for g in games()]


def test_replay_rules_with_the_toy_game(counter, session, monkeypatch):
    from webui import cli, live

    scripted = scripted_observe(counter_script())
    monkeypatch.setattr(live, "pipeline_observe", lambda image, camera, game, **kw: scripted(image, camera, game))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["replay", str(session), "--game", "counter", "--start", "0", "--json"])
    assert code == 0, err.getvalue()
    timeline = json.loads(out.getvalue())
    assert [(r["summary"], r["legal"], r["rule"]) for r in timeline] == [
        ("count 0 -> 1", True, "Counter, One at a time"), ("count 1 -> 2", True, "Counter, One at a time"),
        ("count 2 -> 4", False, "Counter, One at a time")]


def test_replay_refuses_an_option_the_game_lacks(counter, session, capsys):
    from webui import cli

    code = cli.main(["replay", str(session), "--game", "counter", "--course", "splashway"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("refcam: error: Counter has no --course setting") and err.count("\n") == 1


def _engine(session, counter_game):
    from vision.sources import SessionSource
    from vision.tracking import TrackerSettings
    from webui.live import LiveEngine, LiveSettings

    settings = LiveSettings(game=counter_game.id, options={"start": "1"}, tracker=TrackerSettings(stable_s=0.5))
    return LiveEngine(SessionSource(session, realtime=False), scripted_observe(counter_script()), settings)


def test_live_engine_and_page_with_the_toy_game(counter, session):
    from webui.app import create_app

    engine = _engine(session, counter)
    app = create_app({"TESTING": True, "ENGINE": engine, "START_ENGINE": False})
    client = app.test_client()
    html = client.get("/").get_data(as_text=True)
    assert "Counter" in html and 'name="start"' in html and 'value="1"' in html  # the settings form has its option
    engine.start()
    assert engine.done.wait(10)
    doc = client.get("/api/state").get_json()
    assert doc["state"]["kind"] == "counter" and doc["state"]["data"]["count"] == 4
    assert [e["ruling"]["legal"] for e in doc["log"] if e["type"] == "ruling"] == [True, False]  # started at 1
    settled = client.post("/api/settle", json={}).get_json()
    assert settled["measures"]["count"] == 4 and settled["lines"] == ["count: 4"]
    assert "schematic" in settled["measures"]["note"]  # the scripted observations carry no image mapping
    assert client.get(settled["png"]).data[:4] == b"\x89PNG"
    r = client.post("/api/config", json={"game": "counter", "start": "-3"})
    assert r.status_code == 400 and "-3" in r.get_json()["error"]
    engine.stop()


def _observations():
    from referee.tornado.course_spec import load_course
    from referee.tornado.layout import layout_observation

    course = load_course("splashway")
    boats = [{"tornado/boat-1": (100.0, 0.0, 0.0), "tornado/boat-2": (150.0, 40.0, 0.0)},
             {"tornado/boat-1": (100.0, 0.0, 0.0), "tornado/boat-2": (260.0, 40.0, 0.0)}]
    return [layout_observation(course, b) for b in boats]


@pytest.mark.parametrize("game_id", ["tornado", "kang", "kayak", "counter"])
def test_step_is_pure(counter, game_id):
    game = get_game(game_id)
    state = game.new_state({"course": "splashway"} if game_id == "tornado" else {})
    for t, obs in enumerate(_observations()):
        before = copy.deepcopy(state)
        step = game.step(state, obs, float(t))
        assert state == before  # the state given was not changed
        assert game.view(state).to_json() == game.view(before).to_json()
        state = step.state


def test_every_option_of_every_game_round_trips(counter):
    samples = {"course": ["splashway", "tornado-circuit"], "weights": ["boat-1=3,boat-2=1.5", "boat-6=0"],
               "start": ["0", "7"], "boats": ["1,2", "boat-6"], "grand_prix": ["new", "boat-2=1,boat-1=2;boat-1=1,boat-2=2"], "advanced": ["on", "off"]}
    for game in games():
        for option in game.options:
            for text in samples[option.name]:
                value = option.parse(text)
                assert option.parse(option.format(value)) == value


def test_importing_referee_loads_neither_cv2_nor_flask():
    code = ("import sys, referee.registry, referee.game, referee.state_only, referee.tornado.game, "
            "referee.tornado.commands; [g.commands() for g in referee.registry.games()]; "
            "print(sorted(m for m in ('cv2', 'flask') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
