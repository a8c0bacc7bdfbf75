"""Each Kang rule at its boundary: the last legal move beside the first illegal one, on small
hand-made positions. The verdicts are worked out by hand from the rulebook section named
(and SPEC section 3, which settles its readings), never taken from the engine; each test was
checked to fail when the rule it targets is loosened or switched off in referee/kang/moves.py.

Positions are in the text form (rows 6 down to 1), moves in the path notation of
referee/kang/position.py: ``c2-c3^-c4`` lands on c3 and jumps on, ``f5-f6xa6`` kicks the
kangaroo on f6 to a6.
"""

from __future__ import annotations

import pytest

from referee.kang.moves import is_legal, legal_moves, push
from referee.kang.position import Move, Position

# Goal of the Game / End of the Game: the first coach to collect 3 alfalfa tokens wins.
RULEBOOK_WIN = 3


def _legal(position: str, move: str) -> bool:
    return is_legal(Position.parse(position), Move.parse(move))


def _case(position: str, legal: list[str], illegal: list[str]) -> None:
    for move in legal:
        assert _legal(position, move), f"{move} should be legal in {position}"
    for move in illegal:
        assert not _legal(position, move), f"{move} should be illegal in {position}"


def test_kick_sends_to_the_opponents_nearest_occupied_row_not_one_row_looser():
    """Kick: the kicked kangaroo must stay playable by the opponent, so it goes no farther from
    the opponent than their nearest row that holds a kangaroo (the kicker counted, the kicked
    one lifted off). A's small on f5 lands on the medium on f6; afterwards only row 6 is
    occupied (by the kicker), so B's nearest row is row 6: a6-e6 yes, row 5 no."""
    _case("5m/5s/6/6/6/6 - sssmmmllll A 0-0 -", legal=["f5-f6xa6", "f5-f6xe6"], illegal=["f5-f6xa5", "f5-f6xe5"])


def test_kick_by_coach_b_to_a_first_row_only():
    """The same rule for coach B, whose opponent A sits south: after B's small lands on f1,
    A's nearest occupied row is row 1 (A's first row): a kick to a1 yes, to a2 (one row
    looser) no."""
    _case("6/6/6/6/5s/5m sssmmmllll - B 0-0 -", legal=["f2-f1xa1"], illegal=["f2-f1xa2"])


def test_a_line_crossed_again_through_a_jump_is_not_allowed():
    """How to move kangaroo tokens: no line twice in one move, jumps included. The small on c2
    lands on the medium on c3 and jumps 2 lines: on to c5 yes, or round to b2; back over the
    c2|c3 line it came across, no."""
    _case("6/6/6/2m3/2s3/6 - sssmmmllll A 0-0 -", legal=["c2-c3^-c4-c5", "c2-c3^-b3-b2"],
          illegal=["c2-c3^-c2-c1"])


def test_a_square_may_be_used_again_in_one_move():
    """...but the same square may be used again: the medium on c2 goes c3, d3 (a medium: jump
    2 more), d2 and back to c2, its own starting square (which counts as empty), crossing four
    different lines. Recrossing c3|d3 instead is not allowed."""
    _case("6/6/6/3m2/2m3/6 - ssssmmllll A 0-0 -", legal=["c2-c3-d3^-d2-c2"], illegal=["c2-c3-d3^-c3-c2"])


def test_exactly_as_many_lines_as_the_size():
    """A medium crosses exactly 2 lines: c2-c4 yes; 1 or 3 lines no."""
    _case("6/6/6/6/2m3/6 - ssssmmmllll A 0-0 -", legal=["c2-c3-c4", "c2-b2-b3"], illegal=["c2-c3", "c2-c3-c4-c5"])


def test_an_ordinary_move_passes_only_empty_squares():
    """Ordinary move: only across empty squares; a kangaroo is met only at the last crossing.
    The medium on c2 cannot pass the small on c3, nor stop on it after one line to jump."""
    _case("6/6/6/2s3/2m3/6 - sssmmmllll A 0-0 -", legal=["c2-b2-b3", "c2-d2-d3"], illegal=["c2-c3-c4", "c2-c3^-c4"])


def test_first_row_only_when_the_start_zone_cannot_move():
    """Which tokens you may move: the start zone first; a first-row token only when the zone is
    empty or its tokens cannot move. Zone small can enter: a1's small may not move. Zone medium
    and large cannot (row 1 is full, and they may not stop there after one line): a1 may."""
    _case("6/6/6/6/6/s5 s ssmmmmllll A 0-0 -", legal=["b0-b1"], illegal=["a1-a2"])
    _case("6/6/6/6/6/sslmsl ml smml A 0-0 -", legal=["a1-a2"], illegal=[])


def test_the_nearest_row_first_on_the_board():
    """...then row 2 only when row 1 is empty or stuck: with a small on a1 free to move, the
    small on a2 may not move."""
    _case("6/6/6/6/s5/s5 - ssmmmmllll A 0-0 -", legal=["a1-b1"], illegal=["a2-b2", "a2-a3"])


def test_leaving_the_board_is_the_last_crossing_and_exact():
    """How to get an alfalfa token: a kangaroo leaves across the opponent's edge with its
    exact count. A medium on c6 is one line short after leaving (c6-c7): no; a medium on c5
    leaves with its second line: yes."""
    _case("2m3/6/6/6/6/6 - ssssmmmllll A 0-0 -", legal=["c6-b6-b5"], illegal=["c6-c7"])
    _case("6/2m3/6/6/6/6 - ssssmmmllll A 0-0 -", legal=["c5-c6-c7"], illegal=[])


def test_no_scoring_on_the_turn_after_scoring():
    """The coach who just took an alfalfa token may not go past the opponent's edge on their
    next turn (flag 'A'); without the flag the same exit is legal."""
    _case("2s3/6/6/6/6/6 - sssmmmmllll A 1-0 A", legal=["c6-b6"], illegal=["c6-c7"])
    _case("2s3/6/6/6/6/6 - sssmmmmllll A 1-0 -", legal=["c6-c7"], illegal=[])


def test_win_at_exactly_three_alfalfa_and_not_at_two():
    """End of the Game: 2 alfalfa is no win and play goes on; the third wins and ends it."""
    two = Position.parse("2s3/6/6/6/6/6 - sssmmmmllll A 2-0 -")
    assert two.winner is None and legal_moves(two)
    three = push(two, Move.parse("c6-c7"))
    assert three.alfalfa == (RULEBOOK_WIN, 0) and three.winner == "A" and legal_moves(three) == ()
    one_short = push(Position.parse("2s3/6/6/6/6/6 - sssmmmmllll A 1-0 -"), Move.parse("c6-c7"))
    assert one_short.alfalfa == (RULEBOOK_WIN - 1, 0) and one_short.winner is None and legal_moves(one_short)


@pytest.mark.parametrize("text", ["6/6/6/6/6/6 ssmmll ssmmll B 3-1 -", "6/6/6/6/6/6 ssmmll ssmmll A 1-3 -"])
def test_a_won_position_has_no_moves(text):
    assert Position.parse(text).winner is not None and legal_moves(Position.parse(text)) == ()
