"""One frame against 8 fused frames through a webcam's whole chain (part of `make bench-robust`).

`python -m tests.bench.robust_fusion [--scenes N] [--seed S]`: fresh tables of all three games
rendered at 1080p (seeds that are neither the bundled samples' nor the ones vision/fusion.py's
thresholds were set on), each seen by one webcam (synth/webcam.py: lens blur in linear light,
exposure and tint, shot and read noise, sRGB-like curve with an S-curve, MJPEG 70-80 with 4:2:0,
optionally the camera's own scaling to 720p) for 8 frames that differ only by their noise and
JPEG blocks. Per resolution it prints the pieces found (any visible sticker read) and the 16 mm
stickers' pieces found in the first frame alone, in at least one of the 8, and in the fusion
of all 8 as the live engine fuses a calm period (vision/fusion.py: the frames keep only their
stickers' corners, and a sticker frames read alone joins the fused read when two of them read
it), and in the fused picture by itself; pieces only the fusion read, confidently wrong pieces
(> 3 mm and > 3 sigma) and the share of per-axis errors within 2 sigma in both, the noise
before and after, and what fusion costs per stable state (registration, averaging and the
read of the fused picture; the frames' own reads are done already on the live page) with its
ratio to one frame's read, measured in the same run.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass, field, replace

import numpy as np

from referee.catalog import default_catalog
from referee.errors import RefcamError
from vision import detect, fusion, pipeline

FRAMES = 8
# (name, output size, sensor gain): the ordinary webcam at 1080p and scaled to 720p, the 720p
# one in a dim and a dark room (4x and 16x the gain: a frame's noise about 2x and 5x), and the
# 720p one without any sensor noise (gain 0): the most that averaging frames could give
CONDITIONS = (("1080p", "1080p", 1.0), ("720p", "720p", 1.0), ("720p dim", "720p", 4.0), ("720p dark", "720p", 16.0),
              ("720p no noise", "720p", 0.0))
SMALL_STICKER_MM = 16.0
# held out: vision/fusion.py's thresholds were set on tests/test_vision_fusion.py's seeds and a
# hand-made chain on seeds 5-7; the figures in the README come from this seed
HELD_OUT_SEED = 20261201


@dataclass
class Tally:
    pieces: int = 0
    small: int = 0
    found: dict = field(default_factory=lambda: {"one": 0, "any": 0, "fused": 0, "picture": 0})
    found_small: dict = field(default_factory=lambda: {"one": 0, "any": 0, "fused": 0, "picture": 0})
    fused_only: int = 0
    fused_runs: int = 0  # tables the live engine would fuse (vision.fusion.worth_fusing)
    wrong: dict = field(default_factory=lambda: {"one": 0, "fused": 0})
    z: dict = field(default_factory=lambda: {"one": [], "fused": []})
    noise: list = field(default_factory=list)  # (one frame, fused) grey levels, Immerkaer's estimate
    temporal: list = field(default_factory=list)  # one frame's noise from two frames' difference, grey levels
    ms_fusion: list = field(default_factory=list)  # every table's, the check whether to fuse included
    ms_runs: list = field(default_factory=list)  # the tables fused
    ms_one: list = field(default_factory=list)


def _visible_pieces(truth: dict, catalog) -> tuple[set, set]:
    """(pieces with a visible catalog sticker, those among them whose stickers are all 16 mm or less)."""
    seen: dict[str, list[float]] = {}
    for s in truth["stickers"]:
        if s.get("visible") and s["id"] in catalog.known_ids():
            seen.setdefault(s["piece"], []).append(float(s["size_mm"]))
    return set(seen), {n for n, sizes in seen.items() if max(sizes) <= SMALL_STICKER_MM}


def _score(obs, truth: dict, key: str, tally: Tally) -> set:
    """Names of the visible pieces the observation holds; its errors and z-scores into the tally."""
    if obs is None:
        return set()
    truth_pieces = {p["name"]: p for p in truth["pieces"]}
    if obs.frame.get("game_frame"):
        for p in obs.pieces:
            t = truth_pieces.get(p.name)
            if t is None or p.name == obs.frame.get("anchor"):
                continue
            ex, ey = p.x_mm - t["x_mm"], p.y_mm - t["y_mm"]
            tally.z[key].extend([abs(ex) / p.sigma_mm, abs(ey) / p.sigma_mm])
            tally.wrong[key] += int(math.hypot(ex, ey) > 3.0 and math.hypot(ex, ey) > 3.0 * p.sigma_mm)
    return set(obs.names())


def measure_table(image: np.ndarray, truth: dict, game: str, settings, tally: Tally, catalog) -> None:
    """One table through one webcam: the first frame alone against the fusion of all 8."""
    from calibration.camera import CameraModel
    from synth.webcam import scaled_camera, webcam_frame

    cam = truth["camera"] if settings.size is None else scaled_camera(truth["camera"], settings.size)
    camera = CameraModel.from_json({k: cam[k] for k in ("image_size", "camera_matrix", "dist_coeffs")})
    images = [webcam_frame(image, settings, frame_seed=k) for k in range(FRAMES)]
    visible, small = _visible_pieces(truth, catalog)
    t0 = time.perf_counter()
    frames = fusion.detected_frames(images, [f"frame {k}" for k in range(FRAMES)], catalog)
    t1 = time.perf_counter()
    try:
        one = pipeline.observe(images[0], camera, game, catalog=catalog,
                               detections=_result_of(frames[0]))
    except RefcamError:
        one = None
    t2 = time.perf_counter()
    live = [fusion.Frame(f.image, f.stickers, f.label) for f in frames]  # as the live engine keeps them
    fused_obs, fused = _fused_read(live, camera, game, catalog)
    t3 = time.perf_counter()
    tally.ms_one.append(1000 * ((t1 - t0) / FRAMES + (t2 - t1)))
    tally.ms_fusion.append(1000 * (t3 - t2))
    tally.fused_runs += fused is not None
    if fused is not None:
        tally.ms_runs.append(1000 * (t3 - t2))
    if fused is None:  # the live engine does not fuse (vision.fusion.worth_fusing): the frame's read stands
        fused_obs = one
    tally.pieces += len(visible)
    tally.small += len(small)
    for key, obs in (("one", one), ("fused", fused_obs)):
        got = _score(obs, truth, key, tally) & visible
        tally.found[key] += len(got)
        tally.found_small[key] += len(got & small)
    # a piece some single frame read (what the live page's tracker can gather without fusion)
    any_frame = {catalog.sticker(i).piece for f in frames for i in f.stickers} & visible
    tally.found["any"] += len(any_frame)
    tally.found_small["any"] += len(any_frame & small)
    tally.temporal.append(fusion.temporal_noise(images[0], images[1], step=1))
    # what the fused picture reads by itself, without the frames' own reads (the frame's when not fused)
    alone = {catalog.sticker(d.marker_id).piece for d in detect.detect_all(
        fused.image if fused is not None else images[0], catalog).detections}
    tally.found["picture"] += len(alone & visible)
    tally.found_small["picture"] += len(alone & visible & small)
    if fused is not None:
        tally.fused_only += sum(1 for p in fused_obs.pieces if p.source)
        tally.noise.append((fused.noise_single, fused.noise_fused))


def _fused_read(live: list, camera, game: str, catalog):
    """(observation, Fused) of the frames fused as the live engine does, or (None, None) when the
    engine would not fuse them or the fused read finds nothing."""
    if not fusion.worth_fusing(live):
        return None, None
    try:
        return fusion.observe_fused(live, camera, game, catalog, strict=False, min_reads=fusion.LIVE_MIN_READS)
    except RefcamError:
        return None, None


def _result_of(frame: fusion.Frame):
    from vision.detect import DetectionResult

    return DetectionResult(tuple(frame.detections), ())


def report(res: str, tally: Tally, out=sys.stdout) -> None:
    def pct(a: int, b: int) -> str:
        return f"{100.0 * a / max(b, 1):5.1f} %"

    def cover(z: list) -> str:
        return f"{100.0 * float(np.mean(np.asarray(z) <= 2.0)):5.1f} %" if z else "   - "

    def found(key: str) -> str:
        return f"found {pct(tally.found[key], tally.pieces)}, 16 mm {pct(tally.found_small[key], tally.small)}"

    noise = np.asarray(tally.noise) if tally.noise else np.zeros((1, 2))
    one_ms = float(np.median(tally.ms_one))
    fuse_ms = float(np.median(tally.ms_runs)) if tally.ms_runs else 0.0
    rows = [("one frame", f"{found('one')}, cw {tally.wrong['one']}, 2sig {cover(tally.z['one'])}"),
            (f"any of {FRAMES}", f"{found('any')} (read in at least one single frame)"),
            (f"{FRAMES} fused", f"{found('fused')}, cw {tally.wrong['fused']}, 2sig {cover(tally.z['fused'])}; "
                                f"{tally.fused_only} piece(s) read only fused; the fused picture by itself: "
                                f"{found('picture')}"),
            ("noise", f"{np.mean(tally.temporal):.2f} grey levels a frame (two frames' difference); Immerkaer's "
                      f"estimate {noise[:, 0].mean():.2f} one frame -> {noise[:, 1].mean():.2f} fused"),
            ("fused", f"{tally.fused_runs} of {len(tally.ms_fusion)} calm tables (the others quiet, every frame "
                      f"reading the same stickers); fusion per stable state when it runs: {fuse_ms:.0f} ms median "
                      f"({fuse_ms / max(one_ms, 1e-9):.2f}x one frame's read, {one_ms:.0f} ms), on average "
                      f"{float(np.mean(tally.ms_fusion)):.0f} ms; {tally.pieces} pieces, {tally.small} with 16 mm "
                      f"stickers")]
    for name, text in rows:
        print(f"  {res:13s}  {name + ':':11s} {text}", file=out)


def run(scenes_per_game: int, seed: int = HELD_OUT_SEED, out=sys.stdout) -> dict[str, Tally]:
    from synth.render import render_scene
    from synth.webcam import SIZE_720P, draw_settings

    from .vision_scenes import BUILDERS

    catalog = default_catalog()
    rng = np.random.default_rng(seed)
    tallies = {name: Tally() for name, _, _ in CONDITIONS}
    t0 = time.perf_counter()
    n = 0
    for game in ("tornado", "kayak", "kang"):
        for _ in range(scenes_per_game):
            image, truth = render_scene(BUILDERS[game](rng, "1080p"), apply_jpeg=False)
            n += 1
            for name, size, gain in CONDITIONS:
                settings = draw_settings(seed + n, SIZE_720P if size == "720p" else None)
                if gain != 1.0:  # a dim room: the camera amplifies the signal, and its noise with it
                    settings = replace(settings, full_well=settings.full_well / gain if gain else 1e12,
                                       read_noise=settings.read_noise * gain)
                measure_table(image, truth, game, settings, tallies[name], catalog)
    kind = "held out" if seed == HELD_OUT_SEED else "not the held-out seed"
    print(f"== one frame against {FRAMES} fused frames, webcam chain (synth/webcam.py): {n} fresh tables "
          f"(seed {seed}, {kind}), {time.perf_counter() - t0:.0f} s ==", file=out)
    for res, tally in tallies.items():
        report(res, tally, out)
    return tallies


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenes", type=int, default=4, help="tables per game")
    ap.add_argument("--seed", type=int, default=HELD_OUT_SEED)
    args = ap.parse_args(argv)
    run(args.scenes, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
