"""The webcam condition of `make bench-robust`: `python -m tests.bench.webcam [--n N] [--seed S]`.

Random legal tables of all three games (synth.scenes, 1080p, rendered without blur or
noise), put through an ordinary webcam's whole chain (synth/webcam.py: lens blur in linear
light, exposure, tint, shot and read noise, sRGB-like curve with an S-curve, MJPEG 4:2:0),
at 1080p and scaled by the camera to 720p, beside the clean render (JPEG 90). Per game and
condition it prints robust.py's columns plus the share of PIECES found (a piece is found
when observe reports it) by the size of its smallest visible sticker, and the bare OpenCV
ArucoDetector's share of 16 mm pieces, and every Tornado boat pair in one zone ruled on against
the truth (right / equidistant / wrong / a boat not found, as issue 19's table). Then phantom pieces on robust.py's pictures of other
dictionaries' markers put through the same chain (target 0).

Seeds: TUNING_SEEDS are the sets vision/detect.py's small-sticker reading was tuned on;
HELD_OUT_SEED (the default) was never looked at while tuning and gives the reported figures.
Targets (issue 19): webcam 1080p >= 99 % pieces found (16 mm included), 720p >= 97 %,
clean 1080p >= 99.5 %; 0 confidently wrong.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from referee.catalog import default_catalog
from referee.errors import InvalidInputError
from synth import webcam

from . import robust

TUNING_SEEDS = (7001, 7002)
HELD_OUT_SEED = 20261201
CONDITIONS = ("clean 1080p", "webcam 1080p", "webcam 720p")
STEP_BACK = (1.0, 1.5)  # camera distance over the closest one that keeps the pieces in view
PX_BINS = ((0, 10), (10, 12), (12, 14), (14, 16), (16, 18), (18, 22), (22, 1e9))  # smallest sticker side px
_SIZES = {"clean 1080p": None, "webcam 1080p": None, "webcam 720p": webcam.SIZE_720P}


@dataclass
class GameRow:
    row: robust.Row = field(default_factory=robust.Row)
    pieces: Counter = field(default_factory=Counter)  # sticker size mm -> pieces visible
    found: Counter = field(default_factory=Counter)  # ... found by refcam
    bare: Counter = field(default_factory=Counter)  # ... with a sticker found by bare OpenCV
    by_px: Counter = field(default_factory=Counter)  # PX_BINS index -> pieces visible
    found_px: Counter = field(default_factory=Counter)  # ... found by refcam
    missed: list = field(default_factory=list)  # (label, piece, side px)
    calls: Counter = field(default_factory=Counter)  # Tornado: boat pairs in one zone against the truth


def still_tables(n_per_game: int, seed: int):
    """(label, game, scene seed, rendered BGR without blur or noise, truth) for n tables per game."""
    from synth.render import render_scene
    from synth.scenes import build_scene

    rng = np.random.default_rng(seed)
    for i in range(n_per_game):
        for game in robust.GAMES:
            for _ in range(10):  # a few random lenses are too strong for the renderer to invert: draw again
                scene_seed = int(rng.integers(1 << 30))
                scene = build_scene(game, scene_seed, "1080p")
                scene["effects"].update(blur_sigma=0.0, noise_sigma=0.0)  # the webcam chain does the optics
                step_back(scene["camera"], float(rng.uniform(*STEP_BACK)))
                try:
                    image, truth = render_scene(scene)
                    break
                except InvalidInputError:
                    continue
            yield f"{game} #{i} (scene {scene_seed})", game, scene_seed, image, truth


def step_back(camera: dict, factor: float) -> None:
    """Move the camera back along its line of sight by factor (the scene generator puts it as
    close as the pieces allow; a player sets it up with some room): stickers shrink by ~factor."""
    pos = np.asarray(camera["pose"]["position_mm"], dtype=np.float64)
    look = np.asarray(camera["pose"]["look_at_mm"], dtype=np.float64)
    camera["pose"]["position_mm"] = [float(v) for v in look + (pos - look) * factor]


def scaled_truth(truth: dict, size: tuple[int, int] | None) -> dict:
    """truth for the picture scaled to size: camera file and sticker sides in the new pixels."""
    if size is None or tuple(size) == tuple(truth["image_size"]):
        return truth
    s = size[0] / truth["image_size"][0]
    out = dict(truth, image_size=list(size), camera=webcam.scaled_camera(truth["camera"], size))
    def px(points):  # pixel centres move as (x + 0.5) s - 0.5
        return (np.asarray(points, dtype=np.float64) + 0.5) * s - 0.5

    out["stickers"] = [dict(st, side_px=st["side_px"] * s, corners_px=px(st["corners_px"]).tolist(),
                            centre_px=px(st["centre_px"]).tolist()) for st in truth["stickers"]]
    return out


def condition_image(image: np.ndarray, condition: str, seed: int) -> np.ndarray:
    if condition == "clean 1080p":
        return robust.jpeg(image, 90)
    return webcam.webcam_chain(image, seed, _SIZES[condition])[0]


def tally_pieces(truth: dict, obs, bare_ids: set, rows: GameRow, label: str, catalog) -> None:
    """Count each piece with a visible sticker under the size of its smallest visible sticker."""
    known = catalog.known_ids()
    by_piece: dict = {}
    for st in truth["stickers"]:
        if st.get("visible") and st["id"] in known:
            by_piece.setdefault(st["piece"], []).append(st)
    seen = {p.name for p in obs.pieces} if obs is not None else set()
    for piece, sts in by_piece.items():
        size = min(st["size_mm"] for st in sts)
        rows.pieces[size] += 1
        rows.found[size] += piece in seen
        rows.bare[size] += any(st["id"] in bare_ids for st in sts)
        side = max(st["side_px"] for st in sts)  # a piece is read from its best-seen sticker
        b = next(k for k, (lo, hi) in enumerate(PX_BINS) if lo <= side < hi)
        rows.by_px[b] += 1
        rows.found_px[b] += piece in seen
        if piece not in seen:
            rows.missed.append((label, piece, side))


def run(n_per_game: int, seed: int, conditions=CONDITIONS, catalog=None) -> dict:
    """{(condition, game): GameRow} over n fresh tables per game."""
    catalog = catalog or default_catalog()
    rows: dict = {}
    for label, game, scene_seed, image, truth in still_tables(n_per_game, seed):
        for condition in conditions:
            size = _SIZES[condition]
            img = condition_image(image, condition, scene_seed)
            tr = scaled_truth(truth, size)
            r = rows.setdefault((condition, game), GameRow())
            obs, _, bare_ids = robust.evaluate(img, tr, game, r.row, catalog, f"{label} [{condition}]")
            tally_pieces(tr, obs, bare_ids, r, label, catalog)
            if game == "tornado" and obs is not None:
                tally_tornado_calls(obs, tr, r.calls, f"{label} [{condition}]")
    return rows


def tally_tornado_calls(obs, truth: dict, calls: Counter, label: str) -> None:
    """Every boat pair in one zone ruled on and scored against the truth (tests/tornado_oracle.py):
    right / equidistant / WRONG / tie (< the oracle's resolution) / a boat not found; wrong zones."""
    from referee.errors import RefcamError

    from .handstuck import score_tornado

    try:
        score_tornado(obs, truth, calls, None, label)
    except RefcamError as exc:  # the course cannot be built from what was read: no call made
        calls["course_refused"] += 1
        print(f"  {label}: course refused: {exc}", flush=True)


def print_tornado_calls(rows: dict, out=sys.stdout) -> None:
    print("  Tornado boat pairs in one zone: right / equidistant / WRONG / tie / boat not found | "
          "wrong zone (too close to call) | course refused", file=out)
    for condition in CONDITIONS:
        c = rows.get((condition, "tornado"), GameRow()).calls
        print(f"  {condition:13s} {c['pairs_right']:5d} / {c['pairs_equidistant']:4d} / {c['pairs_wrong']:3d} / "
              f"{c['pairs_tie']:3d} / {c['pairs_boat_not_found']:3d} | {c['zone_errors']:3d} ({c['zone_doubted']:2d}) | "
              f"{c['course_refused']:3d}", file=out)


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:5.1f}" if b else "    -"


def print_table(rows: dict, sizes=(16.0, 20.0, 30.0), out=sys.stdout) -> None:
    head = " ".join(f"{s:>4.0f}mm" for s in sizes)
    print(f"  condition     game    | pieces% {head} bare16 | stick% bare% ratio |  p50    p95     max |"
          "  2sig  .5sig | cw  | ref |  ms/frame", file=out)
    print("  " + "-" * 140, file=out)
    for condition in CONDITIONS:
        base = rows.get(("clean 1080p", robust.GAMES[0]))
        for game in robust.GAMES + ("all",):
            r = _merged(rows, condition) if game == "all" else rows.get((condition, game))
            if r is None:
                continue
            by_size = " ".join(f"{_pct(r.found[s], r.pieces[s]):>6}" for s in sizes)
            pieces = _pct(sum(r.found.values()), sum(r.pieces.values()))
            base_ms = float(np.median(base.row.ms)) if base and base.row.ms else None
            cols = robust.row_columns(r.row, base_ms)
            print(f"  {condition:13s} {game:7s} | {pieces}  {by_size} {_pct(r.bare[16.0], r.pieces[16.0]):>6} | {cols}",
                  file=out)


def print_px_table(rows: dict, out=sys.stdout) -> None:
    """Pieces found by the side (px) of their best-seen sticker, all games together."""
    head = " ".join(f"{f'{lo:.0f}-{hi:.0f}' if hi < 1e9 else f'>={lo:.0f}':>8}" for lo, hi in PX_BINS)
    print(f"  pieces found by sticker side px: {head}", file=out)
    for condition in CONDITIONS:
        m = _merged(rows, condition)
        if m is not None:
            cells = " ".join(f"{_pct(m.found_px[k], m.by_px[k]):>5}/{m.by_px[k]:<2d}" for k in range(len(PX_BINS)))
            print(f"  {condition:32s} {cells}", file=out)
            # from each bin's lower edge up: the smallest side that still finds 99 % overall
            up = [(sum(m.found_px[j] for j in range(k, len(PX_BINS))), sum(m.by_px[j] for j in range(k, len(PX_BINS))))
                  for k in range(len(PX_BINS))]
            cells = " ".join(f"{_pct(f, v):>8}" for f, v in up)
            print(f"  {condition + ', from that side up':32s} {cells}", file=out)


def _merged(rows: dict, condition: str) -> GameRow | None:
    parts = [r for (c, _), r in rows.items() if c == condition]
    if not parts:
        return None
    m = GameRow()
    for r in parts:
        for name in ("visible", "found", "found_bare"):
            setattr(m.row, name, getattr(m.row, name) + getattr(r.row, name))
        for name in ("errors", "z", "wrong", "ms", "ms_bare"):
            getattr(m.row, name).extend(getattr(r.row, name))
        m.row.refused.update(r.row.refused)
        for name in ("pieces", "found", "bare", "by_px", "found_px"):
            getattr(m, name).update(getattr(r, name))
        m.missed.extend(r.missed)
    return m


def report(n_per_game: int, seed: int, verbose: bool = False, out=sys.stdout) -> dict:
    t0 = time.perf_counter()
    rows = run(n_per_game, seed)
    which = "held-out" if seed == HELD_OUT_SEED else ("tuning" if seed in TUNING_SEEDS else "other")
    print(f"== webcam chain: {n_per_game} tables per game (seed {seed}, {which} seeds), "
          f"{time.perf_counter() - t0:.0f} s; pieces% by smallest visible sticker ==", file=out)
    print_table(rows, out=out)
    print_px_table(rows, out=out)
    print_tornado_calls(rows, out=out)
    if verbose:
        for condition in CONDITIONS:
            m = _merged(rows, condition)
            for label, piece, side in (m.missed if m else [])[:30]:
                print(f"  missed [{condition}] {label}: {piece} ({side:.1f} px)", file=out)
            for w in (m.row.wrong if m else []):
                print(f"  wrong: {w}", file=out)
    return rows


def webcam_phantoms(catalog=None, seeds=(3, 5, 8), out=sys.stdout) -> int:
    """Phantom pieces on robust.py's pictures of other dictionaries' markers, ChArUco boards and
    chessboards put through the webcam chain at 1080p and 720p, read with every game's ids."""
    from vision import detect

    catalog = catalog or default_catalog()
    total = 0
    for seed in seeds:
        for name, picture in robust.synthetic_foreign_markers(seed):
            for size in (None, webcam.SIZE_720P):
                image = webcam.webcam_chain(picture, seed * 7, size)[0]
                for game in (None,) + robust.GAMES:
                    ids = sorted({d.marker_id for d in detect.detect_all(image, catalog, game=game).detections})
                    total += len({catalog.sticker(i).piece for i in ids})
                    if ids:
                        print(f"  {name} (seed {seed}, {'720p' if size else '1080p'}, ids of {game or 'all games'}): "
                              f"phantom ids {ids}", file=out)
    print(f"  foreign markers through the webcam chain: {total} phantom piece(s) (target 0)", file=out)
    return total


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=26, help="tables per game (26: 78 tables, as in issue 19)")
    ap.add_argument("--seed", type=int, default=HELD_OUT_SEED,
                    help=f"table seed (held-out: {HELD_OUT_SEED}; tuning: {TUNING_SEEDS})")
    ap.add_argument("--verbose", action="store_true", help="list missed pieces and confidently wrong ones")
    args = ap.parse_args(argv)
    report(args.n, args.seed, args.verbose)
    print("== phantom pieces through the webcam chain ==")
    webcam_phantoms()
    return 0


if __name__ == "__main__":
    sys.exit(main())
