"""Kayak Chaos refereed to the end: turns seen together, kayaks not read, and the rule fixes of a
review round (each a named test at the rule's boundary). Every expected verdict is worked out
by hand from the rulebook section named, not from the engine; the river text form is
'<tiles> <pawn>@<place>.<row>.<lane>' (referee/kayak/position.py).

Tile layouts used (referee/data/catalog.json, upstream row first, lane 0 = right bank):
0A  SSSSS / ..... / ..R.. / .....        1A  ..... / R..D. / ...D. / .R...
7A  ..... / .R.R. / ..... / FFFFF
"""

from __future__ import annotations

import json
import random


from referee.game import Declaration, expected_pieces_of
from referee.kayak import actions as A
from referee.kayak.explain import explain
from referee.kayak.game import GAME
from referee.kayak.playout import deck_mix, play_game
from referee.kayak.position import from_text, to_text, winners
from referee.kayak.rules import apply
from referee.kayak.sequences import explain_turns
from referee.kayak.tiles import tile_book
from referee.rulings import cannot_tell
from tests.conftest import run_cli
from tests.kayak_tools import observation_of, truth_observation

BOOK = tile_book()
START = "0A/1A/4A 1@0.0.1,2@0.0.2,3@0.0.3"


def _steps(*texts: str, state=None):
    """The game stepped through perfect readings of the rivers given; the last Step."""
    state = state or GAME.new_state({})
    step = None
    for t, text in enumerate(texts):
        step = GAME.step(state, observation_of(text), float(t))
        state = step.state
    return step


def _without(observation, name):
    return truth_observation([p.to_json() for p in observation.pieces if p.name != name])


# --- turns seen together ------------------------------------------------------------------------

# by hand: turn 1 pawn-1 Double Paddle (0.0.1 -> 0.2.1), turn 2 pawn-2 Paddle (0.0.2 -> 0.1.2),
# turn 3 pawn-3 Double Paddle (0.0.3 -> 0.2.3: lane 3 of 0A is water), turn 4 pawn-1 Double
# Paddle (0.2.1 -> 1.0.1). Turns 3 and 4 merged: two kayaks moved, so no single turn.
AFTER_2 = "0A/1A/4A 1@0.2.1,2@0.1.2,3@0.0.3"
AFTER_4 = "0A/1A/4A 1@1.0.1,2@0.1.2,3@0.2.3"


def test_two_merged_turns_are_ruled_as_two_turns_seen_together():
    """The still table of turn 3 was missed: the next change holds turns 3 and 4. It used to be
    'illegal: no sequence of at most 3 actions explains the change' and the game stayed pending;
    each of the two turns is legal, so each is ruled legal, marked seen together."""
    step = _steps(START, "0A/1A/4A 1@0.2.1,2@0.0.2,3@0.0.3", AFTER_2, AFTER_4)
    moves = [r for r in step.rulings if r.kind == "move"]
    assert [(r.legal, r.details["seen_together"]) for r in moves] == [(True, 1), (True, 2)]
    assert all(r.summary.startswith("Legal: turn ") for r in moves)
    players = {r.details["player"] for r in moves}
    assert players == {"pawn-1", "pawn-3"} and moves[0].details["sequence"] == moves[1].details["sequence"]
    assert step.state.position == from_text(AFTER_4) and step.state.turns == 4
    assert not any(r.legal is False or r.kind == "pending" for r in step.rulings)


def test_one_turn_merged_change_of_one_kayak_stays_illegal():
    """The boundary: one kayak carried 7 rows is more than one turn of 3 actions can carry
    (Turns), and with 3 players a second turn of the same player needs 4 turns in order."""
    # lane 4 is water all the way down 0A and 1A: pawn-1 goes 7 rows, 0.0.4 -> 1.3.4
    step = _steps("0A/1A/4A 1@0.0.4,2@0.0.2,3@0.0.3", "0A/1A/4A 1@1.3.4,2@0.0.2,3@0.0.3")
    move = next(r for r in step.rulings if r.kind == "move")
    assert move.legal is False and move.summary.startswith("Illegal: ") and "(Turns)" in move.summary


def test_check_reports_two_turns_seen_together_verdict_first(capsys):
    code, out, err = run_cli(capsys, ["kayak", "check", AFTER_2, AFTER_4])
    lines = out.splitlines()
    assert code == 0, err
    assert lines[0] == "Legal: 2 turns seen together, each legal (Turns)"
    assert lines[1:3] == [f"before: {AFTER_2}", f"after:  {AFTER_4}"] and "left out" not in out
    assert lines[3].startswith("  1. pawn-") and lines[4].startswith("  2. pawn-")
    code, out, _ = run_cli(capsys, ["kayak", "check", AFTER_2, AFTER_4, "--json"])
    doc = json.loads(out)
    assert doc["seen_together"] and doc["legal"] is True and len(doc["sequences"][0]["turns"]) == 2


FINAL = "0A/1A/2A/3A/4A/5A/6A/7A"


def test_sequences_that_disagree_on_who_finished_first_cannot_tell():
    """pawn-1 and pawn-2 each paddle onto the Finish row, in two turns seen together: either may
    have gone first (3 players, seating order unknown), so nobody can say who won: "cannot tell",
    naming both sequences, and nothing recorded."""
    before = f"{FINAL} 1@7.2.0,2@7.2.4,3@7.0.2"
    after = f"{FINAL} 1@7.3.0,2@7.3.4,3@7.0.2"
    step = _steps(before, after)
    assert len(step.rulings) == 1 and cannot_tell(step.rulings[0])
    assert "differ in who reached the Finish first" in step.rulings[0].summary
    assert "kayak/pawn-1 first" in step.rulings[0].summary and "kayak/pawn-2 first" in step.rulings[0].summary
    assert step.state.winner is None and step.state.position == from_text(before)


def test_sequences_that_agree_on_the_winner_name_it():
    """Only pawn-1 reaches the Finish; pawn-2 moves elsewhere: whatever the order, pawn-1 wins."""
    step = _steps(f"{FINAL} 1@7.2.0,2@7.0.4,3@7.0.2", f"{FINAL} 1@7.3.0,2@7.2.4,3@7.0.2")
    assert step.state.winner == 1
    assert [r.summary for r in step.rulings if r.kind == "finish"] == [
        "Legal: kayak/pawn-1 reaches the Finish space and wins (Game End)"]


def test_turn_order_follows_the_last_mover():
    """Playing the Game: turns pass in seating order. Two players, pawn-1 carried 7 rows (two
    of its turns). After pawn-2's turn that is pawn-1, pawn-2 (cards discarded only), pawn-1:
    3 turns, seen together. After pawn-1's own turn it would take 4 turns: not explained."""
    before, after = from_text("0A/1A/4A 1@0.0.4,2@0.0.2"), from_text("0A/1A/4A 1@1.3.4,2@0.0.2")
    found = explain_turns(before, after, BOOK, last_mover=2)
    assert found.found and [t.player for t in found.sequences()[0].turns] == [1, 2, 1]
    assert not explain_turns(before, after, BOOK, last_mover=1).found
    # three players: pawn-1's two turns need pawn-2's and pawn-3's between them, 4 turns
    three = explain_turns(from_text("0A/1A/4A 1@0.0.4,2@0.0.2,3@0.0.3"),
                          from_text("0A/1A/4A 1@1.3.4,2@0.0.2,3@0.0.3"), BOOK)
    assert not three.found


# --- a piece not read is not gone -------------------------------------------------------------

def test_start_river_with_a_kayak_not_read_then_its_first_turn_is_legal():
    """pawn-3 was not read on the start river; its player moves it first (Double Paddle from its
    Start space 0.0.3 to 0.2.3). It joins from the Start space and the turn is legal."""
    first = GAME.step(GAME.new_state({}), _without(observation_of(START), "kayak/pawn-3"), 0.0)
    assert "kayaks read: kayak/pawn-1, kayak/pawn-2" in first.rulings[0].summary
    assert "2 kayak(s)" not in first.rulings[0].summary
    step = GAME.step(first.state, observation_of("0A/1A/4A 1@0.0.1,2@0.0.2,3@0.2.3"), 1.0)
    assert [r.legal for r in step.rulings] == [True, True], [r.summary for r in step.rulings]
    assert "kayak/pawn-3 joins" in step.rulings[0].summary
    assert step.state.position == from_text("0A/1A/4A 1@0.0.1,2@0.0.2,3@0.2.3")


def test_a_kayak_not_read_keeps_its_place_and_a_turn_resting_on_it_cannot_tell():
    state = _steps(START).state
    quiet = GAME.step(state, _without(observation_of(START), "kayak/pawn-2"), 1.0)
    assert quiet.rulings == () and quiet.state.position == state.position
    moved = GAME.step(state, _without(observation_of("0A/1A/4A 1@0.2.1,2@0.0.2,3@0.0.3"), "kayak/pawn-2"), 1.0)
    assert [r.summary for r in moved.rulings] == ["Cannot tell: kayak/pawn-2 was not read"]
    assert moved.state.position == state.position and moved.state.turns == 0
    # seen empty: vision looked at its place and it is not there
    empty = _without(observation_of("0A/1A/4A 1@0.2.1,2@0.0.2,3@0.0.3"), "kayak/pawn-2")
    from dataclasses import replace
    gone = GAME.step(state, replace(empty, seen_empty=("kayak/pawn-2",)), 1.0)
    assert gone.rulings[0].summary == "Cannot tell: kayak/pawn-2 left its space and was not read elsewhere"


def test_expected_pieces_are_the_last_readings():
    assert expected_pieces_of(GAME, GAME.new_state({})) == ()  # nothing read yet: nowhere to look
    state = _steps(START).state
    names = {e.name for e in expected_pieces_of(GAME, state)}
    assert names == {"kayak/tile-0", "kayak/tile-1", "kayak/tile-4", "kayak/pawn-1", "kayak/pawn-2", "kayak/pawn-3"}
    pawn2 = observation_of(START).piece("kayak/pawn-2")
    later = GAME.step(state, _without(observation_of(START), "kayak/pawn-2"), 1.0).state
    kept = next(e for e in expected_pieces_of(GAME, later) if e.name == "kayak/pawn-2")
    assert (kept.x_mm, kept.y_mm) == (pawn2.x_mm, pawn2.y_mm) and kept.sigma_mm > pawn2.sigma_mm


# --- review round: wrong rulings, each at its boundary ----------------------------------------
# 1A's double space: lane 3, rows 1 (upstream half) and 2 (downstream half); lanes 2 and 4 water.

def test_side_entry_pushing_the_occupant_out_beside_a_kayak_in_the_double_space_is_illegal():
    """Double Spaces: a second kayak shares a double space only coming in from upstream.
    pawn-1 holds the downstream half, pawn-3 waits behind it in the upstream half; pawn-2
    swerves left into the upstream half, pushing pawn-3 out to lane 4: pawn-2 would sit in the
    double space with pawn-1, come in from the side. It used to pass (the check only fired
    when the half entered was empty)."""
    noted = []
    apply(from_text("0A/1A 1@1.2.3,2@1.1.2,3@1.1.3"), A.Swerve(2, "left"), BOOK, breaches=noted)
    assert [s for s, _ in noted] == ["Double Spaces"]
    # the same push into the downstream half, with a kayak behind in the upstream half
    noted = []
    apply(from_text("0A/1A 1@1.2.3,2@1.2.2,3@1.1.3"), A.Swerve(2, "left"), BOOK, breaches=noted)
    assert [s for s, _ in noted] == ["Double Spaces"]


def test_side_entry_pushing_the_lone_occupant_out_is_legal():
    """The last legal case: the double space holds only the kayak pushed out, so pawn-2 is
    alone in it afterwards (pawn-1 pushed from 1.2.3 to 1.2.4)."""
    out = apply(from_text("0A/1A 1@1.2.3,2@1.2.2"), A.Swerve(2, "left"), BOOK)
    assert out.position == from_text("0A/1A 1@1.2.4,2@1.2.3")


def test_life_ring_on_ones_own_turn_known_from_the_camera_is_refused():
    """Life Ring Cards: played on another player's turn. pawn-2's player declared a Life Ring
    with no turn declared; the camera then shows pawn-2 paddling: it was pawn-2's own turn."""
    state = _steps(START).state
    rung = GAME.declare(state, Declaration("life-ring", "pawn-2"), 0.5).state
    step = GAME.step(rung, observation_of("0A/1A/4A 1@0.0.1,2@0.1.2,3@0.0.3"), 1.0)
    refused = [r for r in step.rulings if r.kind == "violation"]
    assert [r.summary for r in refused] == ["Illegal: pawn-2 played a Life Ring on their own turn (Life Ring Cards)"]
    assert any(r.kind == "pending" for r in step.rulings)
    # the boundary: pawn-1 paddles instead, so the ring was played on another player's turn
    other = GAME.step(rung, observation_of("0A/1A/4A 1@0.1.1,2@0.0.2,3@0.0.3"), 1.0)
    assert [r.legal for r in other.rulings] == [True]


def test_declared_turn_of_pawn_1_and_pawn_2_paddles_is_illegal():
    """Turns: pawn-1's turn was declared; pawn-2 paddling unpushed is not pawn-1's turn."""
    state = GAME.declare(_steps(START).state, Declaration("turn", "pawn-1"), 0.5).state
    step = GAME.step(state, observation_of("0A/1A/4A 1@0.0.1,2@0.1.2,3@0.0.3"), 1.0)
    move = next(r for r in step.rulings if r.kind == "move")
    assert move.legal is False
    assert move.summary.startswith("Illegal: pawn-2 paddled on pawn-1's turn (Turns)")
    # the boundary: pawn-1 paddles its own kayak on its own turn
    own = GAME.step(state, observation_of("0A/1A/4A 1@0.1.1,2@0.0.2,3@0.0.3"), 1.0)
    assert [r.legal for r in own.rulings] == [True] and "(pawn-1's)" in own.rulings[0].summary


def test_declared_turn_a_kayak_pushed_by_the_player_is_legal():
    """Pushing Kayaks: pawn-1 swerves left into pawn-2's space (0.1.2), pushing it to 0.1.3:
    pawn-2 moved, but by pawn-1's card on pawn-1's turn."""
    state = GAME.declare(_steps("0A/1A/4A 1@0.1.1,2@0.1.2,3@0.0.4").state, Declaration("turn", "pawn-1"), 0.5).state
    step = GAME.step(state, observation_of("0A/1A/4A 1@0.1.2,2@0.1.3,3@0.0.4"), 1.0)
    assert [r.legal for r in step.rulings] == [True]


def test_advanced_rules_two_paddles_cite_the_advanced_rules(capsys):
    """Advanced Rules: one card of each type a turn. pawn-2 paddles, swerves left and paddles
    again (legal without the Advanced Rules); with them the breach is the second Paddle, which
    used to be reported as 'would move onto a rock'."""
    before, after = "0A/4A/1Ar+1 1@2.2.1,2@0.2.1,3@0.1.1", "0A/4A/1Ar+1 1@2.2.1,2@1.0.2,3@0.1.1"
    assert explain(from_text(before), from_text(after), BOOK).legal
    code, out, _ = run_cli(capsys, ["kayak", "check", before, after, "--advanced"])
    first = out.splitlines()[0]
    assert code == 0 and first.startswith("Illegal: paddle played more than once in one turn (Advanced Rules)")
    assert "rock" not in first


def test_a_pawn_written_twice_in_a_text_position_is_refused(capsys):
    code, out, err = run_cli(capsys, ["kayak", "check", "0A/1A 1@0.0.1,1@0.1.1", "0A"])
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "pawn 1 appears twice in '0A/1A 1@0.0.1,1@0.1.1'" in err


# --- seeded random games, missed tables and pieces not read --------------------------------------

PLAYOUT_SEEDS = (0, 7, 9)  # any seeds: 2-4 kayaks, 144-202 turns, each to a win
CUT = "search for 2-3 turns seen together stopped"


def _referee_the_game(seed: int) -> tuple[bool, int]:
    """One seeded game shown 1-3 turns at a time (the tables between missed) and now and then
    with a kayak not read on a table first seen. Asserts after every step that nothing is ruled
    illegal; returns (followed to the end with the game's river and winner, turns followed)."""
    rng = random.Random(seed)
    turns = list(play_game(seed, max_turns=2000, book=BOOK, mix=deck_mix()))
    assert winners(turns[-1].after, BOOK)
    state = GAME.step(GAME.new_state({}), observation_of(to_text(turns[0].before)), 0.0).state
    i, t = 0, 1.0
    while i < len(turns):
        i = min(len(turns), i + rng.choice((1, 1, 2, 3)))
        table = observation_of(to_text(turns[i - 1].after))
        shown = [table]
        if rng.random() < 0.2:
            pawn = rng.choice([p.name for p in table.pieces if p.name.startswith("kayak/pawn-")])
            shown.insert(0, _without(table, pawn))
        for observation in shown:
            step = GAME.step(state, observation, t)
            t += 1.0
            bad = [r.summary for r in step.rulings if r.legal is False]
            assert not bad, (seed, i, to_text(state.position), to_text(turns[i - 1].after), bad)
            if any(CUT in r.summary for r in step.rulings):
                return False, i  # "cannot tell", never "illegal"; the river stays behind from here
            state = step.state
    assert state.position == turns[-1].after
    assert state.winner == winners(turns[-1].after, BOOK)[0]
    return True, i


def test_random_games_with_merged_turns_and_unread_pieces_are_never_ruled_illegal():
    """After OpenSpiel's games_sim_test: seeded random games of legal turns (card kinds drawn as
    the catalog's deck holds them) from the one-tile river to the Finish, refereed with tables
    missed and kayaks not read. Nothing legal is ruled illegal; the games followed to the end
    have the game's river and winner.

    One limit is measured, not hidden: 3 merged turns with pushes and river cards can exhaust
    the search budget (sequences.BUDGET). The referee then says "cannot tell" (never
    "illegal"), but its river stays behind the table, so later changes hold more than 3 turns:
    such a game is followed up to there, and it must stay the exception."""
    results = {seed: _referee_the_game(seed) for seed in PLAYOUT_SEEDS}
    # measured (docs/whole-games-kayak.md): seed 9 to the win; 0 and 7 cut at turns 185/202 and 71/144
    assert any(done for done, _ in results.values()), results
    assert all(followed >= 60 for _, followed in results.values()), results


def test_back_on_track_when_two_legal_turns_reach_the_table_while_an_illegal_one_is_pending():
    """An illegal table (pawn-1 carried 7 rows down lane 4) is pending; the players put pawn-1
    back and play two legal turns before the camera sees a still table again: judged from the
    last legal river, they are two turns seen together, and the game goes on (referee/pending.py
    words the resumption)."""
    legal = "0A/1A/4A 1@0.0.4,2@0.0.2,3@0.0.3"
    held = _steps(legal, "0A/1A/4A 1@1.3.4,2@0.0.2,3@0.0.3")
    assert any(r.kind == "pending" for r in held.rulings)
    # pawn-2 Paddle (0.0.2 -> 0.1.2), pawn-3 Double Paddle (0.0.3 -> 0.2.3): two legal turns
    step = GAME.step(held.state, observation_of("0A/1A/4A 1@0.0.4,2@0.1.2,3@0.2.3"), 2.0)
    moves = [r for r in step.rulings if r.kind == "move"]
    assert [(r.legal, r.details["seen_together"]) for r in moves] == [(True, 1), (True, 2)]
    assert step.state.guard.illegal is None and step.state.position == from_text("0A/1A/4A 1@0.0.4,2@0.1.2,3@0.2.3")


# --- the seating order the turns so far show -----------------------------------------------------

def test_the_seating_order_is_read_from_the_last_turns_ruled():
    """Playing the Game: play passes to the left, so the order of the players is fixed. Turns
    ruled 1, 2, 3, 1, 2 show it; one pair (1 then 2) fixes it among 3 players; among 4 it does
    not; after a turn missed inside a merge (3, 1, 3: pawn-2's turn taken for a push) the turns
    since show it again (1, 3, 1, 2: 1 then 2); turns no seating fits show none."""
    from referee.kayak.game import seating_seen

    assert seating_seen((1, 2, 3, 1, 2), (1, 2, 3)) == (1, 2, 3)
    assert seating_seen((1, 3), (1, 2, 3)) == (1, 3, 2)
    assert seating_seen((1, 2), (1, 2, 3, 4)) is None
    assert seating_seen((3, 1, 3, 1, 2), (1, 2, 3)) == (1, 2, 3)
    assert seating_seen((3, 1, 3), (1, 2, 3)) == (1, 3, 2)  # the last pair alone: 1 then 3
    assert seating_seen((3, 3), (1, 2, 3)) is None
    assert seating_seen((2,), (1, 2, 3)) is None


# Seeded whole game (bench-games kayak 105, its truth from the playout): pawn-2 took the last
# turn ruled, the turns so far went pawn-1, pawn-2, pawn-3; then pawn-3 (Double Paddle, Paddle,
# Swerve right) and pawn-1 (Double Paddle, laying 3A) were seen together. pawn-1 then pawn-3
# makes the same river, but pawn-1's turn is not next in that seating.
SEATED_BEFORE = "0A/4Br/6B/2Ar/5Br 1@4.3.2,2@3.2.3,3@3.1.3"
SEATED_AFTER = "0A/4Br/6B/2Ar/5Br/3Ar 1@5.1.2,2@4.1.3,3@4.0.2"


def test_turns_seen_together_follow_the_seating_order_seen_so_far():
    before, after = from_text(SEATED_BEFORE), from_text(SEATED_AFTER)
    seated = explain_turns(before, after, BOOK, False, (1, 2, 3), 2, seating=(1, 2, 3))
    assert seated.found and [t.player for t in seated.sequences()[0].turns] == [3, 1]
    # pawn-3 pushed pawn-2 on its way (Pushing Kayaks); pawn-1 then laid 3A
    assert seated.sequences()[0].turns[0].after == from_text("0A/4Br/6B/2Ar/5Br 1@4.3.2,2@4.1.3,3@4.0.2")
    # with no seating known, some order of the two turns is still found (the river is the same)
    unseated = explain_turns(before, after, BOOK, False, (1, 2, 3), 2)
    assert unseated.found and sorted(t.player for t in unseated.sequences()[0].turns) == [1, 3]


def test_the_pawn_whose_turn_comes_next_is_expected_anywhere_a_turn_can_carry_it():
    """Turns: up to three actions; Double Paddle / Double Swerve Cards: a card moves a kayak at most
    two spaces. So one turn carries a kayak at most 3 x 2 = 6 spaces (240 mm with the catalog's
    40 mm spaces), a spread of half that (120 mm) about its last place. Playing the Game: turns
    pass to the left, so once pawn-1 then pawn-2 have moved (seating 1, 2, 3), pawn-3 is next."""
    turn_spread = 3 * 2 * BOOK.space_mm / 2
    assert BOOK.space_mm == 40 and turn_spread == 120
    first = _steps(START).state
    unknown = {e.name: e.sigma_mm for e in expected_pieces_of(GAME, first)}  # no turn yet: anyone's
    assert all(unknown[f"kayak/pawn-{p}"] == turn_spread for p in (1, 2, 3))
    assert unknown["kayak/tile-1"] < 10
    state = _steps(START, "0A/1A/4A 1@0.1.1,2@0.0.2,3@0.0.3", "0A/1A/4A 1@0.1.1,2@0.1.2,3@0.0.3").state
    assert state.movers == (1, 2)
    sigma = {e.name: e.sigma_mm for e in expected_pieces_of(GAME, state)}
    assert sigma["kayak/pawn-3"] == turn_spread
    assert sigma["kayak/pawn-1"] < 10 and sigma["kayak/pawn-2"] < 10  # their measurement sigma, as read
    declared = GAME.declare(state, Declaration("turn", "pawn-1"), 3.0).state
    sigma = {e.name: e.sigma_mm for e in expected_pieces_of(GAME, declared)}
    assert sigma["kayak/pawn-1"] == turn_spread and sigma["kayak/pawn-3"] < 10
