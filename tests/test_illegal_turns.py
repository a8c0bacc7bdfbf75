"""What an illegal turn leads to, in all three games (referee/pending.py, issue 21 items 3 and 4).

Each reproduction is checked at its boundary: the last legal turn records what follows from
it (a win, a place, a score), the first illegal one records nothing of it and says
"Pending: the illegal turn must be put right"; the players putting it right or accepting it
(referee/<game>/pending.py) lets play go on. The truths come from the rulebooks, not the code:
Kayak Chaos, Turns: at most 3 actions, each at most 2 rows downstream (Double Paddle), so 6
rows is the most one turn can carry a kayak; Tornado Splash, Racing Card Limitation: 3
movement spaces a round without the boost; Kang, How to get an alfalfa token: no score on
the turn after scoring.
"""

from __future__ import annotations

from referee.kang.game import GAME as KANG, KangState
from referee.kang.pending import accept_illegal_turn as kang_accept
from referee.kang.position import Position
from referee.kayak.game import GAME as KAYAK
from referee.kayak.pending import accept_illegal_turn as kayak_accept
from referee.pending import PENDING_SUMMARY, TurnGuard
from referee.tornado.course_spec import load_course
from referee.tornado.game import GAME as TORNADO
from referee.tornado.layout import layout_observation
from referee.tornado.pending import accept_illegal_turn as tornado_accept
from tests.test_kang_game import observation_of as kang_board
from tests.kayak_tools import observation_of as kayak_river
from tests.test_tornado_referee import _pose


def _pending(step):
    return [r for r in step.rulings if r.kind == "pending"]


# ---------------------------------------------------------------- Kayak Chaos (issue item 3)
def _kayak_turn(before: str, after: str):
    state = KAYAK.step(KAYAK.new_state({}), kayak_river(before), 0.0).state
    return state, KAYAK.step(state, kayak_river(after), 1.0)


def test_kayak_win_on_the_last_legal_turn_six_rows():
    _, step = _kayak_turn("0A/7A 1@0.1.0", "0A/7A 1@1.3.0")  # 3 Double Paddles: 6 rows onto the Finish
    assert [(r.kind, r.legal) for r in step.rulings] == [("move", True), ("finish", True)]
    assert step.state.winner == 1 and not _pending(step)


def test_kayak_no_win_on_an_illegal_turn_seven_rows():
    legal, step = _kayak_turn("0A/7A 1@0.0.0", "0A/7A 1@1.3.0")  # 7 rows: more than 3 actions can carry
    assert [(r.kind, r.legal) for r in step.rulings] == [("move", False), ("pending", None)]
    pending = _pending(step)[0]
    assert pending.summary == PENDING_SUMMARY and str(pending.rule) == "Kayak Chaos, Turns"
    assert step.state.winner is None and step.state.position == legal.position
    assert KAYAK.view(step.state).data["illegal_turn"]["why"] == step.rulings[0].summary
    # the players accept it: now the win is recorded
    accepted = kayak_accept(step.state, 2.0)
    assert [r.kind for r in accepted.rulings] == ["state", "finish"] and accepted.state.winner == 1
    assert accepted.state.guard.illegal is None and KAYAK.view(accepted.state).data["illegal_turn"] is None


def test_kayak_illegal_turn_put_right_by_the_table_or_resumed_by_a_legal_turn():
    legal, step = _kayak_turn("0A/7A 1@0.0.0", "0A/7A 1@1.3.0")
    again = KAYAK.step(step.state, kayak_river("0A/7A 1@1.3.0"), 1.5)
    assert again.rulings == () and again.state.guard.illegal is not None  # the same illegal table: nothing new
    back = KAYAK.step(step.state, kayak_river("0A/7A 1@0.0.0"), 2.0)
    assert back.rulings[0].summary == "Put right: the table is back as it was before the illegal turn"
    assert back.state.guard.illegal is None and back.state.position == legal.position
    instead = KAYAK.step(step.state, kayak_river("0A/7A 1@0.2.0"), 2.0)  # one Double Paddle from the legal river
    assert instead.rulings[0].summary.startswith("Resumed: reached from the last legal state by ")
    assert instead.rulings[1].legal is True and instead.state.guard.illegal is None


# ---------------------------------------------------------------- Tornado Splash (issue item 4)
COURSE = "tornado-circuit"
# Three deck-3 straight-2 cards along the final straight (rear edges; spaces at rear + 37 and + 73);
# the finish line lies near x = -60 and a boat at x = -37 has crossed it.
A, B, C = ("3-06", -330), ("3-07", -220), ("3-08", -110)


def _tornado(boat1, cards=(), gp="new"):
    return layout_observation(load_course(COURSE), {"tornado/boat-1": boat1, "tornado/boat-2": (-10, 60, 0)},
                              sigma_mm=0.3, extra=[_pose(f"tornado/card-{n}", r + 55, -20, sigma=0.3)
                                                   for n, r in cards])


def _round_the_course(cards):
    """boat-1 goes round to the final straight and stands on card A (refcam saw no cards before)."""
    from referee.game import parse_settings

    state = TORNADO.new_state(parse_settings(TORNADO, {"course": COURSE, "grand_prix": "new"}))
    for i, at in enumerate([(-10, 0, 0), (200, 60, 0), (700, 300, 90), (0, 500, 180), (-700, 250, 270)]):
        state = TORNADO.step(state, _tornado(at, [A]), float(i)).state
    state = TORNADO.step(state, _tornado((-257, -20, 0), [A]), 9.0).state
    for t, (at, laid) in enumerate(cards):
        state = TORNADO.step(state, _tornado(at, laid), 10.0 + t).state
    return state


def _summaries(step, kind):
    return [r.summary for r in step.rulings if r.kind == kind]


def test_tornado_three_spaces_over_the_line_places_the_boat():
    state = _round_the_course([((-183, -20, 0), [A, B])])  # the next round: 2 spaces onto B
    step = TORNADO.step(state, _tornado((-37, -20, 0), [A, B, C]), 12.0)  # 3 spaces over the finish line
    assert any(r.kind == "move" and r.legal is True for r in step.rulings)
    assert any("boat-1 crossed the finish line, place 1" in s for s in _summaries(step, "finish"))
    assert any(s.lower().startswith("race over") for s in _summaries(step, "state")) and not _pending(step)


def test_tornado_no_place_on_an_illegal_turn_four_spaces_without_boost():
    legal = _round_the_course([])
    step = TORNADO.step(legal, _tornado((-37, -20, 0), [A, B, C]), 12.0)  # 4 spaces, no boost
    moves = [r for r in step.rulings if r.kind == "move"]
    assert moves[0].legal is False and str(moves[0].rule) == "Tornado Splash, Racing Card Limitation"
    assert not _summaries(step, "finish") and not any("race over" in s.lower() for s in _summaries(step, "state"))
    pending = _pending(step)[0]
    assert pending.legal is None and str(pending.rule) == "Tornado Splash, Racing Card Limitation"
    view = TORNADO.view(step.state).data
    assert view["crossed"] == [] and not view.get("game_over") and "this_race" not in view["grand_prix"]
    assert view["illegal_turn"]["rule"] == "Tornado Splash, Racing Card Limitation"
    # accepted on the page: the place, the race's end and the Grand Prix points are recorded now
    accepted = tornado_accept(step.state, 13.0)
    assert any("boat-1 crossed the finish line, place 1" in s for s in _summaries(accepted, "finish"))
    assert all(r.t == 13.0 for r in accepted.rulings)
    view = TORNADO.view(accepted.state).data
    assert view["crossed"] == ["tornado/boat-1"] and view["grand_prix"]["this_race"]["places"]["tornado/boat-1"] == 1


def test_tornado_illegal_turn_resumed_by_a_legal_turn_from_the_last_legal_state():
    legal = _round_the_course([])
    step = TORNADO.step(legal, _tornado((-37, -20, 0), [A, B, C]), 12.0)
    instead = TORNADO.step(step.state, _tornado((-147, -20, 0), [A, B]), 13.0)  # C taken back: 2 spaces
    assert instead.rulings[0].summary.startswith("Resumed: reached from the last legal state by ")
    assert any(r.kind == "move" and r.legal is True for r in instead.rulings)
    assert instead.state.guard.illegal is None


# ---------------------------------------------------------------- Kang
# A's medium on b2 leaves the board across B's edge with its last crossing (an alfalfa token).
BEFORE = "6/s1m1l1/6/6/6/6 - sssmmmlll A 1-0 {flag}"


def _kang_state(flag: str) -> KangState:
    pos = Position.parse(BEFORE.format(flag=flag))
    return KangState(position=pos, guard=TurnGuard(kang_board(pos)))


def _scored_board(pos: Position) -> Position:
    return Position(pos.cells.replace("m", ".", 1), (pos.zones[0], (3, 4, 3)), "B", (2, 0), (True, False))


def test_kang_score_recorded_when_the_coach_did_not_score_last_turn():
    state = _kang_state("-")
    step = KANG.step(state, kang_board(_scored_board(state.position)), 1.0)
    assert step.rulings[0].legal is True and "scores an alfalfa token (2-0)" in step.rulings[1].summary
    assert step.state.position.alfalfa == (2, 0)


def test_kang_no_score_recorded_on_an_illegal_second_score():
    state = _kang_state("A")  # A scored last turn
    step = KANG.step(state, kang_board(_scored_board(state.position)), 1.0)
    assert step.rulings[0].legal is False and "How to get an alfalfa token" in step.rulings[0].rule
    assert [r.kind for r in step.rulings] == ["move", "pending"]
    assert step.state.position.alfalfa == (1, 0) and KANG.view(step.state).data["illegal_on_board"] is True
    accepted = kang_accept(step.state, 2.0)
    assert "scores an alfalfa token (2-0)" in accepted.rulings[1].summary
    assert accepted.state.position.alfalfa == (2, 0) and accepted.state.position.to_move == "B"


def test_accepting_with_nothing_pending_changes_nothing():
    state = _kang_state("-")
    step = kang_accept(state, 1.0)
    assert step.state == state and step.rulings[0].kind == "warning"
    assert step.rulings[0].summary.startswith("Nothing to accept: ")


# ---------------------------------------------------------------- put right: the shared threshold
def test_table_back_within_the_motion_threshold_counts_as_put_right():
    """referee/motion.py: a piece moved when it shifted more than 5 mm (and 4 combined sigmas,
    here 4 x 0.14 mm); a table whose pieces are all within that is the same table."""
    from referee.observation import Observation, PiecePose
    from referee.pending import same_table

    def table(dx: float, extra=()):
        return Observation((PiecePose("kayak/pawn-1", (), 100.0 + dx, 0.0, 0.0, 10.0, 0.1),) + tuple(extra))

    assert same_table(table(0.0), table(4.9))  # last shift still the same table
    assert not same_table(table(0.0), table(5.1))  # first shift that is a move
    assert not same_table(table(0.0), table(0.0, [PiecePose("kayak/pawn-2", (), 0.0, 0.0, 0.0, 10.0, 0.1)]))


def test_rank_history_holds_an_illegal_turn_as_the_live_page_does(tmp_path, capsys):
    """`rank --history` goes through the game's step: the illegal 4-space turn in the history is
    reported as pending with its rule, as on the live page."""
    import json

    from tests.test_cli_bad_input import run_cli

    frames = [_tornado(at, [A]) for at in [(-10, 0, 0), (200, 60, 0), (700, 300, 90), (0, 500, 180),
                                           (-700, 250, 270), (-257, -20, 0)]]
    frames.append(_tornado((-37, -20, 0), [A, B, C]))  # 4 spaces, no boost
    history = tmp_path / "history"
    history.mkdir()
    for i, obs in enumerate(frames):
        (history / f"{i:02d}.json").write_text(json.dumps(obs.to_json()))
    now = tmp_path / "now.json"
    now.write_text(json.dumps(frames[-1].to_json()))
    code, out, err = run_cli(capsys, ["rank", now, "--course", COURSE, "--history", history, "--json"])
    assert code == 0, err
    pending = [w for w in json.loads(out)["warnings"] if PENDING_SUMMARY in w]
    assert len(pending) == 1 and "Racing Card Limitation" in pending[0]


# ------------------------------------------------- accepting through the page's declare seam
def test_players_accept_an_illegal_turn_through_declare_in_every_game():
    """The "accept the illegal turn" declaration is offered exactly while a turn is pending,
    and taking it records what the turn led to (here Kayak's win), logged as declared."""
    from referee.game import ACCEPT_ILLEGAL, Declaration

    legal, step = _kayak_turn("0A/7A 1@0.0.0", "0A/7A 1@1.3.0")
    assert ACCEPT_ILLEGAL not in [d.kind for d in KAYAK.declarables(legal)]
    assert ACCEPT_ILLEGAL in [d.kind for d in KAYAK.declarables(step.state)]
    accepted = KAYAK.declare(step.state, Declaration(ACCEPT_ILLEGAL), 2.0)
    assert [r.kind for r in accepted.rulings] == ["declared", "state", "finish"]
    assert accepted.state.winner == 1 and ACCEPT_ILLEGAL not in [d.kind for d in KAYAK.declarables(accepted.state)]
    for game in (KANG, TORNADO):  # nothing pending at the start: not offered
        assert ACCEPT_ILLEGAL not in [d.kind for d in game.declarables(game.new_state({}))]


def test_tornado_accept_through_declare_records_the_place():
    from referee.game import ACCEPT_ILLEGAL, Declaration

    step = TORNADO.step(_round_the_course([]), _tornado((-37, -20, 0), [A, B, C]), 12.0)  # 4 spaces, no boost
    assert ACCEPT_ILLEGAL in [d.kind for d in TORNADO.declarables(step.state)]

    assert _pending(step) and not _summaries(step, "finish")
    accepted = TORNADO.declare(step.state, Declaration(ACCEPT_ILLEGAL), 5.0)
    assert accepted.rulings[0].kind == "declared"
    assert any("boat-1 crossed the finish line, place 1" in s for s in _summaries(accepted, "finish"))
