"""`kang perft` refuses, in one line and before hours of counting, a depth whose estimated count
passes MAX_PERFT_POSITIONS; the estimate grows each depth by the ratio of the last two counts."""

from __future__ import annotations

import pytest

from referee.errors import InvalidInputError
from referee.kang import commands
from referee.kang.position import Position
from tests.conftest import run_cli


def test_the_last_depth_within_the_estimate_is_counted_and_the_next_refused(monkeypatch):
    counted = []

    def tenfold(pos, depth, memo):  # ten positions a turn: depth d counts 10**d
        counted.append(depth)
        return 10 ** depth

    monkeypatch.setattr(commands, "perft", tenfold)
    monkeypatch.setattr(commands, "MAX_PERFT_POSITIONS", 1e7)
    assert commands.perft_counts(Position.start(), 7) == [10 ** d for d in range(1, 8)]  # 1e7: the limit
    counted.clear()
    with pytest.raises(InvalidInputError, match=r"depth 8 would count about 1\.0e\+08 positions"):
        commands.perft_counts(Position.start(), 8)
    assert counted == [1, 2]  # refused from the first estimate, not after counting


def test_perft_start_12_is_one_line_at_once(capsys):
    code, out, err = run_cli(capsys, ["kang", "perft", "start", "12"])
    assert code == 2 and err.count("\n") == 1 and "would count about" in err and "hours" in err, err
    code, out, err = run_cli(capsys, ["kang", "perft", "start", "2"])
    assert code == 0 and out.strip().endswith("1296"), out
