"""Tornado Splash rules, round 3: seven situations an independent review worked out from the
rulebook (/work/shared/rules/tornado-splash.txt) before refcam was run. Each test names the
rule, builds the situation at its boundary (the last legal case and the first illegal one),
and states the rulebook's answer, worked out by hand in the comment above it.

Geometry (tests/test_tornado_live.py): Tornado Circuit, start gate at the origin, travel +x,
the gate's front edge at x = 20. A card's spaces, from its rear edge: straight-1 at +55;
straight-2 at +37, +73; straight-3 at +19, +55, +91. Cards are 110 mm long and 60 mm wide.
"""

from __future__ import annotations

import math

import pytest

from referee.game import Declaration, parse_settings
from referee.tornado.game import GAME as TORNADO
from referee.tornado.referee import TornadoReferee
from tests.test_tornado_check import run_check
from tests.test_tornado_live import COURSE, GATE_FRONT, Y1, Y2, Y3, card, moves, pose, state
from tests.tornado_pieces import observation

LIMIT = "Tornado Splash, Racing Card Limitation"


def _new_race(**settings):
    return TORNADO.new_state(parse_settings(TORNADO, {"course": COURSE, **settings}))


def _steps(game_state, tables, t0=0.0):
    """Each table ruled on in turn; the last step and every ruling."""
    said = []
    step = None
    for i, table in enumerate(tables):
        step = TORNADO.step(game_state, table, t0 + i)
        game_state = step.state
        said += list(step.rulings)
    return step, said


# ---------------------------------------------------------------- 1. Racing Card Limitation in `tornado check`
# The token stands on space 1 of a straight-3 (A, rear edge at the gate's front, x = 20): 2 spaces
# lie ahead of it. Cards are laid so that the token can move up to 3 spaces this round: one more
# space (a straight-1) makes 3 ahead, legal; a straight-2 makes 4 ahead, illegal, even though the
# token then moves only 3 (to space 1 of the straight-2).
A1 = card("1-11", GATE_FRONT, Y1)


def _limit_tables(next_card: str, end_x: float):
    before = state({1: (GATE_FRONT + 19, Y1), 2: (0, Y2)}, [A1])
    after = state({1: (end_x, Y1), 2: (0, Y2)}, [A1, card(next_card, GATE_FRONT + 110, Y1)])
    return before, after


@pytest.mark.parametrize("next_card, end_x, legal", [
    ("1-01", GATE_FRONT + 110 + 55, True),  # straight-1: 2 + 1 = 3 spaces ahead
    ("1-06", GATE_FRONT + 110 + 37, False),  # straight-2: 2 + 2 = 4 spaces ahead, moved 3
])
def test_check_counts_the_spaces_ahead_like_the_live_referee(tmp_path, next_card, end_x, legal):
    before, after = _limit_tables(next_card, end_x)
    doc = run_check(tmp_path, before, after)
    assert (LIMIT in doc["broken"]) is (not legal), doc["broken"]
    assert doc["broken"] == [] if legal else doc["broken"] == [LIMIT]
    # the live referee, having watched boat-1 lay A and move 1 space in round 1, rules alike
    live = TornadoReferee(COURSE)
    live.observe_stable(state({1: (0, Y1), 2: (0, Y2)}), 0.0)
    live.observe_stable(before, 1.0)
    m = moves(live.observe_stable(after, 2.0), 1)[0]
    assert m.details["spaces"] == 3 and m.legal is legal
    if not legal:
        assert str(m.rule) == LIMIT


# ---------------------------------------------------------------- 2. Overlapping Player Cards
# boat-1 stands on space 1 of A (x = 39). boat-2's straight-3, laid across A (turned 90 degrees,
# centred at x = 75), wholly covers A's space 2: that space no longer exists. boat-1 lays a
# straight-2 (B) at A's front and moves to B's space 2: A.s3, B.s1, B.s2 = 3 spaces, and 3 spaces
# were ahead of it (A.s3 and B's two): legal. Counting the covered space would make it 4.
A2 = card("1-11", GATE_FRONT, Y1)
ACROSS = pose("tornado/card-2-11", GATE_FRONT + 55, Y1, 90.0)  # boat-2's, its spaces along +y
B2 = card("1-06", GATE_FRONT + 110, Y1)


def _covered_tables(end_x: float):
    boat2 = (GATE_FRONT + 55, Y1 + 36)
    before = state({1: (GATE_FRONT + 19, Y1), 2: boat2}, [A2, ACROSS])
    after = state({1: (end_x, Y1), 2: boat2}, [A2, ACROSS, B2])
    return before, after


def test_a_space_covered_by_another_players_card_does_not_exist():
    before, after = _covered_tables(GATE_FRONT + 110 + 73)
    live = TornadoReferee(COURSE)
    live.observe_stable(before, 0.0)
    m = moves(live.observe_stable(after, 1.0), 1)[0]
    assert m.details["spaces"] == 3 and m.legal is True, m.summary
    # a card never contradicts itself: no count but the one it rules on
    assert "4 spaces" not in m.summary and "moved 4" not in m.summary


def test_check_leaves_out_a_space_covered_by_another_players_card(tmp_path):
    before, after = _covered_tables(GATE_FRONT + 110 + 73)
    doc = run_check(tmp_path, before, after)
    moved = [r["summary"] for r in doc["rulings"] if r["section"] == "Player Token Movement"]
    assert doc["broken"] == [] and moved and "moved 3 spaces" in moved[0]


def test_covered_space_boundary_four_real_spaces_are_too_many():
    # the same table with B a straight-3: A.s3 and B's three = 4 spaces ahead; moving to B.s3
    # is 4 spaces: illegal on both counts, and the card says 4 once
    b3 = card("1-12", GATE_FRONT + 110, Y1)
    boat2 = (GATE_FRONT + 55, Y1 + 36)
    live = TornadoReferee(COURSE)
    live.observe_stable(state({1: (GATE_FRONT + 19, Y1), 2: boat2}, [A2, ACROSS]), 0.0)
    m = moves(live.observe_stable(state({1: (GATE_FRONT + 110 + 91, Y1), 2: boat2}, [A2, ACROSS, b3]), 1.0), 1)[0]
    assert m.details["spaces"] == 4 and m.legal is False and str(m.rule) == LIMIT


# ---------------------------------------------------------------- 3. a pending crossing is not put right by another boat
# boat-1 moves 4 spaces without a boost over the finish line (tests/test_illegal_turns.py's
# table): illegal (Racing Card Limitation), pending, no place. boat-2 then takes a legal turn.
# The table still shows boat-1's illegal move, so the change since the last legal state is not
# all legal: still pending, boat-1's part ruled illegal (never "merged"), and boat-1 has no place.
def test_pending_crossing_survives_the_next_boats_legal_turn():
    from tests.test_illegal_turns import A, B, C, _round_the_course, _tornado

    legal = _round_the_course([])
    illegal = TORNADO.step(legal, _tornado((-37, -20, 0), [A, B, C]), 12.0)
    assert illegal.state.guard.illegal is not None
    after = _tornado((-37, -20, 0), [A, B, C])
    boat2_card = pose("tornado/card-2-11", GATE_FRONT + 55, 60)
    after = type(after)(pieces=tuple(p if p.name != "tornado/boat-2" else pose("tornado/boat-2", GATE_FRONT + 91, 60)
                                     for p in after.pieces) + (boat2_card,), frame=after.frame, game=after.game)
    step = TORNADO.step(illegal.state, after, 13.0)
    m1 = moves(step.rulings, 1)
    assert m1 and m1[0].legal is False and "merged" not in m1[0].summary, [r.summary for r in step.rulings]
    assert step.state.guard.illegal is not None
    assert not any(r.summary.lower().startswith("put right") for r in step.rulings)
    assert not any(r.kind == "finish" and "place 1" in r.summary for r in step.rulings)
    assert TORNADO.view(step.state).data["crossed"] == []


# ---------------------------------------------------------------- 4. Ending the Action Phase after a declared pass
# Round 1, both boats on the gate: turn order boat-1, boat-2 (lighter first). The players declare
# that boat-1 passes: its turn this round is over, play goes to boat-2. boat-1 then laying a card
# and moving before boat-2 has acted is a second turn in one round: illegal. boat-2 moving
# instead is legal (the boundary), and after it boat-1 moving begins round 2: legal.
def _passed_boat_1():
    start = state({1: (0, Y1), 2: (0, Y2)})
    first = TORNADO.step(_new_race(), start, 0.0).state
    return TORNADO.declare(first, Declaration("pass", "boat-1"), 0.5).state


def test_a_boat_that_passed_may_not_move_again_in_the_round():
    c1 = card("1-11", GATE_FRONT, Y1)
    step = TORNADO.step(_passed_boat_1(), state({1: (GATE_FRONT + 91, Y1), 2: (0, Y2)}, [c1]), 1.0)
    m = moves(step.rulings, 1)[0]
    assert m.legal is False and "Action Phase" in str(m.rule), m.summary


def test_after_a_pass_the_next_boat_moves_then_the_passed_boat_begins_the_next_round():
    c1, c2 = card("1-11", GATE_FRONT, Y1), card("2-11", GATE_FRONT, Y2)
    step, said = _steps(_passed_boat_1(), [state({1: (0, Y1), 2: (GATE_FRONT + 91, Y2)}, [c2]),
                                           state({1: (GATE_FRONT + 91, Y1), 2: (GATE_FRONT + 91, Y2)}, [c2, c1])], 1.0)
    assert [m.legal for m in moves(said)] == [True, True], [r.summary for r in said]
    assert step.state.rounds.round == 2


@pytest.mark.parametrize("acted, passed, mover, verdict", [
    (["b1"], [], "b2", "ok"),  # the next boat in order
    ([], ["b1"], "b1", "violation"),  # the boat that passed, seen acting again: its turn is over
    (["b2"], [], "b1", "violation"),  # a boat acting after a lower-ranked one
    ([], ["b1"], "b2", "ok"),
])
def test_turn_order_call_a_boat_whose_turn_is_over_acting_again(acted, passed, mover, verdict):
    # turns.turn_order_call: the latest boat to have acted or passed, seen acting again, is out
    # of turn (its own turn ended: Ending the Action Phase), the same as a higher-ranked boat
    from referee.tornado.turns import turn_order_call

    assert turn_order_call(["b1", "b2", "b3"], acted + passed, [mover]).verdict == verdict


# ---------------------------------------------------------------- 5. FAQ majority vote in the next Ranking Phase
# Round 1 on the gate: boat-1 (weight 1), boat-2 (2), boat-3 (3). boat-1 and boat-2 each lay a
# straight-3 and move 3; boat-2 stands 3 mm further on (beyond the measurement: refcam alone ranks
# boat-2 first); boat-3 stays on the gate (it passed). The players vote that boat-1 and boat-2
# share a rank: the next Ranking Phase orders them by weight, boat-1, boat-2, then boat-3. In
# round 2 boat-1 then boat-2 act: both legal. Without the vote the order is boat-2, boat-1,
# boat-3, and boat-2 acting after boat-1 is out of order.
def _round_two(vote: bool):
    c1, c2 = card("1-11", GATE_FRONT, Y1), card("2-11", GATE_FRONT, Y2)
    at1, at2 = GATE_FRONT + 88, GATE_FRONT + 91
    gate3 = (0, Y3)
    step, _ = _steps(_new_race(), [state({1: (0, Y1), 2: (0, Y2), 3: gate3}),
                                   state({1: (at1, Y1), 2: (0, Y2), 3: gate3}, [c1]),
                                   state({1: (at1, Y1), 2: (at2, Y2), 3: gate3}, [c1, c2])])
    race = step.state
    if vote:
        race = TORNADO.declare(race, Declaration("same-rank", "", "boat-1,boat-2"), 2.5).state
    n1, n2 = card("1-12", GATE_FRONT + 110, Y1), card("2-12", GATE_FRONT + 110, Y2)
    return _steps(race, [state({1: (at1 + 110, Y1), 2: (at2, Y2), 3: gate3}, [c1, c2, n1]),
                         state({1: (at1 + 110, Y1), 2: (at2 + 110, Y2), 3: gate3}, [c1, c2, n1, n2])], 3.0)


def test_majority_vote_sets_the_next_ranking_phases_turn_order():
    step, said = _round_two(vote=True)
    ranking = [r for r in said if r.kind == "ranking" and "turn_order" in r.details]
    assert ranking and ranking[0].details["turn_order"] == ["tornado/boat-1", "tornado/boat-2", "tornado/boat-3"]
    assert [m.legal for m in moves(said)] == [True, True], [r.summary for r in said]
    assert step.state.guard.illegal is None and step.state.rounds.round == 2


def test_without_the_vote_the_camera_ranking_sets_the_order():
    step, said = _round_two(vote=False)
    ranking = [r for r in said if r.kind == "ranking" and "turn_order" in r.details]
    assert ranking[0].details["turn_order"] == ["tornado/boat-2", "tornado/boat-1", "tornado/boat-3"]
    assert [m.legal for m in moves(said)] == [True, False]


# ---------------------------------------------------------------- 6. FAQ: no card turns more than 90 degrees
# boat-1's straight-1 at x = 77 has its front edge wholly covered by boat-2's card, so the next
# card starts at the token in any direction (Unavailable Card Placement); the FAQ still allows a
# turn of at most 90 degrees from the previous card: 90 is legal, 120 is not.
def _unavailable(heading: float):
    first, boat, cover = card_at(1, 77, 0, 0), pose("tornado/boat-1", 77, 0), card_at(2, 132, 0, 90)
    cx, cy = 77 + 55 * math.cos(math.radians(heading)), 55 * math.sin(math.radians(heading))
    nxt = pose("tornado/card-1-02", cx, cy, heading)
    return observation(GATE, first, boat, cover), observation(GATE, first, cover, nxt,
                                                             pose("tornado/boat-1", cx, cy, heading))


def card_at(deck, x, y, theta):
    return pose(f"tornado/card-{deck}-01", x, y, theta)


GATE = pose("tornado/start-gate", 0, 0)
RULE_TURN = "Tornado Splash, FAQ (no turn of more than 90 degrees)"


@pytest.mark.parametrize("heading, legal", [(90.0, True), (120.0, False)])
def test_a_card_turned_more_than_90_degrees_is_refused_by_check(tmp_path, heading, legal):
    before, after = _unavailable(heading)
    doc = run_check(tmp_path, before, after)
    assert (RULE_TURN in doc["broken"]) is (not legal), doc["broken"]


@pytest.mark.parametrize("heading, legal", [(90.0, True), (120.0, False)])
def test_a_card_turned_more_than_90_degrees_is_refused_live(heading, legal):
    before, after = _unavailable(heading)
    live = TornadoReferee(COURSE)
    live.observe_stable(before, 0.0)
    out = live.observe_stable(after, 1.0)
    m = moves(out, 1)[0]
    assert m.legal is legal, m.summary
    if not legal:
        assert RULE_TURN in [v["rule"] for v in m.details["violations"]]


# ---------------------------------------------------------------- 7. watched from mid-race
# The first table refcam sees: boat-1 on space 3 of its second card (B, x = 130..240), its first
# card A behind. boat-1 lays C at B's front and moves to C's space 3: 3 spaces, legal. Its route
# is A, B, C in that order; `tornado check` on the same two tables also says 3.
def test_watched_from_mid_race_the_route_keeps_its_order(tmp_path):
    a, b, c = card("1-11", GATE_FRONT, Y1), card("1-12", GATE_FRONT + 110, Y1), card("1-13", GATE_FRONT + 220, Y1)
    before = state({1: (GATE_FRONT + 110 + 91, Y1), 2: (0, Y2)}, [a, b])
    after = state({1: (GATE_FRONT + 220 + 91, Y1), 2: (0, Y2)}, [a, b, c])
    live = TornadoReferee(COURSE)
    live.observe_stable(before, 0.0)
    m = moves(live.observe_stable(after, 1.0), 1)[0]
    assert m.details["spaces"] == 3 and m.legal is True, m.summary
    assert live.state_json()["routes"]["tornado/boat-1"] == ["tornado/card-1-11", "tornado/card-1-12",
                                                             "tornado/card-1-13"]
    doc = run_check(tmp_path, before, after)
    assert doc["broken"] == [] and any("moved 3 spaces" in r["summary"] for r in doc["rulings"])


# ---------------------------------------------------------------- words that mislead
# Boats standing in their start-gate spaces are equal by the rules (When Equidistant), not
# "equidistant within measurement": the ranking's summary says so, as its pair lines do.
def test_boats_on_the_start_gate_are_equal_by_the_rules_in_the_summary():
    live = TornadoReferee(COURSE)
    ranking = [r for r in live.observe_stable(state({1: (0, Y1), 2: (0, Y2)}), 0.0) if r.kind == "ranking"][0]
    assert ranking.summary.startswith("Round 1: 1. boat-1 (start gate: equal by the rules with boat-2)")
    assert "within measurement" not in ranking.summary


# One finish still: boat-1 has crossed, boat-3 is the only other boat in view. Without --boats
# whether the race is over cannot be told (a boat out of view may still race), and `rank` says
# that and nothing else; given the boats in play, the race is over.
@pytest.mark.parametrize("boats, first_line, over", [
    ((), "Cannot tell: whether the race is over", None),
    (("--boats", "1,3"), "Race over: 1. boat-1, 2. boat-3 (Ending the Game).", True),
])
def test_rank_on_one_finish_still_never_says_two_things(boats, first_line, over):
    import contextlib
    import io
    import json
    from pathlib import Path

    from webui.cli import main

    still = Path(__file__).resolve().parent.parent / "samples" / "tornado-finish" / "000"
    args = ["rank", f"{still}.jpg", "--camera-file", f"{still}.camera.json", *boats]
    for extra in ([], ["--json"]):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(args + extra) == 0
        if extra:
            doc = json.loads(out.getvalue())
            assert doc["game_over"] is over and doc["headline"].startswith(first_line)
        else:
            text = out.getvalue()
            assert text.splitlines()[0].startswith(first_line)
            said_over = [line for line in text.splitlines() if line.lower().startswith("race over")]
            assert len(said_over) == (1 if over else 0)
            assert "complete or not" not in text


# ---------------------------------------------------------------- a piece not read is not gone
# boat-1 stands on its card A; a hand hides card A in the next still table (not read, and its
# place not seen empty): A keeps its last reading, no "picked up", and boat-1 moving on along a
# route that rests on A cannot be judged, naming A. Seen empty, A was picked up.
def test_a_card_not_read_keeps_its_last_reading_and_a_move_resting_on_it_cannot_be_told():
    a, b = card("1-11", GATE_FRONT, Y1), card("1-01", GATE_FRONT + 110, Y1)
    live = TornadoReferee(COURSE)
    live.observe_stable(state({1: (GATE_FRONT + 19, Y1), 2: (0, Y2)}, [a]), 0.0)
    out = live.observe_stable(state({1: (GATE_FRONT + 110 + 55, Y1), 2: (0, Y2)}, [b]), 1.0)
    assert not [r for r in out if "picked up" in r.summary]
    m = moves(out, 1)[0]
    assert m.legal is None and m.summary.startswith("Cannot tell: card-1-11 was not read")
    assert live.state_json()["routes"]["tornado/boat-1"] == ["tornado/card-1-11", "tornado/card-1-01"]


def test_a_card_seen_empty_was_picked_up():
    import dataclasses

    a, b = card("1-11", GATE_FRONT, Y1), card("2-11", GATE_FRONT, Y2)
    live = TornadoReferee(COURSE)
    live.observe_stable(state({1: (GATE_FRONT + 91, Y1), 2: (GATE_FRONT + 91, Y2)}, [a, b]), 0.0)
    gone = dataclasses.replace(state({1: (GATE_FRONT + 91, Y1), 2: (GATE_FRONT + 91, Y2)}, [a]),
                               seen_empty=("tornado/card-2-11",))
    out = live.observe_stable(gone, 1.0)
    assert [r.details["card"] for r in out if "picked up" in r.summary] == ["tornado/card-2-11"]


def test_expected_pieces_are_the_last_readings_of_boats_and_cards():
    race = TORNADO.step(_new_race(), state({1: (GATE_FRONT + 19, Y1), 2: (0, Y2)}, [A1]), 0.0).state
    expected = {e.name: (round(e.x_mm), round(e.y_mm)) for e in TORNADO.expected_pieces(race)}
    assert expected == {"tornado/boat-1": (GATE_FRONT + 19, Y1), "tornado/boat-2": (0, Y2),
                        "tornado/card-1-11": (GATE_FRONT + 55, Y1)}


# ---------------------------------------------------------------- turns seen together
# One still table after the start: boat-2 laid a straight-3 and moved 3; boat-1 laid two
# straight-3s and a straight-1 and moved 7. Two turns of boat-1 with boat-2's between them
# give at most 3 + 3: no sequence of at most 3 turns explains 7 spaces. Three turns of boat-1
# (3, 3, 1) with boat-2's between them (a 0-space turn shows nothing, Player Token Movement) do:
# more turns than are searched, so 'cannot tell', never illegal (more than three turns' worth
# stays illegal: test_tornado_live). With the straight-1 left out (6 spaces) the one split, 3
# then 3, explains it: each turn ruled legal, seen together.
@pytest.mark.parametrize("cards1, spaces, legal", [(("1-11", "1-12"), 6, True), (("1-11", "1-12", "1-01"), 7, None)])
def test_two_turns_of_a_boat_seen_together_or_no_sequence(cards1, spaces, legal):
    laid1 = [card(n, GATE_FRONT + 110 * i, Y1) for i, n in enumerate(cards1)]
    end1 = GATE_FRONT + 110 * (len(cards1) - 1) + (91 if cards1[-1] != "1-01" else 55)
    c2 = card("2-11", GATE_FRONT, Y2)
    live = TornadoReferee(COURSE)
    live.observe_stable(state({1: (0, Y1), 2: (0, Y2)}), 0.0)
    out = live.observe_stable(state({1: (end1, Y1), 2: (GATE_FRONT + 91, Y2)}, laid1 + [c2]), 1.0)
    mine = moves(out, 1)
    if legal:
        assert [(m.details["spaces"], m.legal, m.details["seen_together"]) for m in mine] == [(3, True, 1), (3, True, 3)]
        assert moves(out, 2)[0].details["seen_together"] == 2
    else:
        assert len(mine) == 1 and mine[0].legal is None
        assert mine[0].summary.startswith("Cannot tell: boat-1 moved 7 movement spaces, more than two turns' worth")


def test_a_card_not_read_behind_the_token_does_not_stop_the_ruling():
    # When Your Deck is Empty: the rearmost card goes back to the hand. Not read (no seen_empty),
    # it keeps its place, but the move along the cards ahead of it is judged as usual
    a, b, c = card("1-01", GATE_FRONT, Y1), card("1-11", GATE_FRONT + 110, Y1), card("1-02", GATE_FRONT + 220, Y1)
    live = TornadoReferee(COURSE)
    live.observe_stable(state({1: (GATE_FRONT + 110 + 91, Y1), 2: (0, Y2)}, [a, b]), 0.0)
    m = moves(live.observe_stable(state({1: (GATE_FRONT + 220 + 55, Y1), 2: (0, Y2)}, [b, c]), 1.0), 1)[0]
    assert m.legal is True and m.details["spaces"] == 1, m.summary


# ---------------------------------------------------------------- the verdict first
@pytest.mark.parametrize("next_card, end_x, first_line", [
    ("1-06", GATE_FRONT + 110 + 37, "Illegal: the cards on boat-1's route give it 4 movement spaces this round, where "
                                    "at most 3 are allowed (Racing Card Limitation)."),
    ("1-01", GATE_FRONT + 110 + 55, "Legal: boat-1 moved 3 spaces (Player Token Movement)."),
])
def test_check_opens_with_the_verdict(tmp_path, next_card, end_x, first_line):
    from referee.tornado.check_command import format_report

    doc = run_check(tmp_path, *_limit_tables(next_card, end_x))
    assert doc["headline"] == first_line and format_report(doc).splitlines()[0] == first_line


def test_check_with_a_boat_not_read_cannot_tell():
    from referee.tornado.check import check_turn

    before, after = _limit_tables("1-01", GATE_FRONT + 110 + 55)
    after = type(after)(pieces=tuple(p for p in before.pieces if p.name != "tornado/boat-1"), frame=after.frame)
    first, _ = check_turn(before, after).headline()
    assert first.startswith("Cannot tell: boat-1 was not read")


def test_a_live_card_with_several_breaches_heads_with_one_and_folds_the_rest():
    # boat-1 lays two straight-2s out of the gate (4 spaces ahead) and moves 2 onto the first,
    # leaving the second ahead of it: two rules broken, one headline, one folded breach
    live = TornadoReferee(COURSE)
    live.observe_stable(state({1: (0, Y1), 2: (0, Y2)}), 0.0)
    a, b = card("1-06", GATE_FRONT, Y1), card("1-07", GATE_FRONT + 110, Y1)
    m = moves(live.observe_stable(state({1: (GATE_FRONT + 73, Y1), 2: (0, Y2)}, [a, b]), 1.0), 1)[0]
    assert m.summary.startswith("Illegal: the cards on boat-1's route give it 4 movement spaces")
    assert len(m.details["breaches"]) == 1 and m.details["breaches"][0].startswith("Illegal: ")
    assert m.details["pieces"][0] == "tornado/boat-1" and "tornado/card-1-07" in m.details["pieces"]


def test_two_turns_seen_together_are_forgotten_by_the_next_table():
    # after the 3 + 3 split above, boat-1's next single turn is ruled as one turn
    laid1 = [card("1-11", GATE_FRONT, Y1), card("1-12", GATE_FRONT + 110, Y1)]
    c2 = card("2-11", GATE_FRONT, Y2)
    live = TornadoReferee(COURSE)
    live.observe_stable(state({1: (0, Y1), 2: (0, Y2)}), 0.0)
    live.observe_stable(state({1: (GATE_FRONT + 110 + 91, Y1), 2: (GATE_FRONT + 91, Y2)}, laid1 + [c2]), 1.0)
    n2 = card("2-12", GATE_FRONT + 110, Y2)
    live.observe_stable(state({1: (GATE_FRONT + 110 + 91, Y1), 2: (GATE_FRONT + 110 + 91, Y2)}, laid1 + [c2, n2]), 2.0)
    n1 = card("1-01", GATE_FRONT + 220, Y1)
    out = live.observe_stable(state({1: (GATE_FRONT + 220 + 55, Y1), 2: (GATE_FRONT + 110 + 91, Y2)},
                                    laid1 + [c2, n2, n1]), 3.0)
    assert [(m.details["spaces"], m.legal, "turn_of_two" in m.details) for m in moves(out, 1)] == [(1, True, False)]


def test_more_turns_than_searched_cannot_tell_never_illegal():
    # boat-1 moved 3 + 3 (two turns' worth) while boat-2 and boat-3 each took a turn: four turns
    # in one still table, more than the 3 searched. Legal turns may explain it: cannot tell.
    laid1 = [card("1-11", GATE_FRONT, Y1), card("1-12", GATE_FRONT + 110, Y1)]
    c2, c3 = card("2-11", GATE_FRONT, Y2), card("3-11", GATE_FRONT, Y3)
    live = TornadoReferee(COURSE)
    live.observe_stable(state({1: (0, Y1), 2: (0, Y2), 3: (0, Y3)}), 0.0)
    out = live.observe_stable(state({1: (GATE_FRONT + 110 + 91, Y1), 2: (GATE_FRONT + 91, Y2),
                                     3: (GATE_FRONT + 91, Y3)}, laid1 + [c2, c3]), 1.0)
    m = moves(out, 1)[0]
    assert m.legal is None and m.summary.startswith("Cannot tell: boat-1 moved 6 movement spaces, two turns' worth")
    assert not [r for r in out if r.legal is False]
