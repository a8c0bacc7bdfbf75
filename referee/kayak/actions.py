"""Kayak Chaos actions as small frozen values (after python-chess's Move).

Directions: "down"/"up" along the river for paddles, "left"/"right" toward a bank for
swerves (left = toward the left bank looking downstream = +y). Tiles are named by their
number (0-7), not their place in the river, since a Whirlpool changes places.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

ALONG = ("down", "up")
ACROSS = ("left", "right")


@dataclass(frozen=True)
class Paddle:
    pawn: int
    direction: str  # down/up
    kind = "paddle"

    def __str__(self) -> str:
        return f"Paddle pawn-{self.pawn} {self.direction}stream"


@dataclass(frozen=True)
class DoublePaddle:
    pawn: int
    direction: str
    kind = "double-paddle"

    def __str__(self) -> str:
        return f"Double Paddle pawn-{self.pawn} {self.direction}stream"


@dataclass(frozen=True)
class Swerve:
    pawn: int
    direction: str  # left/right
    kind = "swerve"

    def __str__(self) -> str:
        return f"Swerve pawn-{self.pawn} {self.direction}"


@dataclass(frozen=True)
class DoubleSwerve:
    pawn: int
    direction: str
    kind = "double-swerve"

    def __str__(self) -> str:
        return f"Double Swerve pawn-{self.pawn} {self.direction}"


@dataclass(frozen=True)
class WeatherShift:
    tile: int
    direction: str  # left/right
    kind = "weather-shift"

    def __str__(self) -> str:
        return f"Weather Shift tile {self.tile} {self.direction}"


@dataclass(frozen=True)
class Tip:
    tile: int
    kind = "tip"

    def __str__(self) -> str:
        return f"Tip the Kayak tile {self.tile}"


@dataclass(frozen=True)
class Whirlpool:
    tile_a: int
    tile_b: int
    kind = "whirlpool"

    def __post_init__(self):  # a swap of 4 and 2 is the swap of 2 and 4: one value for both
        if self.tile_a > self.tile_b:
            a, b = self.tile_b, self.tile_a
            object.__setattr__(self, "tile_a", a)
            object.__setattr__(self, "tile_b", b)

    def __str__(self) -> str:
        return f"Whirlpool tiles {self.tile_a} and {self.tile_b}"


@dataclass(frozen=True)
class LifeRing:
    """Played by another player to cancel one river action; the cancelled card still counts."""

    cancels: "Action"
    kind = "life-ring"

    def __str__(self) -> str:
        return f"Life Ring cancels {self.cancels}"


@dataclass(frozen=True)
class Discard:
    kind = "discard"

    def __str__(self) -> str:
        return "Discard"


@dataclass(frozen=True)
class FreeMove:
    """Discard all five cards for one 1-space move in any non-diagonal direction; ends the turn."""

    pawn: int
    direction: str  # down/up/left/right
    kind = "free-move"

    def __str__(self) -> str:
        word = f"{self.direction}stream" if self.direction in ALONG else self.direction
        return f"Discard 5 for a free move of pawn-{self.pawn} {word}"


Action = Union[Paddle, DoublePaddle, Swerve, DoubleSwerve, WeatherShift, Tip, Whirlpool, LifeRing, Discard, FreeMove]
KAYAK_MOVES = (Paddle, DoublePaddle, Swerve, DoubleSwerve, FreeMove)
RIVER_ACTIONS = (WeatherShift, Tip, Whirlpool)
CARD_KINDS = ("paddle", "double-paddle", "swerve", "double-swerve", "weather-shift", "tip", "whirlpool", "life-ring")


def mover(action) -> int | None:
    return getattr(action, "pawn", None)


def to_json(action) -> dict:
    d = {"kind": action.kind, "text": str(action), "words": words(action)}
    for key in ("pawn", "direction", "tile", "tile_a", "tile_b"):
        if hasattr(action, key):
            d[key] = getattr(action, key)
    if isinstance(action, LifeRing):
        d["cancels"] = to_json(action.cancels)
    return d


_BY_KIND = {"paddle": Paddle, "double-paddle": DoublePaddle, "swerve": Swerve, "double-swerve": DoubleSwerve,
            "free-move": FreeMove}


def parse(text: str):
    """An action from words: "paddle 1 down", "double-swerve 2 left", "weather-shift 4 left",
    "tip 4", "whirlpool 4 5", "life-ring tip 4", "discard", "free-move 1 up"."""
    from .errors import KayakError

    words = str(text).split()
    try:
        kind, rest = words[0], words[1:]
        if kind in _BY_KIND and len(rest) == 2:
            return _BY_KIND[kind](int(rest[0]), rest[1])
        if kind == "weather-shift" and len(rest) == 2:
            return WeatherShift(int(rest[0]), rest[1])
        if kind == "tip" and len(rest) == 1:
            return Tip(int(rest[0]))
        if kind == "whirlpool" and len(rest) == 2:
            return Whirlpool(int(rest[0]), int(rest[1]))
        if kind == "life-ring" and rest:
            return LifeRing(parse(" ".join(rest)))
        if kind == "discard" and not rest:
            return Discard()
    except (IndexError, ValueError):
        pass
    raise KayakError(f"cannot read the Kayak action {text!r} (e.g. 'paddle 1 down', 'tip 4', 'whirlpool 4 5')")


def words(action) -> str:
    """The inverse of parse()."""
    if isinstance(action, LifeRing):
        return f"life-ring {words(action.cancels)}"
    if isinstance(action, Discard):
        return "discard"
    if isinstance(action, Tip):
        return f"tip {action.tile}"
    if isinstance(action, Whirlpool):
        return f"whirlpool {action.tile_a} {action.tile_b}"
    if isinstance(action, WeatherShift):
        return f"weather-shift {action.tile} {action.direction}"
    return f"{action.kind} {action.pawn} {action.direction}"
