"""Kayak Chaos errors: each a RefcamError (one line, exit 2) quoting what was wrong."""

from __future__ import annotations

from ..errors import InvalidInputError, RefcamError
from ..game import RuleRef

GAME_ID = "kayak"
GAME_TITLE = "Kayak Chaos"


def rule(section: str) -> RuleRef:
    """A citation of one section of the Kayak Chaos rulebook."""
    return RuleRef(GAME_ID, section, GAME_TITLE)


class KayakError(RefcamError):
    """Base of every Kayak Chaos input error."""


class KayakStateError(KayakError, InvalidInputError):
    """A river-and-kayaks state that cannot exist (kayak on a rock, a tile twice, ...)."""


class RiverReadError(KayakError):
    """The camera's view does not give a river (Start tile missing, stickers disagree, ...)."""


class RiverGapError(RiverReadError):
    """A tile the river needs is not in view (the Start tile, or one between two seen tiles)."""


class IllegalActionError(KayakError):
    """An action the rules forbid here; ``rule`` is the rulebook section it breaks."""

    def __init__(self, message: str, section: str):
        super().__init__(f"{message} ({rule(section)})")
        self.reason = message
        self.rule = rule(section)


class NeedsNewTileError(KayakError):
    """A kayak would move beyond the last tile: a new tile must be placed first (by ``placer``)."""

    def __init__(self, message: str, placer: int):
        super().__init__(message)
        self.placer = placer
