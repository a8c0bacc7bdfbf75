"""Compute tests/data/kang_perft.json with the plain second reading of the rules
(tests/kang_bruteforce.py), never with the engine under test:

    .venv/bin/python -m tests.make_kang_perft            # depths 1-3 (and 4 for the start: slow, minutes)

Each case says what it is there for; tests/test_kang_perft.py checks the engine against the
counts and that each case still shows its feature.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from tests import kang_bruteforce as bf

OUT = Path(__file__).resolve().parent / "data" / "kang_perft.json"
CASES = [
    ("start", "6/6/6/6/6/6 ssmmll ssmmll A 0-0 -", "the start position: A enters first", 4),
    ("chained-jumps", "2s3/6/6/2l3/6/2m3 s ssmmmlll A 0-0 -",
     "a small kangaroo entering in file c jumps the medium, the large and the small and scores", 3),
    ("kick-north-edge", "5m/5s/6/6/6/6 - sssmmmllll A 0-0 -",
     "A's small on f5 kicks the medium on f6: only row 6 squares may take it", 3),
    ("kick-no-target", "smlsml/2m3/2s3/6/6/6 - smll A 0-0 -",
     "row 6 is full, so landing on c5 cannot end in a kick (no square is near enough B)", 3),
    ("exact-count-exit", "6/s1m1l1/6/6/6/6 - sssmmmlll A 0-0 -",
     "the medium on c5 and the large on e5 (via f5, f6) leave with the exact count; the small on a5 cannot", 3),
    ("no-score-turn", "6/s1m1l1/6/6/6/6 - sssmmmlll A 1-0 A",
     "the same board, but A scored last turn and may not leave the board now", 3),
    ("blocked-start-zone", "6/6/6/6/6/sslmsl ml smml A 0-0 -",
     "row 1 is full: A's medium and large cannot enter, so A plays row 1", 3),
    ("forced-pass", "6/6/6/6/6/6 - ssssmmmmllll A 2-0 -",
     "A has no kangaroo to move (all twelve wait in B's start zone): A passes", 3),
    ("won", "6/6/6/6/6/6 ssmmll ssmmll B 3-1 -", "A holds 3 alfalfa: the game is over, no children", 3),
]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    quick = "--quick" in argv
    cases = []
    for name, text, why, depth in CASES:
        depth = min(depth, 3) if quick else depth
        counts = []
        memo: dict = {}
        for d in range(1, depth + 1):
            t0 = time.perf_counter()
            counts.append(bf.perft(bf.parse(text), d, memo))
            print(f"{name} depth {d}: {counts[-1]} ({time.perf_counter() - t0:.1f} s)", flush=True)
        cases.append({"name": name, "position": text, "why": why, "perft": counts})
    doc = {"note": "perft counts (SPEC section 3: children are distinct successor positions) computed by "
                   "tests/kang_bruteforce.py via tests/make_kang_perft.py", "cases": cases}
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
