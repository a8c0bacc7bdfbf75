"""Kang: the players accept a pending illegal move (referee/pending.py).

The game goes on from the board of the illegal move. Where refcam read the move (the one
it found with the broken rule waived), it is played as read: an alfalfa token it scores
(How to get an alfalfa token) and a win at 3 (End of the Game) are recorded now. Where no
move explains the board, the board as seen becomes the position, the other coach to move,
and no alfalfa is counted (none can be seen to have left the board by a move).
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import RefcamError
from ..game import Step
from ..pending import IllegalTurn, accept
from ..rulings import Ruling
from .board import read_board
from .explain import RULES, explain
from .moves import PASS, push
from .position import SIZES, Position, other
from .state import GAME_ID, KangState, played, rule_ref


def accept_illegal_turn(state: KangState, t: float) -> Step:
    """Players' declaration: play on from the illegal move's board."""
    return accept(GAME_ID, state, t, after=lambda s, turn: _as_played(s, turn, t))


def _as_played(state: KangState, turn: IllegalTurn, t: float) -> Step:
    pos = state.position
    layout = read_board(turn.observation).layout()
    verdict = explain(pos, layout)
    base = push(pos, PASS) if verdict.passed else pos
    if verdict.wrong_coach:
        base = Position._trusted(base.cells, base.zones, other(base.to_move), base.alfalfa, base.no_score)
    for move in verdict.moves[:1]:
        for letter in (None,) + tuple(SIZES):
            try:
                after = push(base, move, letter=letter)
            except RefcamError:
                continue
            if after.layout() == layout:
                return played(state, move, base.to_move, after, t)
    cells, zones = layout
    after = Position._trusted(cells, zones, other(pos.to_move), pos.alfalfa, (False, False))
    note = Ruling(t, GAME_ID, "state", "no move explains the board, so it is taken as it is: no alfalfa counted, "
                  "and whose turn it is follows from the next move", None, str(rule_ref(RULES["legal"])))
    return Step(replace(state, position=after, last=None, turn_known=False), (note,))
