"""Synthetic sessions for the live tests: tiny PNG frames whose first pixel is the frame
number, and a fake observe that returns that frame's scripted Observation (no vision)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from referee.observation import Observation, PiecePose
from vision.session import SessionWriter

FPS = 10.0


def pose(name: str, x: float, y: float, theta: float = 0.0, sigma: float = 0.5) -> PiecePose:
    return PiecePose(name=name, marker_ids=(), x_mm=x, y_mm=y, theta_deg=theta, z_mm=5.0, sigma_mm=sigma,
                     sigma_theta_deg=0.5)


def move_script(game: str = "kang") -> list[Observation]:
    """30 frames: two pieces still (1 s), one slides 160 mm (0.5 s), all still again (1.5 s)."""
    a, b = f"{game}/small-1" if game == "kang" else "tornado/boat-1", f"{game}/large-1" if game == "kang" else "tornado/boat-2"
    frames = [Observation(pieces=(pose(a, -100, -100), pose(b, 60, 20)), game=game) for _ in range(10)]
    frames += [Observation(pieces=(pose(a, -100 + 32 * i, -100), pose(b, 60, 20)), game=game) for i in range(1, 6)]
    frames += [Observation(pieces=(pose(a, 60, -100), pose(b, 60, 20)), game=game) for _ in range(15)]
    return frames


def frame_image(i: int, size=(64, 48)) -> np.ndarray:
    w, h = size
    img = np.full((h, w, 3), 40, np.uint8)
    img[0, 0] = (i % 256, i // 256, 0)
    return img


def frame_number(image: np.ndarray) -> int:
    return int(image[0, 0, 0]) + 256 * int(image[0, 0, 1])


def write_session(folder: Path, n: int, game: str = "kang", fps: float = FPS) -> Path:
    import cv2

    with SessionWriter(folder, game=game, fps=fps) as w:
        for i in range(n):
            ok, buf = cv2.imencode(".png", frame_image(i))
            w.add_encoded(buf.tobytes(), i / fps, ext=".png")
    return folder


def scripted_observe(script: list[Observation]):
    def observe(image, camera, game):
        return script[min(frame_number(image), len(script) - 1)]
    return observe


def tornado_scene(boat2_x: float, size=(800, 500), seed: int = 1) -> dict:
    """A small Tornado Splash table seen from above: gate, finish line, three boats."""
    w, h = size
    f = 1.0 * w
    return {"game": "tornado",
            "camera": {"image_size": [w, h], "camera_matrix": [[f, 0, w / 2], [0, f, h / 2], [0, 0, 1]],
                       "dist_coeffs": [0, 0, 0, 0, 0],
                       "pose": {"position_mm": [250, -60, 620], "look_at_mm": [250, 0, 0]}},
            "pieces": [{"name": "tornado/start-gate", "x_mm": 0, "y_mm": 0, "theta_deg": 0},
                       {"name": "tornado/finish-line", "x_mm": 500, "y_mm": 0, "theta_deg": 0},
                       {"name": "tornado/boat-1", "x_mm": 100, "y_mm": 60, "theta_deg": 0},
                       {"name": "tornado/boat-2", "x_mm": boat2_x, "y_mm": -40, "theta_deg": 0},
                       {"name": "tornado/boat-3", "x_mm": 220, "y_mm": 20, "theta_deg": 10}],
            "effects": {"seed": seed}}


def write_rendered_session(folder: Path, fps: float = FPS, still_before: int = 10, still_after: int = 15) -> Path:
    """A rendered Tornado Splash session: all still, boat-2 slides 150 mm over 0.5 s, all still."""
    import cv2

    from synth.render import render_scene

    xs = [80.0] * still_before + [80.0 + 30.0 * i for i in range(1, 6)] + [230.0] * still_after
    cache: dict[float, bytes] = {}
    with SessionWriter(folder, game="tornado", fps=fps) as w:
        for i, x in enumerate(xs):
            if x not in cache:
                img, _ = render_scene(tornado_scene(x))
                cache[x] = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes()
            w.add_encoded(cache[x], i / fps)
    return folder


class FakeCapture:
    """A camera that delivers frames, can be unplugged and plugged back."""

    def __init__(self, world):
        self.world = world
        self.opened = world["plugged"]

    def isOpened(self):
        return self.opened

    def read(self):
        time.sleep(0.005)
        if not self.world["plugged"]:
            return False, None
        self.world["n"] += 1
        return True, np.full((4, 4, 3), self.world["n"] % 256, np.uint8)

    def release(self):
        self.opened = False


def unpluggable_camera_engine(monkeypatch):
    """A live engine on a stand-in camera that the test can unplug (world["plugged"] = False),
    seeing one still Kang token; returns (engine, world, its event subscription), not started."""
    from vision.sources import CameraSource
    from vision.tracking import TrackerSettings
    from webui.live import LiveEngine, LiveSettings

    world = {"plugged": True, "n": 0}
    monkeypatch.setattr(CameraSource, "RETRY_S", 0.05)
    source = CameraSource(0, capture_factory=lambda i: FakeCapture(world))
    still = Observation(pieces=(pose("kang/small-1", -100, -100),), game="kang")
    engine = LiveEngine(source, lambda image, camera, game: still,
                        LiveSettings(game="kang", tracker=TrackerSettings(stable_s=0.1)))
    return engine, world, engine.events.subscribe()


def wait_for(sub, pred, timeout: float = 10.0) -> dict:
    """The first event of the subscription `sub` for which pred holds, within timeout seconds;
    fails naming the last events seen (type and source state) otherwise."""
    import time

    deadline, seen = time.monotonic() + timeout, []
    while time.monotonic() < deadline:
        ev = sub.get(timeout=0.1)
        if ev is not None:
            seen.append(ev)
            if pred(ev):
                return ev
    raise AssertionError(f"not seen; got {[(e['type'], e.get('source_state')) for e in seen][-10:]}")


def write_grey_video(path: Path, n_frames: int) -> Path:
    """A 64x48 MJPG clip at 10 fps of flat frames 30 grey levels apart (skips the test when this
    OpenCV build cannot write MJPG)."""
    import cv2
    import pytest

    vw = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, (64, 48))
    if not vw.isOpened():
        pytest.skip("this OpenCV build cannot write MJPG video")
    for i in range(n_frames):
        vw.write(np.full((48, 64, 3), 30 * i, np.uint8))
    vw.release()
    return path
