"""What a referee says, and the interface every game's referee offers the live page.

The live engine hands each new stable state to the game's referee
(``observe_stable``) and shows the rulings it returns.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Protocol

from .catalog import json_ready
from .observation import Observation


@dataclass(frozen=True)
class Ruling:
    """One entry of the rulings log.

    kind: "move", "ranking", "finish", "violation", "state" or "warning".
    legal: True/False for a move, None where legality does not apply.
    rule: the rulebook section it rests on, e.g. "Tornado Splash, Ranking Phase".
    """

    t: float
    game: str
    kind: str
    summary: str
    legal: bool | None = None
    rule: str | None = None
    details: dict = field(default_factory=dict, hash=False, compare=False)

    def to_json(self) -> dict:
        return json_ready(asdict(self))


class GameReferee(Protocol):
    game: str

    def observe_stable(self, observation: Observation, t: float) -> list[Ruling]:
        """Rule on the transition to a new stable state seen at time t (s)."""
        ...

    def state_json(self) -> dict:
        """The current game state for the page (ranking, board, river...)."""
        ...
