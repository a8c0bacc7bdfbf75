"""Turn order in Tornado Splash, settled once (issue 21 item 5): turns.begins_round is the one
decision, used by the turn rules (turnlog.py), the round count (rounds.py) and the referee.

The truth, from the rulebook's Action Phase and Ending the Action Phase: turns go down the
round's ranking, a player may pass (0 spaces, unseen), and the Action Phase ends when the
last-ranked player has taken their turn. So once the last-ranked boat has acted, every boat
that had not acted passed and the round is over: the next boat to act begins the next round.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.tornado.turns import begins_round, round_over
from tests.test_tornado_live import COURSE, GATE_FRONT, Y1, Y2, Y3, card, moves, state
from referee.tornado.referee import TornadoReferee

B1, B2, B3 = "tornado/boat-1", "tornado/boat-2", "tornado/boat-3"
GOLDEN = Path(__file__).resolve().parent / "golden" / "replay-tornado.json"


@pytest.mark.parametrize("order, acted, passed, out, starting, new_round", [
    ((B2, B1), (B1,), (), (), (B2,), True),  # the case: boat-1, last-ranked, acted; boat-2 passed
    ((B2, B1), (B2,), (), (), (B1,), False),  # in order, the round goes on
    ((B1, B2, B3), (B2,), (), (), (B1,), False),  # boat-3, last, still to act: boat-1 is late
    ((B1, B2, B3), (B2, B3), (), (), (B1,), True),  # boat-3 acted: the round is over
    ((B1, B2, B3), (B2,), (B3,), (), (B1,), True),  # boat-3 declared passing ends it too
    ((B1, B2, B3), (B2,), (), (B3,), (B1,), True),  # boat-3 finished: boat-2 is the last one racing
    ((B1, B2, B3), (B1,), (), (), (B1,), True),  # a second turn: the others passed
])
def test_begins_round_at_its_boundary(order, acted, passed, out, starting, new_round):
    assert begins_round(order, acted, passed, starting, out) is new_round


def test_round_over_needs_a_boat_in_the_order():
    assert round_over((), (), ()) is False and round_over((B1,), (), (B1,)) is True


def test_last_ranked_boat_acting_ends_the_round_two_boats():
    """Issue item 5: in round 2 the order is boat-2, boat-1. Boat-1 (last) moves while boat-2 has
    not: boat-2 passed and round 2 ended, so boat-2 moving next is legal (round 3)."""
    ref = TornadoReferee(COURSE)
    c1, c2 = card("1-06", GATE_FRONT, Y1), card("2-11", GATE_FRONT, Y2)  # straight-2, straight-3
    ref.observe_stable(state({1: (0, Y1), 2: (0, Y2)}), 0.0)  # round 1: boat-1 (lighter) first
    ref.observe_stable(state({1: (GATE_FRONT + 73, Y1), 2: (0, Y2)}, [c1]), 1.0)  # 2 spaces
    ref.observe_stable(state({1: (GATE_FRONT + 73, Y1), 2: (GATE_FRONT + 91, Y2)}, [c1, c2]), 2.0)  # 3 spaces
    d1 = card("1-11", GATE_FRONT + 110, Y1)  # round 2, order boat-2, boat-1: boat-1 (last) goes first
    out = ref.observe_stable(state({1: (GATE_FRONT + 201, Y1), 2: (GATE_FRONT + 91, Y2)}, [c1, c2, d1]), 3.0)
    assert moves(out, 1)[0].legal is True and ref.rounds.round == 2
    assert ref.rounds.turn_order == [B2, B1]
    d2 = card("2-12", GATE_FRONT + 110, Y2)
    out = ref.observe_stable(state({1: (GATE_FRONT + 201, Y1), 2: (GATE_FRONT + 201, Y2)}, [c1, c2, d1, d2]), 4.0)
    m2 = moves(out, 2)[0]
    assert m2.legal is True and not m2.details["violations"], m2.summary
    assert ref.rounds.round == 3 and any(r.kind == "ranking" and r.details.get("round") == 3 for r in out)


def test_next_boat_after_the_last_ranked_acted_begins_the_next_round():
    ref = TornadoReferee(COURSE)
    c1, c2 = card("1-11", GATE_FRONT, Y1), card("2-06", GATE_FRONT, Y2)
    ref.observe_stable(state({1: (0, Y1), 2: (0, Y2)}), 0.0)
    ref.observe_stable(state({1: (GATE_FRONT + 91, Y1), 2: (0, Y2)}, [c1]), 1.0)  # boat-1, 3 spaces
    ref.observe_stable(state({1: (GATE_FRONT + 91, Y1), 2: (GATE_FRONT + 73, Y2)}, [c1, c2]), 2.0)  # boat-2, 2
    # round 2, order boat-1, boat-2: boat-2 (last) acts first, so boat-1 passed and round 2 is over
    d2 = card("2-11", GATE_FRONT + 110, Y2)
    out = ref.observe_stable(state({1: (GATE_FRONT + 91, Y1), 2: (GATE_FRONT + 110 + 55, Y2)}, [c1, c2, d2]), 3.0)
    m2 = moves(out, 2)[0]
    assert m2.legal is True and ref.rounds.round == 2 and "so boat-1 passed" in m2.details["turn_order"]
    # boat-1 moving next begins round 3: legal, and a new Ranking Phase is ruled
    d1 = card("1-12", GATE_FRONT + 110, Y1)
    out = ref.observe_stable(state({1: (GATE_FRONT + 201, Y1), 2: (GATE_FRONT + 165, Y2)}, [c1, c2, d2, d1]), 4.0)
    assert moves(out, 1)[0].legal is True and ref.rounds.round == 3
    assert any(r.kind == "ranking" and r.details.get("round") == 3 for r in out)


def test_declared_pass_of_the_last_ranked_boat_ends_the_round():
    three = {1: (0, Y1), 2: (0, Y2), 3: (0, Y3)}
    c2, c1 = card("2-11", GATE_FRONT, Y2), card("1-11", GATE_FRONT, Y1)
    verdicts = {}
    for declared in (False, True):
        ref = TornadoReferee(COURSE)
        ref.observe_stable(state(three), 0.0)  # round 1: boat-1, boat-2, boat-3
        ref.observe_stable(state({**three, 2: (GATE_FRONT + 91, Y2)}, [c2]), 1.0)  # boat-2: boat-1 passed
        if declared:
            ref.declare_pass(B3)  # the players say boat-3 passes: round 1 is over
        out = ref.observe_stable(state({**three, 1: (GATE_FRONT + 91, Y1), 2: (GATE_FRONT + 91, Y2)}, [c2, c1]), 2.0)
        verdicts[declared] = (moves(out, 1)[0].legal, ref.rounds.round)
    assert verdicts == {False: (False, 1), True: (True, 2)}


def test_bundled_session_at_12_s_is_legal_in_the_golden():
    """samples/sessions/tornado at 12 s: boat-1 (last of round 2) acted at 9 s, so boat-2
    moving at 12 s begins round 3; the golden file pins that ruling."""
    rulings = [r for r in json.loads(GOLDEN.read_text()) if r["t"] == 12.0]
    move = next(r for r in rulings if r["kind"] == "move")
    assert move["legal"] is True and not any(r["kind"] == "pending" for r in rulings)
    assert any(r["kind"] == "ranking" and r["summary"].startswith("Round 3:") for r in rulings)


def test_boats_in_play_setting_names_a_boat_under_a_hand_from_the_first_view():
    """Ranking Phase: every boat racing has a place. Set as boats 1 and 2, a table showing only
    boat-1 is an incomplete ranking that names boat-2; without the setting nothing says so."""
    from referee.game import parse_settings
    from referee.tornado.game import GAME

    only_one = state({1: (0, Y1)})
    for boats, hidden in (("1,2", ["tornado/boat-2"]), ("", [])):
        st = GAME.new_state(parse_settings(GAME, {"course": COURSE, "boats": boats}))
        step = GAME.step(st, only_one, 0.0)
        view = GAME.view(step.state).data
        assert view["turn_rules"]["hidden"] == hidden and view["ranking_incomplete"] is bool(hidden)
        assert any("boat-2 not seen" in r.summary for r in step.rulings) is bool(hidden)
