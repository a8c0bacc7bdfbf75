"""What Tornado Splash players declare because the camera cannot see it.

- A pass (Moving Less Than 3 Spaces: a player may move 0 spaces). Nothing on the table
  changes, so the camera cannot tell a pass from a slow player. A declared pass ends that
  boat's turn for the turn-order check; the passes of the current round are kept in
  ``TornadoState.declared_passes`` (cleared when a new round begins).
- The order of choices at the start gate (Determining Start Position: the boats choose their
  spaces heaviest first, in descending weight). Judged against the boat weights.
- The FAQ's majority vote on a tie: when the majority agree that boats share a rank, their
  turn order goes by boat weight, lightest first (When Equidistant).
- The Grand Prix winner when the totals tie (Grand Prix Mode: the most points wins; the
  rulebook gives no tie-break, so refcam names every boat on the top total and lets the
  players name the winner among them).
"""

from __future__ import annotations

import dataclasses

from referee.game import ACCEPT_ILLEGAL, Declarable, Declaration, Step, check_declaration, declared_ruling
from referee.errors import InvalidInputError
from referee.pending import accept_declarable, accepted_by_players

from .pending import accept_illegal_turn
from .referee import TornadoReferee
from .rules import rule, short_name

INVISIBLE_EVENTS = ("a pass (0 spaces)", "the order of choices at the start gate",
                    "the FAQ majority vote on a tie", "the Grand Prix winner when the totals tie")
BOAT_PREFIX = "tornado/"
RULE_PASS = rule("Moving Less Than 3 Spaces")
RULE_GATE = rule("Determining Start Position")
RULE_VOTE = rule("FAQ")
RULE_GRAND_PRIX = rule("Grand Prix Mode")


def racing(state) -> list[str]:
    """Boats still racing, in this round's turn order where known (full names)."""
    out = [b for b in state.rounds.turn_order or state.memory.seen_boats]
    out += [b for b in state.memory.seen_boats if b not in out]
    gone = set(state.memory.crossed) | set(state.memory.eliminated)
    return [b for b in out if b not in gone]


def declarables(state, grand_prix_final: dict | None) -> tuple[Declarable, ...]:
    boats = racing(state)
    out = []
    can_pass = tuple(short_name(b) for b in boats if b not in state.rounds.acted and b not in state.declared_passes)
    if can_pass and not grand_prix_final:
        out.append(Declarable("pass", "passes (moves 0 spaces)", can_pass, RULE_PASS,
                              "ends that boat's turn this round; nothing on the table changes"))
    if boats and not state.memory.started and state.rounds.round == 1:
        out.append(Declarable("gate-order", "order of choices at the start gate", (), RULE_GATE,
                              "the heaviest boat chooses its space first, then in descending weight",
                              value_help="boats in the order they chose, e.g. " + ",".join(
                                  short_name(b) for b in sorted(boats, key=lambda b: -state.facts.weight(b)))))
    if len(boats) >= 2 and not grand_prix_final:
        out.append(Declarable("same-rank", "majority vote: these boats share a rank", (), RULE_VOTE,
                              "their turn order then goes by boat weight, lightest first",
                              value_help="two or more boats, e.g. " + ",".join(short_name(b) for b in boats[:2])))
    if grand_prix_final and len(grand_prix_final["leaders"]) > 1 and not grand_prix_final.get("named"):
        out.append(Declarable("grand-prix-winner", "the Grand Prix winner among the tied",
                              tuple(short_name(b) for b in grand_prix_final["leaders"]), RULE_GRAND_PRIX,
                              "the rulebook gives no tie-break on points: the players name the winner"))
    return tuple(out) + accept_declarable(state)


def declare(game, state, declaration: Declaration, t: float, grand_prix_final: dict | None) -> Step:
    check_declaration(_Offered(game, grand_prix_final), state, declaration)
    kept = dataclasses.replace(declaration, t=t)
    if declaration.kind == ACCEPT_ILLEGAL:
        return accepted_by_players(game.id, state, declaration, t, accept_illegal_turn)
    if declaration.kind == "pass":
        boat = BOAT_PREFIX + declaration.subject
        # the turn rules and the round count take the pass too (turns.begins_round)
        work = TornadoReferee.from_state(state)
        work.declare_pass(boat)
        new = dataclasses.replace(work.to_state(), declared_passes=state.declared_passes | {boat})
        summary = f"{declaration.subject} passes (0 spaces): its turn in round {state.rounds.round} is over"
        return Step(new, (declared_ruling(game.id, declaration, t, summary, str(RULE_PASS)),))
    if declaration.kind == "grand-prix-winner":
        total = grand_prix_final["points"]
        tied = ", ".join(short_name(b) for b in grand_prix_final["leaders"] if short_name(b) != declaration.subject)
        summary = (f"the players name {declaration.subject} the Grand Prix winner (tied with {tied} on {total} "
                   "points; the rulebook gives no tie-break)")
        return Step(dataclasses.replace(state, declared=state.declared + (kept,)),
                    (declared_ruling(game.id, declaration, t, summary, str(RULE_GRAND_PRIX)),))
    boats = _boats(declaration, racing(state))
    weights = {b: state.facts.weight(b) for b in boats}
    if declaration.kind == "gate-order":
        return _gate_order(game, state, declaration, kept, t, boats, weights)
    lightest_first = sorted(boats, key=lambda b: (weights[b], b))
    order = ", ".join(f"{short_name(b)} ({weights[b]:g})" for b in lightest_first)
    summary = f"majority vote: {', '.join(short_name(b) for b in boats)} share a rank; turn order by weight: {order}"
    # used by the next Ranking Phase's turn order (referee.TornadoReferee._turn_order)
    return Step(dataclasses.replace(state, declared=state.declared + (kept,), votes=state.votes + (tuple(lightest_first),)),
                (declared_ruling(game.id, declaration, t, summary, str(RULE_VOTE),
                                 details={"turn_order": lightest_first}),))


def _gate_order(game, state, declaration, kept, t, boats, weights) -> Step:
    """Determining Start Position: each boat chose no earlier than every heavier one."""
    wrong = next(((a, b) for a, b in zip(boats, boats[1:]) if weights[a] < weights[b]), None)
    order = ", ".join(f"{short_name(b)} ({weights[b]:g})" for b in boats)
    if wrong is None:
        summary, legal = f"start gate chosen heaviest first: {order}", True
    else:
        a, b = wrong
        summary, legal = (f"start gate: {short_name(a)} (weight {weights[a]:g}) chose before {short_name(b)} "
                          f"(weight {weights[b]:g}); the heavier boat chooses first"), False
    return Step(dataclasses.replace(state, declared=state.declared + (kept,)),
                (declared_ruling(game.id, declaration, t, summary, str(RULE_GATE), legal, {"order": boats}),))


def _boats(declaration: Declaration, known: list[str]) -> list[str]:
    """The boats a declaration's value lists, each once and each racing; refused otherwise."""
    names = [BOAT_PREFIX + n.strip() for n in declaration.value.split(",") if n.strip()]
    unknown = [short_name(n) for n in names if n not in known]
    if unknown:
        raise InvalidInputError(f"{declaration}: {unknown[0]} is not a boat in the race "
                                f"(racing: {', '.join(short_name(b) for b in known) or 'none seen yet'})")
    if len(set(names)) != len(names) or len(names) < 2:
        raise InvalidInputError(f"{declaration}: name two or more different boats, each once")
    return names


def grand_prix_final(grand_prix: dict | None, declared: tuple = ()) -> dict | None:
    """Grand Prix Mode, once the third race is scored: the totals, the top total and every
    boat on it (the winner when alone), and the winner the players named among tied boats."""
    if not grand_prix:
        return None
    races = len(grand_prix.get("races", ()))
    totals = grand_prix.get("totals_after_this_race") if races == 2 else grand_prix.get("totals") if races == 3 else None
    if not totals:
        return None
    best = max(totals.values())
    leaders = sorted(n for n, v in totals.items() if v == best)
    named = next((BOAT_PREFIX + d.subject for d in reversed(declared) if d.kind == "grand-prix-winner"), None)
    winner = leaders[0] if len(leaders) == 1 else named
    return {"totals": dict(totals), "points": best, "leaders": leaders, "winner": winner, "named": named}


class _Offered:
    """The game as check_declaration sees it: what may be declared given the Grand Prix."""

    def __init__(self, game, final):
        self.title, self._final = game.title, final

    def declarables(self, state):
        return declarables(state, self._final)
