"""The shared illegal-turn policy (referee/pending.py) on a toy game whose truth is plain.

The toy ("hops", defined here for the test): pieces stand in lanes 40 mm apart along x; a
turn moves one piece exactly one lane forward (+40 mm); a piece moved any other way is an
illegal turn; a piece missing from the table (a hand over it) is "cannot tell" (the others are
still ruled, and the state stays as it was); a piece
reaching lane 5 wins (what follows from a turn, withheld while it is illegal). Each test
below was run with one deliberate bug put into referee/pending.py by hand and failed with
it (the bug is named in the test's docstring).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from referee.game import Step
from referee.observation import Observation, PiecePose
from referee.pending import (PENDING_KIND, PUT_RIGHT_BACK, RESUMED, TurnGuard, accept, guarded_step, same_table,
                             with_last_readings)
from referee.rulings import Ruling, verdict_line

LANE_MM = 40.0
WIN_LANE = 5
RULE = "Hops, One lane a turn"


@dataclass(frozen=True)
class HopState:
    lanes: tuple[tuple[str, int], ...] | None = None
    winner: str | None = None
    guard: TurnGuard = field(default=TurnGuard(), compare=False)


def table(theta=0.0, **lanes: int) -> Observation:
    return Observation(tuple(PiecePose(name, (), lane * LANE_MM, 0.0, theta, 5.0, 0.2, 0.5)
                             for name, lane in sorted(lanes.items())))


def _rule_step(state: HopState, observation: Observation, t: float) -> Step:
    seen = {p.name: round(p.x_mm / LANE_MM) for p in observation.pieces}
    if state.lanes is None:
        return Step(replace(state, lanes=tuple(sorted(seen.items()))))
    before = dict(state.lanes)
    unread = sorted(set(before) - set(seen))
    out, winner = [Ruling(t, "hops", "warning", f"Cannot tell: {name} not read", None, RULE) for name in unread], None
    for name in sorted(set(before) & set(seen)):
        if seen[name] != before[name]:
            legal = seen[name] == before[name] + 1
            what = f"{name} moved from lane {before[name]} to lane {seen[name]}"
            out.append(Ruling(t, "hops", "move", verdict_line("Legal" if legal else "Illegal", what, "One lane a turn"),
                              legal, RULE))
            if seen[name] == WIN_LANE:
                winner = name
                out.append(Ruling(t, "hops", "state", f"{name} wins", None, RULE))
    if unread:
        return Step(state, tuple(out))
    return Step(replace(state, lanes=tuple(sorted(seen.items())), winner=winner), tuple(out))


def _follows(ruling: Ruling) -> bool:
    return ruling.kind == "state" and ruling.summary.endswith("wins")


def step(state: HopState, observation: Observation, t: float) -> Step:
    return guarded_step("hops", _rule_step, state, observation, t, follows=_follows)


def play(*tables: Observation) -> list[Step]:
    state, steps = HopState(), []
    for t, obs in enumerate(tables):
        steps.append(step(state, obs, float(t)))
        state = steps[-1].state
    return steps


def summaries(s: Step) -> list[str]:
    return [r.summary for r in s.rulings]


def test_a_legal_and_an_illegal_turn_in_one_step_is_not_put_right():
    """Bug: a step holding one legal and one illegal ruling taken as put right / resumed.
    a jumps 3 lanes (illegal, pending); then a stands one lane on (legal from the last legal
    state) but b jumped 3 lanes: the whole change is not legal, so the game stays pending."""
    steps = play(table(a=0, b=0), table(a=3, b=0), table(a=1, b=3))
    last = steps[-1]
    assert last.state.guard.illegal is not None and last.state.lanes == (("a", 0), ("b", 0))
    assert not any(s.startswith(("Put right", "Resumed")) for s in summaries(last))
    assert last.rulings[-1].kind == PENDING_KIND


def test_an_unjudged_table_is_not_kept_as_the_last_legal_one():
    """Bug: a "cannot tell" table (a hand over b, a pushed a lane meanwhile) kept as the last
    legal table. The legal table put back after an illegal turn must then still read "Put right"."""
    steps = play(table(a=0, b=0), table(a=1), table(a=3, b=0), table(a=0, b=0))
    assert steps[1].rulings[0].summary.startswith("Cannot tell")
    assert steps[2].rulings[-1].kind == PENDING_KIND
    assert summaries(steps[3])[0] == PUT_RIGHT_BACK and steps[3].state.guard.illegal is None


def test_after_accepting_the_accepted_table_is_the_legal_one():
    """Bug: after the players accept an illegal turn, the guard keeps the old legal table.
    Accepted a's jump to lane 3; then b jumps (illegal); the accepted table put back is put right."""
    steps = play(table(a=0, b=0), table(a=3, b=0))
    accepted = accept("hops", steps[-1].state, 2.0)
    assert accepted.rulings[0].summary.startswith("Accepted: ") and accepted.state.lanes == (("a", 3), ("b", 0))
    jump = step(accepted.state, table(a=3, b=4), 3.0)
    assert jump.rulings[-1].kind == PENDING_KIND
    back = step(jump.state, table(a=3, b=0), 4.0)
    assert summaries(back)[0] == PUT_RIGHT_BACK and back.state.lanes == (("a", 3), ("b", 0))
    old = step(jump.state, table(a=0, b=0), 4.0)  # the table before the accepted turn is no longer the legal one
    assert not any(s == PUT_RIGHT_BACK for s in summaries(old))


def test_a_piece_turned_in_place_is_not_the_same_table():
    """Bug: a piece turned 45 degrees without moving counted as the same table. referee/motion.py:
    a turn beyond 10 degrees (and 4 combined sigmas, here 4 x 0.7 degrees) is a change."""
    assert not same_table(table(a=1), table(theta=45.0, a=1))
    assert not same_table(table(a=1), table(theta=10.1, a=1))  # first turn that counts
    assert same_table(table(a=1), table(theta=9.9, a=1))  # last one that does not


def test_a_turned_piece_is_not_taken_as_the_illegal_table_seen_again():
    """The same bug through the step: the illegal table with a piece turned 45 degrees is a
    new table, judged again (here it is still illegal: a new pending ruling, the illegal move's
    own words not said a second time), not ignored."""
    steps = play(table(a=0, b=0), table(a=3, b=0))
    again = step(steps[-1].state, table(a=3, b=0), 2.0)
    assert again.rulings == ()
    turned_table = table(theta=45.0, a=3, b=0)
    turned = step(steps[-1].state, turned_table, 2.0)
    assert [r.kind for r in turned.rulings] == [PENDING_KIND]
    assert turned.state.guard.illegal.observation == turned_table


def test_two_illegal_turns_in_a_row_date_the_pending_turn_from_the_first():
    """Bug: a second illegal turn dates the pending turn from itself. a jumps at t=1, then b
    jumps too at t=2: the game has been pending since t=1."""
    steps = play(table(a=0, b=0), table(a=3, b=0), table(a=3, b=4))
    pending = steps[-1].rulings[-1]
    assert pending.kind == PENDING_KIND and pending.details["since_t"] == 1.0
    assert steps[-1].state.guard.illegal.t == 1.0


def test_legal_turns_from_the_last_legal_state_resume_the_game_and_name_the_turns():
    """A misread table (a in lane 3) ruled illegal; the next table is a legal turn from the
    last legal table: the game resumes by itself, and the win it brings is recorded."""
    steps = play(table(a=4, b=0), table(a=7, b=0), table(a=5, b=0))
    first, *rest = steps[-1].rulings
    assert first.summary == f"{RESUMED} a moved from lane 4 to lane 5 (One lane a turn)"
    assert [r.legal for r in rest] == [True, None] and rest[1].summary == "a wins"
    assert steps[-1].state.guard.illegal is None and steps[-1].state.winner == "a"


def test_a_legal_turn_beside_a_piece_not_judged_does_not_resume():
    """Bug: resumed on a step with a legal ruling and a "cannot tell" one (Tornado's wrong
    ruling 3 is its twin). a jumps (pending); then b moves one lane (legal) while a is under a
    hand: whether a went back is not known, so the game stays pending and no win is recorded."""
    steps = play(table(a=4, b=4), table(a=7, b=4), table(b=5))
    last = steps[-1]
    assert last.state.guard.illegal is not None and last.state.winner is None
    assert not any(s.startswith(("Resumed", "Put right")) for s in summaries(last))
    assert "b wins" not in summaries(last)


def test_a_win_is_withheld_while_pending():
    steps = play(table(a=4, b=0), table(a=5, b=2))  # a wins, but b's jump is illegal in the same turn
    assert steps[-1].state.winner is None and "a wins" not in summaries(steps[-1])


def test_a_piece_not_read_keeps_its_last_reading_in_the_comparisons():
    """A piece missing from a table (not seen empty) stands where it was last read; one seen
    empty is gone."""
    legal, now = table(a=0, b=0), table(a=0)
    assert same_table(legal, with_last_readings(now, legal))
    gone = replace(now, seen_empty=("b",))
    assert not same_table(legal, with_last_readings(gone, legal))
    moved_then_unread = with_last_readings(now, table(a=0, b=3), legal)  # b last read in lane 3
    assert not same_table(legal, moved_then_unread)
