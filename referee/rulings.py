"""What a referee says: one entry of the rulings log.

A game's ``step`` (referee/game.py) returns these for each new stable state.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from .catalog import json_ready


@dataclass(frozen=True)
class Ruling:
    """One entry of the rulings log.

    kind: "move", "ranking", "finish", "violation", "state", "warning", "pending" (an
    illegal turn not yet put right or accepted: referee/pending.py) or "declared" (what the
    players declared, which the camera cannot see: referee.game.Declaration).
    legal: True/False for a move, None where legality does not apply.
    rule: the rulebook section it rests on: a referee.game.RuleRef, or text where the
    ruling rests on no rulebook section; its JSON is always the text, e.g.
    "Tornado Splash, Ranking Phase".
    """

    t: float
    game: str
    kind: str
    summary: str
    legal: bool | None = None
    rule: Any = None
    details: dict = field(default_factory=dict, hash=False, compare=False)

    def to_json(self) -> dict:
        d = asdict(self)
        d["rule"] = None if self.rule is None else str(self.rule)
        return json_ready(d)

    @classmethod
    def from_json(cls, d: dict) -> "Ruling":
        """A ruling back from its JSON (a replay's timeline entry, which may carry more keys);
        its rule comes back as the text it was printed as."""
        return cls(d["t"], d.get("game", ""), d.get("kind", ""), d.get("summary", ""), d.get("legal"),
                   d.get("rule"), d.get("details") or {})


# The verdict a player reads first: every ruling's summary opens with one of these words,
# then ": ", then who did what and the rule, in one short sentence; notation and
# measurements follow that sentence.
LEGAL, ILLEGAL, CANNOT_TELL = "Legal", "Illegal", "Cannot tell"


def verdict_line(verdict: str, what: str, rule: Any = None) -> str:
    """The headline sentence: "Illegal: boat-3's card does not continue the course
    (Racing Card Placement)". ``rule``: a RuleRef (its section is named) or text."""
    section = getattr(rule, "section", rule)
    return f"{verdict}: {what}" + (f" ({section})" if section else "")


def cannot_tell(ruling: "Ruling") -> bool:
    """The ruling says the camera cannot tell (a hand in view, a piece not read, turns that
    several sequences explain): nothing was judged."""
    return ruling.summary.lower().startswith("cannot tell") or bool(ruling.details.get("cannot_tell"))


def sigma_text(sigma: float) -> str:
    """An uncertainty with the digits it needs: one decimal from 0.1 up, one significant digit
    below ("0.03"), "<0.01" for none measured; never "0.0" for a small but real sigma."""
    if sigma >= 0.095:
        return f"{sigma:.1f}"
    if sigma > 0:
        return f"{float(f'{sigma:.1g}'):g}"
    return "<0.01"
