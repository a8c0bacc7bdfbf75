"""`observe` works on every bundled still: every piece the truth shows is found, in the
game frame, near its true place, and nothing is made up (issue "Vision", Done when)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from calibration.camera import CameraModel
from vision.imageio import load_image
from vision.pipeline import observe

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
INDEX = json.loads((SAMPLES / "index.json").read_text()) if (SAMPLES / "index.json").exists() else None
STILLS = INDEX["stills"] if INDEX else []


def _visible_pieces(truth: dict) -> set[str]:
    return {s["piece"] for s in truth["stickers"] if s["visible"]}


@pytest.mark.skipif(INDEX is None, reason="samples/index.json missing: run `make samples`")
@pytest.mark.parametrize("still", STILLS, ids=[s["image"] for s in STILLS])
def test_observe_finds_every_visible_piece_near_its_truth(still):
    truth = json.loads((SAMPLES / still["truth"]).read_text())
    camera = CameraModel.load(SAMPLES / still["image"].replace(".jpg", ".camera.json"))
    obs = observe(load_image(SAMPLES / still["image"]), camera, game=still["game"])
    assert obs.game == still["game"]
    found = set(obs.names())
    assert _visible_pieces(truth) <= found, f"missed {sorted(_visible_pieces(truth) - found)}"
    poses = {p["name"]: p for p in truth["pieces"]}
    assert found <= set(poses), f"made up {sorted(found - set(poses))}"
    if not obs.frame["game_frame"]:
        assert any("not in view" in w for w in obs.warnings)  # the user is told the frame is not the game's
        return
    for p in obs.pieces:
        t = poses[p.name]
        err = math.hypot(p.x_mm - t["x_mm"], p.y_mm - t["y_mm"])
        assert err <= max(3.0, 4 * p.sigma_mm), f"{p.name} is {err:.2f} mm off (sigma {p.sigma_mm:.2f})"
