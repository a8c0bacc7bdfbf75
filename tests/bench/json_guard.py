"""`make bench-json`: the cost of refcam's JSON guard (referee.safeload.parse_json: the depth and
size scan, then the parse with its number checks) against the bare json.loads of the same bytes,
measured in the same run, on the inputs that once cost seconds per byte.

A string of escaped quotes ('"' + '\\"' * n, left open: the 120 kB file that took 41 s) and the
same string closed, many arrays 31 deep, and ordinary session manifest lines. Each row prints
both times, their ratio, and the guard's time per MB; the guard is linear when that stays flat as
n grows (json.loads reads escapes in C, so escape-dense text has the largest ratio). For scale,
the round-2 scan (a backtracking regular expression) is timed once on 40 kB of escaped quotes.
Pass: every row under MAX_GUARD_S_PER_MB, and the per-MB time of the largest input of each kind at
most MAX_GROWTH times that of the smallest.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time

from referee import safeload
from referee.errors import InvalidInputError

MAX_GUARD_S_PER_MB = 1.0  # on one core
MAX_GROWTH = 5.0  # per-MB time, largest over smallest (8x the size): linear is 1 (plus cache effects), quadratic 8
_ROUND2_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)  # the scan this guard replaced


def _inputs(sizes: list[int]) -> list[tuple[str, str]]:
    rows = []
    for n in sizes:
        rows.append((f"open escaped quotes, {2 * n + 1:>9,d} B", '"' + '\\"' * n))
        rows.append((f"closed escaped quotes, {2 * n + 2:>7,d} B", '"' + '\\"' * n + '"'))
        rows.append((f"arrays 31 deep, {n:>9,d} B", "[" + ",".join(["[" * 30 + "]" * 30] * max(1, n // 61)) + "]"))
        line = json.dumps({"frame": "frames/000001.jpg", "t": 0.25, "note": "x\\\"y"})
        rows.append((f"manifest-like objects, {n:>9,d} B", "[" + ",".join([line] * max(1, n // len(line))) + "]"))
    return rows


def _best_of(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _guarded(text: str) -> None:
    try:
        safeload.parse_json(text, "bench", max_depth=64)
    except InvalidInputError:
        pass  # an open string is refused: the time to say so is what is measured


def _bare(text: str) -> None:
    try:
        json.loads(text)
    except ValueError:
        pass


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="60000,250000,500000", help="n for each row (comma-separated)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"{'input':40s} {'json.loads':>11s} {'guard':>9s} {'ratio':>6s} {'guard a MB':>11s}")
    failed = 0
    per_mb_by_kind: dict[str, list[float]] = {}
    for name, text in _inputs(sizes):
        bare = _best_of(lambda: _bare(text), args.repeats)
        guard = _best_of(lambda: _guarded(text), args.repeats)
        ratio = guard / bare if bare > 0 else float("inf")
        per_mb = guard / (len(text) / 1e6)
        per_mb_by_kind.setdefault(name.split(",")[0], []).append(per_mb)
        ok = per_mb < MAX_GUARD_S_PER_MB
        failed += not ok
        print(f"{name:40s} {bare * 1000:9.2f}ms {guard * 1000:7.2f}ms {ratio:6.1f} {per_mb * 1000:8.1f} ms  "
              f"{'ok' if ok else 'SLOW'}")
    for kind, costs in per_mb_by_kind.items():
        growth = costs[-1] / costs[0] if costs[0] > 0 else 1.0
        failed += growth > MAX_GROWTH
        print(f"{kind:40s} per-MB time, largest over smallest: {growth:.2f} {'ok' if growth <= MAX_GROWTH else 'GROWS'}")
    old = '"' + '\\"' * 20_000
    t0 = time.perf_counter()
    _ROUND2_STRING.sub("", old)
    round2 = time.perf_counter() - t0
    t0 = time.perf_counter()
    _guarded(old)
    now = time.perf_counter() - t0
    print(f"round-2 scan on 40 kB of open escaped quotes: {round2:.2f} s; this guard: {now * 1000:.2f} ms "
          f"({round2 / max(now, 1e-9):.0f}x)")
    print(f"bench-json: {'linear' if not failed else f'{failed} checks failed'} (pass: < {MAX_GUARD_S_PER_MB:g} s a MB, "
          f"growth <= {MAX_GROWTH:g})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
