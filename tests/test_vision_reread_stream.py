"""Re-reads over a stream: a piece read once stays a candidate (vision.reread.StreamMemory) until
its place is seen empty, still frames add up, and the live engine hands observe the pieces the
game expects (expected_pieces_of). Tables: synth.webcam's TUNING condition "tune-soft"."""

from __future__ import annotations

from dataclasses import replace
import numpy as np
import pytest

from referee.catalog import default_catalog
from referee.game import ExpectedPiece
from referee.observation import Observation
from tests.live_helpers import pose, write_session
from vision import detect
from vision.reread import CANDIDATE_GROWTH_MM, StreamMemory

CATALOG = default_catalog()


def test_a_piece_read_once_stays_a_candidate_until_its_place_is_seen_empty():
    memory = StreamMemory()
    memory.update(Observation(pieces=(pose("kang/small-1", 10, 20, sigma=0.5), pose("kang/small-2", 0, 0)), game="kang"))
    assert [e.name for e in memory.expected()] == ["kang/small-1", "kang/small-2"]
    memory.update(Observation(pieces=(pose("kang/small-2", 0, 0),), game="kang"))  # small-1 not read
    grown = {e.name: e for e in memory.expected()}["kang/small-1"]
    assert (grown.x_mm, grown.y_mm) == (10, 20) and grown.sigma_mm == pytest.approx(1.0 + CANDIDATE_GROWTH_MM)
    memory.update(Observation(pieces=(), game="kang"))  # a hand over the table: neither read nor empty
    assert {e.name for e in memory.expected()} == {"kang/small-1", "kang/small-2"}
    memory.update(Observation(pieces=(pose("kang/small-2", 0, 0),), game="kang", seen_empty=("kang/small-1",)))
    assert [e.name for e in memory.expected()] == ["kang/small-2"]


def test_the_games_places_win_over_the_candidates():
    memory = StreamMemory()
    memory.update(Observation(pieces=(pose("kang/small-1", 10, 20),), game="kang"))
    given = (ExpectedPiece("kang/small-1", 50, 60, 0.0, 2.0),)
    assert memory.expected(given) == given


class _Dropping:
    """A detector that stops seeing one piece's stickers after the first frame."""

    def __init__(self, piece: str):
        self.piece, self.calls = piece, 0

    def detect(self, image):
        self.calls += 1
        result = detect.detect_all(image, CATALOG, game="kang")
        if self.calls == 1:
            return result
        return replace(result, detections=tuple(d for d in result.detections
                                                if CATALOG.sticker(d.marker_id).piece != self.piece))


def test_a_stream_keeps_reading_a_piece_the_detector_lost():
    from synth.render import render_scene
    from synth.scenes import build_scene
    from tests.bench import robust
    from tests.bench import webcam as webcam_bench
    from webui.live import pipeline_observe

    scene = build_scene("kang", 198635310, "1080p")
    scene["effects"].update(blur_sigma=0.0, noise_sigma=0.0)
    image, truth = render_scene(scene)
    camera = robust.camera_of(truth)
    frames = [webcam_bench.harsh_image(image, "tune-soft", None, 11, 300 + k) for k in range(3)]
    piece = next(p["name"] for p in truth["pieces"] if p["name"].startswith("kang/large"))
    memory, detector = StreamMemory(), _Dropping(piece)
    sources = []
    for frame in frames:
        obs = pipeline_observe(frame, camera, "kang", detector=detector, memory=memory)
        sources.append(next((p.source for p in obs.pieces if p.name == piece), "not read"))
    # frame 3: nothing moved at its place and frame 2 decided it (LLR over twice the threshold):
    # its outcome is reused, not read again (vision.reread.Evidence.settled)
    assert sources == [None, "reread", "reread"]
    assert len(memory.evidence.settled) >= 1


def test_the_live_engine_hands_observe_the_pieces_the_game_expects(tmp_path, monkeypatch):
    from tests.toy_game import GAME as COUNTER
    from referee.registry import register, unregister
    from vision.sources import SessionSource
    from webui.live import LiveEngine, LiveSettings

    wanted = (ExpectedPiece("kang/small-1", -100.0, -100.0, 0.0, 2.0),)
    monkeypatch.setattr(type(COUNTER), "expected_pieces", lambda self, state: wanted, raising=False)
    seen = []

    def observe(image, camera, game, expected=()):
        seen.append(expected)
        return Observation(pieces=(pose("kang/small-1", -100, -100),), game="kang")

    observe.takes_expected = True
    register(COUNTER)
    try:
        engine = LiveEngine(SessionSource(write_session(tmp_path / "s", 3), realtime=False), observe,
                            LiveSettings(game=COUNTER.id, options={"start": "1"}))
        engine.process(0.0, np.zeros((48, 64, 3), np.uint8))
    finally:
        unregister(COUNTER.id)
    assert seen == [wanted]
