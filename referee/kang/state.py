"""Kang's game state and what a played move leads to, shared by the game step (game.py) and
the players' acceptance of an illegal move (pending.py)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..game import RuleRef, Step
from ..observation import PiecePose
from ..pending import TurnGuard
from ..rulings import Ruling
from .explain import RULES, Rule
from .position import Move, Position

GAME_ID = "kang"
TITLE = "Kang"


@dataclass(frozen=True)
class KangState:
    """position: the last legally reached position (None before the first clear board);
    last: the last legal move and who played it; pending: what stops judging right now;
    places: where each kangaroo stands in that position (name -> "c3", "zone A"), a kangaroo
    not read keeping its place; readings: each kangaroo's (and alfalfa token's) last reading,
    for vision to look again where one was not read (KangGame.expected_pieces); open_sequences:
    the sequences of turns a "Cannot tell" named (they disagree on what the board does not
    show), each a way the game may have gone on from ``position`` (or, after a kick ruled as one
    move, the kick then the other coach moving the kicked kangaroo: a fallback, open_rivals False)."""

    position: Position | None = None
    last: Move | None = None
    last_coach: str | None = None
    pending: str = ""
    turn_known: bool = True
    moves: tuple[str, ...] = ()
    places: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    readings: tuple[PiecePose, ...] = field(default=(), compare=False)
    open_sequences: tuple = field(default=(), compare=False)  # a "Cannot tell" between these: the next table may settle it
    open_rivals: bool = field(default=False, compare=False)  # True: weighed at every table; False: only where nothing else explains it
    guard: TurnGuard = field(default=TurnGuard(), compare=False)  # an illegal turn pending (referee/pending.py)


def rule_ref(rule: Rule) -> RuleRef:
    return RuleRef(GAME_ID, rule.section, TITLE)



def played(state: KangState, move: Move, mover: str, after: Position, t: float, said=()) -> Step:
    """The state once ``mover`` played ``move`` reaching ``after``, with what follows from it:
    an alfalfa token (How to get an alfalfa token) and the win at 3 (End of the Game)."""
    out = list(said)
    if move.exits:
        out.append(Ruling(t, GAME_ID, "state", f"{mover} scores an alfalfa token ({after.alfalfa[0]}-"
                          f"{after.alfalfa[1]}) and may not score next turn", None, str(rule_ref(RULES["no-score"]))))
    if after.winner:
        out.append(Ruling(t, GAME_ID, "state", f"{after.winner} wins with 3 alfalfa", None,
                          str(rule_ref(RULES["game-over"]))))
    new = replace(state, position=after, last=move, last_coach=mover, turn_known=True,
                  moves=state.moves + (f"{mover} {move}",))
    return Step(new, tuple(out))
