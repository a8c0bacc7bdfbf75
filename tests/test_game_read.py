"""Needed pieces in whole games through a webcam: a piece vision did not read is named with what
limits it, a first-pass read dropped in the deciding frames is brought back by the stream's
re-read, a sticker missed as the hand leaves is looked for again, and a place truly empty is never
made into a piece."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest

from referee.kayak.game import GAME as KAYAK
from referee.rulings import cannot_tell
from tests.kayak_tools import SAMPLES, FakeTools
from tests.test_bench_games import tiny_kang  # noqa: F401  the tiny whole Kang game, rendered once
from vision.pipeline import not_read_warnings


def _kayak_tables():
    """The bundled Kayak Chaos session's stable tables from its truth: the first river, then turn 1."""
    tables = [(t, o) for t, o in FakeTools().stable_observations(str(SAMPLES / "sessions" / "kayak"), None, "kayak")
              if not o.warnings]
    return tables[0], tables[1]


def test_a_kayak_not_read_is_named_with_what_limits_it_not_taken_for_a_hand():
    (t0, first), (t1, turn) = _kayak_tables()
    state = KAYAK.step(KAYAK.new_state({"advanced": False}), first, t0).state
    # turn 1 moves pawn-2; pawn-3, still at its place, is not read, and vision says why
    unread = replace(turn, pieces=tuple(p for p in turn.pieces if p.name != "kayak/pawn-3"),
                     warnings=tuple(not_read_warnings([("kayak/pawn-3", 21.0, "")])))
    assert "a hand" in unread.warnings[0]  # the advice mentions a hand: it is no hand in view
    rulings = KAYAK.step(state, unread, t1).rulings
    assert len(rulings) == 1 and cannot_tell(rulings[0])
    summary = rulings[0].summary
    assert summary.startswith("Cannot tell: kayak/pawn-3 was not read")
    assert "about 21 px wide" in summary and "in view" not in summary


def test_a_hand_in_view_still_stops_the_kayak_ruling():
    (t0, first), (t1, turn) = _kayak_tables()
    state = KAYAK.step(KAYAK.new_state({"advanced": False}), first, t0).state
    rulings = KAYAK.step(state, replace(turn, warnings=("a hand is in view",)), t1).rulings
    assert len(rulings) == 1 and rulings[0].summary.startswith("Cannot tell: a hand or an object is in view")


# --- a whole game whose first pass misses a needed piece in the deciding frames --------------
class DroppingDetector:
    """The replay's detector (vision.roi.RoiDetector, "regions" as `refcam replay`), whose output
    loses some stickers in some frames: a first pass that missed them there."""

    def __init__(self, drop: dict[int, set[int]]):
        from referee.catalog import default_catalog
        from vision.roi import RoiDetector, RoiSettings

        self.inner = RoiDetector(default_catalog(), settings=RoiSettings(mode="regions"))
        self.drop, self.frame = drop, -1

    def detect(self, image):
        self.frame += 1
        found = self.inner.detect(image)
        lost = self.drop.get(self.frame, set())
        return replace(found, detections=tuple(d for d in found.detections if d.marker_id not in lost))


def _dropping_observe(drop: dict[int, set[int]]):
    from functools import partial

    from vision.reread import StreamMemory
    from webui.live import pipeline_observe

    observe = partial(pipeline_observe, detector=DroppingDetector(drop), memory=StreamMemory())
    observe.takes_expected = True
    return observe


def _last_turn(folder):
    """The truth's lines, the frames of the last turn's still table (to the end), its first hand
    frame, the kangaroos it moved ({name: (old, new) truth}) and a kangaroo it left where it was."""
    lines = [json.loads(x) for x in (folder / "truth.jsonl").read_text().splitlines()]
    last = lines[-1]["position"]
    frames = [n for n, line in enumerate(lines) if line["position"] == last and line["stable"]]
    hand = 1 + max(n for n, line in enumerate(lines) if line["position"] == last - 1 and line["stable"])
    before = {p["name"]: p for p in lines[hand - 1]["pieces"]}
    after = {p["name"]: p for p in lines[-1]["pieces"]}
    moved = {n: (before[n], after[n]) for n in after
             if n in before and (before[n]["x_mm"], before[n]["y_mm"]) != (after[n]["x_mm"], after[n]["y_mm"])}
    kept = [after[n] for n in after
            if n not in moved and n.startswith(("kang/small", "kang/large")) and after[n].get("sticker_px")]
    assert moved and kept and not lines[hand]["stable"]
    return lines, frames, hand, moved, kept[0]


def _ids(pieces) -> set[int]:
    return {i for p in pieces for i in p["marker_ids"]}


def test_needed_pieces_dropped_in_the_deciding_frames_are_read_again_and_the_game_ruled_right(tiny_kang):
    from tests.bench.games import count_needed_reads, judge, offline_rulings

    _, folder = tiny_kang
    lines, frames, _, moved, kept = _last_turn(folder)
    # the moved kangaroos are read once, as the hand leaves; then the first pass misses them and a
    # kangaroo that did not move in every frame that decides the last turn
    news = [new for _, new in moved.values()]
    drop = {n: set(kept["marker_ids"]) | (_ids(news) if n != frames[0] else set()) for n in frames}
    sources: list[dict[str, str]] = []
    rulings, reads = offline_rulings(folder, _dropping_observe(drop),
                                     seen=lambda obs: sources.append({p.name: p.source for p in obs.pieces}))
    for n in frames[1:]:  # read again at the place the stream last read them, from their own frames' pixels
        assert all(sources[n][p["name"]].startswith("reread") for p in news + [kept])
    out = judge("kang", folder, rulings, full_game=False)
    assert (out.legal_turns, out.right, out.ruled_illegal, out.wrong_position, out.cannot_tell) == (3, 3, 0, 0, 0)
    needed = count_needed_reads("kang", folder, reads)
    assert needed.read == needed.needed and not needed.misses


def test_a_needed_piece_whose_place_is_empty_is_never_made_up_there(tiny_kang):
    from tests.bench.games import judge, offline_rulings

    _, folder = tiny_kang
    lines, frames, hand, moved, _ = _last_turn(folder)
    # the first pass never reads the moved kangaroos at their new places: their old places, where the
    # game and the stream expect them, are empty or hold another kangaroo (its read dropped too)
    drop = {n: _ids(new for _, new in moved.values()) for n in range(hand, len(lines))}
    poses: list = []
    rulings, _ = offline_rulings(folder, _dropping_observe(drop),
                                 seen=lambda obs: poses.append({p.name: p for p in obs.pieces}))
    shown = [n for n in range(hand, len(lines)) if lines[n]["position"] == lines[-1]["position"]]
    for n in shown:  # every frame showing the new table, the hand's last included
        for name, (old, new) in moved.items():
            got = poses[n].get(name)
            if got is not None:  # a read can only be the kangaroo where it truly is, never its empty old place
                assert math.hypot(got.x_mm - new["x_mm"], got.y_mm - new["y_mm"]) < 3 * got.sigma_mm + 1.0
                assert math.hypot(got.x_mm - old["x_mm"], got.y_mm - old["y_mm"]) > 10.0
    out = judge("kang", folder, rulings, full_game=False)
    assert out.wrong_position == 0 and out.ruled_illegal == 0 and out.right == 2


@pytest.mark.parametrize("mode", ["follow", "regions"])
def test_a_sticker_missed_as_the_hand_leaves_is_looked_for_again_where_it_changed(mode, monkeypatch):
    """One look at a small sticker through a webcam misses it about half the time; nothing changes
    where it lies afterwards, so the next quiet frames search there again (RoiSettings.settle_frames)."""
    from referee.catalog import default_catalog
    from tests.test_vision_roi import sticker_put_down
    from vision import detect, roi

    new_id, frames = sticker_put_down()
    follower = roi.RoiDetector(default_catalog(), settings=roi.RoiSettings(mode=mode))
    follower.detect(frames[0])
    whole = detect.detect_all

    def missing_it(image, *args, **kwargs):  # the first look where it changed misses the new sticker
        found = whole(image, *args, **kwargs)
        return replace(found, detections=tuple(d for d in found.detections if d.marker_id != new_id))

    monkeypatch.setattr(roi.detect, "detect_all", missing_it)
    assert new_id not in {d.marker_id for d in follower.detect(frames[1]).detections}
    monkeypatch.setattr(roi.detect, "detect_all", whole)
    assert new_id in {d.marker_id for d in follower.detect(frames[1]).detections}  # the same still frame
    assert follower.full_passes == 1 and follower.changed_passes == 2
