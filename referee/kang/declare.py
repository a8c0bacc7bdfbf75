"""What Kang players declare because the camera cannot see it: a pass.

A pass leaves the board as it was, so the camera sees nothing happen. The rulebook's
Gameplay section gives a coach two kinds of turn, an ordinary move or a jump/kick; refcam
reads a turn with no kangaroo able to move as a pass (referee/kang/moves.py). A declared
pass is judged by that same rule: taken when the coach to move has no legal move, refused
as illegal (the turn stays with that coach) when one exists.
"""

from __future__ import annotations

from dataclasses import replace

from ..game import ACCEPT_ILLEGAL, Declarable, Declaration, RuleRef, Step, check_declaration, declared_ruling
from ..pending import accept_declarable, accepted_by_players
from .explain import RULES
from .moves import PASS, legal_moves, push
from .pending import accept_illegal_turn
from .position import COACHES, other

INVISIBLE_EVENTS = ("a pass: a coach whose kangaroos cannot move leaves the board unchanged",)


def declarables(game, state) -> tuple[Declarable, ...]:
    """A pass, by the coach to move (either coach while whose turn it is is still unknown)."""
    pos = state.position
    if state.guard.illegal is not None:
        return accept_declarable(state)
    if pos is None or pos.winner:
        return ()
    coaches = (pos.to_move,) if state.turn_known else COACHES
    return (Declarable("pass", "passes (no kangaroo can move)", coaches, _rule(game),
                       "a coach with no legal move passes; the board stays as it is"),)


def declare(game, state, declaration: Declaration, t: float) -> Step:
    check_declaration(game, state, declaration)
    if declaration.kind == ACCEPT_ILLEGAL:
        return accepted_by_players(game.id, state, declaration, t, accept_illegal_turn)
    coach = declaration.subject
    pos = state.position
    if pos.to_move != coach:  # whose turn was unknown: the players just told us
        pos = replace(pos, to_move=coach)
    rule = str(_rule(game))
    moves = [m for m in legal_moves(pos) if not m.is_pass]
    if moves:
        shown = ", ".join(str(m) for m in moves[:3]) + (" …" if len(moves) > 3 else "")
        ruling = declared_ruling(game.id, declaration, t, f"{coach} may not pass: {len(moves)} legal move(s), "
                                 f"e.g. {shown}", rule, False, {"legal_moves": len(moves)})
        return Step(replace(state, position=pos, turn_known=True), (ruling,))
    after = push(pos, PASS)
    ruling = declared_ruling(game.id, declaration, t, f"{coach} passes: no kangaroo of {coach}'s can move; "
                             f"{other(coach)} to move", rule, True)
    return Step(replace(state, position=after, turn_known=True, moves=state.moves + (f"{coach} pass",)), (ruling,))



def _rule(game) -> RuleRef:
    """Gameplay: a turn is a move by the rules, or a pass when no kangaroo can move."""
    return RuleRef(game.id, RULES["legal"].section, game.title)
