"""The whole-game bench's pipeline on one tiny game, and its matching of rulings to the truth."""

from __future__ import annotations

import json

import pytest

from synth.game_playouts import play
from synth.game_sessions import END_FRAMES, START_FRAMES, frame_plan, hand_frames, read_truth, write_sessions
from tests.bench.games import count_needed_reads, judge, match, offline_rulings, still_periods


@pytest.fixture(scope="module")
def tiny_kang(tmp_path_factory):
    game = play("kang", 201, "tiny")
    folders = write_sessions(game, tmp_path_factory.mktemp("games"), holds=(4,), copies=("clean",))
    return game, folders[("clean", 4)]


def test_truth_ends_on_the_last_rendered_table(tiny_kang):
    game, folder = tiny_kang
    lines = [json.loads(x) for x in (folder / "truth.jsonl").read_text().splitlines()]
    manifest = (folder / "manifest.jsonl").read_text().splitlines()[1:]
    assert len(lines) == len(manifest) == len(frame_plan(game, 4))
    assert len(lines) == START_FRAMES + sum(hand_frames(game, k) + 4 for k in range(1, 4)) - 4 + END_FRAMES
    last = lines[-1]
    assert last["stable"] and last["position"] == len(game.turns) == 3
    rendered = {p["name"]: (round(p["x_mm"], 3), round(p["y_mm"], 3)) for p in last["pieces"]}
    played = {p["name"]: (round(p["x_mm"], 3), round(p["y_mm"], 3)) for p in game.turns[-1].pieces}
    assert rendered == played
    events = read_truth(folder)
    assert [e["kind"] for e in events] == ["start", "turn", "turn", "turn"]
    assert events[-1]["position"] == game.turns[-1].position
    # each turn's truth comes on its first still frame, after its hand
    assert all(e["hand_t"] < e["t"] for e in events[1:])


def test_clean_replay_of_three_kang_turns_rules_each_right(tiny_kang):
    game, folder = tiny_kang
    rulings, reads = offline_rulings(folder)
    out = judge("kang", folder, rulings, full_game=False)
    assert (out.legal_turns, out.right, out.ruled_illegal, out.missed, out.cannot_tell) == (3, 3, 0, 0, 0)
    # every kangaroo the game needs shows at 14 px or more on this 720p table, and is read in each
    # of the 4 still periods (the start and the 3 turns; the last turn's table stays for the end)
    lines = [json.loads(x) for x in (folder / "truth.jsonl").read_text().splitlines()]
    assert len(reads) == len(lines) and len(still_periods(lines)) == 4
    needed = count_needed_reads("kang", folder, reads)
    assert needed.needed > 0 and needed.read == needed.needed and not needed.misses


TRUTH = [{"kind": "start", "position": "P0", "t": 0.0},
         {"kind": "turn", "legal": True, "position": "P1", "hand_t": 1.0, "t": 1.25},
         {"kind": "turn", "legal": False, "position": "X", "hand_t": 2.5, "t": 2.75},
         {"kind": "take-back", "legal": True, "position": "P1", "hand_t": 4.0, "t": 4.25},
         {"kind": "turn", "legal": True, "position": "P2", "hand_t": 5.5, "t": 5.75}]


def ruling(t, legal, after=None, kind="move", summary="x"):
    return {"t": t, "game": "kayak", "kind": kind, "legal": legal, "summary": summary,
            "details": {"after": after} if after else {}}


def test_a_ruling_is_right_only_with_both_verdict_and_position():
    rulings = [ruling(1.6, True, "P1"), ruling(3.0, False, "X"),
               {**ruling(4.6, None, kind="state", summary="put right: back"), "details": {"since_t": 3.0}},
               ruling(6.0, True, "P9")]  # legal, but not the table the turn left
    out = match("kayak", TRUTH, rulings)
    assert (out.legal_turns, out.right, out.wrong_position, out.flagged, out.take_backs_seen) == (2, 1, 1, 1, 1)


def test_the_right_position_with_the_wrong_verdict_is_a_legal_turn_ruled_illegal():
    out = match("kayak", TRUTH, [ruling(1.6, False, "P1"), ruling(6.0, None, summary="Cannot tell: a hand")])
    assert (out.right, out.ruled_illegal, out.cannot_tell, out.missed, out.flagged) == (0, 1, 1, 0, 0)


def test_a_ruling_before_the_turn_or_long_after_it_does_not_count_for_it():
    early = match("kayak", TRUTH[:2], [ruling(0.5, True, "P1")])
    assert (early.right, early.missed) == (0, 1)
    truth = TRUTH[:2] + [{"kind": "turn", "legal": True, "position": f"Q{k}", "hand_t": 2.0 + k, "t": 2.2 + k}
                         for k in range(4)]
    late = match("kayak", truth, [ruling(5.5, True, "P1")])  # four turns later: beyond "seen together"
    assert late.right == 0
    together = match("kayak", truth, [ruling(3.5, True, "P1")])  # two turns later: may be seen together
    assert together.right == 1


def test_an_illegal_verdict_after_the_illegal_table_left_is_not_its_flag():
    late = match("kayak", TRUTH, [ruling(4.6, False)])  # after the take-back's hand: the table is back
    assert (late.flagged, late.ruled_illegal) == (0, 1)  # it falls on the unjudged legal turn before it
    on_time = match("kayak", TRUTH, [ruling(4.0, False)])  # ruled on the take-back's first hand frame
    assert on_time.flagged == 1
    stale = {**ruling(4.6, None, kind="state", summary="put right: back"), "details": {"since_t": 0.5}}
    assert match("kayak", TRUTH, [stale]).take_backs_seen == 0  # its pending began before the illegal change


def test_a_kang_win_named_without_its_score_counts_for_the_winner_only():
    from tests.bench.games import ruled_result

    legal = {"t": 1.0, "kind": "move", "legal": True, "summary": "Legal: A played c0-c1",
             "details": {"after": "6/6/6/6/6/2m3 ssmll ssmmll B 1-1 -"}}
    won = {"t": 2.0, "kind": "state", "legal": None, "summary": "B wins with 3 alfalfa in every way ...",
           "details": {"winner": "B", "score": None}}
    assert ruled_result("kang", [legal, won]) == ("B", None)
    # a win said before the last legal position is not the end of the game
    assert ruled_result("kang", [dict(won, t=0.5), legal])[0] is None
