"""Kayak Chaos: the players accept a pending illegal turn (referee/pending.py).

The game goes on from the river of the illegal turn: the state the step worked out for it
becomes the game's state, and a win it gave (Game End, held back while the turn was
pending) is recorded now. This module needs nothing of the game's own module (the state is
any KayakState), so declare.py -> pending.py never leads back to game.py.
"""

from __future__ import annotations

from typing import Any

from ..game import Step
from ..pending import accept
from .errors import GAME_ID


def accept_illegal_turn(state: Any, t: float) -> Step:
    """Players' declaration: play on from the illegal turn's river."""
    return accept(GAME_ID, state, t)
