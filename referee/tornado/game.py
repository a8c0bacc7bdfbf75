"""Tornado Splash behind the game seam (referee/game.py).

Settings: the course (a course id or a course file) and the boat weights. The state is
a frozen TornadoState; ``step`` rules on a copy (TornadoReferee, the worksheet) and
returns the new state with its rulings. The page shows a "ranking" view; the live view
draws the course; "Settle it" is the photo finish.
"""

from __future__ import annotations

from typing import Any, Mapping

from referee.game import Command, Explanation, Option, Shape, Step, View
from referee.observation import Observation

from . import picture
from .course import course_ids, load_course
from .referee import TornadoReferee, TornadoState
from .standings import RankResult, format_weights, parse_weights

TITLE = "Tornado Splash"


def parse_course(text: str) -> str:
    """A course id or the path of a course file; refused when it cannot be loaded."""
    load_course(text)
    return text


OPTIONS = (
    Option("course", "course id (e.g. tornado-circuit) or a course file", parse_course,
           choices=tuple(course_ids()), metavar="C"),
    Option("weights", "boat weights, e.g. boat-1=3,boat-2=1 (default: boat k weighs k)", parse_weights,
           format=format_weights, metavar="W"),
)


class TornadoSplash:
    """The Game for Tornado Splash."""

    id = "tornado"
    title = TITLE
    options = OPTIONS

    def new_state(self, settings: Mapping[str, Any]) -> TornadoState:
        return TornadoReferee(settings.get("course"), settings.get("weights")).to_state()

    def step(self, state: TornadoState, observation: Observation, t: float) -> Step:
        work = TornadoReferee.from_state(state)
        rulings = work.observe_stable(observation, t)
        return Step(work.to_state(), tuple(rulings))

    def assess(self, state: TornadoState, observation: Observation) -> RankResult:
        """The standings of an observation given the race so far (the state is left as it is)."""
        return TornadoReferee.from_state(state).assess(observation)

    def view(self, state: TornadoState) -> View:
        return View("ranking", TornadoReferee.from_state(state).state_json(), title=TITLE)

    def shapes(self, state: TornadoState, observation: Observation | None) -> tuple[Shape, ...]:
        course = state.last_result.course if state.last_result is not None else None
        if course is not None:
            return picture.course_shapes(course)
        pieces = list(observation.pieces) if observation is not None else list((state.last_pieces or {}).values())
        return picture.piece_lines(pieces)

    def explain(self, state: TornadoState, observation: Observation) -> Explanation | None:
        return picture.photo_finish(self.assess(state, observation))

    def commands(self) -> tuple[Command, ...]:
        from .check_command import CHECK
        from .commands import RANK

        return (RANK, CHECK)


GAME = TornadoSplash()
