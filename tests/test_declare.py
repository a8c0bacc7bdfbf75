"""Players declare what the camera cannot see (referee/game.py: Declarable, Declaration,
Game.declarables/declare): the values read back, each game takes its invisible events and
uses them at the rule's boundary, the page's route checks and guards them, and a recorded
session keeps them for `refcam replay`."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from referee.errors import InvalidInputError, RefcamError
from referee.game import ACCEPT_ILLEGAL, Declaration, parse_settings
from referee.registry import get_game, register, unregister
from tests.toy_game import GAME as COUNTER

RACE = Path(__file__).resolve().parents[1] / "samples" / "sessions" / "tornado-race"


# ----------------------------------------------------------------------- the values
@pytest.mark.parametrize("text", ["pass boat-3", "gate-order = boat-3,boat-1 @ 2.5", "accept-illegal",
                                  "life-ring pawn-2 @ 3.25", "discard pawn-1 = 2"])
def test_a_declaration_reads_back_from_its_text_and_its_json(text):
    d = Declaration.parse(text)
    assert str(d) == text and Declaration.parse(str(d)) == d and Declaration.from_json(d.to_json()) == d


def test_the_seam_carries_an_accept_the_illegal_turn_declaration():
    from referee.game import ACCEPT_ILLEGAL

    assert Declaration.parse(ACCEPT_ILLEGAL) == Declaration(ACCEPT_ILLEGAL)


@pytest.mark.parametrize("bad, quoted", [("Pass boat-3", "'Pass boat-3'"), ("pass a b", "'pass a b'"),
                                         ("pass boat-3 @ soon", "'soon'"), ("pass x @ nan", "nan"), ("", "''")])
def test_a_bad_declaration_text_is_refused_quoting_it(bad, quoted):
    with pytest.raises(InvalidInputError) as err:
        Declaration.parse(bad)
    assert quoted in str(err.value) and "\n" not in str(err.value)


# A declared value is one short line (a gate order, a count): 200 characters at most, a
# bound the page's form and the recorded session both rely on.
DECLARED_VALUE_MAX = 200


def test_a_declared_value_is_at_most_200_characters():
    assert Declaration("gate-order", value="x" * DECLARED_VALUE_MAX).value == "x" * DECLARED_VALUE_MAX
    with pytest.raises(InvalidInputError, match="at most 200 characters"):
        Declaration("gate-order", value="x" * (DECLARED_VALUE_MAX + 1))
    with pytest.raises(InvalidInputError):
        Declaration.from_json({"kind": "gate-order", "value": "x" * (DECLARED_VALUE_MAX + 1)})


@pytest.mark.parametrize("bad, words", [([1], "must be an object"), ({"subject": "boat-1"}, 'needs a "kind"'),
                                        ({"kind": "pass", "who": "x"}, "no field 'who'"),
                                        ({"kind": "pass", "subject": 3}, "subject 3"),
                                        ({"kind": "pass", "t": True}, "time True")])
def test_bad_declaration_json_is_refused_quoting_it(bad, words):
    with pytest.raises(InvalidInputError, match=words):
        Declaration.from_json(bad)


# ----------------------------------------------------------------------- Kang: a pass
def _kang(position_text: str):
    from referee.kang.game import GAME, KangState
    from referee.kang.position import Position

    return GAME, KangState(position=Position.parse(position_text))


def test_kang_pass_is_taken_only_when_no_kangaroo_can_move():
    game, stuck = _kang("6/6/6/6/6/6 - ssssmmmmllll A 2-0 -")  # A has no kangaroo anywhere: no move
    assert [(d.kind, d.subjects) for d in game.declarables(stuck)] == [("pass", ("A",))]
    step = game.declare(stuck, Declaration("pass", "A"), 4.0)
    (r,) = step.rulings
    assert r.kind == "declared" and r.legal is True and r.t == 4.0 and step.state.position.to_move == "B"
    assert r.details["declaration"] == {"kind": "pass", "subject": "A", "value": "", "t": 4.0}
    from referee.kang.position import Position

    game, start = _kang(str(Position.start()))  # the start: A can move
    step = game.declare(start, Declaration("pass", "A"), 1.0)
    assert step.rulings[0].legal is False and "may not pass" in step.rulings[0].summary
    assert step.state.position.to_move == "A"  # a refused pass leaves the turn where it was
    with pytest.raises(RefcamError, match="names one of A, not 'B'"):
        game.declare(start, Declaration("pass", "B"), 1.0)


# ----------------------------------------------------------------------- Kayak: hands of cards
def _kayak_turn(state, after_text: str):
    """The game's ruling on the river changing to after_text (a perfect reading)."""
    from collections import Counter

    from referee.kayak.game import GAME
    from referee.kayak.position import from_text

    return GAME._rule(state, SimpleNamespace(position=from_text(after_text), cards=Counter()), 9.0)


def test_kayak_discards_leave_fewer_actions_for_the_turn_the_camera_sees():
    from referee.kayak.game import GAME, KayakState
    from referee.kayak.position import from_text

    state = KayakState(position=from_text("0A/1A 1@1.0.2"))
    kinds = [d.kind for d in GAME.declarables(state)]
    assert kinds == ["turn", "discard", "refill"]  # one kayak: nobody else to throw a Life Ring
    one = GAME.declare(state, Declaration("discard", "pawn-1", "1"), 5.0).state
    two = GAME.declare(state, Declaration("discard", "pawn-1", "2"), 5.0).state
    # pawn-1 moves 3 spaces downstream: two actions (Double Paddle then Paddle)
    assert _kayak_turn(one, "0A/1A 1@1.3.2").rulings[-1].legal is True  # 1 discarded + 2 = 3: the last legal
    ruled = _kayak_turn(two, "0A/1A 1@1.3.2")
    assert ruled.rulings[-1].legal is False and "after 2 declared action(s)" in ruled.rulings[-1].summary
    assert ruled.state.spent_actions == 0  # the next turn starts afresh
    with pytest.raises(RefcamError, match="one of 1"):  # 2 spent: one left to declare
        GAME.declare(two, Declaration("discard", "pawn-1", "2"), 6.0)


def test_kayak_life_ring_is_played_on_another_players_turn_and_counts_an_action():
    from referee.kayak.game import GAME, KayakState
    from referee.kayak.position import from_text

    state = KayakState(position=from_text("0A/1A 1@1.0.2,2@1.0.4"))
    state = GAME.declare(state, Declaration("turn", "pawn-1"), 1.0).state
    ring = next(d for d in GAME.declarables(state) if d.kind == "life-ring")
    assert ring.subjects == ("pawn-2",)  # not the player whose turn it is
    with pytest.raises(RefcamError, match="not 'pawn-1'"):
        GAME.declare(state, Declaration("life-ring", "pawn-1"), 2.0)
    step = GAME.declare(state, Declaration("life-ring", "pawn-2"), 2.0)
    assert step.state.spent_actions == 1 and step.state.short_hands == (2,)
    assert "Life Ring played by pawn-2" in step.rulings[0].summary
    assert "pawn-1's turn; 1 action(s) used out of sight; pawn-2 holding 4 cards" in \
        GAME.view(step.state).data["diagram"]["caption"][-1]
    refilled = GAME.declare(step.state, Declaration("refill", "pawn-1"), 3.0).state
    assert refilled.turn_of is None and refilled.spent_actions == 0 and refilled.short_hands == (2,)


# ----------------------------------------------------------------------- Tornado
def _race_states(settings: dict):
    from referee.observation import Observation
    from referee.tornado.game import GAME

    if not (RACE / "stable").is_dir():
        pytest.skip("the race session is not generated (make samples)")
    state = GAME.new_state(parse_settings(GAME, {"course": str(RACE / "course.json"), **settings}))
    for f in sorted((RACE / "stable").glob("*.observation.json")):
        doc = json.loads(f.read_text())
        state = GAME.step(state, Observation.from_json(doc), doc["t"]).state
        yield GAME, state


def test_tornado_pass_ends_the_boats_turn_for_the_round_and_lapses_with_it():
    states = _race_states({})
    game, first = next(states)
    offered = next(d for d in game.declarables(first) if d.kind == "pass")
    assert set(offered.subjects) == {"boat-1", "boat-2", "boat-3"}
    passed = game.declare(first, Declaration("pass", "boat-3"), 1.5)
    assert passed.state.declared_passes == {"tornado/boat-3"} and passed.rulings[0].kind == "declared"
    assert "boat-3" not in next(d for d in game.declarables(passed.state) if d.kind == "pass").subjects
    with pytest.raises(RefcamError, match="not 'boat-3'"):
        game.declare(passed.state, Declaration("pass", "boat-3"), 1.6)
    from referee.observation import Observation

    rounds = []
    state = passed.state
    for f in sorted((RACE / "stable").glob("*.observation.json"))[1:]:
        doc = json.loads(f.read_text())
        state = game.step(state, Observation.from_json(doc), doc["t"]).state
        rounds.append((state.rounds.round, state.declared_passes))
    assert all(p == {"tornado/boat-3"} for r, p in rounds if r == 1)
    assert any(r > 1 for r, _ in rounds) and all(p == frozenset() for r, p in rounds if r > 1)


@pytest.mark.parametrize("weights, order, legal", [
    ("", "boat-3,boat-2,boat-1", True), ("", "boat-3,boat-1,boat-2", False),
    ("boat-1=2,boat-2=2,boat-3=3", "boat-3,boat-2,boat-1", True),  # equal weights: either order
    ("boat-1=2,boat-2=2,boat-3=3", "boat-3,boat-1,boat-2", True),
    ("boat-1=2,boat-2=2,boat-3=3", "boat-1,boat-3,boat-2", False)])
def test_tornado_start_gate_is_chosen_heaviest_first(weights, order, legal):
    game, first = next(_race_states({"weights": weights} if weights else {}))
    assert "gate-order" in [d.kind for d in game.declarables(first)]
    (r,) = game.declare(first, Declaration("gate-order", value=order), 0.5).rulings
    assert r.legal is legal and r.rule == "Tornado Splash, Determining Start Position"


def test_tornado_gate_order_names_only_boats_in_the_race():
    game, first = next(_race_states({}))
    with pytest.raises(RefcamError, match="boat-9 is not a boat in the race"):
        game.declare(first, Declaration("gate-order", value="boat-3,boat-9"), 0.5)
    with pytest.raises(RefcamError, match="each once"):
        game.declare(first, Declaration("gate-order", value="boat-3,boat-3"), 0.5)


def test_tornado_majority_vote_orders_the_tied_boats_by_weight_lightest_first():
    game, first = next(_race_states({"weights": "boat-1=3,boat-3=1"}))
    (r,) = game.declare(first, Declaration("same-rank", value="boat-1,boat-3"), 2.0).rulings
    assert r.details["turn_order"] == ["tornado/boat-3", "tornado/boat-1"] and r.rule == "Tornado Splash, FAQ"


@pytest.mark.parametrize("earlier, winner, leaders", [
    # 5+5 then this race's 3 (boat-2 wins it): boat-1 13, boat-2 11
    ("boat-1=1,boat-2=2,boat-3=3;boat-1=1,boat-2=2,boat-3=3", "tornado/boat-1", ["tornado/boat-1"]),
    # 5+0+3, 0+3+5, 3+5+0: all on 8 points
    ("boat-1=1,boat-3=2,boat-2=3;boat-3=1,boat-2=2,boat-1=3", None,
     ["tornado/boat-1", "tornado/boat-2", "tornado/boat-3"])])
def test_tornado_names_the_grand_prix_winner_and_a_tie_as_a_tie(earlier, winner, leaders):
    from referee.observation import Observation
    from referee.tornado.game import GAME

    if not (RACE / "stable").is_dir():
        pytest.skip("the race session is not generated (make samples)")
    state = GAME.new_state(parse_settings(GAME, {"course": str(RACE / "course.json"), "grand_prix": earlier}))
    said = []
    for f in sorted((RACE / "stable").glob("*.observation.json")):
        doc = json.loads(f.read_text())
        step = GAME.step(state, Observation.from_json(doc), doc["t"])
        if any(r.kind == "pending" for r in step.rulings):  # the script plays on: the players accept it
            step = GAME.declare(step.state, Declaration(ACCEPT_ILLEGAL), doc["t"])
        state, said = step.state, said + [r for r in step.rulings if "Grand Prix over" in r.summary]
    assert len(said) == 1  # said once, when the third race is scored
    final = GAME.view(state).data["grand_prix"]["final"]
    assert final["winner"] == winner and final["leaders"] == leaders
    assert GAME.view(state).offers == ()  # no fourth race
    offered = [d for d in GAME.declarables(state) if d.kind == "grand-prix-winner"]
    if winner:
        assert not offered and "boat-1 wins with 13 points" in said[0].summary
    else:
        assert "no tie-break" in said[0].summary and offered[0].subjects == ("boat-1", "boat-2", "boat-3")
        named = GAME.declare(state, Declaration("grand-prix-winner", "boat-2"), 99.0).state
        assert GAME.view(named).data["grand_prix"]["final"]["winner"] == "tornado/boat-2"
        assert not [d for d in GAME.declarables(named) if d.kind == "grand-prix-winner"]


def test_every_game_lists_its_invisible_events():
    from referee.kang import declare as kang
    from referee.kayak import declare as kayak
    from referee.tornado import declare as tornado

    assert len(tornado.INVISIBLE_EVENTS) == 4 and len(kayak.INVISIBLE_EVENTS) == 4 and kang.INVISIBLE_EVENTS
    readme = (Path(__file__).resolve().parents[1] / "docs" / "live-page.md").read_text(encoding="utf-8")
    assert "### What the players declare" in readme
    for event in tornado.INVISIBLE_EVENTS + kayak.INVISIBLE_EVENTS + ("a pass",):
        assert event in readme, event


# ----------------------------------------------------------------------- the engine, the page, replay
@pytest.fixture
def counter():
    register(COUNTER)
    yield COUNTER
    unregister(COUNTER.id)


def _counter_app(tmp_path, recorder=None, **config):
    from tests.live_helpers import move_script, scripted_observe, write_session
    from vision.sources import SessionSource
    from vision.tracking import TrackerSettings
    from webui.app import create_app
    from webui.live import LiveEngine, LiveSettings

    source = SessionSource(write_session(tmp_path / "s", 30, game="kang"), realtime=False)
    engine = LiveEngine(source, scripted_observe(move_script("kang")),
                        LiveSettings(game="counter", tracker=TrackerSettings(stable_s=0.5)), recorder=recorder)
    return create_app({"TESTING": True, "ENGINE": engine, "START_ENGINE": False, **config}), engine


def test_the_page_route_takes_a_declaration_into_the_log(counter, tmp_path):
    app, engine = _counter_app(tmp_path)
    client = app.test_client()
    doc = client.get("/api/state").get_json()
    assert [d["kind"] for d in doc["state"]["declarables"]] == ["count"]
    r = client.post("/api/declare", json={"kind": "count", "value": "3"})
    assert r.status_code == 200 and r.get_json()["state"]["data"]["count"] == 3
    log = client.get("/api/state").get_json()["log"]
    assert log[-1]["ruling"]["kind"] == "declared" and log[-1]["ruling"]["summary"] == "players declare 3 pieces"
    for body, words in [({"kind": "pass", "subject": "boat-1"}, "'pass' cannot be declared now"),
                        ({"kind": "count"}, "give a value"), ({"kind": "count", "value": "-1"}, "'-1'"),
                        ({"kind": "count", "value": "3", "t": 5}, "takes no time"), ("count = 3", "must be an object")]:
        r = client.post("/api/declare", json=body)
        error = r.get_json()["error"]
        assert r.status_code == 400 and words in error and "\n" not in error, (body, error)
    engine.stop()


def test_beyond_loopback_declaring_needs_the_token(counter, tmp_path):
    from webui.access import TOKEN_HEADER

    token = "table-token-0123456789"
    app, engine = _counter_app(tmp_path, BIND_HOST="192.168.7.9", TOKEN=token)
    client = app.test_client()
    lan = {"Host": "192.168.7.9:8000", "Origin": "http://192.168.7.9:8000"}
    r = client.post("/api/declare", json={"kind": "count", "value": "3"}, headers=lan)
    assert r.status_code == 403 and engine.state.count == 0
    r = client.post("/api/declare", json={"kind": "count", "value": "3"}, headers=dict(lan, **{TOKEN_HEADER: token}))
    assert r.status_code == 200 and engine.state.count == 3
    engine.stop()


def test_the_recording_keeps_each_declaration_with_its_time(counter, tmp_path):
    from tests.live_helpers import frame_image
    from vision.session import SessionWriter, read_session

    writer = SessionWriter(tmp_path / "rec", game="counter")
    app, engine = _counter_app(tmp_path, recorder=writer)
    engine.process(0.5, frame_image(0))
    engine.declare(Declaration("count", value="1"))
    with pytest.raises(RefcamError):  # refused: not kept
        engine.declare(Declaration("count", value="many"))
    writer.close()
    assert read_session(tmp_path / "rec").declarations() == [{"kind": "count", "subject": "", "value": "1", "t": 0.5}]
    engine.stop()


def test_replay_replays_the_declarations_at_their_time(counter, tmp_path, monkeypatch):
    """1, 2 then 4 pieces: 2 -> 4 is illegal, unless the players declared 3 pieces in between."""
    from tests.live_helpers import scripted_observe, write_session
    from tests.test_game_seam import counter_script
    from webui import cli, live

    folder = write_session(tmp_path / "s", 30, game="kang")
    (folder / "declarations.jsonl").write_text(json.dumps({"kind": "count", "value": "3", "t": 1.95}) + "\n")
    scripted = scripted_observe(counter_script())
    monkeypatch.setattr(live, "pipeline_observe", lambda image, camera, game, **kw: scripted(image, camera, game))
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert cli.main(["replay", str(folder), "--game", "counter", "--json"]) == 0
    timeline = json.loads(out.getvalue())
    assert [(r["kind"], r["summary"], r["legal"]) for r in timeline] == [
        ("move", "count 0 -> 1", True), ("move", "count 1 -> 2", True),
        ("declared", "players declare 3 pieces", None), ("move", "count 3 -> 4", True)]
    assert timeline[2]["t"] == 1.95


@pytest.mark.parametrize("sigma, text", [(0.0, "<0.01"), (0.03, "0.03"), (0.049, "0.05"), (0.094, "0.09"),
                                         (0.095, "0.1"), (0.54, "0.5"), (12.34, "12.3")])
def test_sigma_is_never_printed_as_zero(sigma, text):
    from referee.rulings import sigma_text

    assert sigma_text(sigma) == text
