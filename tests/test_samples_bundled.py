"""The bundled samples: what index.json promises, that their truth matches their pixels
(every visible sticker is found by cv2.aruco near its truth corners), that the recorded
sessions replay, and that the folder stays small and reproducible."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import cv2
import numpy as np
import pytest

from tests.test_render_truth import detect

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
INDEX = json.loads((SAMPLES / "index.json").read_text()) if (SAMPLES / "index.json").exists() else None
needs_samples = pytest.mark.skipif(INDEX is None, reason="samples/index.json missing: run `make samples`")


def _stills():
    return INDEX["stills"] if INDEX else []


@needs_samples
def test_index_covers_games_resolutions_tilts_occlusion_and_courses():
    stills = _stills()
    per_game = Counter(s["game"] for s in stills)
    assert all(per_game[g] >= 15 for g in ("kang", "kayak", "tornado")), per_game
    for game in ("kang", "kayak", "tornado"):
        mine = [s for s in stills if s["game"] == game]
        assert {s["resolution"] for s in mine} == {"1080p", "4k"}
        tilts = sorted(s["tilt_deg"] for s in mine)
        assert tilts[0] <= 3 and tilts[-1] >= 37 and max(np.diff(tilts)) < 8
        assert any(s["occluded"] for s in mine) and not all(s["occluded"] for s in mine)
    tornado = [s for s in stills if s["game"] == "tornado"]
    assert {s["course"] for s in tornado} == {"tornado-circuit", "splashway", "roundabout-river", "raindrop-road"}
    assert sum(1 for s in tornado if s["close_call"]) >= 4
    for s in stills:
        for key in ("image", "truth", "scene"):
            assert (SAMPLES / s[key]).is_file(), s[key]
    assert {s["game"] for s in INDEX["sessions"]} == {"kang", "kayak", "tornado"}


@needs_samples
def test_samples_folder_stays_under_50_mb():
    # 40 MB until issue 11 added the Tornado full-race session (at most 10 MB, 9.2 now)
    total = sum(p.stat().st_size for p in SAMPLES.rglob("*") if p.is_file())
    assert total < 50 * 1024 * 1024, f"samples/ is {total / 2**20:.1f} MB"


@needs_samples
@pytest.mark.parametrize("game", ["kang", "kayak", "tornado"])
def test_every_visible_sticker_of_every_still_is_detected_at_its_truth(game):
    """cv2.aruco (DICT_5X5_1000, sub-pixel refinement, two passes tuned for the ~17-20 px
    boat stickers of wide Tornado views: see detect()) finds every sticker the truth calls
    visible, near its truth corners, and nothing that is not on the table. Default
    parameters alone miss 2 of 589 (both <= 20 px boat stickers). Corner errors include
    JPEG, noise and blur: median < 0.6 px per game (about 0.4 over all); cornerSubPix now and then pulls one corner of
    a 17-30 px sticker by up to ~2 px, so the bound on the worst is 2.5 px."""
    missed, errors = [], []
    for s in (s for s in _stills() if s["game"] == game):
        truth = json.loads((SAMPLES / s["truth"]).read_text())
        image = cv2.imread(str(SAMPLES / s["image"]))
        assert image.shape[1::-1] == tuple(truth["image_size"])
        found = detect(image)
        all_ids = {st["id"] for st in truth["stickers"]}
        assert set(found) <= all_ids, (s["image"], set(found) - all_ids)
        for st in truth["stickers"]:
            if not st["visible"]:
                continue
            if st["id"] not in found:
                missed.append((s["image"], st["id"], st["side_px"]))
                continue
            errors.append(np.linalg.norm(found[st["id"]] - np.array(st["corners_px"]), axis=1).max())
    assert not missed, missed
    errors = np.array(errors)
    assert len(errors) >= 100
    assert errors.max() < 2.5 and np.median(errors) < 0.6, (errors.max(), np.median(errors))
    assert np.percentile(errors, 95) < 1.4


@needs_samples
def test_visible_stickers_are_inside_the_frame():
    for s in _stills():
        truth = json.loads((SAMPLES / s["truth"]).read_text())
        w, h = truth["image_size"]
        for st in truth["stickers"]:
            if st["visible"]:
                c = np.array(st["corners_px"])
                assert c.min() >= 0 and c[:, 0].max() <= w - 1 and c[:, 1].max() <= h - 1


@needs_samples
def test_a_still_renders_again_from_its_scene_file():
    from synth.render import load_scene, render_scene

    entry = next(s for s in _stills() if s["game"] == "kayak" and s["resolution"] == "1080p")
    _, truth = render_scene(load_scene(SAMPLES / entry["scene"]))
    assert json.loads(json.dumps(truth)) == json.loads((SAMPLES / entry["truth"]).read_text())


@needs_samples
@pytest.mark.parametrize("game", ["kang", "kayak", "tornado"])
def test_sessions_replay_with_truth_stable_runs_and_events(game):
    from calibration.camera import CameraModel
    from vision.session import read_session

    session = read_session(SAMPLES / "sessions" / game)
    assert session.game == game and not session.warnings
    truth = session.truth()
    assert truth is not None and len(truth) == len(session.frames) >= 30
    camera = CameraModel.from_json(json.loads((SAMPLES / "sessions" / game / "camera.json").read_text()))
    assert list(camera.image_size) == list(cv2.imread(str(session.frames[0].path)).shape[1::-1])
    times = [f.t for f in session.frames]
    assert all(b > a for a, b in zip(times, times[1:]))
    assert 3.5 <= (len(times) - 1) / (times[-1] - times[0]) <= 5.5  # about 4-5 fps
    # stable runs last at least 1.5 s, moves happen between them with a hand over the table
    runs, start = [], 0
    for i in range(1, len(truth) + 1):
        if i == len(truth) or truth[i]["stable"] != truth[start]["stable"]:
            runs.append((truth[start]["stable"], truth[start]["t"], truth[i - 1]["t"]))
            start = i
    stable_runs = [r for r in runs if r[0]]
    assert len(stable_runs) >= 4
    assert all(end - begin >= 1.5 for _, begin, end in stable_runs)
    assert all(t["occluders"] > 0 for t in truth if not t["stable"])
    events = [t for t in truth if t["event"]]
    assert len(events) == len(stable_runs) - 1 >= 3
    assert all(t["stable"] for t in events)
    # the stickers of a stable frame are where the truth says
    frame = next(i for i, t in enumerate(truth) if t["event"])
    image = cv2.imread(str(session.frames[frame].path))
    found = detect(image)
    for st in truth[frame]["stickers"]:
        if st["visible"]:
            assert st["id"] in found, (game, st["id"], st["side_px"])
            assert np.linalg.norm(found[st["id"]] - np.array(st["corners_px"]), axis=1).max() < 2.5
    # the piece named by the event moved since the previous stable position
    moved = events[0]["event"]["piece"]
    previous = max(i for i in range(frame) if truth[i]["stable"])
    before = {p["name"]: p for p in truth[previous]["pieces"]}[moved]
    after = {p["name"]: p for p in truth[frame]["pieces"]}[moved]
    assert np.hypot(before["x_mm"] - after["x_mm"], before["y_mm"] - after["y_mm"]) > 20
