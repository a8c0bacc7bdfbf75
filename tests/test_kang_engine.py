"""Kang values, text forms, bad input, legality and the judge on hand-made positions."""

import json

import pytest

from referee.errors import RefcamError
from referee.kang.explain import explain
from referee.kang.moves import PASS, Rules, is_legal, legal_moves, push
from referee.kang.position import Move, MoveNotationError, Position, PositionError

START = Position.start()


@pytest.mark.parametrize("text, message", [
    ("6/6/6/6/6/6 sssmmll ssmmll A 0-0 -", "13 kangaroos"),
    ("6/6/6/6/6/5q ssmmll ssmmll A 0-0 -", "unknown letter 'q'"),
    ("6/6/6/6/6/7 ssmmll ssmmll A 0-0 -", "holds 7 squares"),
    ("6/6/6/6/6/s ssmmll ssmmll A 0-0 -", "holds 1 squares"),
    ("6/6/6/6/6 ssmmll ssmmll A 0-0 -", "6 rows"),
    ("6/6/6/6/6/6 ssmmll ssmmll C 0-0 -", "whose turn"),
])
def test_bad_positions_quote_the_input(text, message):
    with pytest.raises(PositionError, match=message) as err:
        Position.parse(text)
    assert text in str(err.value) and isinstance(err.value, RefcamError)


def test_bad_json_positions():
    doc = START.to_json()
    with pytest.raises(PositionError, match="length 7"):
        Position.from_json(dict(doc, board=["......."] + ["......"] * 5))
    with pytest.raises(PositionError, match="unknown letter 'K'"):
        Position.from_json(dict(doc, board=["K....."] + ["......"] * 5))
    with pytest.raises(PositionError, match="13 kangaroos"):
        Position.from_json(dict(doc, board=["s....."] + ["......"] * 5))


@pytest.mark.parametrize("text", ["b0-c1", "b0", "b0-b1x", "z1-z2", "a1-a2^", "c5-c6-c7xd4", "b0--b1"])
def test_bad_move_notation(text):
    with pytest.raises(MoveNotationError) as err:
        Move.parse(text)
    assert repr(text) in str(err.value)


def test_text_forms_round_trip():
    for text in ["6/6/6/6/6/6 ssmmll ssmmll A 0-0 -", "2s3/6/6/2l3/6/2m3 s ssmmmlll B 2-1 AB"]:
        assert str(Position.parse(text)) == text
        assert Position.from_json(json.loads(json.dumps(Position.parse(text).to_json()))) == Position.parse(text)
    for text in ["b0-b1-c1", "c3-c4^-c5-c6-c7", "d2-d3-d4xb5", "pass"]:
        assert str(Move.parse(text)) == text
    assert START.to_json() == {"board": ["......"] * 6, "start_zone": {"A": {"s": 2, "m": 2, "l": 2},
                                                                       "B": {"s": 2, "m": 2, "l": 2}},
                               "to_move": "A", "alfalfa": {"A": 0, "B": 0}, "no_score": {"A": False, "B": False}}
    with pytest.raises(PositionError, match="canonical"):
        Position.parse("6/6/6/6/6/6 mmssll ssmmll A 0-0 -")


def test_start_moves_cross_the_exact_count():
    moves = legal_moves(START)
    assert all(m.origin[1] == 0 and len(m.path) - 1 == m.first_leg for m in moves)
    assert {str(m) for m in moves if m.first_leg == 1} == {f"{f}0-{f}1" for f in "abcdef"}
    assert not is_legal(START, Move.parse("a0-a1-b1-b0"))  # never back across one's own edge
    assert not is_legal(START, Move.parse("a0-a1-a2-a3-a4"))


def _crosses_a_line_twice(move: Move) -> bool:
    """A line is the segment between two squares, whichever way it is crossed."""
    lines = [frozenset(step) for step in zip(move.path, move.path[1:])]
    return len(set(lines)) < len(lines)


def _uses_a_square_twice(move: Move) -> bool:
    return len(set(move.path)) < len(move.path)


def test_no_line_twice_but_squares_again():
    """How to move kangaroo tokens: no line twice in one move, squares again allowed. The check
    itself must be able to fail: with the rule waived, 16 of the 72 start moves (a large going
    a0-a1-a2-a1, ...) cross a line back again."""
    waived = legal_moves(START, Rules(segment_once=False))
    assert sum(map(_crosses_a_line_twice, waived)) == 16 and len(waived) == 72
    assert not any(map(_crosses_a_line_twice, legal_moves(START)))
    # a medium on c2 goes c3, lands on the medium on d3, jumps 2 more by d2 back to c2: four lines, c2 twice
    again = Position.parse("6/6/6/3m2/2m3/6 - ssssmmllll A 0-0 -")
    moves = legal_moves(again)
    assert Move.parse("c2-c3-d3^-d2-c2") in moves and any(map(_uses_a_square_twice, moves))
    assert not any(map(_crosses_a_line_twice, moves))


def test_judge_one_several_none():
    after = push(START, Move.parse("c0-c1"))
    v = explain(START, after.layout())
    assert v.verdict == "legal" and [str(m) for m in v.moves] == ["c0-c1"] and v.after == after
    # a large entering to b2 has several routes the board cannot tell apart
    v = explain(START, push(START, Move.parse("a0-a1-b1-b2")).layout())
    assert v.verdict == "legal" and {"a0-a1-b1-b2", "b0-b1-a1-a2"} - {str(m) for m in v.moves} == {"b0-b1-a1-a2"}
    assert len(v.moves) >= 2
    # a small dropped on c3: 3 lines for a 1-line kangaroo
    wrong = Position("." * 12 + "..s" + "." * 21, ((1, 2, 2), (2, 2, 2)))
    v = explain(START, wrong.layout())
    assert v.verdict == "illegal" and v.rule.section == "How to move kangaroo tokens" and v.nearest is not None
    assert "3 lines" in v.reason or "crosses" in v.reason


def test_judge_other_coach_and_nearest_row_and_no_score():
    b_moved = Position(START.cells[:-1] + "s", ((2, 2, 2), (1, 2, 2)))
    v = explain(START, b_moved.layout())
    assert v.verdict == "illegal" and v.wrong_coach and v.coach == "B" and v.rule.section == "Gameplay"
    pos = Position.parse("6/6/6/6/6/2s3 s sssmmmmllll A 0-0 -".replace("sssmmmmllll", "ssmmmmllll"))
    row1 = push(pos, Move.parse("c1-c2"), letter="s")  # A must enter from the start zone first
    v = explain(pos, row1.layout())
    assert v.verdict == "illegal" and v.rule.section == "Which tokens you may move"
    pos = Position.parse("6/s1m1l1/6/6/6/6 - sssmmmlll A 1-0 A")
    scored = Position(pos.cells.replace("m", ".", 1), (pos.zones[0], (3, 4, 3)), "B", (2, 0), (True, False))
    v = explain(pos, scored.layout())
    assert v.verdict == "illegal" and v.rule.section == "How to get an alfalfa token"


def test_kick_rule_and_pass():
    pos = Position.parse("5m/5s/6/6/6/6 - sssmmmllll A 0-0 -")
    kicked_far = Position("m" + pos.cells[1:29] + "." + pos.cells[30:35] + "s", pos.zones)  # m to a1, s on f6
    v = explain(pos, kicked_far.layout())
    assert v.verdict == "illegal" and v.rule.section == "Kick"
    stuck = Position.parse("6/6/6/6/6/6 - ssssmmmmllll A 2-0 -")
    assert legal_moves(stuck) == (PASS,)
    v = explain(stuck, push(push(stuck, PASS), Move.parse("a7-a6")).layout())
    assert v.verdict == "legal" and v.passed
