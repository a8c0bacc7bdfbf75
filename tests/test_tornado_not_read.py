"""Ranking Phase: a boat in the race but not in the table is named with what kept it from being
read when vision said it (one "needed piece <name> not read: <reason>" warning per piece, written
with referee.observation.NOT_READ), else "under a hand?" (vision said nothing: something moved
over its place). Each boat gets its own warning's reason, never another piece's.

The expected texts are written out by hand: the reason vision gave, quoted whole where the
rulings and JSON carry it, and cut to a few words on the picture's label."""

from __future__ import annotations

import dataclasses
import json

from referee.game import parse_settings
from referee.observation import NOT_READ
from referee.tornado.dispute import completeness
from referee.tornado.game import GAME
from referee.tornado.picture import hidden_boat_label
from referee.tornado.turns import hidden_boat_warnings
from tests.test_tornado_live import COURSE, state as table
from tests.tornado_pieces import card_name, observation, pose

SMALL = ("its sticker shows about 13 px wide here; bring the camera nearer or print a bigger sticker "
         "(x1.1 to reach 14 px), or add light")
OUT_OF_VIEW = "its place is out of the camera's view; move the camera or the piece into view"
OCCUPIED = ("another piece's sticker is where it should be (moved or swapped?); its sticker would show "
            "about 20 px wide there")


def not_read(name: str, why: str) -> str:
    return NOT_READ.format(name) + why


def with_warnings(obs, *warnings):
    return dataclasses.replace(obs, warnings=tuple(warnings))


def test_each_hidden_boat_gets_its_own_reason_or_a_hand():
    # boat-2 and boat-6 hidden, each with its own reason; boat-3 hidden, vision silent on it; the
    # warnings for boat-1 (seen) and for a card of deck 3 belong to no hidden boat
    warnings = [not_read("tornado/boat-6", SMALL), not_read("tornado/boat-1", OCCUPIED),
                not_read(card_name(3, "straight-1"), OUT_OF_VIEW), not_read("tornado/boat-2", OUT_OF_VIEW),
                "the table's corner stickers are not all in view"]
    out = hidden_boat_warnings(["tornado/boat-1", "tornado/boat-2", "tornado/boat-3", "tornado/boat-6"],
                               ["tornado/boat-1"], warnings)
    assert out == ["boat-2 not read: its place is out of the camera's view; move the camera or the piece into view",
                   "boat-3 not seen: under a hand?",
                   "boat-6 not read: its sticker shows about 13 px wide here; bring the camera nearer or print a "
                   "bigger sticker (x1.1 to reach 14 px), or add light"]


def test_label_says_the_reason_in_a_few_words():
    assert hidden_boat_label("tornado/boat-6", SMALL) == "boat-6 not read: sticker 13 px"
    assert hidden_boat_label("tornado/boat-6", OUT_OF_VIEW) == "boat-6 not read: its place is out of the camera's view"
    assert hidden_boat_label("tornado/boat-6", OCCUPIED) == "boat-6 not read: another piece's sticker is where it should be"
    assert hidden_boat_label("tornado/boat-6", "") == "boat-6 not seen: under a hand?"


def _check(tmp_path, before, after):
    from tests.tornado_check_runner import check_files

    a, b = tmp_path / "before.json", tmp_path / "after.json"
    a.write_text(json.dumps(before.to_json()))
    b.write_text(json.dumps(after.to_json()))
    return check_files(str(a), str(b))


GATE = pose("tornado/start-gate", 0, 0)
B1, B2, B6 = pose("tornado/boat-1", 77, 0), pose("tornado/boat-2", 77, 60), pose("tornado/boat-6", 300, 100)


def test_check_headline_says_why_a_boat_was_not_read(tmp_path):
    before = observation(GATE, B1, B6)
    told = _check(tmp_path, before, with_warnings(observation(GATE, B1), not_read("tornado/boat-6", SMALL),
                                                  not_read("tornado/boat-2", OUT_OF_VIEW)))
    assert told["headline"] == ("Cannot tell: boat-6 was not read in the second table (its sticker shows about 13 px "
                                "wide here; bring the camera nearer or print a bigger sticker (x1.1 to reach 14 px), "
                                "or add light), so its turn is not judged (Ranking Phase).")
    silent = _check(tmp_path, before, with_warnings(observation(GATE, B1), not_read("tornado/boat-1", SMALL)))
    assert silent["headline"] == ("Cannot tell: boat-6 was not read in the second table (under a hand?), so its turn "
                                  "is not judged (Ranking Phase).")
    assert "boat-6 not seen: under a hand?" in silent["warnings"]


def test_check_headline_two_boats_each_with_its_own_reason(tmp_path):
    doc = _check(tmp_path, observation(GATE, B1, B2, B6),
                 with_warnings(observation(GATE, B1), not_read("tornado/boat-6", OUT_OF_VIEW)))
    assert doc["headline"] == ("Cannot tell: boat-2 (under a hand?) and boat-6 (its place is out of the camera's "
                               "view; move the camera or the piece into view) were not read in the second table, "
                               "so their turns are not judged (Ranking Phase).")


def test_live_ranking_turn_log_and_picture_carry_the_reason():
    start = GAME.step(GAME.new_state(parse_settings(GAME, {"course": COURSE})),
                      table({1: (0, 30), 2: (0, -30), 3: (0, 90)}), 0.0).state
    # boat-3 not read for its small sticker; boat-2 under a hand (vision silent); boat-1 is seen, and
    # a stray warning about it must not land on another boat
    seen = with_warnings(table({1: (0, 30)}), not_read("tornado/boat-3", SMALL), not_read("tornado/boat-1", OCCUPIED))
    step = GAME.step(start, seen, 1.0)
    notes = [r.summary for r in step.rulings if r.kind == "warning"]
    assert "boat-2 not seen: under a hand?" in notes
    assert "boat-3 not read: " + SMALL in notes
    assert not any(n.startswith("boat-1") for n in notes)
    hidden = {b["name"]: b for b in GAME.view(step.state).data["ranking"] if b["rank"] is None}
    assert hidden["tornado/boat-2"]["flag"] == "under a hand?" and "why" not in hidden["tornado/boat-2"]
    assert hidden["tornado/boat-3"]["flag"] == "not read" and hidden["tornado/boat-3"]["why"] == SMALL
    labels = [s.text for s in GAME.shapes(step.state, None) if s.role == "uncertain" and s.text]
    assert labels == ["boat-2 not seen: under a hand?", "boat-3 not read: sticker 13 px"]


def test_rank_notes_name_the_reason():
    # deck 6's card lies on the table, so boat-6 races; it is not in view and vision said why
    obs = with_warnings(observation(GATE, B1, pose(card_name(6, "straight-1"), 300, 100)),
                        not_read("tornado/boat-6", OUT_OF_VIEW))
    complete, notes = completeness(obs, (), (), (), history=False)
    assert complete is False
    assert notes[0] == ("boat-6 not read: its place is out of the camera's view; move the camera or the piece "
                        "into view")
