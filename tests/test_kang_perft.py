"""Kang perft (SPEC section 3) against counts computed by the plain second reading of the
rules (tests/kang_bruteforce.py via tests/make_kang_perft.py); depth 4 is in tests/bench/kang.py."""

import json
from pathlib import Path

import pytest

from referee.kang.moves import PASS, legal_moves, perft, push
from referee.kang.position import Position
from tests import kang_bruteforce as bf

CASES = json.loads((Path(__file__).resolve().parent / "data" / "kang_perft.json").read_text())["cases"]
BY_NAME = {c["name"]: c for c in CASES}
TEST_DEPTH = 3


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_perft_to_depth_3(case):
    pos = Position.parse(case["position"])
    memo: dict = {}
    got = [perft(pos, d, memo) for d in range(1, TEST_DEPTH + 1)]
    assert got == case["perft"][:TEST_DEPTH]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_second_reading_agrees_at_depth_2(case):
    """The committed numbers still come from the second reading (guards against an edited file)."""
    state = bf.parse(case["position"])
    assert [bf.perft(state, d) for d in (1, 2)] == case["perft"][:2]


def test_start_has_depth_4():
    assert len(BY_NAME["start"]["perft"]) == 4


def _moves(name):
    pos = Position.parse(BY_NAME[name]["position"])
    return pos, legal_moves(pos)


def test_cases_show_their_feature():
    pos, moves = _moves("chained-jumps")
    assert any(len(m.jumps) >= 3 and m.exits for m in moves)
    pos, moves = _moves("kick-north-edge")
    kicks = [m for m in moves if m.kick is not None]
    assert kicks and all(m.kick[1] == 6 for m in kicks)
    pos, moves = _moves("kick-no-target")
    assert not any(m.kick is not None for m in moves) and any(m.path[m.jumps[0]] == (2, 5) for m in moves if m.jumps)
    pos, moves = _moves("exact-count-exit")
    exits = {str(m) for m in moves if m.exits}
    assert {"c5-c6-c7", "e5-f5-f6-f7"} <= exits and "e5-e6-e7" not in exits
    assert not any(m.origin == (0, 5) and not m.jumps for m in moves if m.exits)  # the small on a5: 1 line short
    pos, moves = _moves("no-score-turn")
    assert moves and not any(m.exits for m in moves)
    pos, moves = _moves("blocked-start-zone")
    assert all(m.origin[1] == 1 for m in moves) and sum(pos.zone("A")) == 2
    pos, moves = _moves("forced-pass")
    assert moves == (PASS,) and push(pos, PASS).to_move == "B"
    pos, moves = _moves("won")
    assert pos.winner == "A" and moves == () and perft(pos, 1) == 0
