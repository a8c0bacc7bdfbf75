"""Random playouts in the OpenSpiel style: 1,000 seeded Kang games, invariants checked at every step."""

import random

from referee.kang.explain import explain
from referee.kang.moves import PASS, is_legal, legal_moves, push
from referee.kang.moves import successors
from referee.kang.position import SIZES, Move, Position
from tests import kang_bruteforce as bf

# Goal of the Game / End of the Game: the first coach to collect 3 alfalfa tokens wins. Written
# here from the rulebook, not read from the engine, so that a wrong constant there fails here.
RULEBOOK_WIN = 3
SECOND_READING_GAMES = 8  # games whose every step is re-derived by tests/kang_bruteforce.py (~25 ms a step)

GAMES = 1000
MAX_TURNS = 400  # a game that runs this long is reported, not silently cut
JUDGE_EVERY_STEP = 10  # explain() at every step of one game in 10, at one random step of the others:
# judging walks every path of the move again, and all 1,000 games judged at every step take minutes


def _check_step(pos: Position, move: Move, after: Position, judge: bool) -> None:
    # 12 kangaroos, 4 of each size, on squares or in start zones
    for k, s in enumerate(SIZES):
        assert after.cells.count(s) + after.zones[0][k] + after.zones[1][k] == 4, (str(pos), str(move))
    # every text form round-trips
    assert Position.parse(str(after)) == after
    assert Position.from_json(after.to_json()) == after
    assert Move.parse(str(move)) == move
    assert str(Move.parse(str(move))) == str(move)
    # the judge finds the move that was played among the moves the board cannot tell apart
    if judge and not move.is_pass:
        judged = explain(pos, after.layout())
        if after.layout() == pos.layout():  # a move that ends where it began leaves no trace
            assert judged.verdict == "no change"
        else:
            assert judged.verdict == "legal", (str(pos), str(move), judged.summary())
            assert move in judged.moves and judged.after == after


def _scored(move: Move, coach: str) -> bool:
    """Our own tally, not the engine's: a move scores when its path ends beyond the opponent's
    edge (row 7 for A, row 0 for B)."""
    return bool(move.path) and move.path[-1][1] == (7 if coach == "A" else 0)


def _play(seed: int, second_reading: bool = False) -> tuple[Position, int, dict]:
    rng = random.Random(seed)
    pos = Position.start()
    judged_turn = rng.randrange(20)
    tally = {"A": 0, "B": 0}
    for turn in range(MAX_TURNS):
        moves = legal_moves(pos)
        # End of the Game: play stops exactly when a coach holds 3 alfalfa tokens, and not before
        assert (moves == ()) == (max(tally.values()) == RULEBOOK_WIN), (seed, str(pos), tally)
        if not moves:
            return pos, turn, tally
        scoring = [m for m in moves if m.exits]
        # uniform random play, except that a coach who can score does: pure random walks take
        # hundreds of turns to finish, and the finish is what this test must see 1,000 times
        move = rng.choice(scoring or moves)
        assert is_legal(pos, move) and (move != PASS or moves == (PASS,))
        after = push(pos, move)
        tally[pos.to_move] += _scored(move, pos.to_move)
        assert after.alfalfa == (tally["A"], tally["B"]), (seed, str(pos), str(move))
        _check_step(pos, move, after, seed % JUDGE_EVERY_STEP == 0 or turn == judged_turn)
        if second_reading:
            _check_against_second_reading(pos, after)
        pos = after
    return pos, MAX_TURNS, tally


def _check_against_second_reading(pos: Position, after: Position) -> None:
    """The engine's successors are exactly those of the plain second reading of the rules
    (tests/kang_bruteforce.py, no code shared), and the position played is one of them."""
    children = bf.children(bf.parse(str(pos)))
    assert {bf.parse(str(p)) for p in successors(pos)} == children, str(pos)
    assert bf.parse(str(after)) in children, (str(pos), str(after))


def test_thousand_seeded_playouts():
    finished = 0
    for seed in range(GAMES):
        pos, turns, tally = _play(seed)
        if turns < MAX_TURNS:
            winner = next(c for c, n in tally.items() if n == RULEBOOK_WIN)
            assert pos.winner == winner and max(pos.alfalfa) == RULEBOOK_WIN, str(pos)
            finished += 1
        else:
            assert pos.winner is None and max(tally.values()) < RULEBOOK_WIN
    assert finished > GAMES // 2, f"only {finished} of {GAMES} random games reached 3 alfalfa"


def test_whole_games_agree_with_the_second_reading_at_every_step():
    """Seeded games from the start to a win, every step's successors re-derived independently:
    the playout above compares the engine with itself, this one does not."""
    for seed in range(GAMES, GAMES + SECOND_READING_GAMES):
        pos, turns, tally = _play(seed, second_reading=True)
        assert turns < MAX_TURNS and max(tally.values()) == RULEBOOK_WIN, (seed, str(pos))
