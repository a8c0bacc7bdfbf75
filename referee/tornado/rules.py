"""Rule citations of the Tornado Splash rulebook as values (referee.game.RuleRef)."""

from __future__ import annotations

from referee.game import RuleRef
from referee.rulings import verdict_line

GAME_ID, TITLE = "tornado", "Tornado Splash"


def rule(section: str) -> RuleRef:
    """The citation of one rulebook section; shown as "Tornado Splash, <section>"."""
    return RuleRef(GAME_ID, section, TITLE)


def short_name(name: str) -> str:
    """A piece's name without its game: "boat-2" for "tornado/boat-2" (what rulings print)."""
    return name.split("/", 1)[-1]


def headline(verdict: str, what: str, rule=None) -> str:
    """The sentence a player reads first (referee.rulings.verdict_line): the verdict, who did
    what, and the rule, e.g. "Illegal: boat-3 moved 4 movement spaces this round, where at most
    3 are allowed (Racing Card Limitation)." Piece names are said without their game."""
    return verdict_line(verdict, what.replace(f"{GAME_ID}/", ""), rule) + "."


def whose(boat: str, text: str) -> str:
    """A breach said of a card, with whose card it is: "boat-1's card-1-06 does not meet ..."
    (a player reads who first); text that names the boat already is kept as it is."""
    plain = text.replace(f"{GAME_ID}/", "")
    if short_name(boat) in plain or not plain.startswith("card-"):
        return text
    return f"{short_name(boat)}'s {plain}"
