"""The Kang Game object and its commands, driven through a fake Tools (the real CLI wiring is the seam's)."""

import argparse
import json
from pathlib import Path

import pytest

from referee.errors import RefcamError
from referee.game import Explanation, Game, View
from referee.kang.game import GAME
from referee.kang.moves import legal_moves, push
from referee.kang.position import Move, Position
from referee.observation import Observation, PiecePose

ROOT = Path(__file__).resolve().parent.parent
SESSION = ROOT / "samples" / "sessions" / "kang"
NAMES = {"s": ["kang/small-%d" % i for i in range(1, 5)], "m": ["kang/medium-%d" % i for i in range(1, 5)],
         "l": ["kang/large-%d" % i for i in range(1, 5)]}


def observation_of(pos: Position, image_size=(1280, 720), drop=(), nudge=None) -> Observation:
    """A clean observation showing pos: tokens on square centres, start zone tokens in two rows."""
    free = {s: list(n) for s, n in NAMES.items()}
    pieces = [PiecePose("kang/board", (10, 11, 12, 13), 0.0, 0.0, 0.0, 2.0, 0.3)]
    for i, c in enumerate(pos.cells):
        if c != ".":
            f, r = i % 6, i // 6 + 1
            pieces.append(PiecePose(free[c].pop(), (), (f - 2.5) * 40, (r - 3.5) * 40, 0.0, 4.0, 0.5))
    for k, (coach, zone) in enumerate(zip("AB", pos.zones)):
        sign = -1 if coach == "A" else 1
        slot = 0
        for s, n in zip("sml", zone):
            for _ in range(n):
                pieces.append(PiecePose(free[s].pop(), (), (slot % 6 - 2.5) * 42, sign * (195 + 42 * (slot // 6)),
                                        0.0, 2.0, 0.5))
                slot += 1
    pieces = [p for p in pieces if p.name not in drop]
    if nudge:
        pieces = [PiecePose(p.name, p.marker_ids, p.x_mm + nudge[1], p.y_mm, 0.0, p.z_mm, p.sigma_mm)
                  if p.name == nudge[0] else p for p in pieces]
    return Observation(tuple(pieces), frame={"anchor": "kang/board"}, game="kang", image_size=image_size)


class FakeTools:
    """Observation files / JSON observations by path; a session's stable states from its truth.jsonl."""

    def __init__(self, observations=None):
        self.observations = observations or {}

    def observe_path(self, path, camera_file, game):
        if path in self.observations:
            return self.observations[path]
        return Observation.from_json(json.loads(Path(path).read_text()))

    def stable_observations(self, folder, camera_file, game):
        last = None
        for line in (Path(folder) / "truth.jsonl").read_text().splitlines():
            d = json.loads(line)
            if d["stable"] and d["position"] != last:
                last = d["position"]
                poses = tuple(PiecePose(p["name"], tuple(p["marker_ids"]), p["x_mm"], p["y_mm"], p["theta_deg"],
                                        p["z_mm"], 0.5) for p in d["pieces"])
                yield d["t"], Observation(poses, frame={"anchor": "kang/board"}, game="kang")

    def draw_explanation(self, *a):
        raise AssertionError("not used")


def run(name, argv, tools, capsys):
    cmd = {c.name: c for c in GAME.commands()}[name]
    parser = argparse.ArgumentParser()
    cmd.add_arguments(parser)
    code = cmd.run(parser.parse_args(argv), tools)
    return code, capsys.readouterr().out


def test_is_a_game():
    assert isinstance(GAME, Game) and GAME.id == "kang" and GAME.options == ()


def test_step_judges_moves_and_keeps_state():
    state = GAME.new_state({})
    pos = Position.start()
    step = GAME.step(state, observation_of(pos), 0.0)
    assert step.state.position == pos and "start position" in step.rulings[0].summary
    move = Move.parse("c0-c1-c2")
    after = push(pos, move)
    step2 = GAME.step(step.state, observation_of(after), 1.0)
    assert step2.rulings[0].legal is True and "c0-c1-c2" in step2.rulings[0].summary
    assert step2.rulings[0].rule.startswith("Kang, ")
    assert step2.state.position == after and step2.state.last == move
    assert GAME.step(step2.state, observation_of(after), 2.0).rulings == ()  # nothing changed: no ruling
    view = GAME.view(step2.state)
    assert isinstance(view, View) and view.kind == "board" and view.data["to_move"] == "B"
    assert view.data["last_move"]["path"] == ["c0", "c1", "c2"]
    arrows = [s for s in GAME.shapes(step2.state, None) if s.kind == "arrow"]
    assert arrows and arrows[0].points[-1] == (-20.0, -60.0)


def test_illegal_then_taken_back_and_cannot_tell():
    pos = Position.start()
    state = GAME.step(GAME.new_state({}), observation_of(pos), 0.0).state
    bad = Position(pos.cells[:2] + "s" + pos.cells[3:], ((1, 2, 2), (2, 2, 2)))  # small entering straight to c1? legal
    wrong = Position("." * 12 + "s" + "." * 23, ((1, 2, 2), (2, 2, 2)))  # small jumps to a3: 3 lines
    step = GAME.step(state, observation_of(wrong), 1.0)
    assert step.rulings[0].legal is False and "How to move kangaroo tokens" in step.rulings[0].rule
    back = GAME.step(step.state, observation_of(pos), 2.0)
    # referee/pending.py: the board back as it was puts the illegal move right
    assert step.rulings[-1].kind == "pending" and step.state.position == state.position
    assert back.rulings[0].summary == "Put right: the table is back as it was before the illegal turn"
    # a kangaroo not read (here large-1, in a start zone) stands where it stood: the entry is judged
    hand = GAME.step(back.state, observation_of(bad, drop=("kang/large-1",)), 3.0)
    assert hand.rulings[0].legal is True and hand.rulings[0].summary.startswith("Legal: A played c0-c1")
    straddle = GAME.step(back.state, observation_of(bad, nudge=("kang/small-4", 20.0)), 4.0)
    assert straddle.rulings[0].legal is None and straddle.rulings[0].summary.startswith("Cannot tell: ")
    assert "straddles" in straddle.rulings[0].summary
    exp = GAME.explain(back.state, observation_of(wrong))
    assert isinstance(exp, Explanation) and "illegal" in exp.title


def test_check_command_json_positions_and_errors(tmp_path, capsys):
    pos = Position.start()
    after = push(pos, legal_moves(pos)[0])
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(pos.to_json()))
    b.write_text(json.dumps(after.to_json()))
    code, out = run("check", [str(a), str(b), "--json"], FakeTools(), capsys)
    doc = json.loads(out)
    assert code == 0 and doc["legal"] is True and str(legal_moves(pos)[0]) in doc["moves"]
    tools = FakeTools({"x.jpg": observation_of(pos), "y.jpg": observation_of(after, image_size=(1920, 1080))})
    with pytest.raises(RefcamError, match="not the same camera view"):
        run("check", ["x.jpg", "y.jpg"], tools, capsys)
    tools = FakeTools({"x.jpg": observation_of(pos), "y.jpg": Observation((), game="tornado")})
    with pytest.raises(RefcamError, match="no Kang board"):
        run("check", ["x.jpg", "y.jpg"], tools, capsys)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(dict(pos.to_json(), board=["......"] * 5 + ["sssss."])))
    with pytest.raises(RefcamError, match="17 kangaroos"):
        run("check", [str(bad), str(b)], FakeTools(), capsys)


def test_state_and_perft_commands(capsys):
    tools = FakeTools({"s.jpg": observation_of(Position.start())})
    code, out = run("state", ["s.jpg", "--json"], tools, capsys)
    doc = json.loads(out)
    assert doc["board"] == ["......"] * 6 and doc["start_zone"]["A"] == {"s": 2, "m": 2, "l": 2}
    code, out = run("perft", ["start", "2"], tools, capsys)
    assert out.strip().splitlines()[-1] == "1296"
    with pytest.raises(RefcamError, match="unknown letter"):
        run("perft", ["6/6/6/6/6/6q ssmmll ssmmll A 0-0 -", "1"], tools, capsys)


def test_replay_bundled_session(capsys):
    code, out = run("replay", [str(SESSION), "--json"], FakeTools(), capsys)
    doc = json.loads(out)
    truth = [json.loads(line)["event"] for line in (SESSION / "truth.jsonl").read_text().splitlines()]
    events = [e for e in truth if e]
    assert len(doc["moves"]) == len(events)
    for played, event in zip(doc["moves"], events):
        assert played.startswith(event["coach"]) and played.endswith(event["to"])
    assert all(r["legal"] is not False for r in doc["rulings"])


def _way_ending(alfalfa: tuple[int, int]):
    """A one-turn way whose end has the given alfalfa (the board itself does not matter here)."""
    from referee.kang.moves import PASS
    from referee.kang.position import Position
    from referee.kang.sequences import Turn

    start = Position.start()
    end = Position._trusted(start.cells, start.zones, "A", alfalfa, None)
    return (Turn("B", PASS, start, end),)


@pytest.mark.parametrize("ends, said", [
    (((3, 1), (3, 2)), ("A", None, "B's alfalfa cannot be told: 1 or 2")),  # A has 3 either way: A has won
    (((1, 3), (1, 3)), ("B", "1-3", "(1-3)")),
    (((3, 1), (2, 3)), None),  # a different coach wins each way: nobody is named
    (((2, 1), (3, 1)), None),  # one way has no winner yet: the game may go on
])
def test_a_win_is_named_where_every_way_the_game_went_ends_with_it(ends, said):
    """End of the Game: the first coach with 3 alfalfa wins. Where the ways the game may have gone
    on disagree only on the loser's alfalfa, the winner is known and the score is not."""
    from referee.kang.step import _won_every_way

    rulings = _won_every_way([_way_ending(a) for a in ends], 5.0)
    if said is None:
        assert rulings == ()
        return
    (r,) = rulings
    winner, score, words = said
    assert (r.details["winner"], r.details["score"], r.t) == (winner, score, 5.0)
    assert r.summary.startswith(f"{winner} wins with 3 alfalfa") and words in r.summary


def test_a_change_of_more_places_than_three_turns_can_make_is_cannot_tell_not_illegal():
    """Six legal moves with no still table between them (a quick game, a long hand over the
    board): a turn changes at most 3 places, and more places changed than 3 turns can change,
    so finding no sequence of 3 turns proves nothing. Ruled "cannot tell", never "illegal"."""
    from referee.kang.judge import judge_change
    from referee.kang.moves import legal_moves, push
    from referee.kang.position import Position
    from referee.kang.sequences import MAX_TURNS, PLACES_PER_TURN, Target

    pos = Position.start()
    for _ in range(6):  # six plain legal moves, each the first the rules list
        pos = push(pos, legal_moves(pos)[0])
    changed = Target.exact(pos.layout()).distance(Position.start().layout())
    assert changed > PLACES_PER_TURN * MAX_TURNS
    got = judge_change(Position.start(), Target.exact(pos.layout()))
    assert got.verdict == "cannot tell" and "more turns were played" in got.what
