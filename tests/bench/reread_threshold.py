"""How vision/reread.py's LLR_MIN was chosen: `python -m tests.bench.reread_threshold [--n N] [CONDITION...]`.

On TUNING conditions only (synth.webcam.TUNING_CONDITIONS; tables of the tuning seed 7002, at 1080p
and 720p), the first pass's reads of odd ids are dropped (except the anchor's) so the re-read has to
read them, and at the place of each piece not read so (dropped, or too small or blurred for the
first pass) a piece of the game that is NOT on the table is expected too: a look-alike (another code there; of the same kind of piece
where the game has one absent, so its sticker is expected where the code stands). It prints, by
the side in px of the sticker the re-read looked at, the share of true re-reads at LLR_MIN or more
and their low percentiles, and the highest LLR any look-alike reached: LLR_MIN must sit well above
every look-alike's and below most true reads' (docs/vision-webcam.md).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

import numpy as np

from referee.catalog import default_catalog
from referee.game import ExpectedPiece
from synth import webcam as chain
from vision import detect, pipeline, reread

from . import robust
from . import webcam as wb

SEED = 7002
BINS = ((6, 9), (9, 12), (12, 14), (14, 15), (15, 18), (18, 1e9))


def _look_alikes(truth: dict, game: str, catalog, dropped: list[str]) -> list[ExpectedPiece]:
    """One absent piece of the game expected at each dropped piece's pose (of the same kind first)."""
    on_table = {p["name"]: p for p in truth["pieces"]}
    absent = [p.name for p in catalog.pieces(game) if p.name not in on_table and p.stickers]
    out = []
    for name in dropped:
        kind = name.rstrip("0123456789-")
        pool = [a for a in absent if a.rstrip("0123456789-") == kind] or absent
        if not pool:
            break
        other = pool[0]
        absent.remove(other)
        p = on_table[name]
        out.append(ExpectedPiece(other, p["x_mm"], p["y_mm"], p["theta_deg"], wb.EXPECT_SIGMA_MM))
    return out


def collect(conditions, n_per_game: int, catalog=None) -> tuple[list, list]:
    """([(LLR, piece, side px)] of true re-reads (where the piece's sticker shows), the same of
    look-alikes) over the tables."""
    catalog = catalog or default_catalog()
    rng = np.random.default_rng(5)
    true_llr, alike_llr, alikes, shown = [], [], set(), {}
    original = reread._read_at

    def spy(gray, quad, piece, *args):
        r = original(gray, quad, piece, *args)
        side = detect.side_px(quad)
        if r is None:
            return r
        if piece.name in alikes:
            alike_llr.append((r.llr, piece.name, side))
        elif any(np.linalg.norm(c - quad.mean(axis=0)) < 0.5 * side for c in shown.get(piece.name, ())):
            true_llr.append((r.llr, piece.name, side))  # its sticker shows there (not the hidden side, not covered)
        return r

    reread._read_at = spy
    try:
        for condition in conditions:
            for _, game, seed, image, truth in wb.still_tables(n_per_game, SEED):
                for _, size in wb.SIZES:
                    img, tr = wb.harsh_image(image, condition, size, seed), wb.scaled_truth(truth, size)
                    res = detect.detect_all(img, catalog, game=game)
                    try:
                        anchor = pipeline.observe(img, robust.camera_of(tr), game, catalog=catalog,
                                                  detections=res).frame.get("anchor")
                    except Exception:  # noqa: BLE001  no table pose: nothing can be re-read
                        continue
                    keep = tuple(d for d in res.detections if d.marker_id % 2 == 0
                                 or catalog.sticker(d.marker_id).piece == anchor)
                    kept = {catalog.sticker(d.marker_id).piece for d in keep}
                    dropped = sorted({st["piece"] for st in tr["stickers"] if st.get("visible")} - kept)
                    expected, _ = wb.expected_from_truth(tr, game, catalog, rng)
                    extra = _look_alikes(tr, game, catalog, dropped)
                    alikes.clear()
                    alikes.update(e.name for e in extra)
                    shown.clear()
                    for st in tr["stickers"]:
                        if st.get("visible"):
                            shown.setdefault(st["piece"], []).append(np.asarray(st["centre_px"], dtype=float))
                    try:
                        pipeline.observe(img, robust.camera_of(tr), game, catalog=catalog,
                                         detections=replace(res, detections=keep), expected=tuple(expected) + tuple(extra))
                    except Exception:  # noqa: BLE001  no table pose: nothing re-read
                        continue
    finally:
        reread._read_at = original
    return true_llr, alike_llr


def report(true_llr: list, alike_llr: list, out=sys.stdout) -> None:
    print(f"  LLR_MIN {reread.LLR_MIN:.0f} nats; by the side px of the sticker looked at:", file=out)
    print(f"  {'px':>8s} | {'true reads':>10s} {'>= LLR_MIN':>10s} {'p10':>6s} {'p25':>6s} | "
          f"{'look-alikes':>11s} {'max':>6s} {'> 0':>5s}", file=out)
    for lo, hi in BINS:
        t = np.array([v for v, _, s in true_llr if lo <= s < hi])
        a = np.array([v for v, _, s in alike_llr if lo <= s < hi])
        share = f"{100 * (t >= reread.LLR_MIN).mean():9.1f}%" if len(t) else " " * 10
        p10, p25 = (f"{np.percentile(t, 10):6.1f}", f"{np.percentile(t, 25):6.1f}") if len(t) else (" " * 6,) * 2
        amax = f"{a.max():6.1f}" if len(a) else " " * 6
        apos = f"{int((a > 0).sum()):5d}" if len(a) else " " * 5
        label = f"{lo:.0f}-{hi:.0f}" if hi < 1e9 else f"{lo:.0f}+"
        print(f"  {label:>8s} | {len(t):10d} {share} {p10} {p25} | {len(a):11d} {amax} {apos}", file=out)
    worst = sorted(alike_llr, reverse=True)[:5]
    print("  highest look-alikes: " + ", ".join(f"{v:.1f} ({n}, {s:.1f} px)" for v, n, s in worst), file=out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("conditions", nargs="*", help=f"tuning conditions only: {', '.join(chain.TUNING_CONDITIONS)} "
                    "(default: all of them)")
    ap.add_argument("--n", type=int, default=2, help="tables per game")
    args = ap.parse_args(argv)
    args.conditions = args.conditions or list(chain.TUNING_CONDITIONS)
    if not set(args.conditions) <= set(chain.TUNING_CONDITIONS):
        ap.error(f"not a tuning condition: {', '.join(sorted(set(args.conditions) - set(chain.TUNING_CONDITIONS)))}")
    print(f"== re-read LLRs on tuning conditions {', '.join(args.conditions)} ({args.n} tables per game, "
          f"seed {SEED}, 1080p and 720p) ==")
    for condition in args.conditions:
        print(f"  -- {condition}")
        report(*collect([condition], args.n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
