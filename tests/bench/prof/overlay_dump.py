"""Dev helper: the live engine's drawn frames (before JPEG) of each bundled session, saved or compared.

    .venv/bin/python -m tests.bench.prof.overlay_dump save out/overlay-before.npz [b|c]
    .venv/bin/python -m tests.bench.prof.overlay_dump compare out/overlay-before.npz [b|c]
"""
import sys

import cv2
import numpy as np

from tests.bench import speed


def frames_of(variant):
    out = {}
    captured = []
    real = cv2.imencode

    def grab(ext, img, *a):
        if ext == ".jpg":
            captured.append(img.copy())
        return real(ext, img, *a)

    cv2.imencode = grab
    try:
        for game in ("tornado", "kayak", "kang"):
            folder = speed.session_folder(game, "1080p", 20)
            engine, fs, es = speed.make_engine(folder, variant)
            for i, (t, image) in enumerate(speed.load_frames(folder, 12)):
                captured.clear()
                engine.process(t, image)
                speed._drain(fs, es, [])
                out[f"{game}-{i}"] = captured[-1]
                out[f"{game}-{i}-labels"] = np.array([[b.x0, b.y0, b.x1, b.y1] for b in engine.latest_labels])
    finally:
        cv2.imencode = real
    return out


def main():
    mode, path = sys.argv[1], sys.argv[2]
    variant = sys.argv[3] if len(sys.argv) > 3 else "c"
    got = frames_of(variant)
    if mode == "save":
        np.savez_compressed(path, **got)
        return
    want = np.load(path)
    for k in want.files:
        a, b = want[k], got[k]
        if a.shape != b.shape:
            print(k, "shape", a.shape, b.shape)
            continue
        d = np.abs(a.astype(int) - b.astype(int))
        if d.size and d.max() > 0:
            print(f"{k}: {int((d.max(axis=-1) if d.ndim == 3 else d).astype(bool).sum())} px differ, max {d.max()}")
    print("compared", len(want.files))


if __name__ == "__main__":
    main()
