"""Turns seen together: when one still table holds more than one turn (the camera missed the
table between them), which sequences of at most 3 turns, in turn order, explain the change.

Action Phase: boats take their turns one at a time down the round's ranking, and a round's
turns are followed by the next round's, so turns seen together are ordered by the rules
even though the camera did not see the order. A boat may appear twice (its turn in this
round and in the next) when it moved more than one turn allows; then its two turns split
its move where:

- Racing Card Limitation: each turn starts with at most 3 spaces ahead (4 with the boost),
  counted from where the turn begins to the end of its route;
- Player Token Movement: each turn moves at most that many spaces, never backwards;
- FAQ (token on the front-most card): the first turn ends with the token on the front-most
  card laid so far; the cards laid in the first turn are the first of the new cards.

Pure functions on the boat's route (its spaces in order, covered ones left out).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

MAX_TURNS = 3  # the longest sequence searched


@dataclass(frozen=True)
class Split:
    """Where a boat's first of two turns ended: index ``at`` along its route, after laying the
    first ``laid`` of its new cards; the spaces of each turn."""

    at: int
    laid: int
    first: int
    second: int

    def text(self) -> str:
        return f"{self.first} then {self.second}"


@dataclass(frozen=True)
class Nearest:
    """The two-turn split that comes closest, and by how many spaces it breaks the limits."""

    split: Split
    over: int


def two_turn_splits(space_cards: Sequence[str], start: int, end: int, new_cards: Sequence[str], first_limit: int,
                    second_limit: int) -> tuple[list[Split], Nearest | None]:
    """Every legal way a move from route index ``start`` to ``end`` splits into two turns (see
    the module docstring), and the nearest one when none is legal.

    space_cards: the card under each route space, in route order (covered spaces left out);
    new_cards: the cards laid since the last table, in route order (the last of the route)."""
    old_len = len(space_cards) - sum(1 for c in space_cards if c in set(new_cards))
    legal: list[Split] = []
    nearest: Nearest | None = None
    for laid in range(len(new_cards) + 1):
        front = _front_index(space_cards, old_len, new_cards[:laid])
        if front is None:
            continue
        front_card = space_cards[front]
        for at in range(max(start, 0), min(end, front) + 1):
            if space_cards[at] != front_card:
                continue  # the first turn ends on its front-most card
            split = Split(at, laid, at - start, end - at)
            over = (max(0, front - start - first_limit) + max(0, split.first - first_limit)
                    + max(0, len(space_cards) - 1 - at - second_limit) + max(0, split.second - second_limit))
            if split.first <= 0 or split.second <= 0:
                continue  # two turns, each moving on
            if over == 0:
                legal.append(split)
            elif nearest is None or over < nearest.over:
                nearest = Nearest(split, over)
    return legal, (None if legal else nearest)


def _front_index(space_cards: Sequence[str], old_len: int, laid: Sequence[str]) -> int | None:
    """The last route index once the old route and the first ``laid`` new cards are down."""
    if not laid:
        return old_len - 1 if old_len > 0 else None
    last = max(i for i, c in enumerate(space_cards) if c in set(laid))
    return last


def sequence_text(turns: Sequence[str]) -> str:
    """The turns of a sequence as one line: "boat-1, then boat-2, then boat-1"."""
    return ", then ".join(turns)
