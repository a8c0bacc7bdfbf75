"""What an illegal turn leads to, the same for every game.

No rulebook lets a game go on from a turn its rules forbid, and a camera cannot make the
players take it back. So refcam holds the game at the last legal state:

- **pending**: after a turn ruled illegal nothing that follows from it is recorded (a win,
  a finishing place, the race's end, a score); a ruling of kind "pending" (legal None,
  citing the rule that was broken) says the illegal turn must be put right.
- **put right**: the table is back where it was at the last legal state (every piece
  within referee/motion.py's threshold, or the game's own reading of the table is that
  state's); play goes on from there.
- **resumed** (back on track by itself): every new still table is judged from the last
  legal state with the game's own step, which may find several turns seen together. When
  the WHOLE change since the last legal state is legal turns and nothing in it went
  unjudged ("cannot tell"), the game resumes: "Resumed: reached from the last legal state
  by <the turns>", then those turns' own rulings. One misreading never holds a game to its
  end. A step holding a legal and an illegal ruling is not resumed: the illegal part stands.
- **accepted**: the players declare on the page that they play on from the illegal
  table; the after-state becomes the legal state and what follows from it is recorded
  then (each game's ``accept_illegal_turn`` in ``referee/<game>/pending.py``).

Each game's state carries one ``guard`` field (a TurnGuard); its step wraps its own
ruling in :func:`guarded_step`.

A piece missing from an observation and not in its ``seen_empty`` was not read, not taken
away: the tables compared here (the last legal one, the pending illegal one, a new one) carry
it at its last reading (:func:`with_last_readings`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

from . import motion
from .game import ACCEPT_ILLEGAL, Declarable, Declaration, Step, declared_ruling
from .observation import Observation
from .rulings import Ruling, cannot_tell

PENDING_KIND = "pending"
PENDING_SUMMARY = "Pending: the illegal turn must be put right"
PUT_RIGHT_BACK = "Put right: the table is back as it was before the illegal turn"
RESUMED = "Resumed: reached from the last legal state by"
ACCEPTED = "Accepted: the players play on from the illegal turn"


@dataclass(frozen=True)
class IllegalTurn:
    """A turn ruled illegal and not put right yet.

    after_state: the game's state had the turn been legal (what acceptance records);
    withheld: the rulings that follow from the turn, recorded only if it is accepted;
    rule, why: the rule broken and the illegal ruling's words; t: when it was ruled; said: the
    summaries already said of the change since the last legal state (a later table that is still
    illegal says only what is new)."""

    observation: Observation
    after_state: Any
    withheld: tuple[Ruling, ...]
    rule: Any
    why: str
    t: float
    said: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"summary": PENDING_SUMMARY, "why": self.why, "rule": None if self.rule is None else str(self.rule),
                "since_t": self.t, "withheld": [r.summary for r in self.withheld]}


@dataclass(frozen=True)
class TurnGuard:
    """legal_observation: the table at the last legal stable state; illegal: the turn that
    is pending, or None."""

    legal_observation: Observation | None = None
    illegal: IllegalTurn | None = None


def same_table(a: Observation, b: Observation) -> bool:
    """Every piece of each table is in the other, neither moved nor turned beyond the
    measurement (referee/motion.py)."""
    pa, pb = {p.name: p for p in a.pieces}, {p.name: p for p in b.pieces}
    if set(pa) != set(pb):
        return False
    return not any(motion.moved(pa[n], pb[n]) or motion.turned(pa[n], pb[n]) for n in pa)


def with_last_readings(observation: Observation, *earlier: Observation | None) -> Observation:
    """The observation with each piece it did not read (missing, and not in ``seen_empty``)
    at its last reading: from the first of ``earlier`` tables (newest first) that read it."""
    have = {p.name for p in observation.pieces} | set(observation.seen_empty)
    added = []
    for table in earlier:
        for p in table.pieces if table is not None else ():
            if p.name not in have:
                have.add(p.name)
                added.append(p)
    return replace(observation, pieces=observation.pieces + tuple(added)) if added else observation


def _is_illegal(ruling: Ruling) -> bool:
    return ruling.legal is False


def _judged(step: Step) -> bool:
    """The table was read and ruled on (not "cannot tell": a hand in view, a piece unread)."""
    return not any(cannot_tell(r) for r in step.rulings)


def pending_ruling(game: str, t: float, turn: IllegalTurn) -> Ruling:
    return Ruling(t, game, PENDING_KIND, PENDING_SUMMARY, None, turn.rule,
                  {"why": turn.why, "since_t": turn.t, "withheld": [r.summary for r in turn.withheld]})


def guarded_step(game: str, rule_step: Callable[[Any, Observation, float], Step], state: Any,
                 observation: Observation, t: float, follows: Callable[[Ruling], bool],
                 is_illegal: Callable[[Ruling], bool] = _is_illegal,
                 restored: Callable[[Any, Observation], bool] | None = None) -> Step:
    """The game's own step (``rule_step``) under the policy above.

    follows(r): r follows from the turn (a win, a place, a score), withheld while the turn
    is illegal; is_illegal(r): r rules the turn illegal (default: legal is False);
    restored(state, obs): the game's own reading says obs is the table of ``state``."""
    guard: TurnGuard = state.guard
    if guard.illegal is not None:
        return _while_pending(game, rule_step, state, observation, t, follows, is_illegal, restored)
    step = rule_step(state, observation, t)
    illegal = [r for r in step.rulings if is_illegal(r)]
    if not illegal:
        # a table not judged (a hand in view, turns several sequences explain) is not the last legal one
        kept = with_last_readings(observation, guard.legal_observation) if _judged(step) else guard.legal_observation
        return Step(replace(step.state, guard=TurnGuard(kept)), step.rulings)
    return _hold(game, state, step, illegal, observation, t, follows)


def _hold(game: str, legal_state: Any, step: Step, illegal: list[Ruling], observation: Observation, t: float,
          follows: Callable[[Ruling], bool], since: float | None = None) -> Step:
    """The turn in ``step`` is illegal: keep the legal state, withhold what follows from the turn."""
    withheld = tuple(r for r in step.rulings if follows(r))
    earlier = legal_state.guard.illegal.said if legal_state.guard.illegal is not None else ()
    said = tuple(r for r in step.rulings if not follows(r) and r.summary not in earlier)
    turn = IllegalTurn(observation, step.state, withheld, illegal[0].rule, illegal[0].summary,
                       t if since is None else since, earlier + tuple(r.summary for r in said))
    guard = replace(legal_state.guard, illegal=turn)
    return Step(replace(legal_state, guard=guard), said + (pending_ruling(game, t, turn),))


def _while_pending(game, rule_step, state, observation, t, follows, is_illegal, restored) -> Step:
    """A new stable table while an illegal turn is pending: judged from the last legal state."""
    guard: TurnGuard = state.guard
    pending = guard.illegal
    seen = with_last_readings(observation, pending.observation, guard.legal_observation)
    back = (guard.legal_observation is not None and same_table(guard.legal_observation, seen)) or \
        (restored is not None and restored(state, observation))
    if not back and same_table(pending.observation, seen):
        return Step(state)  # the same illegal table seen again: nothing new to say
    step = rule_step(replace(state, guard=replace(guard, illegal=None)), observation, t)
    illegal = [r for r in step.rulings if is_illegal(r)]
    if back:
        put_right = Ruling(t, game, "state", PUT_RIGHT_BACK, None, pending.rule,
                           {"why": pending.why, "since_t": pending.t})
        return Step(replace(step.state, guard=TurnGuard(seen)), (put_right,) + step.rulings)
    if illegal:
        return _hold(game, state, step, illegal, observation, t, follows, since=pending.t)
    if _judged(step) and any(r.legal is True for r in step.rulings):
        turns = turns_text(step.rulings)
        resumed = Ruling(t, game, "state", f"{RESUMED} {turns}", None, pending.rule,
                         {"why": pending.why, "since_t": pending.t, "turns": turns})
        return Step(replace(step.state, guard=TurnGuard(seen)), (resumed,) + step.rulings)
    # neither put right nor a new illegal turn (a hand in view, a change not judged): still pending
    return Step(state, tuple(r for r in step.rulings if not follows(r)))


def turns_text(rulings) -> str:
    """The legal turns of a step as text: the sequence the game named (details["sequence"],
    turns seen together), else each legal ruling's words after its verdict."""
    legal = [r for r in rulings if r.legal is True]
    for r in legal:
        if r.details.get("sequence"):
            return ", ".join(str(turn) for turn in r.details["sequence"])
    return "; ".join(_after_verdict(r.summary) for r in legal)


def _after_verdict(summary: str) -> str:
    """The ruling's first sentence without its verdict word."""
    head, sep, rest = summary.partition(": ")
    return (rest if sep and head.lower() in ("legal", "seen together") else summary).split(". ")[0]


def accept(game: str, state: Any, t: float, after: Callable[[Any, IllegalTurn], Step] | None = None) -> Step:
    """The players accept the pending illegal turn: its after-state becomes the legal state
    and what follows from it is recorded now. ``after(state, turn)`` gives the after-state
    and its rulings where the game's step did not keep one (default: the step's own)."""
    pending = state.guard.illegal
    if pending is None:
        return Step(state, (Ruling(t, game, "warning", "Nothing to accept: no illegal turn is pending"),))
    accepted = Ruling(t, game, "state", f"{ACCEPTED} ({pending.why})", None, pending.rule,
                      {"why": pending.why, "since_t": pending.t})
    if after is not None:
        step = after(state, pending)
        new_state, follow = step.state, step.rulings
    else:
        new_state, follow = pending.after_state, tuple(replace(r, t=t) for r in pending.withheld)
    return Step(replace(new_state, guard=TurnGuard(pending.observation)), (accepted,) + tuple(follow))


def pending_json(state: Any) -> dict | None:
    """The pending illegal turn for a game's view, or None."""
    pending = state.guard.illegal
    return None if pending is None else pending.to_json()


def accept_declarable(state: Any) -> tuple[Declarable, ...]:
    """While an illegal turn is pending, the players may accept it as played (the page's
    "players declare" control offers it; every game adds it to its declarables)."""
    pending = state.guard.illegal
    if pending is None:
        return ()
    return (Declarable(ACCEPT_ILLEGAL, "accept the illegal turn as played", (), pending.rule,
                       f"the table stays as it is and play goes on from it ({pending.why})"),)


def accepted_by_players(game: str, state: Any, declaration: Declaration, t: float,
                        accept_turn: Callable[[Any, float], Step]) -> Step:
    """The players' "accept the illegal turn" declaration: logged like a ruling, then the
    game's own ``accept_illegal_turn`` records what the turn led to."""
    step = accept_turn(state, t)
    said = declared_ruling(game, declaration, t, "the players accept the illegal turn as played",
                           state.guard.illegal.rule if state.guard.illegal else None)
    return Step(step.state, (said,) + tuple(step.rulings))
