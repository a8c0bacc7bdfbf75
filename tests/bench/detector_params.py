"""What each of refcam's detector settings costs and finds, one at a time, on one core.

    .venv/bin/python -m tests.bench.detector_params [--frames 10] [--scenes 2]

Frames: the speed bench's 1080p sessions of the three games, and fresh robust-bench scenes
(clean and defocused by 2 px). For refcam's DetectorParameters, OpenCV's defaults, each of
refcam's settings put back to its default alone, and ArUco3 variants, it prints the
time of detectMarkers and of the whole detect_all (second pass and edge fit included) in
CPU ms per frame, and the catalog stickers found (first pass, then in all), with how many
sticker sightings differ from refcam's settings.
"""

from __future__ import annotations

import argparse
import time

import cv2
import numpy as np

from referee.catalog import default_catalog
from tests.bench import robust, speed
from vision import detect

SMALL = ("minMarkerPerimeterRate", "adaptiveThreshWinSizeMin", "adaptiveThreshWinSizeMax",
         "adaptiveThreshWinSizeStep", "polygonalApproxAccuracyRate", "minCornerDistanceRate",
         "minDistanceToBorder", "perspectiveRemovePixelPerCell", "perspectiveRemoveIgnoredMarginPerCell")


def variants() -> dict[str, cv2.aruco.DetectorParameters]:
    out = {"refcam": detect.detector_parameters()}
    out["refcam (again: the first variant pays for caches)"] = detect.detector_parameters()
    default = cv2.aruco.DetectorParameters()
    p = cv2.aruco.DetectorParameters()
    out["opencv defaults"] = p
    for name in SMALL:
        p = detect.detector_parameters()
        setattr(p, name, getattr(default, name))
        out[f"{name} -> {getattr(default, name):g}"] = p
    p = detect.detector_parameters(refine="none")
    out["cornerRefinementMethod -> none"] = p
    for name, values in (("minMarkerPerimeterRate", (0.023, 0.026)), ("polygonalApproxAccuracyRate", (0.035,))):
        for v in values:
            p = detect.detector_parameters()
            setattr(p, name, v)
            out[f"{name} -> {v:g}"] = p
    for side, ratio in ((16, 0.0), (24, 0.0), (32, 0.0), (16, 0.01)):
        p = detect.detector_parameters()
        p.useAruco3Detection = True
        p.minSideLengthCanonicalImg = side
        p.minMarkerLengthRatioOriginalImg = ratio
        out[f"aruco3 side {side} ratio {ratio:g}"] = p
    return out


def frames(n_frames: int, n_scenes: int) -> list[tuple[str, np.ndarray]]:
    out = []
    for game in speed.GAMES:
        for k, (_, image) in enumerate(speed.load_frames(speed.session_folder(game, "1080p", 20), 20)):
            if k % max(1, 20 // n_frames) == 0:
                out.append((f"{game} session", detect.to_gray(image)))
    rng = np.random.default_rng(5)
    for label, _, _, image, _ in robust.scenes(n_scenes, 0, 20261201):
        for cond in ("clean", "defocus 2"):
            out.append((f"scene {cond}", detect.to_gray(robust.jpeg(robust.degrade(image, cond, rng)))))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=10, help="frames per session")
    ap.add_argument("--scenes", type=int, default=2, help="fresh scenes per game (each clean and defocused)")
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    catalog = default_catalog()
    known = catalog.known_ids()
    pics = frames(args.frames, args.scenes)
    params = variants()
    detectors = {k: cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(detect.DICTIONARY), p)
                 for k, p in params.items()}
    t_first = dict.fromkeys(params, 0.0)
    t_all = dict.fromkeys(params, 0.0)
    first: dict = {k: set() for k in params}
    found: dict = {k: set() for k in params}
    for n, (label, gray) in enumerate(pics):
        for key, det in detectors.items():  # interleaved: a loaded machine slows every variant alike
            t0 = time.process_time()
            _, ids, _ = det.detectMarkers(gray)
            t_first[key] += time.process_time() - t0
            first[key] |= {(n, int(i)) for i in (ids.ravel() if ids is not None else []) if int(i) in known}
            t0 = time.process_time()
            res = detect.detect_all(gray, catalog, params=params[key])
            t_all[key] += time.process_time() - t0
            found[key] |= {(n, d.marker_id) for d in res.detections}
    ref = found["refcam"]
    print(f"{len(pics)} pictures at 1080p ({args.frames} frames of each game's session, {args.scenes} fresh scenes "
          f"per game clean and defocused 2 px); CPU ms per picture, one thread")
    print(f"  {'settings':44s} detectMarkers  detect_all | first pass  in all  (vs refcam: lost / gained)")
    for key in params:
        lost, gained = len(ref - found[key]), len(found[key] - ref)
        print(f"  {key:44s} {1000 * t_first[key] / len(pics):9.1f} ms {1000 * t_all[key] / len(pics):8.1f} ms |"
              f" {len(first[key]):10d} {len(found[key]):7d}  ({lost} / {gained})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
