"""Speed on one core: refcam's per-frame work against the bare OpenCV detector, same frames, same run.

    .venv/bin/python -m tests.bench.speed [--frames 20] [--no-scaling] [--no-memory]

For 1080p and 4K sessions of all three games (the bundled Tornado session is 1080p; the
others are rendered once from the bundled sessions' own scripts, their camera scaled to
the resolution, and cached under out/bench-sessions/), frame by frame, interleaved so a
loaded machine slows all three alike:

* (a) bare: ``cv2.aruco.ArucoDetector.detectMarkers`` with default parameters;
* (b) refcam: the live engine's whole work for a page that is watching: detection on the
  whole frame, pose, parallax correction, stable-state tracking, the game step, overlay
  drawing and JPEG encoding (webui.live.LiveEngine.process, speed-ups off: `refcam serve
  --detect whole`). Every frame is detected whole; as in every mode, stickers that stay within
  0.25 px, or whose pixels are as they were when they were measured (vision/stillness.py), are
  held (vision/roi.py "whole"), so the fit is done again only when a sticker moved, came or
  went, and an overlay seen before is put on as a layer (webui/layers.py). The overlay is drawn
  at the page's size (960 px wide), as the page is always drawn; until 2026-12-05 (b) drew it
  on the whole frame and shrank the result, a way no page was ever drawn, about 3 ms a 1080p
  frame more (``--b-draws-whole-frame`` measures (b) that way again);
* (c) the same with the speed-ups as the live page runs them (vision/roi.py "follow": while
  nothing moves, the stickers of the last frame are followed on their edges instead of
  detected; where something moved in part of the frame, the detector runs on crops around
  the changed cells only);
* (r) the same with the exact speed-ups replay runs (vision/roi.py "regions": while nothing
  moves, the detector runs only in regions around the stickers).

Prints fps, ratios b/a and c/a in CPU time (time.process_time; the machine is shared) and
wall time, whether (b) and (c) ruled the same, peak memory of each (tracemalloc in a
subprocess of its own) and how time per frame grows with the stickers in view (a
Tornado table of 6 boats and up to 120 racing cards). One thread: cv2.setNumThreads(1),
OMP/OpenBLAS threads 1 (the bench re-runs itself in a subprocess with them set).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / "out" / "bench-sessions"
GAMES = ("tornado", "kayak", "kang")
RESOLUTIONS = {"1080p": (1920, 1080), "4k": (3840, 2160)}
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
              "REFCAM_BENCH_ONE_THREAD": "1"}
FRAME_NOISE = 1.2  # grey levels of fresh sensor noise per frame, as in the bundled sessions


def _samples_generate():
    import importlib.util

    spec = importlib.util.spec_from_file_location("refcam_samples_generate", REPO / "samples" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def session_folder(game: str, res: str, frames: int) -> Path:
    """A session folder of `game` at `res`: the bundled one when it has that size, else rendered
    (cached) from the bundled session's script with the camera scaled to the resolution."""
    bundled = REPO / "samples" / "sessions" / game
    header = json.loads((bundled / "manifest.jsonl").read_text().splitlines()[0])
    import cv2

    first = cv2.imread(str(bundled / "frames" / "000000.jpg"))
    if first is not None and (first.shape[1], first.shape[0]) == RESOLUTIONS[res]:
        return bundled
    folder = CACHE / f"{game}-{res}-{frames}"
    if (folder / "camera.json").is_file():
        return folder
    _render_session(game, res, frames, folder, header)
    return folder


def _render_session(game: str, res: str, frames: int, folder: Path, header: dict) -> None:
    import numpy as np

    from synth.render import encode_jpeg, render_scene
    from vision.session import SessionWriter

    import shutil

    shutil.rmtree(folder, ignore_errors=True)  # a half-written render from an interrupted run
    folder.parent.mkdir(parents=True, exist_ok=True)
    gen = _samples_generate()
    script = {"kang": gen.kang_session, "kayak": gen.kayak_session, "tornado": gen.tornado_session}[game]()
    cam = script.base["camera"]
    f = RESOLUTIONS[res][0] / cam["image_size"][0]
    cam["image_size"] = list(RESOLUTIONS[res])
    cam["camera_matrix"] = [[v * f if i < 2 else v for v in row] for i, row in enumerate(cam["camera_matrix"])]
    print(f"(rendering the {game} session at {res} once: {frames} frames, cached in {folder})", flush=True)
    rendered: dict[str, tuple] = {}
    rng = np.random.default_rng(11)
    camera = None
    with SessionWriter(folder, game=game, fps=header.get("fps"), source="rendered by tests/bench/speed.py",
                       note=f"{header.get('note', game)} (at {res})") as writer:
        for n, (scene, _, _, _) in enumerate(script.frames()):
            if n >= frames:
                break
            key = json.dumps(scene, sort_keys=True)
            if key not in rendered:
                rendered[key] = render_scene(scene)
            image, truth = rendered[key]
            camera = truth["camera"]
            noisy = np.clip(image + rng.normal(0, FRAME_NOISE, image.shape), 0, 255).astype(np.uint8)
            writer.add_encoded(encode_jpeg(noisy, 80).tobytes(), n / float(header.get("fps") or 4.0))
    (folder / "camera.json").write_text(json.dumps(gen.camera_file_of(camera, f"true intrinsics at {res}"), indent=1))


def load_frames(folder: Path, limit: int):
    from vision.sources import SessionSource

    out = []
    for t, image in SessionSource(folder, realtime=False):
        out.append((t, image))
        if len(out) >= limit:
            break
    return out


VARIANTS = {"b": "whole", "c": "follow", "r": "regions"}  # variant -> vision/roi.py mode


B_DRAWS_WHOLE_FRAME = [False]  # --b-draws-whole-frame: (b) as this bench measured it until 2026-12-05


def make_engine(folder: Path, variant: str, pipelined: bool = False):
    """A live engine for the session, with a page watching (so it draws and encodes every frame);
    pipelined: drawing and encoding on a second thread, as `refcam serve` runs it."""
    from calibration.camera import CameraModel
    from vision.sources import SessionSource
    from webui.live import LiveEngine, LiveSettings, tracking_observe

    source = SessionSource(folder, realtime=False)
    camera = CameraModel.load(source.info.camera_file) if source.info.camera_file else None
    settings = LiveSettings(game=source.info.game, camera=camera, pipelined=pipelined,
                            draw_at_page_size=not (variant == "b" and B_DRAWS_WHOLE_FRAME[0]))
    engine = LiveEngine(source, tracking_observe(mode=VARIANTS[variant]), settings)
    return engine, engine.frames.subscribe(), engine.events.subscribe()


def _drain(frames_sub, events_sub, rulings: list) -> None:
    while frames_sub.get(timeout=0) is not None:
        pass
    while (ev := events_sub.get(timeout=0)) is not None:
        if ev["type"] == "ruling":
            rulings.append((ev["ruling"].get("summary"), ev["ruling"].get("legal")))


class Clock:
    """CPU and wall seconds of a list of calls."""

    def __init__(self):
        self.cpu = self.wall = 0.0
        self.n = 0

    def time(self, fn, *args):
        c0, w0 = time.process_time(), time.perf_counter()
        out = fn(*args)
        self.cpu += time.process_time() - c0
        self.wall += time.perf_counter() - w0
        self.n += 1
        return out

    def ms(self, wall: bool = False) -> float:
        return 1000.0 * (self.wall if wall else self.cpu) / max(1, self.n)


def time_session(folder: Path, frames: list) -> dict:
    """(a), (b), (c) on the same frames, interleaved frame by frame."""
    import cv2

    from webui.live import pipeline_observe

    bare = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_5X5_1000))
    bare.detectMarkers(frames[0][1])  # warm up: the detector, refcam's caches and templates
    pipeline_observe(frames[0][1], None, None)
    import webui.overlay  # noqa: F401  imported once a process (compiled anew where no .pyc is written)
    from vision.reread import warm

    warm()  # the re-reads' drawings, built once a process
    engines = {k: make_engine(folder, k) for k in VARIANTS}
    clocks = {k: Clock() for k in "abcr"}
    rulings: dict[str, list] = {k: [] for k in VARIANTS}
    for t, image in frames:
        clocks["a"].time(bare.detectMarkers, image)
        for k, (engine, frames_sub, events_sub) in engines.items():
            clocks[k].time(engine.process, t, image)
            _drain(frames_sub, events_sub, rulings[k])
    detector = engines["c"][0].observe.keywords.get("detector")
    return {"clocks": clocks, "rulings": rulings, "pipelined": time_pipelined(folder, frames),
            "full_passes": (detector.full_passes, detector.full_passes + detector.roi_passes),
            "own_costs": {k: _own_costs(engines[k][0], len(frames)) for k in "bc"}}


def _own_costs(engine, n: int) -> tuple[float, int, float]:
    """(re-read ms a frame, frames that re-read, still-frame fusion ms a frame) inside the engine's work:
    the re-reads at expected places (vision/reread.py) and the fusion of calm frames (vision/fusion.py)."""
    evidence = engine.observe.keywords["memory"].evidence
    return 1000 * evidence.cost_s / max(n, 1), evidence.frames, 1000 * sum(engine.fusion_s) / max(n, 1)


def time_pipelined(folder: Path, frames: list) -> dict:
    """(c) as `refcam serve` runs it, two threads: each frame's overlay drawn and encoded on the
    second while the next is observed. Wall time (two cores at work) from the first frame in to
    the last frame published, and whether it ruled as (c) on one thread."""
    engine, frames_sub, events_sub = make_engine(folder, "c", pipelined=True)
    rulings: list = []
    published = 0
    engine_cpu = 0.0
    w0 = time.perf_counter()
    for t, image in frames:
        c0 = time.thread_time()
        engine.process(t, image)
        engine_cpu += time.thread_time() - c0
        while (ev := events_sub.get(timeout=0)) is not None:
            if ev["type"] == "ruling":
                rulings.append((ev["ruling"].get("summary"), ev["ruling"].get("legal")))
        while frames_sub.get(timeout=0) is not None:
            published += 1
    engine.drain()
    wall = time.perf_counter() - w0
    while frames_sub.get(timeout=0) is not None:
        published += 1
    drawer_cpu = engine._drawer.cpu_s
    engine.stop()
    # on a shared machine the wall time says little: the busier thread's CPU time bounds the rate
    # two free cores would give
    return {"wall": wall, "n": len(frames), "rulings": rulings, "busier": max(engine_cpu, drawer_cpu),
            "threads": (engine_cpu, drawer_cpu)}


def _fps(c: "Clock") -> str:
    return f"{1000 / c.ms():5.1f} fps ({c.ms():4.0f} / {c.ms(True):4.0f})"


def print_session(label: str, r: dict) -> None:
    a, b, c, rr = (r["clocks"][k] for k in "abcr")
    same = "/".join("yes" if r["rulings"]["b"] == r["rulings"][k] else "NO" for k in "cr")
    full, total = r["full_passes"]
    p = r["pipelined"]
    print(f"  {label:14s} {a.n:3d} frames | a {_fps(a)} | b {_fps(b)} | c {_fps(c)} | r {_fps(rr)} | "
          f"b/a {b.ms() / a.ms():.2f} c/a {c.ms() / a.ms():.2f} r/a {rr.ms() / a.ms():.2f} | rulings b=c/b=r {same} "
          f"({len(r['rulings']['b'])}) | whole frames {full}/{total} | pipelined {p['n'] / p['busier']:.1f} fps "
          f"(busier thread's cpu; wall {p['n'] / p['wall']:.1f}), rulings {'=c' if p['rulings'] == r['rulings']['c'] else 'DIFFER'}",
          flush=True)
    (rb, nb, fb), (rc, nc, fc) = r["own_costs"]["b"], r["own_costs"]["c"]
    print(f"  {'':14s} inside b / c: re-reads {rb:.1f} / {rc:.1f} ms a frame ({nb} / {nc} frames had pieces to re-read), "
          f"still-frame fusion {fb:.1f} / {fc:.1f} ms a frame", flush=True)


def print_resolution(res: str, results: list[dict]) -> dict:
    """The line per resolution over all games: ratios of the summed times."""
    tot = {k: [sum(r["clocks"][k].cpu for r in results), sum(r["clocks"][k].wall for r in results),
               sum(r["clocks"][k].n for r in results)] for k in "abcr"}
    cpu = {k: v[0] / v[2] for k, v in tot.items()}
    wall = {k: v[1] / v[2] for k, v in tot.items()}
    same = all(r["rulings"]["b"] == r["rulings"][k] for r in results for k in "cr")
    print(f"{res} b/a {cpu['b'] / cpu['a']:.2f} c/a {cpu['c'] / cpu['a']:.2f}   (cpu; r/a {cpu['r'] / cpu['a']:.2f}; "
          f"wall b/a {wall['b'] / wall['a']:.2f} c/a {wall['c'] / wall['a']:.2f})   fps a {1 / cpu['a']:.1f} "
          f"b {1 / cpu['b']:.1f} c {1 / cpu['c']:.1f} r {1 / cpu['r']:.1f}   rulings b=c=r: "
          f"{'identical' if same else 'DIFFER'}", flush=True)
    p_wall = sum(r["pipelined"]["wall"] for r in results) / sum(r["pipelined"]["n"] for r in results)
    p_same = all(r["pipelined"]["rulings"] == r["rulings"]["c"] for r in results)
    p_busier = sum(r["pipelined"]["busier"] for r in results) / sum(r["pipelined"]["n"] for r in results)
    p_threads = [sum(r["pipelined"]["threads"][i] for r in results) / sum(r["pipelined"]["n"] for r in results)
                 for i in (0, 1)]
    print(f"pipelined (2 cores) {res} fps {1 / p_busier:.1f} (cpu of the busier thread: observe {1000 * p_threads[0]:.0f} "
          f"ms, draw+encode {1000 * p_threads[1]:.0f} ms a frame; c on one core {1 / cpu['c']:.1f}; wall on this shared "
          f"machine {1 / p_wall:.1f} vs c {1 / wall['c']:.1f})   rulings = c: {'identical' if p_same else 'DIFFER'}",
          flush=True)
    return {"res": res, "fps": {k: 1 / v for k, v in cpu.items()}, "b/a": cpu["b"] / cpu["a"],
            "c/a": cpu["c"] / cpu["a"], "same": same}


def memory_of(folder: Path, variant: str, n: int) -> float:
    """Peak memory (MB) of running one variant over n frames, in a fresh process, from after its
    imports: tracemalloc's peak of the arrays and objects allocated (numpy's and OpenCV's
    returned arrays included; the decoded frame too, the same for every variant)."""
    cmd = [sys.executable, "-m", "tests.bench.speed", "--memory-of", variant, "--session", str(folder),
           "--frames", str(n)]
    out = subprocess.run(cmd, cwd=REPO, env={**os.environ, **ONE_THREAD}, capture_output=True, text=True,
                         timeout=900)
    try:
        return float(json.loads(out.stdout.strip().splitlines()[-1])["peak_mb"])
    except (ValueError, IndexError, KeyError):
        print(f"  (memory of {variant} failed: {out.stderr.strip()[-300:]})", flush=True)
        return float("nan")


def _memory_child(folder: Path, variant: str, n: int) -> int:
    import gc
    import tracemalloc

    import cv2

    from vision.sources import SessionSource

    cv2.setNumThreads(1)
    if variant == "a":
        bare = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_5X5_1000))
        step = lambda t, image: bare.detectMarkers(image)  # noqa: E731
    else:
        engine, frames_sub, events_sub = make_engine(folder, variant)
        step = lambda t, image: (engine.process(t, image), _drain(frames_sub, events_sub, []))  # noqa: E731
    gc.collect()
    tracemalloc.start()
    for i, (t, image) in enumerate(SessionSource(folder, realtime=False)):  # one decoded frame at a time
        if i >= n:
            break
        step(t, image)
    peak = tracemalloc.get_traced_memory()[1]
    print(json.dumps({"peak_mb": peak / 2 ** 20}))
    return 0


SCALING_CARDS = (0, 30, 60, 120)


def scaling_scene(cards: int, camera: dict | None = None) -> dict:
    """A Tornado table: the start gate, 6 boats in a row and `cards` racing cards in a grid
    (10 across), seen from straight above at 1080p; the camera fits the full 120-card table."""
    import numpy as np

    from referee.catalog import default_catalog
    from synth.scenes import fit_camera, relevant_points, table_for

    catalog = default_catalog()
    names = [p.name for p in catalog.pieces(family="tornado/racing-card")][:120]
    grid = [{"name": n, "x_mm": -520.0 + 116.0 * (i % 10), "y_mm": -330.0 + 64.0 * (i // 10), "theta_deg": 0.0}
            for i, n in enumerate(names)]
    fixed = [{"name": "tornado/start-gate", "x_mm": -720.0, "y_mm": 0.0, "theta_deg": 90.0}]
    fixed += [{"name": f"tornado/boat-{k}", "x_mm": -450.0 + 150.0 * k, "y_mm": 470.0, "theta_deg": 0.0}
              for k in range(1, 7)]
    everything = fixed + grid
    rng = np.random.default_rng(5)
    if camera is None:
        camera = fit_camera(rng, relevant_points(catalog, everything), RESOLUTIONS["1080p"], tilt_deg=0.0,
                            fx=1000.0, roll_deg=0.0, azimuth_deg=-90.0, height_range=(600.0, 2000.0))
        if camera is None:
            raise RuntimeError("no camera sees the whole scaling table")
        camera["dist_coeffs"] = [0.02, 0.0, 0.0, 0.0, 0.0]  # a mild lens: the renderer inverts it exactly
    effects = {"noise_sigma": FRAME_NOISE, "jpeg_quality": 85, "seed": 3}
    return {"refcam_scene": 1, "game": "tornado", "camera": camera, "table": table_for(rng, catalog, everything),
            "pieces": fixed + grid[:cards], "effects": effects, "occluders": []}


def scaling_frames(cards: int) -> tuple[object, object]:
    """(BGR image, camera model) of the scaling table with `cards` cards (rendered once, cached)."""
    import cv2

    from calibration.camera import CameraModel

    path = CACHE / f"scaling-{cards}.jpg"
    cam_path = CACHE / "scaling.camera.json"
    if not path.is_file() or not cam_path.is_file():
        from synth.render import encode_jpeg, render_scene

        gen = _samples_generate()
        full = scaling_scene(120)
        image, truth = render_scene(scaling_scene(cards, full["camera"]))
        CACHE.mkdir(parents=True, exist_ok=True)
        path.write_bytes(encode_jpeg(image, 85).tobytes())
        cam_path.write_text(json.dumps(gen.camera_file_of(truth["camera"], "scaling table"), indent=1))
    return cv2.imread(str(path)), CameraModel.load(cam_path)


class DetectionClock:
    """CPU time spent in sticker detection (whole frame and followed) while active, so a figure
    can say what refcam's own work after detection costs."""

    def __init__(self):
        self.cpu = 0.0
        self._depth = 0  # RoiDetector.detect calls detect_all: only the outer call is timed

    def __enter__(self):
        from vision import detect, roi

        self._saved = (detect.detect_all, roi.RoiDetector.detect)
        timed = self._timed
        detect.detect_all = timed(self._saved[0])
        roi.RoiDetector.detect = timed(self._saved[1])
        return self

    def _timed(self, fn):
        def call(*args, **kwargs):
            c0 = time.process_time()
            self._depth += 1
            try:
                return fn(*args, **kwargs)
            finally:
                self._depth -= 1
                if not self._depth:
                    self.cpu += time.process_time() - c0
        return call

    def __exit__(self, *exc):
        from vision import detect, roi

        detect.detect_all, roi.RoiDetector.detect = self._saved


def still_frames(image, n: int, seed: int = 17) -> list:
    """n frames of one still table: the picture with fresh sensor noise (FRAME_NOISE grey levels)
    and JPEG (q85) each, as a webcam gives a table at rest (the same picture n times would be a
    table no camera shows: every sticker exactly where it was)."""
    import cv2
    import numpy as np

    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        noisy = np.clip(image + rng.normal(0, FRAME_NOISE, image.shape), 0, 255).astype(np.uint8)
        out.append(cv2.imdecode(cv2.imencode(".jpg", noisy, [cv2.IMWRITE_JPEG_QUALITY, 85])[1], cv2.IMREAD_COLOR))
    return out


def scaling(repeats: int = 6) -> list[tuple]:
    """Time per frame of (a), (b) and (c) against the stickers found on the same table (c: the
    table at rest, every sticker followed), over `repeats` frames of it with fresh noise each."""
    import cv2

    from vision.sources import SessionSource
    from webui.live import LiveEngine, LiveSettings, tracking_observe

    print("== scaling: a Tornado table at 1080p, 6 boats and more and more racing cards ==", flush=True)
    bare = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_5X5_1000))
    rows = []
    for cards in SCALING_CARDS:
        image, camera = scaling_frames(cards)
        frames = still_frames(image, repeats + 1)
        image = frames[0]
        engines = [LiveEngine(SessionSource(REPO / "samples" / "sessions" / "tornado", realtime=False),
                              tracking_observe(mode=mode), LiveSettings(game="tornado", camera=camera))
                   for mode in ("whole", "follow")]
        subs = [(e.frames.subscribe(), e.events.subscribe()) for e in engines]
        ca, cb, cc = Clock(), Clock(), Clock()
        for engine in engines:
            engine.process(0.0, image)  # warm up (and c's whole-frame pass)
        detecting = [DetectionClock(), DetectionClock()]
        for i, frame in enumerate(frames[1:]):
            ca.time(bare.detectMarkers, frame)
            for engine, clock, (frames_sub, events_sub), det in zip(engines, (cb, cc), subs, detecting):
                with det:
                    clock.time(engine.process, 0.1 * (i + 1), frame)
                _drain(frames_sub, events_sub, [])
        after = [(clock.cpu - det.cpu) * 1000.0 / max(1, clock.n) for clock, det in zip((cb, cc), detecting)]
        engine = engines[0]
        found = len((engine.latest_update.pieces if engine.latest_update else ()))
        stickers = len(engine.observe(image, camera, "tornado").extra.get("detections", []))
        rows.append((cards, stickers, ca.ms(), cb.ms(), cc.ms(), after[0], after[1]))
        print(f"  {stickers:4d} stickers in view ({cards:3d} cards, {found} pieces): a {ca.ms():5.0f} ms "
              f"({1000 / ca.ms():5.1f} fps) | b {cb.ms():5.0f} ms ({1000 / cb.ms():5.1f} fps) | c at rest "
              f"{cc.ms():5.0f} ms ({1000 / cc.ms():5.1f} fps) | b/a {cb.ms() / ca.ms():.2f} c/a {cc.ms() / ca.ms():.2f} | "
              f"after detection: b {after[0]:4.0f} ms, c {after[1]:4.0f} ms", flush=True)
    (c0, s0, a0, b0, k0, ab0, ac0), (c1, s1, a1, b1, k1, ab1, ac1) = rows[0], rows[-1]
    if s1 > s0:
        print(f"  per extra sticker: a {(a1 - a0) / (s1 - s0):.2f} ms, b {(b1 - b0) / (s1 - s0):.2f} ms, c "
              f"{(k1 - k0) / (s1 - s0):.2f} ms; after detection b {(ab1 - ab0) / (s1 - s0):.2f} ms, c "
              f"{(ac1 - ac0) / (s1 - s0):.2f} ms; b at {s1} stickers {b1 / b0:.1f} x b at {s0}", flush=True)
    print_scaling_summary(rows)
    return rows


def print_scaling_summary(rows: list[tuple]) -> None:
    """The scaling in one table: ms at each sticker count, after detection per sticker (linear work
    keeps it flat or falling), and the largest table's fps and its ratio to the bare detector."""
    print("  stickers        | " + " | ".join(f"{s:6d}" for _, s, *_ in rows), flush=True)
    for label, k in (("a bare ms", 2), ("b whole ms", 3), ("c at rest ms", 4), ("b after det. ms", 5),
                     ("c after det. ms", 6)):
        print(f"  {label:15s} | " + " | ".join(f"{r[k]:6.1f}" for r in rows), flush=True)
    for label, k in (("b after det./st.", 5), ("c after det./st.", 6)):
        print(f"  {label:15s} | " + " | ".join(f"{r[k] / max(1, r[1]):6.3f}" for r in rows), flush=True)
    _, s, a, b, c, ab, ac = rows[-1]
    growth = [(r[5] / max(1, r[1])) for r in rows]
    print(f"  {s}-sticker table: a {1000 / a:.1f} fps, b {1000 / b:.1f} fps (b/a {b / a:.2f}), c at rest "
          f"{1000 / c:.1f} fps (c/a {c / a:.2f}); after detection per sticker (b) from {growth[0]:.3f} to "
          f"{growth[-1]:.3f} ms: {'no faster than linear' if growth[-1] <= 1.1 * min(growth) else 'FASTER than linear'}",
          flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=20, help="frames per session")
    ap.add_argument("--memory-frames", type=int, default=6)
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--no-scaling", action="store_true")
    ap.add_argument("--scaling-only", action="store_true")
    ap.add_argument("--b-draws-whole-frame", action="store_true",
                    help="(b) draws its overlay on the whole frame and shrinks it, as this bench did until 2026-12-05")
    ap.add_argument("--resolutions", default="1080p,4k")
    ap.add_argument("--games", default=",".join(GAMES))
    ap.add_argument("--memory-of", choices=("a", "b", "c", "r"), help=argparse.SUPPRESS)
    ap.add_argument("--session", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.memory_of:
        return _memory_child(Path(args.session), args.memory_of, args.frames)
    if os.environ.get("REFCAM_BENCH_ONE_THREAD") != "1":  # numpy reads its thread counts at import
        cmd = [sys.executable, "-m", "tests.bench.speed"] + list(argv if argv is not None else sys.argv[1:])
        return subprocess.run(cmd, cwd=REPO, env={**os.environ, **ONE_THREAD}).returncode
    import cv2

    cv2.setNumThreads(1)
    B_DRAWS_WHOLE_FRAME[0] = args.b_draws_whole_frame
    summary = []
    for res in ([] if args.scaling_only else args.resolutions.split(",")):
        print(f"== {res}: a bare detectMarkers | b refcam's whole work | c with speed-ups (fps, CPU ms / wall ms "
              f"per frame) ==", flush=True)
        results = []
        for game in args.games.split(","):
            folder = session_folder(game, res, args.frames)
            r = time_session(folder, load_frames(folder, args.frames))
            print_session(f"{game} {res}", r)
            if not args.no_memory:
                mem = {k: memory_of(folder, k, args.memory_frames) for k in "abc"}
                print(f"  {'':14s} peak memory (tracemalloc, {args.memory_frames} frames): a {mem['a']:.0f} MB, "
                      f"b {mem['b']:.0f} MB, c {mem['c']:.0f} MB", flush=True)
            results.append(r)
        summary.append(print_resolution(res, results))
    if not args.no_scaling:
        scaling()
    return 0


if __name__ == "__main__":
    sys.exit(main())
