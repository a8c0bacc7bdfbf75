"""Tornado Splash: the players accept a pending illegal turn (referee/pending.py).

The race goes on from the table of the illegal turn: the state the step worked out for it
becomes the race's state, and the finishing places, the race's end and the standings it
led to (held back while it was pending) are recorded now.
"""

from __future__ import annotations

from referee.game import Step
from referee.pending import accept

from .referee import TornadoState
from .rules import GAME_ID


def accept_illegal_turn(state: TornadoState, t: float) -> Step:
    """Players' declaration: play on from the illegal turn's table."""
    return accept(GAME_ID, state, t)
