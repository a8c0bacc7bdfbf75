"""Kang turns seen together: time to judge a change of 1, 2 and 3 turns, and one no sequence
explains (the whole search, then the rule broken), on busy positions from seeded playouts.

    .venv/bin/python -m tests.bench.kang_sequences [--positions 20]

Baseline measured in the same run: the one-move judge (explain) on the same position, the
work every table needed before turns could be seen together. Prints the median and the worst.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from referee.kang.explain import explain
from referee.kang.judge import judge_change
from referee.kang.moves import legal_moves, push, successor_moves
from referee.kang.position import Position
from referee.kang.sequences import Target


def busy_positions(n: int, seed: int = 2026) -> list[Position]:
    """Mid-game positions with the most distinct successors among random playouts."""
    rng = random.Random(seed)
    found = []
    while len(found) < n:
        pos = Position.start()
        for _ in range(rng.randrange(12, 40)):
            moves = legal_moves(pos)
            if not moves or pos.winner:
                break
            pos = push(pos, rng.choice(moves))
        if not pos.winner and legal_moves(pos) and len(successor_moves(pos)) >= 150:
            found.append(pos)
    return found


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--positions", type=int, default=20)
    args = ap.parse_args()
    rng = random.Random(7)
    rows: dict[str, list[float]] = {"explain (1 move, baseline)": [], "1 turn": [], "2 turns": [], "3 turns": [],
                                    "no sequence (illegal)": []}
    for pos in busy_positions(args.positions):
        after, path = pos, []
        for _ in range(3):
            moves = legal_moves(after)
            if not moves or after.winner:
                break
            after = push(after, rng.choice(moves))
            path.append(after)
        rows["explain (1 move, baseline)"].append(_timed(lambda: explain(pos, path[0].layout())))
        for k, board in enumerate(path, 1):
            rows[f"{k} turn{'s' if k > 1 else ''}"].append(_timed(lambda: judge_change(pos, Target.exact(board.layout()))))
        cells = list(pos.cells)  # a kangaroo lifted onto the far corner: no turns give that
        i = next(j for j, c in enumerate(cells) if c != ".")
        far = 35 if cells[35] == "." else next(j for j in range(35, -1, -1) if cells[j] == ".")
        cells[far], cells[i] = cells[i], "."
        rows["no sequence (illegal)"].append(_timed(lambda: judge_change(pos, Target.exact(("".join(cells), pos.zones)))))
    base = statistics.median(rows["explain (1 move, baseline)"])
    print(f"Kang change judged on {args.positions} busy positions (>= 150 distinct successors each), ms:")
    for name, times in rows.items():
        med = statistics.median(times)
        print(f"  {name:28s} median {med:8.1f}  worst {max(times):8.1f}  median / baseline {med / base:6.1f}")


if __name__ == "__main__":
    main()
