"""The webcam conditions of `make bench-robust`: `python -m tests.bench.webcam [--n N] [--seed S]`.

Random legal tables of all three games (synth.scenes, 1080p, rendered without blur or noise;
tables refcam's tuning never saw: seed HELD_OUT_SEED), each put through webcams of every named
condition of synth/webcam.py's harsher chain (defocus disc, sharpening halos, JPEG q 50-75 with
8x8 blocks, matte paper and grey ink, rolling exposure, sensor pattern noise; motion blur of 7 px
in the *-motion7 conditions) at 1080p and scaled by the camera to 720p, and through the project's
older, kinder chain ("project") for reference.

Per condition it prints the share of PIECES found (a piece is found when observe reports it) by
the side in px of its largest visible sticker (bins 9-12, 12-14, 14-15, 15-18, 18-21, 21+), for
  refcam   : observe on the frame alone;
  +reread  : observe given the pieces the game expects where they stand (truth, moved by
             N(0, 1 mm), sigma 3 mm: the state's last reading), which re-reads where a piece
             is not read (vision/reread.py);
  +3frames : the same over three frames of the still table (same camera, own noise and JPEG
             blocks), the re-reads' evidence added up (vision.reread.Evidence); the last frame's
             (--still-frames N: N frames, the rows then say +Nframes);
  bare     : OpenCV's ArucoDetector.detectMarkers alone (a piece found if one of its ids is);
and the confidently wrong pieces (beyond 3 sigma) and phantoms (a piece reported that is not on
the table, or an expected piece absent from the table read at an empty place: two such "ghosts"
are expected on every table). TUNING conditions (synth.webcam.TUNING_CONDITIONS) are the ones
vision/reread.py's threshold and blur models were chosen on (on the tuning table seeds); HELD-BACK
ones were never looked at while tuning.
Then phantom pieces on robust.py's pictures of other dictionaries' markers through the chain.
Targets: held-back, 1080p and 720p: >= 99 % from 14 px, >= 95 % at 12-14 px; 0 wrong, 0 phantoms.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import numpy as np

from referee.catalog import default_catalog
from referee.errors import InvalidInputError
from synth import webcam

from . import robust

TUNING_SEEDS = (7001, 7002)
HELD_OUT_SEED = 20261201
CONDITIONS = ("clean 1080p", "webcam 1080p", "webcam 720p")
STEP_BACK = (1.0, 2.5)  # camera distance over the closest one that keeps the pieces in view (2.5x: 11-15 px stickers at 1080p)
PX_BINS = ((9, 12), (12, 14), (14, 15), (15, 18), (18, 21), (21, 1e9))  # largest visible sticker side px
SIZES = (("1080p", None), ("720p", webcam.SIZE_720P))
EXPECT_NOISE_MM, EXPECT_SIGMA_MM = 1.0, 3.0
STILL_FRAMES = 3  # frames of one still table whose re-read evidence adds up (--still-frames)
GHOSTS_PER_TABLE = 2
_SIZES = {"clean 1080p": None, "webcam 1080p": None, "webcam 720p": webcam.SIZE_720P}


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


def harsh_image(image: np.ndarray, condition: str, size, seed: int, frame_seed: int | None = None) -> np.ndarray:
    """The rendered table through a camera of the named condition ("project": the older chain)."""
    settings = webcam.draw_settings(seed, size) if condition == "project" else webcam.draw_harsh(seed, condition, size)
    return webcam.webcam_frame(image, settings, seed if frame_seed is None else frame_seed)


@dataclass
class Tally:
    visible: Counter = field(default_factory=Counter)  # bin -> pieces with a visible sticker
    found: dict = field(default_factory=lambda: defaultdict(Counter))  # way -> bin -> found
    wrong: Counter = field(default_factory=Counter)  # way -> confidently wrong pieces
    phantoms: Counter = field(default_factory=Counter)  # way -> phantom pieces
    ms: dict = field(default_factory=lambda: defaultdict(list))
    notes: list = field(default_factory=list)


def _bin(side: float) -> int | None:
    return next((k for k, (lo, hi) in enumerate(PX_BINS) if lo <= side < hi), None)


def expected_from_truth(truth: dict, game: str, catalog, rng: np.random.Generator):
    """(expected pieces, ghost names): every piece of the table where it stands (moved by
    N(0, EXPECT_NOISE_MM)), and GHOSTS_PER_TABLE pieces of the game that are NOT on the table,
    expected at empty places (40 mm and more from every piece): a re-read must never read them."""
    from referee.game import ExpectedPiece

    on_table = {p["name"]: p for p in truth["pieces"]}
    out = [ExpectedPiece(n, p["x_mm"] + rng.normal(0, EXPECT_NOISE_MM), p["y_mm"] + rng.normal(0, EXPECT_NOISE_MM),
                         p["theta_deg"], EXPECT_SIGMA_MM) for n, p in on_table.items()]
    absent = [p.name for p in catalog.pieces(game) if p.name not in on_table and p.stickers]
    xy = np.array([[p["x_mm"], p["y_mm"]] for p in on_table.values()])
    ghosts = []
    for name in rng.permutation(absent)[:GHOSTS_PER_TABLE] if absent else []:
        for _ in range(50):
            at = xy[rng.integers(len(xy))] + rng.uniform(-90, 90, 2)
            if np.linalg.norm(xy - at, axis=1).min() >= 40:
                out.append(ExpectedPiece(str(name), float(at[0]), float(at[1]), float(rng.uniform(-180, 180)),
                                         EXPECT_SIGMA_MM))
                ghosts.append(str(name))
                break
    return tuple(out), set(ghosts)


def look(image: np.ndarray, truth: dict, game: str, catalog, expected, ghosts: set, t: Tally, label: str,
         earlier=()) -> None:
    """Observe one picture four ways and tally it (see the module's doc); earlier: the frames of the
    same still table and camera before it, whose re-read evidence adds up ("+Nframes")."""
    import cv2

    from referee.errors import RefcamError
    from vision import detect, pipeline

    camera = robust.camera_of(truth)
    t0 = time.perf_counter()
    result = detect.detect_all(image, catalog, game=game)
    try:
        plain = pipeline.observe(image, camera, game, catalog=catalog, detections=result)
    except RefcamError:
        plain = None
    t.ms["refcam"].append((time.perf_counter() - t0) * 1000)
    t0 = time.perf_counter()
    try:
        reread = pipeline.observe(image, camera, game, catalog=catalog, detections=result, expected=expected)
    except RefcamError:
        reread = None
    t.ms["+reread"].append((time.perf_counter() - t0) * 1000)  # the observe after the same detection
    frames = _still_frames(image, camera, game, catalog, expected, earlier, t)
    t0 = time.perf_counter()
    _, ids, _ = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_5X5_1000)).detectMarkers(
        detect.to_gray(image))
    t.ms["bare"].append((time.perf_counter() - t0) * 1000)
    bare = {int(i) for i in ids.ravel()} if ids is not None else set()
    known = catalog.known_ids()
    by_piece: dict = {}
    for st in truth["stickers"]:
        if st.get("visible") and st["id"] in known:
            by_piece.setdefault(st["piece"], []).append(st)
    truth_pieces = {p["name"]: p for p in truth["pieces"]}
    for way, obs in (("refcam", plain), ("+reread", reread), (_frames_way(), frames)):
        seen = {p.name for p in obs.pieces} if obs is not None else set()
        for name in seen - set(by_piece):
            if name in ghosts or name not in truth_pieces:
                t.phantoms[way] += 1
                t.notes.append(f"phantom [{way}] {label}: {name}")
        if obs is not None and obs.frame.get("game_frame"):
            for p in obs.pieces:
                tp = truth_pieces.get(p.name)
                if tp is None or p.name == obs.frame.get("anchor"):
                    continue
                err = math.hypot(p.x_mm - tp["x_mm"], p.y_mm - tp["y_mm"])
                if robust.confidently_wrong(err, p.measure_sigma_mm):
                    t.wrong[way] += 1
                    t.notes.append(f"wrong [{way}] {label}: {p.name} off {err:.1f} mm, sigma {p.measure_sigma_mm:.2f}"
                                   f" ({p.source or 'frame'})")
        for name, sts in by_piece.items():
            b = _bin(max(st["side_px"] for st in sts))  # a piece is read from its best-seen sticker
            if b is None:
                continue
            if way == "refcam":
                t.visible[b] += 1
                t.found["bare"][b] += any(st["id"] in bare for st in sts)
            t.found[way][b] += name in seen
            if way == _frames_way() and name not in seen and b >= 1:
                t.notes.append(f"missed [{way}] {label}: {name} ({max(st['side_px'] for st in sts):.1f} px)")


def _frames_way() -> str:
    return f"+{STILL_FRAMES}frames"


def _still_frames(image, camera, game, catalog, expected, earlier, t: Tally):
    """observe of the last of STILL_FRAMES frames of one still table, the re-reads' evidence added
    up over them (vision.reread.Evidence), as a stream's still period gives them."""
    from referee.errors import RefcamError
    from vision import detect, pipeline
    from vision.reread import Evidence

    evidence, obs = Evidence(), None
    for frame in tuple(earlier) + (image,):
        t0 = time.perf_counter()
        try:
            obs = pipeline.observe(frame, camera, game, catalog=catalog, detections=detect.detect_all(frame, catalog, game=game),
                                   expected=expected, evidence=evidence)
        except RefcamError:
            obs = None
        t.ms[_frames_way()].append((time.perf_counter() - t0) * 1000)
    return obs


def all_conditions(with_project: bool = True) -> list[str]:
    return list(webcam.TUNING_CONDITIONS) + list(webcam.HELD_BACK_CONDITIONS) + (["project"] if with_project else [])


def run(n_per_game: int, seed: int, conditions=None, catalog=None) -> dict:
    """{(condition, size label): Tally} over n fresh tables per game."""
    catalog = catalog or default_catalog()
    conditions = conditions or all_conditions()
    tallies: dict = {}
    rng = np.random.default_rng(seed + 1)
    for label, game, scene_seed, image, truth in still_tables(n_per_game, seed):
        expected, ghosts = expected_from_truth(truth, game, catalog, rng)
        for condition in conditions:
            for size_label, size in SIZES:
                img = harsh_image(image, condition, size, scene_seed)
                earlier = [harsh_image(image, condition, size, scene_seed, scene_seed + k) for k in range(1, STILL_FRAMES)]
                tr = scaled_truth(truth, size)
                look(img, tr, game, catalog, expected, ghosts, tallies.setdefault((condition, size_label), Tally()),
                     f"{label} [{condition} {size_label}]", earlier)
    return tallies


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:5.1f}" if b else "    -"


def print_px_table(tallies: dict, out=sys.stdout) -> None:
    """Found % by px bin, per condition and size: refcam, +reread and bare; wrong and phantoms."""
    head = " ".join(f"{(f'{lo:.0f}-{hi:.0f}' if hi < 1e9 else f'{lo:.0f}+'):>11}" for lo, hi in PX_BINS)
    print(f"  {'condition':19s} {'set':9s} size  way      {head} | >=14px | wrong phantoms | ms/frame", file=out)
    for (condition, size_label), t in sorted(tallies.items(), key=lambda kv: (_set_of(kv[0][0]), kv[0])):
        for way in ("refcam", "+reread", _frames_way(), "bare"):
            f = t.found[way]
            cells = " ".join(f"{_pct(f[k], t.visible[k])}/{t.visible[k]:<5d}" for k in range(len(PX_BINS)))
            big = range(2, len(PX_BINS))
            from14 = _pct(sum(f[k] for k in big), sum(t.visible[k] for k in big))
            bad = f"{t.wrong[way]:5d} {t.phantoms[way]:8d}" if way != "bare" else " " * 14
            ms = float(np.median(t.ms[way])) if t.ms[way] else 0.0  # +reread: after the same detection
            print(f"  {condition:19s} {_set_of(condition):9s} {size_label:5s} {way:8s} {cells} | {from14} | {bad} | "
                  f"{ms:7.1f}", file=out)


def _set_of(condition: str) -> str:
    if condition == "project":
        return "reference"
    return "held-back" if webcam.is_held_back(condition) else "tuning"


def report(n_per_game: int, seed: int, verbose: bool = False, conditions=None, out=sys.stdout) -> dict:
    t0 = time.perf_counter()
    tallies = run(n_per_game, seed, conditions)
    which = "held-out" if seed == HELD_OUT_SEED else ("tuning" if seed in TUNING_SEEDS else "other")
    print(f"== webcam chains: {n_per_game} tables per game (seed {seed}, {which} tables), "
          f"{time.perf_counter() - t0:.0f} s; pieces found % / pieces, by largest visible sticker side px ==", file=out)
    print_px_table(tallies, out=out)
    if verbose:
        for t in tallies.values():
            for note in t.notes[:40]:
                print(f"  {note}", file=out)
    return tallies


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
    global STILL_FRAMES
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=8, help="tables per game (8: 24 tables, each through every condition x 2 sizes)")
    ap.add_argument("--seed", type=int, default=HELD_OUT_SEED,
                    help=f"table seed (held-out: {HELD_OUT_SEED}; tuning: {TUNING_SEEDS})")
    ap.add_argument("--conditions", nargs="*", default=None, choices=all_conditions(),
                    help="named conditions of synth.webcam (default: all, tuning and held-back, and 'project')")
    ap.add_argument("--still-frames", type=int, default=STILL_FRAMES,
                    help="frames of each still table whose re-reads add up (the +Nframes rows)")
    ap.add_argument("--verbose", action="store_true", help="list missed pieces and confidently wrong ones")
    args = ap.parse_args(argv)
    STILL_FRAMES = args.still_frames
    report(args.n, args.seed, args.verbose, args.conditions)
    print("== phantom pieces through the webcam chain ==")
    webcam_phantoms()
    return 0


if __name__ == "__main__":
    sys.exit(main())
