"""`kang replay` on the bundled Kang game session (samples/sessions/kang-game), through the real
vision pipeline and stable-state tracker: every move ruled as it was played, the illegal score
on the no-score turn caught and taken back."""

import argparse
import json
from pathlib import Path

from referee.kang.game import GAME

SESSION = Path(__file__).resolve().parent.parent / "samples" / "sessions" / "kang-game"


class VisionTools:
    """The Tools the command line will lend, built here from vision (tests may import it)."""

    def observe_path(self, path, camera_file, game):
        raise AssertionError("not used")

    def stable_observations(self, folder, camera_file, game):
        from calibration.camera import CameraModel
        from vision.imageio import load_image
        from vision.session import iter_frames, read_session
        from vision.tracking import StableStateTracker
        from webui.live import pipeline_observe

        camera = CameraModel.load(Path(folder) / "camera.json")
        tracker = StableStateTracker()
        for entry in iter_frames(read_session(folder)):
            update = tracker.update(pipeline_observe(load_image(entry.path), camera, game), entry.t)
            if update.new_stable is not None:
                yield entry.t, update.new_stable

    def draw_explanation(self, *a):
        raise AssertionError("not used")


def test_replay_rules_the_recorded_game(capsys):
    cmd = {c.name: c for c in GAME.commands()}["replay"]
    parser = argparse.ArgumentParser()
    cmd.add_arguments(parser)
    assert cmd.run(parser.parse_args([str(SESSION), "--json"]), VisionTools()) == 0
    doc = json.loads(capsys.readouterr().out)
    events = [json.loads(line)["event"] for line in (SESSION / "truth.jsonl").read_text().splitlines()]
    played = [f"{e['coach']} {e['move']}" for e in events if e and e["kind"] == "move" and e["legal"]]
    legal = [r for r in doc["rulings"] if r["kind"] == "move" and r["legal"]]
    assert len(legal) == len(played) >= 12
    for ruling, move in zip(legal, played):  # the played move is among those the board cannot tell apart
        coach, notation = move.split()
        assert ruling["details"]["coach"] == coach and notation in ruling["details"]["moves"], (ruling, move)
    verdicts = [r["legal"] for r in doc["rulings"] if r["kind"] == "move"]
    assert verdicts.count(False) == 1
    illegal = next(r for r in doc["rulings"] if r["legal"] is False)
    assert "How to get an alfalfa token" in illegal["rule"]
    assert any(r["summary"].startswith("Put right: ") for r in doc["rulings"])  # referee/pending.py
    assert doc["alfalfa"] == {"A": 1, "B": 0} and doc["winner"] is None
