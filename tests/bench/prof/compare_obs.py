"""Dev helper: dump every piece pose/sigma of observe() on stills and session frames, or compare to a dump.

    .venv/bin/python -m tests.bench.prof.compare_obs dump out/obs-before.json
    .venv/bin/python -m tests.bench.prof.compare_obs compare out/obs-before.json
"""
import json
import sys
from pathlib import Path

import cv2

from calibration.camera import CameraModel
from webui.live import pipeline_observe

REPO = Path(__file__).resolve().parents[3]


def cases():
    for d in ("kang", "kayak", "tornado", "kang-straddle", "tornado-finish"):
        for jpg in sorted((REPO / "samples" / d).glob("*.jpg"))[:6]:
            cam = jpg.with_suffix(".camera.json")
            yield f"{d}/{jpg.name}", jpg, (cam if cam.is_file() else None)
            yield f"{d}/{jpg.name}-nocam", jpg, None
    for d in ("kang", "kayak", "tornado"):
        folder = REPO / "samples" / "sessions" / d
        frames = sorted((folder / "frames").glob("*.jpg"))
        for jpg in frames[::max(1, len(frames) // 8)]:
            yield f"session-{d}/{jpg.name}", jpg, folder / "camera.json"


def run():
    out = {}
    for key, jpg, cam in cases():
        image = cv2.imread(str(jpg))
        camera = CameraModel.load(cam) if cam else None
        obs = pipeline_observe(image, camera, None)
        out[key] = {p.name: [p.x_mm, p.y_mm, p.theta_deg, p.z_mm, p.sigma_mm, p.sigma_theta_deg] for p in obs.pieces}
        out[key]["_warnings"] = list(obs.warnings)
    return out


def main():
    mode, path = sys.argv[1], Path(sys.argv[2])
    got = run()
    if mode == "dump":
        path.write_text(json.dumps(got))
        print(f"{len(got)} cases dumped")
        return
    want = json.loads(path.read_text())
    worst = 0.0
    for key in want:
        if set(want[key]) != set(got[key]):
            print("PIECES DIFFER", key, set(want[key]) ^ set(got[key]))
            continue
        if want[key]["_warnings"] != got[key]["_warnings"]:
            print("WARNINGS DIFFER", key, want[key]["_warnings"], got[key]["_warnings"])
        for name, v in want[key].items():
            if name == "_warnings":
                continue
            d = max(abs(a - b) for a, b in zip(v, got[key][name]))
            if d > worst:
                worst = d
            if d > 1e-4:
                print(f"{key} {name}: {v} vs {got[key][name]}")
    print(f"worst difference {worst:.2e} over {len(want)} cases")


if __name__ == "__main__":
    main()
