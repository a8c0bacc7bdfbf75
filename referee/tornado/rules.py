"""Rule citations of the Tornado Splash rulebook as values (referee.game.RuleRef)."""

from __future__ import annotations

from referee.game import RuleRef

GAME_ID, TITLE = "tornado", "Tornado Splash"


def rule(section: str) -> RuleRef:
    """The citation of one rulebook section; shown as "Tornado Splash, <section>"."""
    return RuleRef(GAME_ID, section, TITLE)


def short_name(name: str) -> str:
    """A piece's name without its game: "boat-2" for "tornado/boat-2" (what rulings print)."""
    return name.split("/", 1)[-1]
