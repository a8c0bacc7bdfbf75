"""Tornado Splash behind the game seam (referee/game.py).

Settings: the course (a course id or a course file) and the boat weights. The state is
a frozen TornadoState; ``step`` rules on a copy (TornadoReferee, the worksheet) and
returns the new state with its rulings. The page shows a "ranking" view; the live view
draws the course; "Settle it" is the photo finish.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Mapping

from referee.game import (Command, Declarable, Declaration, ExpectedPiece, Explanation, Offer, Option, Shape, Step,
                          View)
from referee import motion
from referee.observation import Observation
from referee.pending import guarded_step, pending_json
from referee.rulings import Ruling

from . import declare, picture
from .cards import BOAT_PREFIX, CARD_PREFIX
from .check import boats_of
from .check_command import CHECK
from .commands import rank_command
from .course_spec import course_ids, load_course
from .declare import RULE_GRAND_PRIX, grand_prix_final
from .dispute import parse_boats
from .referee import RULE_END, TornadoReferee, TornadoState
from .rounds import GrandPrix, format_grand_prix, parse_grand_prix
from .rules import short_name
from .standings import RankResult, format_weights, parse_weights

TITLE = "Tornado Splash"


def parse_course(text: str) -> str:
    """A course id or the path of a course file; refused when it cannot be loaded."""
    load_course(text)
    return text


def parse_grand_prix_setting(text: str) -> GrandPrix:
    """'new' (a grand prix's first race) or the earlier races (rounds.parse_grand_prix)."""
    return GrandPrix() if text.strip().lower() == "new" else parse_grand_prix(text)


def format_grand_prix_setting(gp: GrandPrix) -> str:
    return format_grand_prix(gp) if gp.races else "new"


OPTIONS = (
    Option("course", "course id (e.g. tornado-circuit) or a course file", parse_course,
           choices=tuple(course_ids()), metavar="C"),
    Option("weights", "boat weights, e.g. boat-1=3,boat-2=1 (default: boat k weighs k)", parse_weights,
           format=format_weights, metavar="W"),
    # Grand Prix Mode: three races, points added up. The view of a finished race offers
    # the value of this setting that starts the next race with the totals kept.
    # Ranking Phase: every boat racing has a place; a boat in play that is not in view
    # (under a hand) is named and the ranking marked incomplete.
    Option("boats", "the boats in play, e.g. 1,2,6 (default: those seen, and the decks on the table)",
           parse_boats, default=(), format=lambda boats: ",".join(b.split("/")[-1] for b in boats),
           metavar="B"),
    Option("grand_prix", "Grand Prix Mode: 'new' for the first race, or the earlier races' places, e.g. "
           "boat-2=1,boat-1=2;boat-1=1,boat-2=2 (the page offers the next race's value when a race ends)",
           parse_grand_prix_setting, format=format_grand_prix_setting, metavar="RACES"),
)


class TornadoSplash:
    """The Game for Tornado Splash."""

    id = "tornado"
    title = TITLE
    options = OPTIONS

    def new_state(self, settings: Mapping[str, Any]) -> TornadoState:
        work = TornadoReferee(settings.get("course"), settings.get("weights"), boats=settings.get("boats") or ())
        work.grand_prix = settings.get("grand_prix")
        return work.to_state()

    def step(self, state: TornadoState, observation: Observation, t: float) -> Step:
        """One stable state ruled on; an illegal turn holds the race (referee/pending.py)."""
        alone = seen_alone(state, observation)
        rule_step = functools.partial(_rule_step, seen_alone=alone) if alone else _rule_step
        ruled = guarded_step(self.id, rule_step, state, observation, t, follows=follows_from_turn,
                             is_illegal=is_illegal_turn)
        # the declarations live beside the worksheet's fields; a pass lasts until its round ends
        after = ruled.state
        passes = state.declared_passes if after.rounds.round == state.rounds.round else frozenset()
        after = dataclasses.replace(after, declared_passes=passes, declared=state.declared)
        return Step(after, tuple(ruled.rulings) + self._grand_prix_over(state, after, t))

    def _grand_prix_over(self, before: TornadoState, after: TornadoState, t: float) -> tuple[Ruling, ...]:
        """Grand Prix Mode: the third race just scored; the most points wins (a tie is said as one)."""
        if after.grand_prix is None or _final(before) is not None:
            return ()
        final = _final(after)
        if final is None:
            return ()
        totals = ", ".join(f"{short_name(n)} {v}" for n, v in sorted(final["totals"].items(), key=lambda kv: -kv[1]))
        if final["winner"]:
            summary = f"Grand Prix over: {short_name(final['winner'])} wins with {final['points']} points ({totals})"
        else:
            summary = (f"Grand Prix over: {' and '.join(short_name(n) for n in final['leaders'])} tie on {final['points']} "
                       f"points ({totals}); the rulebook gives no tie-break: the players name the winner")
        return (Ruling(t, self.id, "finish", summary, rule=str(RULE_GRAND_PRIX), details=final),)

    def expected_pieces(self, state: TornadoState) -> tuple[ExpectedPiece, ...]:
        """The boats still racing and the racing cards on the table, where they were last read
        (a boat under a hand: its last stable position), for vision to look again where one is
        not read. A boat that crossed the finish line or was eliminated leaves the course."""
        gone = set(state.memory.crossed) | set(state.memory.eliminated)
        pieces = dict(state.turnlog.last_seen)
        pieces.update((n, p) for n, p in (state.last_pieces or {}).items()
                      if n.startswith((BOAT_PREFIX, CARD_PREFIX)))
        pieces.update(state.card_poses)
        return tuple(ExpectedPiece(n, p.x_mm, p.y_mm, p.theta_deg, p.sigma_mm)
                     for n, p in sorted(pieces.items()) if n not in gone)

    def assess(self, state: TornadoState, observation: Observation) -> RankResult:
        """The standings of an observation given the race so far (the state is left as it is)."""
        return TornadoReferee.from_state(state).assess(observation)

    def view(self, state: TornadoState) -> View:
        data = TornadoReferee.from_state(state).state_json()
        final = grand_prix_final(data.get("grand_prix"), state.declared)
        if final is not None:
            data["grand_prix"] = dict(data["grand_prix"], final=final)
            data["grand_prix"].pop("next_race_setting", None)  # three races make a Grand Prix: no fourth
        if state.declared_passes or state.declared:
            data["declared"] = {"passed_this_round": sorted(short_name(b) for b in state.declared_passes),
                                "declarations": [str(d) for d in state.declared]}
        data["illegal_turn"] = pending_json(state)
        return View("ranking", data, title=TITLE, offers=_next_race_offer(data.get("grand_prix")))

    def shapes(self, state: TornadoState, observation: Observation | None) -> tuple[Shape, ...]:
        course = state.last_result.course if state.last_result is not None else None
        hidden = picture.hidden_boat_shapes(state.turnlog)
        if course is not None:
            return tuple(picture.course_shapes(course)) + hidden
        pieces = list(observation.pieces) if observation is not None else list((state.last_pieces or {}).values())
        return tuple(picture.piece_lines(pieces)) + hidden

    def explain(self, state: TornadoState, observation: Observation) -> Explanation | None:
        return picture.photo_finish(self.assess(state, observation))

    def commands(self) -> tuple[Command, ...]:
        return (rank_command(self), CHECK)

    def measurements(self) -> tuple:
        from .lineup.command import BOATS, COURSE, FINISH

        return (BOATS, COURSE, FINISH)

    # ------------------------------------------------------------------ what the players declare
    def declarables(self, state: TornadoState) -> tuple[Declarable, ...]:
        return declare.declarables(state, _final(state))

    def declare(self, state: TornadoState, declaration: Declaration, t: float) -> Step:
        # an accepted illegal turn may be the one that scores the Grand Prix's third race
        step = declare.declare(self, state, declaration, t, _final(state))
        return Step(step.state, tuple(step.rulings) + self._grand_prix_over(state, step.state, t))


def _final(state: TornadoState) -> dict | None:
    """The Grand Prix result once its third race is scored (None otherwise, and without one)."""
    if state.grand_prix is None:
        return None
    return grand_prix_final(TornadoReferee.from_state(state)._grand_prix_json(), state.declared)


def _rule_step(state: TornadoState, observation: Observation, t: float, seen_alone: frozenset = frozenset()) -> Step:
    work = TornadoReferee.from_state(state)
    work.seen_alone = seen_alone
    rulings = work.observe_stable(observation, t)
    return Step(work.to_state(), tuple(rulings))


def seen_alone(state: TornadoState, observation: Observation) -> frozenset:
    """While an illegal turn is pending: the boat whose turn it was, when that turn was seen on
    its own (the illegal table held one boat's move) and the boat still stands where it ended.
    Its part of the change since the last legal state is that one turn, seen: judged as one
    turn, never taken for two of its turns merged with the other boats' (Action Phase)."""
    pending, legal = state.guard.illegal, state.guard.legal_observation
    if pending is None or legal is None:
        return frozenset()
    before, illegal, now = (boats_of(o) for o in (legal, pending.observation, observation))
    movers = [n for n, p in illegal.items() if n in before and motion.moved(before[n], p)]
    if len(movers) != 1 or movers[0] not in now or motion.moved(illegal[movers[0]], now[movers[0]]):
        return frozenset()
    return frozenset(movers)


def follows_from_turn(ruling: Ruling) -> bool:
    """What a turn leads to and an illegal turn must not (referee/pending.py): a finishing
    place (Crossing the Finish Line), the race's end (Ending the Game) and the new standings
    (Ranking Phase), and with them the Grand Prix points, which come from the race's end."""
    return ruling.kind in ("finish", "ranking") or ruling.rule == RULE_END


def is_illegal_turn(ruling: Ruling) -> bool:
    """A ruling that makes the turn illegal. Out of Bounds is not one: there the rulebook
    itself says what follows (the boat is eliminated), so nothing is held back."""
    return ruling.legal is False and not str(ruling.rule or "").endswith("Out of Bounds")


def _next_race_offer(grand_prix: dict | None) -> tuple[Offer, ...]:
    """Grand Prix Mode: once a race is scored, one button starts the next race with the
    totals kept (the grand_prix setting that carries them)."""
    if not grand_prix or not grand_prix.get("next_race_setting"):
        return ()
    number = len(grand_prix.get("races", ())) + 2
    return (Offer(f"Start race {number} (totals kept)", {"grand_prix": grand_prix["next_race_setting"]},
                  hint="this race is scored; the table is judged afresh for the next one"),)


GAME = TornadoSplash()
