"""Which games refcam knows: one table, one module path per game.

``get_game(id)`` returns the game's object behind the seam (referee/game.py's ``Game``);
``games()`` lists them; ``register(game)`` adds one more at run time (the tests' toy game).
Adding a game = its folder under referee/ and one line in ``GAMES``.
"""

from __future__ import annotations

import importlib

from .errors import UnknownNameError
from .game import Game

# game id -> "module:attribute" of its Game object. A game without a rules engine yet can
# use the state-only game (referee.state_only), which reports what moved and judges nothing.
GAMES: dict[str, str] = {
    "tornado": "referee.tornado.game:GAME",
    "kang": "referee.kang.game:GAME",
    "kayak": "referee.kayak.game:GAME",
}

_registered: dict[str, Game] = {}


def register(game: Game) -> Game:
    """Make a game known for this process (a game from outside the table, e.g. a test's)."""
    _registered[game.id] = game
    return game


def unregister(game_id: str) -> None:
    _registered.pop(game_id, None)


def game_ids() -> list[str]:
    return list(GAMES) + [g for g in _registered if g not in GAMES]


def get_game(game_id: str) -> Game:
    """The game with this id; an unknown id is refused with the known ones named."""
    if game_id in _registered:
        return _registered[game_id]
    if game_id not in GAMES:
        raise UnknownNameError(f"unknown game {game_id!r} (choose one of: {', '.join(game_ids())})")
    module, _, attribute = GAMES[game_id].partition(":")
    return getattr(importlib.import_module(module), attribute)


def games() -> list[Game]:
    return [get_game(g) for g in game_ids()]

