"""What Kayak Chaos players declare because the camera cannot see it.

The camera sees the river and the kayaks, never the hands of cards. So the players say:
- whose turn it is (Playing the Game: the oldest starts, then play moves to the left, and
  refcam does not know where anyone sits);
- cards discarded as actions (Turns: discarding a card is an action; the turn has at most 3);
- a Life Ring played by pawn-N's player (Life Ring Cards: played on another player's turn,
  it cancels one Weather Shift, Tip the Kayak or Whirlpool action, which still uses up one
  of that turn's actions; its player holds four cards until the end of their next turn);
- a hand refilled to five at the end of a turn (Turns), which ends that turn.

The referee uses them: the actions spent out of sight leave fewer for the turn the camera
sees (referee/kayak/game.py passes the rest to ``explain`` as its limit).
"""

from __future__ import annotations

from dataclasses import replace

from ..game import ACCEPT_ILLEGAL, Declarable, Declaration, Step, check_declaration, declared_ruling
from ..pending import accept_declarable, accepted_by_players
from .errors import GAME_ID, rule
from .explain import MAX_ACTIONS
from .pending import accept_illegal_turn
from .position import pawn_name

INVISIBLE_EVENTS = ("whose turn it is", "cards discarded as actions", "a Life Ring played on another's turn",
                    "a hand refilled to five at the end of a turn")


def _pawns(state) -> tuple[str, ...]:
    return tuple(_short(p) for p, _ in state.position.kayaks) if state.position is not None else ()


def declarables(state) -> tuple[Declarable, ...]:
    return _turn_declarables(state) + accept_declarable(state)


def _turn_declarables(state) -> tuple[Declarable, ...]:
    pawns = _pawns(state)
    if not pawns or state.winner:
        return ()
    mover = _short(state.turn_of) if state.turn_of else None
    others = tuple(p for p in pawns if p != mover)
    left = MAX_ACTIONS - state.spent_actions
    out = [Declarable("turn", "whose turn it is", pawns, rule("Playing the Game"),
                      "the player of this kayak takes the next turn")]
    if left > 0:
        out.append(Declarable("discard", "cards discarded as actions", (mover,) if mover else pawns, rule("Turns"),
                              f"each discarded card is one of the turn's {MAX_ACTIONS} actions ({left} left)",
                              tuple(str(n) for n in range(1, left + 1))))
        if others and len(pawns) >= 2:  # played on another player's turn: two players at least
            out.append(Declarable("life-ring", "Life Ring played by", others, rule("Life Ring Cards"),
                                  "cancels one Weather Shift, Tip the Kayak or Whirlpool action of this turn; "
                                  "that action still counts"))
    out.append(Declarable("refill", "refills the hand to five (turn over)", (mover,) if mover else pawns,
                          rule("Turns"), "the end of this player's turn"))
    return tuple(out)


def declare(game, state, declaration: Declaration, t: float) -> Step:
    check_declaration(game, state, declaration)
    if declaration.kind == ACCEPT_ILLEGAL:
        return accepted_by_players(game.id, state, declaration, t, accept_illegal_turn)
    pawn = int(declaration.subject.split("-")[-1])
    who = declaration.subject
    if declaration.kind == "turn":
        new = replace(state, turn_of=pawn, spent_actions=0)
        return Step(new, (declared_ruling(GAME_ID, declaration, t, f"{who}'s turn", str(rule("Playing the Game"))),))
    if declaration.kind == "discard":
        n = int(declaration.value)
        spent = state.spent_actions + n
        summary = f"{who}'s player discards {n} card(s): {MAX_ACTIONS - spent} action(s) left this turn"
        return Step(replace(state, spent_actions=spent),
                    (declared_ruling(GAME_ID, declaration, t, summary, str(rule("Turns")), details={"spent": spent}),))
    if declaration.kind == "life-ring":
        spent = state.spent_actions + 1
        summary = (f"Life Ring played by {who}: a Weather Shift, Tip the Kayak or Whirlpool action is cancelled "
                   f"and still counts ({MAX_ACTIONS - spent} action(s) left); {who}'s player holds 4 cards")
        # whose turn it was may be known only once the camera sees the turn: the game checks then
        # that the ring was not played on its own player's turn (referee/kayak/game.py)
        new = replace(state, spent_actions=spent, short_hands=tuple(sorted(set(state.short_hands) | {pawn})),
                      rings=tuple(sorted(set(state.rings) | {pawn})))
        return Step(new, (declared_ruling(GAME_ID, declaration, t, summary, str(rule("Life Ring Cards"))),))
    # refill: the end of that player's turn; a Life Ring's short hand is made up again
    ended = state.turn_of in (None, pawn)
    new = replace(state, turn_of=None if ended else state.turn_of, spent_actions=0 if ended else state.spent_actions,
                  short_hands=tuple(p for p in state.short_hands if p != pawn),
                  last_mover=pawn if ended else state.last_mover, rings=() if ended else state.rings)
    return Step(new, (declared_ruling(GAME_ID, declaration, t, f"{who}'s player refills to five: the turn is over",
                                      str(rule("Turns"))),))


def summary(state) -> str:
    """What the players declared that still counts, in words ("" when nothing)."""
    parts = [f"{_short(state.turn_of)}'s turn"] if state.turn_of else []
    if state.spent_actions:
        parts.append(f"{state.spent_actions} action(s) used out of sight")
    if state.short_hands:
        parts.append(", ".join(_short(p) for p in state.short_hands) + " holding 4 cards")
    return "; ".join(parts)


def _short(pawn: int) -> str:
    """"pawn-2": the name players say (the piece is kayak/pawn-2)."""
    return pawn_name(pawn).split("/")[-1]
