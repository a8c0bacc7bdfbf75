"""Two-photo checks say what they cannot know (issue 21, "the page and the commands" item 5).

A photo shows the board, not the game's history. Kang's rulebook (How to get an alfalfa
token) forbids a coach who has just scored from scoring on their next turn: from two photos
that rule cannot be judged, so a scoring move is "cannot tell", never "legal", and the check
names the rule; given the positions with their no-score flags (the history), it is judged.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.kang.position import Position
from tests.test_kang_game import FakeTools, observation_of, run
from tests.test_tornado_check import GATE, _on_card, card, run_check
from tests.tornado_pieces import observation, pose

SCORER = "6/s1m1l1/6/6/6/6 - sssmmmlll A 1-0 {flag}"  # A's medium on b2 can leave across B's edge
NO_SCORE = "Kang, How to get an alfalfa token"


def _scored(pos: Position) -> Position:
    return Position(pos.cells.replace("m", ".", 1), (pos.zones[0], (3, 4, 3)), "B", (2, 0), (True, False))


def _photos(before: Position, after: Position) -> FakeTools:
    return FakeTools({"before.jpg": observation_of(before), "after.jpg": observation_of(after)})


def test_kang_check_from_photos_does_not_call_a_score_legal(capsys):
    pos = Position.parse(SCORER.format(flag="A"))  # A scored last turn: this second score is illegal
    code, out = run("check", ["before.jpg", "after.jpg", "--json"], _photos(pos, _scored(pos)), capsys)
    doc = json.loads(out)
    assert code == 0 and doc["legal"] is None and doc["verdict"] == "cannot tell"
    assert any(r.startswith(NO_SCORE) for r in doc["not_judged"]) and "needs the history" in doc["summary"]


def test_kang_check_with_positions_judges_the_no_score_rule(tmp_path, capsys):
    for flag, legal in (("-", True), ("A", False)):  # the last legal case and the first illegal one
        pos = Position.parse(SCORER.format(flag=flag))
        a, b = tmp_path / f"a{flag}.json", tmp_path / f"b{flag}.json"
        a.write_text(json.dumps(pos.to_json()))
        b.write_text(json.dumps(_scored(pos).to_json()))
        doc = json.loads(run("check", [str(a), str(b), "--json"], FakeTools(), capsys)[1])
        assert doc["legal"] is legal and doc["not_judged"] == []
        if not legal:
            assert doc["rule"]["text"] == NO_SCORE


def test_kang_check_from_photos_names_the_rules_it_cannot_see_for_a_plain_move(capsys):
    pos = Position.start()
    from referee.kang.moves import legal_moves, push

    move = next(m for m in legal_moves(pos) if not m.exits)
    code, out = run("check", ["before.jpg", "after.jpg", "--json"], _photos(pos, push(pos, move)), capsys)
    doc = json.loads(out)
    assert doc["legal"] is True and not any(r.startswith(NO_SCORE) for r in doc["not_judged"])
    assert [r.split(" (")[0] for r in doc["not_judged"]] == ["Kang, Gameplay", "Kang, End of the Game"]


SESSION = Path(__file__).resolve().parent.parent / "samples" / "sessions" / "kang-game"


@pytest.mark.skipif(not (SESSION / "frames" / "000091.jpg").is_file(), reason="kang-game session not rendered")
def test_kang_check_on_the_sessions_illegal_second_score(capsys):
    """The issue's reproduction: frames 84 -> 91 of kang-game are A's second score in a row."""
    pytest.importorskip("cv2")
    from tests.conftest import run_cli

    frames = SESSION / "frames"
    code, out, err = run_cli(capsys, ["kang", "check", str(frames / "000084.jpg"), str(frames / "000091.jpg"),
                                      "--camera-file", str(SESSION / "camera.json"), "--json"])
    doc = json.loads(out)
    assert code == 0 and doc["legal"] is None, err
    assert any(r.startswith(NO_SCORE) for r in doc["not_judged"])


def test_tornado_check_lists_the_rules_that_need_the_history(tmp_path):
    first, boat = _on_card()
    doc = run_check(tmp_path, observation(GATE, first, boat),
                    observation(GATE, first, card(1, "straight-1", 187, 0, nth=1), pose("tornado/boat-1", 187, 0)))
    sections = [r.split(" (")[0] for r in doc["not_judged"]]
    assert "Tornado Splash, Action Phase" in sections and "Tornado Splash, Final Rankings" in sections
