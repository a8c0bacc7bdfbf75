"""The live view's labels on the bundled sessions (issue 12): every frame the page would
show, drawn by the live engine; the overlay's own label boxes never overlap, stay in the
picture, use short piece names and are large enough to read at phone width."""

from __future__ import annotations

from pathlib import Path

import pytest

from webui.labels import overlapping

SESSIONS = Path(__file__).resolve().parents[1] / "samples" / "sessions"


@pytest.mark.slow
@pytest.mark.parametrize("game", ["tornado", "kayak", "kang"])
def test_no_label_boxes_overlap_on_the_bundled_sessions(game):
    from calibration.camera import CameraModel
    from vision.sources import SessionSource
    from webui.live import LiveEngine, LiveSettings, pipeline_observe

    if not (SESSIONS / game / "manifest.jsonl").is_file():
        pytest.skip(f"no bundled session for {game}")
    source = SessionSource(SESSIONS / game, realtime=False)
    camera = CameraModel.load(source.info.camera_file) if source.info.camera_file else None
    engine = LiveEngine(source, pipeline_observe, LiveSettings(game=game, camera=camera, stream=True))
    engine.frames.subscribe()  # a watcher: the engine draws every frame
    frames = labelled = 0
    for t, image in source:
        engine.process(t, image)
        frames += 1
        boxes = engine.latest_labels
        assert not overlapping(boxes), (frames, [(a.text, b.text) for a, b in overlapping(boxes)])
        h, w = image.shape[:2]
        for b in boxes:
            if b.kind == "legend":  # in the strip under the picture, never over the play area
                assert 0 <= b.x0 < b.x1 <= w and h <= b.y0 < b.y1, b
                continue
            assert 0 <= b.x0 < b.x1 <= w and 0 <= b.y0 < b.y1 <= h, b
            assert "/" not in b.text, b.text
            assert b.kind == "legend" or b.y1 - b.y0 >= 0.02 * w, b  # ~8 px tall or more at a phone's 390 px
        labelled += any(b.kind == "label" for b in boxes)
    assert frames > 10 and labelled > frames // 2
