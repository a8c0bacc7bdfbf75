"""Random playouts in the OpenSpiel style: 1,000 seeded Kang games, invariants checked at every step."""

import random

from referee.kang.explain import explain
from referee.kang.moves import PASS, is_legal, legal_moves, push
from referee.kang.position import SIZES, WIN_ALFALFA, Move, Position

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


def _play(seed: int) -> tuple[Position, int]:
    rng = random.Random(seed)
    pos = Position.start()
    judged_turn = rng.randrange(20)
    for turn in range(MAX_TURNS):
        moves = legal_moves(pos)
        if not moves:
            return pos, turn
        scoring = [m for m in moves if m.exits]
        # uniform random play, except that a coach who can score does: pure random walks take
        # hundreds of turns to finish, and the finish is what this test must see 1,000 times
        move = rng.choice(scoring or moves)
        assert is_legal(pos, move) and (move != PASS or moves == (PASS,))
        after = push(pos, move)
        _check_step(pos, move, after, seed % JUDGE_EVERY_STEP == 0 or turn == judged_turn)
        pos = after
    return pos, MAX_TURNS


def test_thousand_seeded_playouts():
    finished = 0
    for seed in range(GAMES):
        pos, turns = _play(seed)
        if turns < MAX_TURNS:
            # the game ends exactly when a coach reaches 3 alfalfa, and not before
            assert pos.winner is not None and max(pos.alfalfa) == WIN_ALFALFA, str(pos)
            finished += 1
        else:
            assert pos.winner is None and max(pos.alfalfa) < WIN_ALFALFA
    assert finished > GAMES // 2, f"only {finished} of {GAMES} random games reached 3 alfalfa"
