"""A whole Kang game refereed to the end: turns seen together, a kangaroo not read, back on
track by itself (referee/kang/judge.py, sequences.py, step.py and referee/pending.py).

Every verdict below was worked out by hand from the rulebook (and SPEC section 3) before the
code ran; the reasoning is in each docstring. Positions are in the text form (rows 6 down to
1), moves in the path notation of referee/kang/position.py. The seeded playout at the end
follows OpenSpiel's games_sim_test: random legal games, tables dropped and kangaroos unread
at random, the referee never calling a legal sequence illegal and ending on the true score.
"""

from __future__ import annotations

import random

import pytest

from referee.kang.board import Geometry
from referee.kang.explain import explain
from referee.kang.game import GAME, KangState
from referee.kang.moves import PASS, legal_moves, push
from referee.kang.position import COACHES, FILES, Move, Position, square_name
from referee.observation import Observation, PiecePose
from referee.pending import PENDING_KIND, RESUMED
from referee.rulings import cannot_tell
from tests import kang_bruteforce as bf

GEO = Geometry.from_catalog()
NAMES = {s: [f"kang/{w}-{i}" for i in range(1, 5)] for s, w in zip("sml", ("small", "medium", "large"))}


# ------------------------------------------------------------------ tables with named kangaroos
def start_places() -> dict[str, str]:
    """Setup: kangaroos 1-2 of each size in A's start zone, 3-4 in B's."""
    return {n: ("zone A" if int(n[-1]) <= 2 else "zone B") for names in NAMES.values() for n in names}


def places_of(pos: Position, before: dict[str, str] | None = None) -> dict[str, str]:
    """Names for a position: kept where a named kangaroo of that size already stands."""
    before = before or {}
    want = [(square_name((i % 6, i // 6 + 1)), c) for i, c in enumerate(pos.cells) if c != "."]
    want += [(f"zone {coach}", s) for coach, zone in zip(COACHES, pos.zones) for s, n in zip("sml", zone)
             for _ in range(n)]
    out, free = {}, []
    for place, s in want:
        keep = [n for n in NAMES[s] if before.get(n) == place and n not in out]
        if keep:
            out[keep[0]] = place
        else:
            free.append((place, s))
    for place, s in free:
        out[next(n for n in NAMES[s] if n not in out)] = place
    return out


def table(places: dict[str, str], unread=(), seen_empty=()) -> Observation:
    """A clean observation: kangaroos on square centres, start-zone ones in a row beyond the edge."""
    pieces = [PiecePose("kang/board", (10, 11, 12, 13), 0.0, 0.0, 0.0, 2.0, 0.3)]
    slot = {"zone A": 0, "zone B": 0}
    for name, place in sorted(places.items()):
        if place.startswith("zone"):
            k = slot[place]
            slot[place] += 1
            x, y = (k % 6 - 2.5) * 42, (-1 if place.endswith("A") else 1) * (195 + 42 * (k // 6))
        else:
            x, y = GEO.square_centre(FILES.index(place[0]), int(place[1]))
        if name not in unread and name not in seen_empty:
            pieces.append(PiecePose(name, (), x, y, 0.0, 4.0, 0.5))
    return Observation(tuple(pieces), frame={"anchor": "kang/board"}, game="kang", seen_empty=tuple(seen_empty))


def state_at(text: str) -> tuple[KangState, dict]:
    pos = Position.parse(text)
    places = places_of(pos)
    state = KangState(position=pos, places=tuple(sorted(places.items())))
    step = GAME.step(state, table(places), 0.0)  # the same board: the guard learns the legal table
    return step.state, places


def moves(step) -> list:
    return [r for r in step.rulings if r.kind == "move"]


# ------------------------------------------------------------------ turns seen together
KICK_BEFORE = "6/6/2m3/6/6/6 ssmll ssmmll A 0-0 -"
KICK_AFTER = "6/6/2l3/6/6/m1s3 smll ssmml A 0-0 -"


def test_a_move_and_the_other_coachs_kick_seen_together():
    """A must enter from the start zone: the small c0-c1 is the only way a small reaches c1.
    B must enter too: its large crosses 3 lines, c7-c6-c5-c4, the one path to c4, lands on the
    medium and kicks it. Kick: the kicked kangaroo goes no farther from A than A's nearest
    row holding a kangaroo (row 1, the small), so a1 is allowed. No one move changes 5 places."""
    state, places = state_at(KICK_BEFORE)
    seen = table(places_of(Position.parse(KICK_AFTER), places))
    step = GAME.step(state, seen, 1.0)
    ruled = moves(step)
    assert [r.legal for r in ruled] == [True, True]
    picture = GAME.explain(state, seen)  # the move diagram draws both turns
    assert picture.title == "Kang: legal" and [s.legend for s in picture.shapes if s.kind == "arrow"][:2] == [
        "turn 1 of 2", "turn 2 of 2"]
    assert [r.details["seen_together"] for r in ruled] == [1, 2]
    assert ruled[0].details["sequence"] == ["A c0-c1", "B c7-c6-c5-c4xa1"]
    assert ruled[0].summary.startswith("Legal: A played c0-c1, turn 1 of 2 seen together")
    assert step.state.position == Position.parse(KICK_AFTER) and step.state.moves[-2:] == ("A c0-c1",
                                                                                          "B c7-c6-c5-c4xa1")


def test_three_turns_seen_together():
    """The same, and A's second small enters at e1. A's two entries can come in either order
    (the kick to a1 is allowed after either: row 1 holds A's small), so two sequences explain
    the board, both ending with B to move at 0-0: they agree, and the turns are ruled."""
    after = "6/6/2l3/6/6/m1s1s1 mll ssmml B 0-0 -"
    state, places = state_at(KICK_BEFORE)
    step = GAME.step(state, table(places_of(Position.parse(after), places)), 1.0)
    ruled = moves(step)
    assert [r.details["seen_together"] for r in ruled] == [1, 2, 3] and all(r.legal for r in ruled)
    assert ruled[0].details["alternatives"] and "Also explained by" in ruled[0].summary
    assert step.state.position == Position.parse(after)


SCORE_BEFORE = "1m3s/3l2/4l1/3m2/llm1s1/3mss - - A 1-1 -"


def test_two_sequences_with_different_scores_cannot_tell():
    """A's small e1 steps to e2 and kicks the small there to a6 (B's nearest row is 6), then B's
    small a6 lands on the medium b6 and kicks it to a1 (A's nearest row is 1): 1-1. Or A's small
    e1 jumps d1 (medium, 2 more) to d3 (medium, 2 more) to d5 (large, 3 more) and leaves over
    e7: A scores, 2-1; B must enter that small, b7-b6, and kicks the medium to a1. The same
    board; no single move gives it (A may not kick to row 1). Both sequences are also legal
    by the plain second reading of the rules (tests/kang_bruteforce.py)."""
    pos = Position.parse(SCORE_BEFORE)
    for a, b in (("e1-e2xa6", "a6-b6xa1"), ("e1-d1^-d2-d3^-d4-d5^-d6-e6-e7", "b7-b6xa1")):
        mid = push(pos, Move.parse(a))
        assert bf.parse(str(mid)) in bf.children(bf.parse(str(pos)))
        end = push(mid, Move.parse(b))
        assert bf.parse(str(end)) in bf.children(bf.parse(str(mid)))
    state, places = state_at(SCORE_BEFORE)
    step = GAME.step(state, table(places_of(end, places)), 1.0)
    (ruling,) = step.rulings
    assert cannot_tell(ruling) and "alfalfa 1-1" in ruling.summary and "alfalfa 2-1" in ruling.summary
    assert step.state.position == pos  # nothing recorded: the next table may settle it


def test_no_sequence_is_illegal_and_names_the_nearest():
    """From the start a small crosses 1 line: it cannot stand on c3 after A's turn, and B, who
    must then enter from B's start zone, would leave a kangaroo on the board: no sequence of up
    to 3 turns gives a lone small on c3. Ruled illegal (the count: How to move kangaroo tokens)."""
    state, places = state_at(str(Position.start()))
    wrong = dict(places, **{"kang/small-1": "c3"})
    step = GAME.step(state, table(wrong), 1.0)
    ruling = moves(step)[0]
    assert ruling.legal is False and ruling.summary.startswith("Illegal: A's small kangaroo crosses 3 lines, not 1")
    assert "(How to move kangaroo tokens)" in ruling.summary and "nearest legal move" in ruling.summary
    assert step.rulings[-1].kind == PENDING_KIND


def test_resumed_after_a_misread_table():
    """A misread table (a small on c3) is illegal and pending; the next table is the true one,
    two legal turns from the last legal position: the game resumes by itself."""
    state, places = state_at(KICK_BEFORE)
    misread = GAME.step(state, table(dict(places, **{"kang/small-1": "c3"})), 1.0)
    assert misread.rulings[-1].kind == PENDING_KIND
    true = GAME.step(misread.state, table(places_of(Position.parse(KICK_AFTER), places)), 2.0)
    assert true.rulings[0].summary == f"{RESUMED} A c0-c1, B c7-c6-c5-c4xa1"
    assert [r.legal for r in moves(true)] == [True, True] and true.state.guard.illegal is None
    assert true.state.position == Position.parse(KICK_AFTER)


# ------------------------------------------------------------------ a kangaroo not read
def test_a_kangaroo_unread_for_several_tables_then_read_in_place():
    """large-1 sits in A's start zone and is not read for three turns (A enters a small, B a
    medium, A another small: none of them can have moved it, every change is one move of the
    others), then it is read again where it was: nothing illegal, every move recorded."""
    state = GAME.step(GAME.new_state({}), table(start_places()), 0.0).state
    places = start_places()
    t = 1.0
    for name, square in (("kang/small-1", "c1"), ("kang/medium-3", "d5"), ("kang/small-2", "e1")):
        places = dict(places, **{name: square})
        step = GAME.step(state, table(places, unread=("kang/large-1",)), t)
        assert [r.legal for r in moves(step)] == [True], step.rulings
        state, t = step.state, t + 1
    back = GAME.step(state, table(places), t)
    assert back.rulings == () and state.moves == ("A c0-c1", "B d7-d6-d5", "A e0-e1")


def test_a_kangaroo_seen_empty_is_gone_but_one_not_read_stays():
    """Not read: nothing seen changed, nothing to say. Seen empty at its place and read
    nowhere: it moved, and where to is not known: "Cannot tell", naming it."""
    state = GAME.step(GAME.new_state({}), table(start_places()), 0.0).state
    assert GAME.step(state, table(start_places(), unread=("kang/large-1",)), 1.0).rulings == ()
    gone = GAME.step(state, table(start_places(), seen_empty=("kang/large-1",)), 1.0)
    assert len(gone.rulings) == 1 and cannot_tell(gone.rulings[0]) and "kang/large-1" in gone.rulings[0].summary
    assert gone.state.position == Position.start()


def test_a_ruling_resting_on_a_kangaroo_not_read_cannot_tell():
    """A's small on c2 is read on c3, where the large (not read now) stood. A small crosses
    1 line: it landed on the large, and two kangaroos never share a square, so it kicked the
    large somewhere (B's nearest occupied row is then row 3: anywhere in rows 3-6). Where the
    large went rests on a kangaroo not read: "Cannot tell", naming it; nothing recorded."""
    state, places = state_at("6/6/6/2l3/2s3/6 - sssmmmmlll A 0-0 -")
    large = next(n for n, p in places.items() if p == "c3")
    small = next(n for n, p in places.items() if p == "c2")
    step = GAME.step(state, table(dict(places, **{small: "c3"}), unread=(large,)), 1.0)
    (ruling,) = step.rulings
    assert cannot_tell(ruling) and large in ruling.summary and "not read" in ruling.summary
    assert step.state.position == state.position


def test_the_start_with_kangaroos_unread_is_the_start():
    """Setup: 2 of each size in each start zone. Two larges not read, both zones short of one
    large: the start, not "not the start". A kangaroo read on the board with one unread: the
    board is not the start and the unread one's place is not known: "Cannot tell"."""
    step = GAME.step(GAME.new_state({}), table(start_places(), unread=("kang/large-1", "kang/large-3")), 0.0)
    assert step.rulings[0].summary.startswith("Legal: the start position, A moves first (Setup)")
    assert step.state.position == Position.start() and step.state.turn_known
    mid = dict(start_places(), **{"kang/small-1": "c1"})
    unsure = GAME.step(GAME.new_state({}), table(mid, unread=("kang/large-1",)), 0.0)
    assert cannot_tell(unsure.rulings[0]) and unsure.state.position is None


def test_expected_pieces_are_last_readings_or_start_zones():
    before = GAME.expected_pieces(GAME.new_state({}))
    assert len(before) == 12 and all(abs(p.y_mm) > GEO.half_extent_mm for p in before)
    state = GAME.step(GAME.new_state({}), table(dict(start_places(), **{"kang/small-1": "c1"})), 0.0).state
    small = next(p for p in GAME.expected_pieces(state) if p.name == "kang/small-1")
    assert (small.x_mm, small.y_mm) == GEO.square_centre(2, 1) and small.sigma_mm <= GEO.square_mm / 2


# ------------------------------------------------------------------ the rule a breach cites
def test_a_line_crossed_twice_cites_that_rule():
    """One move of A's large on e1 to d1: its 3 lines can only be e1-e2-e1-d1 (the e1|e2 line
    twice) or pass over an occupied square (d2 holds a large, c1 a small); no legal path. The
    one-move judge cites the line crossed twice, not the square passed over. (Through the game
    a two-turn sequence with kicks explains this board, so the one-move judge is asked here.)"""
    pos = Position.parse("6/4l1/s1mlm1/ss3m/m2l2/2s1l1 - - A 0-0 -")
    target = Position.parse("6/4l1/s1mlm1/ss3m/m2l2/2sl2 - - A 0-0 -").layout()
    summary = explain(pos, target).summary()
    assert summary.startswith("Illegal: A's kangaroo crosses the same line twice in one move "
                              "(How to move kangaroo tokens)") and "passes over" not in summary


def test_back_into_the_own_start_zone_cites_that_rule():
    """A's small on a1 is back in A's start zone: a kangaroo on the board leaves it only
    across the opponent's edge (How to move kangaroo tokens); not "it was A's turn"."""
    state, places = state_at("6/6/6/6/6/s5 - sssmmmmllll A 0-0 -")
    small = next(n for n, p in places.items() if p == "a1")
    ruling = moves(GAME.step(state, table(dict(places, **{small: "zone A"})), 1.0))[0]
    assert ruling.summary.startswith("Illegal: A moved a kangaroo back into their own start zone "
                                     "(How to move kangaroo tokens)")
    assert "turn" not in ruling.summary.split(".")[0]


# ------------------------------------------------------------------ seeded random playouts
def _apply(places: dict, pos: Position, move: Move) -> dict:
    """The named kangaroos after a move (our own bookkeeping from the move's path)."""
    if move.is_pass:
        return places
    at = {p: n for n, p in places.items() if not p.startswith("zone")}
    origin = square_name(move.origin)
    if move.origin[1] in (0, 7):
        zone = f"zone {'A' if move.origin[1] == 0 else 'B'}"
        size = "sml"[move.first_leg - 1]
        mover = next(n for n in NAMES[size] if places[n] == zone)
    else:
        mover = at[origin]
    out = dict(places)
    if move.exits:
        out[mover] = f"zone {'B' if pos.to_move == 'A' else 'A'}"
        return out
    end = square_name(move.end)
    if move.kick is not None:
        out[at[end]] = square_name(move.kick)
    out[mover] = end
    return out


def _playout(seed: int):
    """One random legal game, its tables (some dropped: 2-3 turns merged), some kangaroos unread.
    A score ends a merge: the alfalfa token changing hands is a pause the camera sees. (Turns
    merged across two scores can end on the board of one plain move, and a camera that reads
    no alfalfa token cannot tell them apart: docs/whole-games.md.)"""
    rng = random.Random(seed)
    pos, places = Position.start(), start_places()
    tables = [table(places)]
    while pos.winner is None and len(tables) < 120:
        for _ in range(rng.choice((1, 1, 1, 2, 3))):  # a table missed: the turns merge
            if pos.winner:
                break
            # a move back onto its own square leaves the board as it was: no camera sees it
            options = [m for m in legal_moves(pos) if m.is_pass or push(pos, m).layout() != pos.layout()] or [PASS]
            scoring = [m for m in options if m.exits]
            move = rng.choice(scoring if scoring and rng.random() < 0.5 else options)
            places = _apply(places, pos, move)
            pos = push(pos, move)
            if move.exits:
                break
        unread = tuple(rng.sample(sorted(places), rng.choice((0, 0, 1, 2))))
        tables.append(table(places, unread=unread))
        if unread:  # the camera reads every kangaroo again before the next turn
            tables.append(table(places))
    return pos, tables


PLAYOUT_SEEDS = 12
# Seeds whose game the referee does not yet follow to the end (docs/whole-games.md, "What is
# left"): 2, a change ruled as one turn that was three (a score among them), whose turn then
# is off by one and the game goes pending; 3, turns merged two tables running whose ways
# disagree on a score the board does not show (no alfalfa token is read).
KNOWN_GAPS = {2, 3}


@pytest.mark.parametrize("seed", [pytest.param(s, marks=pytest.mark.xfail(strict=True, reason="known gap"))
                                  if s in KNOWN_GAPS else s for s in range(PLAYOUT_SEEDS)])
def test_seeded_playouts_are_refereed_to_the_end(seed):
    """A random legal game from the start to a win: no legal change is ever ruled illegal, and
    the referee ends on the playout's score and winner."""
    truth, tables = _playout(seed)
    state = GAME.new_state({})
    for t, obs in enumerate(tables):
        step = GAME.step(state, obs, float(t))
        assert not any(r.legal is False for r in step.rulings), (seed, t, [r.summary for r in step.rulings])
        state = step.state
    assert state.position.alfalfa == truth.alfalfa and state.position.winner == truth.winner, seed


def test_the_bundled_game_with_a_moment_missed_gives_the_same_moves():
    """samples/sessions/kang-game as the page saw it on a loaded machine: the still table after
    A's d0-d1-e1 is missed, so A's move and B's kick (b7-b6-c6^-c5-d5xc1) arrive together. They
    are ruled seen together, and the game goes on to the session's truth (A 1 - B 0), with the
    illegal second score still caught and taken back."""
    import json
    from pathlib import Path

    from tests.test_kang_game import FakeTools

    folder = Path(__file__).resolve().parent.parent / "samples" / "sessions" / "kang-game"
    truth = [json.loads(line) for line in (folder / "truth.jsonl").read_text().splitlines()]
    missed = next(d["t"] for d in truth if (d["event"] or {}).get("move") == "d0-d1-e1")
    state, said = GAME.new_state({}), []
    for t, obs in FakeTools().stable_observations(folder, None, "kang"):
        if t != missed:
            step = GAME.step(state, obs, t)
            state, said = step.state, said + list(step.rulings)
    played = [f"{e['coach']} {e['move']}" for e in (d["event"] for d in truth) if e and e.get("legal")]
    together = [r for r in said if r.details.get("seen_together")]
    assert [(r.details["coach"], r.details["seen_together"]) for r in together] == [("A", 1), ("B", 2)]
    assert "d0-d1-e1" in together[0].details["moves"] and "b7-b6-c6^-c5-d5xc1" in together[1].details["moves"]
    assert len(state.moves) == len(played) and [r.legal for r in said if r.kind == "move"].count(False) == 1
    assert state.position.alfalfa == (1, 0) and any(r.summary.startswith("Put right") for r in said)
