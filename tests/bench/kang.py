"""Kang figures: perft from the start to depth 4 with time per depth, explain() time on a busy
position, and square-occupancy errors over every bundled Kang still.

    .venv/bin/python -m tests.bench.kang [--depth 4] [--no-images]

Baselines measured in the same run: perft time against the plain second reading of the rules
(tests/kang_bruteforce.py) at depth 3; explain time against generating the legal moves alone.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

from referee.kang.explain import explain
from referee.kang.moves import _legal_moves, legal_moves, perft, push
from referee.kang.position import Position
from tests import kang_bruteforce as bf

ROOT = Path(__file__).resolve().parents[2]
EXPLAIN_LIMIT_MS = 50.0


def bench_perft(depth: int) -> None:
    start = Position.start()
    for d in range(1, depth + 1):
        t0 = time.perf_counter()
        n = perft(start, d)
        dt = time.perf_counter() - t0
        line = f"perft start depth {d}: {n:>9}  {dt:7.2f} s"
        if d == 3:
            t1 = time.perf_counter()
            bf.perft(bf.parse(str(start)), d)
            base = time.perf_counter() - t1
            line += f"  (second reading: {base:.2f} s, ratio {dt / base:.2f})"
        print(line, flush=True)


def busy_position(seed: int = 7, turns: int = 24) -> Position:
    """A position from a seeded random game with every kangaroo on the board where possible."""
    rng = random.Random(seed)
    pos = Position.start()
    for _ in range(turns):
        moves = [m for m in legal_moves(pos) if not m.exits] or list(legal_moves(pos))
        pos = push(pos, rng.choice(moves))
    return pos


def bench_explain(repeats: int = 20) -> None:
    pos = busy_position()
    moves = legal_moves(pos)
    after = push(pos, moves[len(moves) // 2])
    times, base = [], []
    for _ in range(repeats):
        _legal_moves.cache_clear()
        t0 = time.perf_counter()
        legal_moves(pos)
        base.append(time.perf_counter() - t0)
        _legal_moves.cache_clear()
        t0 = time.perf_counter()
        verdict = explain(pos, after.layout())
        times.append(time.perf_counter() - t0)
    ms, base_ms = 1000 * sorted(times)[len(times) // 2], 1000 * sorted(base)[len(base) // 2]
    print(f"explain on a busy position ({pos}, {len(moves)} legal moves): median {ms:.1f} ms "
          f"(limit {EXPLAIN_LIMIT_MS:.0f} ms; legal moves alone {base_ms:.1f} ms, ratio {ms / base_ms:.2f}); "
          f"verdict {verdict.verdict}", flush=True)
    wrong = Position(pos.cells, pos.zones, "B" if pos.to_move == "A" else "A", pos.alfalfa, pos.no_score)
    bad = push(wrong, legal_moves(wrong)[0])
    _legal_moves.cache_clear()
    t0 = time.perf_counter()
    verdict = explain(pos, bad.layout())
    print(f"explain of an illegal change on the same position: {1000 * (time.perf_counter() - t0):.1f} ms "
          f"({verdict.summary()[:90]})", flush=True)


def bench_squares() -> None:
    from calibration.camera import CameraModel
    from referee.kang.board import Geometry, place_token, read_board
    from referee.observation import PiecePose
    from vision.imageio import load_image
    from vision.pipeline import observe

    geo = Geometry.from_catalog()
    placed = errors = straddlers_snapped = missing = 0
    straddlers = 0
    images = sorted((ROOT / "samples" / "kang").glob("*.jpg")) + sorted((ROOT / "samples" / "kang-straddle").glob("*.jpg"))
    for image in images:
        stem = str(image.with_suffix(""))
        truth = json.loads(Path(stem + ".truth.json").read_text())
        read = read_board(observe(load_image(image), CameraModel.load(stem + ".camera.json"), game="kang"))
        true = {p["name"]: place_token(PiecePose(p["name"], (), p["x_mm"], p["y_mm"], 0, 0, 0.0), "s", geo).where
                for p in truth["pieces"] if p["name"].startswith(("kang/small", "kang/medium", "kang/large"))}
        for p in read.places:
            placed += 1
            errors += p.where != true[p.name]
            straddlers_snapped += true[p.name] == "straddling" and p.where != "straddling"
            straddlers += true[p.name] == "straddling"
        missing += len(read.missing)
    print(f"square occupancy over the {len(images)} bundled Kang stills: {errors} errors in {placed} placed kangaroos "
          f"({100 * errors / max(placed, 1):.2f}%; chess-from-image systems publish about 0.2% per square), "
          f"{straddlers_snapped} of {straddlers} straddlers snapped, {missing} kangaroos hidden (hands) reported as not seen",
          flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--no-images", action="store_true")
    args = ap.parse_args(argv)
    bench_perft(args.depth)
    bench_explain()
    if not args.no_images:
        bench_squares()
    return 0


if __name__ == "__main__":
    sys.exit(main())
