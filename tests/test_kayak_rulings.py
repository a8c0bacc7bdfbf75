"""Kayak Chaos rulings at the edges found by an independent referee (issue 23) and by hand
(issue 21): each reproduction is a named test, and each rule is tested at its boundary, the
last legal case beside the first illegal one. Expected verdicts come from the rulebook
sections named, worked out by hand, not from the engine."""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from referee.kayak import actions as A
from referee.kayak.explain import LEFT_OUT, explain
from referee.kayak.game import GAME
from referee.kayak.playout import play_game
from referee.kayak.position import Position, Space, from_text, to_text, winners
from referee.kayak.rules import apply
from referee.kayak.tiles import ROCK, tile_book
from tests.conftest import run_cli
from tests.kayak_tools import findable, observation_of

BOOK = tile_book()
KAYAK_DOC = Path(__file__).resolve().parent.parent / "docs" / "kayak.md"


def _check(capsys, before: str, after: str, *extra: str) -> tuple[int, str, str]:
    return run_cli(capsys, ["kayak", "check", before, after, *extra])


def _verdict(capsys, before: str, after: str) -> dict:
    code, out, err = _check(capsys, before, after, "--json")
    assert code == 0, err
    return json.loads(out)


def _readings(doc: dict) -> list[list[str]]:
    return [[a["words"] for a in r["actions"]] for r in doc["readings"]]


# --- issue 23, 1: the opening river -----------------------------------------------------------

def test_opening_one_tile_river_is_a_position(capsys):
    """The first turn of every game starts from the Start tile alone; '0A 1@0.0.1' has no '/'
    and is still a position. Pawn-1 goes 4 rows down, onto row 0 of the new tile: two Double
    Paddles (4 spaces), the second laying tile 1A."""
    doc = _verdict(capsys, "0A 1@0.0.1", "0A/1A 1@1.0.1")
    assert doc["legal"] and ["double-paddle 1 down", "double-paddle 1 down"] in _readings(doc)
    assert doc["readings"][0]["placements"] == [{"tile": "1A", "placer": "kayak/pawn-1"}]
    code, out, _ = _check(capsys, "0A", "0A")  # an empty one-tile river, no kayaks field
    assert code == 0 and "no change on the river" in out


@pytest.mark.parametrize("text, says", [
    ("0C 1@0.0.1", "river tile '0C' in '0C 1@0.0.1' is not like '4B'"),
    ("0A 1@0.0", "kayak '1@0.0' in '0A 1@0.0' is not like '1@2.1.3' (pawn@place.row.lane)"),
    ("0A/ 1A 1@0.0.1", "has 3 fields"),
    ("0A/ 1@0.0.1", "river tile '' in '0A/ 1@0.0.1'"),
    ("1A/2A 1@0.0.1", "the river has no Start tile 0"),
    ("0A 1@0.4.0", "is not a space of this 1-tile river (places 0-0, rows 0-3, lanes 0-4)"),
])
def test_malformed_position_says_what_is_wrong(capsys, text, says):
    code, out, err = _check(capsys, text, "0A")
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert says in err and "no such image file" not in err


def test_a_file_name_is_still_a_file(capsys):
    code, _, err = _check(capsys, "photo-before", "0A")
    assert code == 2 and "no such image file: photo-before" in err


# --- issue 23, 2: a position that breaks a rule is ruled, not refused -------------------------

@pytest.mark.parametrize("before, after, rule", [
    # Rocks: 0A has a rock at row 2, lane 2; the kayak was paddled two rows onto it
    ("0A/1A 1@0.0.2", "0A/1A 1@0.2.2", "Kayak Chaos, Rocks"),
    # The River: tiles 5 lanes apart share none of their 5 lanes
    ("0A/1A 1@0.0.2", "0A/1A+5 1@0.0.2", "Kayak Chaos, The River"),
    # the Start tile is exempt from Weather Shift, Tip the Kayak and Whirlpool Cards
    ("0A/1A 1@0.0.2", "0A+1/1A 1@0.0.2", "Kayak Chaos, Weather Shift Cards"),
    ("0A/1A 1@0.0.2", "0Ar/1A 1@0.3.2", "Kayak Chaos, Tip the Kayak Cards"),
    ("0A/1A 1@0.0.2", "1A/0A 1@1.0.2", "Kayak Chaos, Whirlpool Cards"),
    # the same on the one-tile river of the first turn (issue 23, 1: these read as file names)
    ("0A 1@0.0.1", "0A+1 1@0.0.1", "Kayak Chaos, Weather Shift Cards"),
    ("0A 1@0.0.1", "0Ar 1@0.3.3", "Kayak Chaos, Tip the Kayak Cards"),
    # and so is the Finish tile
    ("0A/1A/2A/3A/4A/5A/6A/7A 1@0.0.2", "0A/1A/2A/3A/4A/5A/7A/6A 1@0.0.2", "Kayak Chaos, Whirlpool Cards"),
    ("0A/1A/2A/3A/4A/5A/6A/7A 1@0.0.2", "0A/1A/2A/3A/4A/5A/6A/7A-1 1@0.0.2", "Kayak Chaos, Weather Shift Cards"),
])
def test_rule_breaking_after_position_is_ruled_illegal_not_refused(capsys, before, after, rule):
    doc = _verdict(capsys, before, after)
    assert doc["legal"] is False and rule in doc["rules"], doc["summary"]
    # the verdict first, then the rule's section (Kayak Chaos, <section>)
    assert doc["summary"].startswith("Illegal: ") and f"({rule.split(', ', 1)[1]})" in doc["summary"]
    assert doc["readings"]  # the nearest reading is given, as for any other illegal change


def test_pawn_on_a_rock_is_named_in_the_ruling(capsys):
    doc = _verdict(capsys, "0A/1A 1@0.0.2", "0A/1A 1@0.2.2")
    assert doc["summary"] == ("Illegal: kayak/pawn-1 would move onto a rock at 0.2.2 (Rocks). "
                              "Double Paddle pawn-1 downstream")
    assert doc["position_breaches"][0]["reason"] == "kayak/pawn-1 at 0.2.2 is on a rock of tile 0A"


def _mirror(space: Space, index: int) -> Space:
    return Space(index, BOOK.rows - 1 - space.row, BOOK.lanes - 1 - space.lane)


def _broken(pos: Position, kind: str, rng: random.Random) -> tuple[Position, str] | None:
    """A position a player could lay out from ``pos`` by breaking one rule, and that rule's
    section (the truth, set by what was changed, not by the engine); None when ``pos`` does
    not allow that kind."""
    tiles, kayaks, last = list(pos.tiles), dict(pos.kayaks), len(pos.tiles) - 1
    if kind == "kayak on a rock":
        rocks = [Space(i, r, ln) for i, rt in enumerate(tiles) for r in range(BOOK.rows) for ln in range(BOOK.lanes)
                 if BOOK.cell(rt, r, ln) == ROCK and pos.occupant_free(Space(i, r, ln))]
        if not rocks or not kayaks:
            return None
        kayaks[rng.choice(sorted(kayaks))] = rng.choice(rocks)
        return Position.make(tiles, kayaks), "Rocks"
    if kind == "tile 5 lanes off":
        if last < 1:
            return None
        i = rng.randrange(1, last + 1)
        tiles[i] = replace(tiles[i], shift=tiles[i - 1].shift + rng.choice((5, -5)))
        return Position.make(tiles, kayaks), "The River"
    i = 0 if kind.startswith("Start") else last
    if tiles[i].tile != (BOOK.start if i == 0 else BOOK.finish):
        return None
    if kind.endswith("shifted"):
        tiles[i] = replace(tiles[i], shift=tiles[i].shift + rng.choice((1, -1)))
        return Position.make(tiles, kayaks), "Weather Shift Cards"
    if kind.endswith("turned"):
        tiles[i] = replace(tiles[i], rotation=180 - tiles[i].rotation)
        kayaks = {p: _mirror(s, i) if s.index == i else s for p, s in kayaks.items()}
        return Position.make(tiles, kayaks), "Tip the Kayak Cards"
    j = 1 if i == 0 else last - 1
    if j < 0 or j > last or j == i:
        return None
    # swapped with its neighbour, each taking the other's shift; the kayaks go with their tile
    tiles[i], tiles[j] = replace(tiles[j], shift=tiles[i].shift), replace(tiles[i], shift=tiles[j].shift)
    kayaks = {p: replace(s, index=i + j - s.index) if s.index in (i, j) else s for p, s in kayaks.items()}
    return Position.make(tiles, kayaks), "Whirlpool Cards"


BREAKS = ("kayak on a rock", "tile 5 lanes off", "Start shifted", "Start turned", "Start swapped",
          "Finish shifted", "Finish turned", "Finish swapped")


def test_seeded_rule_breaking_changes_are_all_ruled_never_refused():
    """Positions from seeded games, each changed by breaking one rule as a player could on the
    table: every one parses from its text form and is ruled illegal under the rule broken,
    with a reading. Cases per kind are counted so that none goes untested."""
    rng, tried = random.Random(23), Counter()
    for seed in range(120):
        kind = BREAKS[seed % len(BREAKS)]
        turns = list(play_game(seed, max_turns=3000 if kind.startswith("Finish") else rng.randint(1, 60), book=BOOK))
        made = _broken(turns[-1].after, kind, rng)
        if made is None:
            continue
        after, section = made
        verdict = explain(turns[-1].after, from_text(to_text(after)), BOOK)
        assert not verdict.legal and verdict.readings, (kind, to_text(turns[-1].after), to_text(after))
        assert f"Kayak Chaos, {section}" in verdict.rules, (kind, to_text(after), verdict.summary())
        tried[kind] += 1
    assert set(tried) == set(BREAKS) and min(tried.values()) >= 5, tried


@pytest.mark.parametrize("text, says", [
    ("0A/1A 1@0.1.1,2@0.1.1", "share space 0.1.1"),
    ("0A/1A/1B 1@0.1.1", "tile 1 appears 2 times"),
    ("0A/9A 1@0.1.1", "no such tile, side or rotation"),
])
def test_text_that_is_not_a_position_is_still_refused(capsys, text, says):
    code, _, err = _check(capsys, "0A/1A 1@0.1.1", text)
    assert code == 2 and says in err and err.count("\n") == 1


# --- issue 23, 3: every reading, or say what is left out -------------------------------------

def test_left_out_reading_of_the_issue_example_is_stated():
    """paddle 4 up, weather-shift 4 left, paddle 4 down is a legal turn (worked by hand: 0B
    row 1 lane 4 is water, tile 4 may shift, pawn-4 comes back) that explain leaves out,
    because pawn-4 ends where it began; LEFT_OUT, printed by `kayak check` and written in the
    Kayak docs (docs/kayak.md), says exactly that."""
    before = from_text("0B/4A-1 1@0.1.3,2@0.1.2,3@0.2.0,4@0.2.4")
    after = from_text("0B/4A 1@0.1.3,2@0.1.2,3@0.2.0,4@0.2.4")
    pos = before
    missed = (A.Paddle(4, "up"), A.WeatherShift(4, "left"), A.Paddle(4, "down"))
    for action in missed:
        pos = apply(pos, action, BOOK).position
    assert pos == after
    got = explain(before, after, BOOK)
    listed = [r.actions for r in got.readings]
    assert (A.WeatherShift(4, "left"),) in listed and missed not in listed
    assert "move a kayak which ends the turn on the space where it began" in LEFT_OUT
    doc = " ".join(KAYAK_DOC.read_text().split())
    assert " ".join(LEFT_OUT.split()) in doc, "docs/kayak.md must state LEFT_OUT word for word"


def test_check_prints_the_verdict_first_and_what_is_left_out_only_when_it_matters(capsys):
    """The first line is the verdict in plain words, then the two rivers; the short "left out"
    line only under a verdict that is not legal (a reading the search leaves out could matter
    there), and --json keeps the whole LEFT_OUT."""
    code, out, _ = _check(capsys, "0A/1A 1@0.0.0", "0A/1A 1@0.2.0")
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("Legal: Double Paddle pawn-1 downstream (Double Paddle Cards)")
    assert lines[1] == "before: 0A/1A 1@0.0.0" and "left out" not in out
    code, out, _ = _check(capsys, "0A/1A 1@0.0.0", "0A/1A 1@1.3.0")  # 7 rows: no turn carries it
    assert code == 0 and out.startswith("Illegal: ") and out.rstrip().splitlines()[-1].startswith("left out: ")
    assert _verdict(capsys, "0A/1A 1@0.0.0", "0A/1A 1@1.3.0")["left_out"] == LEFT_OUT


# --- issue 23: whole games from the one-tile river to a win ----------------------------------

GAME_SEEDS = (0, 1, 8)  # any seeds: games of 190-280 turns, every one reaching a win


@pytest.mark.parametrize("seed", GAME_SEEDS)
def test_seeded_game_from_the_one_tile_river_to_a_win(capsys, seed):
    """A seeded random game of legal turns from the Start tile alone until a kayak reaches
    the Finish: `kayak check` on every turn, from the text forms alone, rules it legal and
    lists the played actions wherever the search keeps them (findable); the game object
    names the first finisher the winner."""
    turns = list(play_game(seed, max_turns=2000, book=BOOK))
    assert len(turns[0].before.tiles) == 1 and winners(turns[-1].after, BOOK)
    state = GAME.step(GAME.new_state({}), observation_of(to_text(turns[0].before)), 0.0).state
    listed = 0
    for n, turn in enumerate(turns, 1):
        before, after = to_text(turn.before), to_text(turn.after)
        state = GAME.step(state, observation_of(after), float(n)).state
        if turn.before == turn.after:
            continue
        doc = _verdict(capsys, before, after)
        assert doc["legal"], (seed, n, before, after, doc["summary"])
        played = [A.words(a) for a in turn.actions if a.kind != "discard"]
        if findable(turn):
            assert played in _readings(doc), (seed, n, before, played)
            listed += 1
    assert state.winner == winners(turns[-1].after, BOOK)[0]
    assert listed > len(turns) // 2


# --- issue 21, wrong ruling 1: Double Spaces ---------------------------------------------------
# tile 1A: a double space in lane 3, rows 1-2. Pawn-1 holds its downstream half (1.2.3).

SHARED = "0A/1A/2A 1@1.2.3,2@1.1.4,3@1.0.3"


def test_no_joining_a_kayak_in_a_double_space_from_the_side(capsys):
    """Issue 21, 1: pawn-2 swerves into the empty upstream half beside pawn-1. A second kayak
    may share a double space only by coming in from upstream, behind the first."""
    code, out, _ = _check(capsys, SHARED, "0A/1A/2A 1@1.2.3,2@1.1.3,3@1.0.3")
    assert code == 0 and out.splitlines()[0] == (
        "Illegal: kayak/pawn-2 would move into the double space at 1.1.3 from the side, where kayak/pawn-1 "
        "already is (Double Spaces). Swerve pawn-2 right")


def test_double_space_boundary_behind_is_legal_beside_is_not():
    # last legal: pawn-3 paddles in from upstream and waits behind pawn-1
    assert apply(from_text(SHARED), A.Paddle(3, "down"), BOOK).position == from_text(
        "0A/1A/2A 1@1.2.3,2@1.1.4,3@1.1.3")
    # legal too: an empty double space entered from the side is ridden to its downstream half
    assert apply(from_text("0A/1A 2@1.1.4"), A.Swerve(2, "right"), BOOK).position == from_text("0A/1A 2@1.2.3")
    # first illegal: the same swerve with pawn-1 already in the double space, by card, free
    # move or push (pawn-2 pushes pawn-3 left from lane 2 into lane 3)
    for pos, action in ((SHARED, A.Swerve(2, "right")), (SHARED, A.FreeMove(2, "right")),
                        ("0A/1A 1@1.2.3,2@1.1.1,3@1.1.2", A.Swerve(2, "left"))):
        noted = []
        apply(from_text(pos), action, BOOK, breaches=noted)
        assert [s for s, _ in noted] == ["Double Spaces"], (pos, action)


# --- issue 21, wrong ruling 2: the Finish tile is the last tile drawn -------------------------

def test_finish_tile_laid_while_tiles_remain_is_illegal(capsys):
    """Issue 21, 2: tiles 2-6 were never drawn, so the Finish tile cannot come up yet."""
    doc = _verdict(capsys, "0A/1A 1@1.3.2", "0A/1A/7A 1@2.0.2")
    assert doc["legal"] is False and doc["rules"] == ["Kayak Chaos, Game Setup"]
    assert "tile(s) 2, 3, 4, 5, 6 are still in the stack" in doc["summary"]


def test_finish_tile_boundary_after_every_tile_and_one_short():
    # last legal: tiles 1-6 all in the river, the Finish tile comes next
    doc = explain(from_text("0A/1A/2A/3A/4A/5A/6A 1@6.3.2"), from_text("0A/1A/2A/3A/4A/5A/6A/7A 1@7.0.2"), BOOK)
    assert doc.legal and [A.words(a) for a in doc.readings[0].actions] == ["paddle 1 down"]
    # first illegal: tile 6 still in the stack
    doc = explain(from_text("0A/1A/2A/3A/4A/5A 1@5.3.2"), from_text("0A/1A/2A/3A/4A/5A/7A 1@6.0.2"), BOOK)
    assert not doc.legal and doc.rules == ["Kayak Chaos, Game Setup"] and "tile(s) 6 are" in doc.summary()


# --- issue 21, tests that pin rules: the first finisher wins, a later one does not ------------

FINAL = "0A/1A/2A/3A/4A/5A/6A/7A"


def test_the_first_finisher_keeps_the_win_when_a_second_finishes():
    """Game End: the first kayak on a Finish space wins. Pawn-2 gets there first and pawn-1
    (the lower number, whom a 'first of the finishers' slip would pick) a turn later."""
    state = GAME.step(GAME.new_state({}), observation_of(f"{FINAL} 1@7.2.0,2@7.2.4"), 0.0).state
    first = GAME.step(state, observation_of(f"{FINAL} 1@7.2.0,2@7.3.4"), 1.0)
    assert first.state.winner == 2
    finished = [r.summary for r in first.rulings if r.kind == "finish"]
    assert finished == ["Legal: kayak/pawn-2 reaches the Finish space and wins (Game End)"]
    second = GAME.step(first.state, observation_of(f"{FINAL} 1@7.3.0,2@7.3.4"), 2.0)
    assert second.state.winner == 2 and not [r for r in second.rulings if r.kind == "finish"]
    assert [(r.kind, r.legal) for r in second.rulings] == [("move", True)]
    assert GAME.view(second.state).data["winner"] == "kayak/pawn-2"


def test_a_kayak_pushed_onto_the_finish_is_first_there():
    """Game End with Pushing Kayaks: pawn-1 paddles down into pawn-2, pushing it onto the
    Finish row, then swerves and paddles onto the Finish row itself. Pawn-2 got there first
    and wins, though pawn-1 has the lower number and was the one playing."""
    state = GAME.step(GAME.new_state({}), observation_of(f"{FINAL} 1@7.1.0,2@7.2.0"), 0.0).state
    step = GAME.step(state, observation_of(f"{FINAL} 1@7.3.1,2@7.3.0"), 1.0)
    move = next(r for r in step.rulings if r.kind == "move")
    assert move.legal and move.details["readings"][0]["text"] == (
        "Paddle pawn-1 downstream then Swerve pawn-1 left then Paddle pawn-1 downstream")
    assert step.state.winner == 2
    assert [r.summary for r in step.rulings if r.kind == "finish"] == [
        "Legal: kayak/pawn-2 reaches the Finish space and wins (Game End)"]


def test_first_to_finish_says_when_the_readings_disagree():
    """Two kayaks each paddled onto the Finish row (an illegal turn: two movers): one reading
    has pawn-1 first, another pawn-2; nobody can say who was first, so both are named. With a
    single new finisher there is no question."""
    from referee.kayak.explain import first_to_finish

    verdict = explain(from_text(f"{FINAL} 1@7.2.0,2@7.2.2"), from_text(f"{FINAL} 1@7.3.0,2@7.3.2"), BOOK)
    orders = {tuple(a.pawn for a in r.actions) for r in verdict.readings}
    assert not verdict.legal and orders == {(1, 2), (2, 1)}
    assert first_to_finish(verdict, BOOK) == (1, 2)
    one = explain(from_text(f"{FINAL} 1@7.2.0,2@7.3.2"), from_text(f"{FINAL} 1@7.3.0,2@7.3.2"), BOOK)
    assert one.legal and first_to_finish(one, BOOK) == (1,)
