"""Tornado Splash behind the game seam (referee/game.py).

Settings: the course (a course id or a course file) and the boat weights. The state is
a frozen TornadoState; ``step`` rules on a copy (TornadoReferee, the worksheet) and
returns the new state with its rulings. The page shows a "ranking" view; the live view
draws the course; "Settle it" is the photo finish.
"""

from __future__ import annotations

from typing import Any, Mapping

from referee.game import Command, Explanation, Offer, Option, Shape, Step, View
from referee.observation import Observation

from . import picture
from .course_spec import course_ids, load_course
from .referee import TornadoReferee, TornadoState
from .rounds import GrandPrix, format_grand_prix, parse_grand_prix
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
        work = TornadoReferee(settings.get("course"), settings.get("weights"))
        work.grand_prix = settings.get("grand_prix")
        return work.to_state()

    def step(self, state: TornadoState, observation: Observation, t: float) -> Step:
        work = TornadoReferee.from_state(state)
        rulings = work.observe_stable(observation, t)
        return Step(work.to_state(), tuple(rulings))

    def assess(self, state: TornadoState, observation: Observation) -> RankResult:
        """The standings of an observation given the race so far (the state is left as it is)."""
        return TornadoReferee.from_state(state).assess(observation)

    def view(self, state: TornadoState) -> View:
        data = TornadoReferee.from_state(state).state_json()
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
        from .check_command import CHECK
        from .commands import RANK

        return (RANK, CHECK)

    def measurements(self) -> tuple:
        from .measure_command import BOATS

        return (BOATS,)


def _next_race_offer(grand_prix: dict | None) -> tuple[Offer, ...]:
    """Grand Prix Mode: once a race is scored, one button starts the next race with the
    totals kept (the grand_prix setting that carries them)."""
    if not grand_prix or not grand_prix.get("next_race_setting"):
        return ()
    number = len(grand_prix.get("races", ())) + 2
    return (Offer(f"Start race {number} (totals kept)", {"grand_prix": grand_prix["next_race_setting"]},
                  hint="this race is scored; the table is judged afresh for the next one"),)


GAME = TornadoSplash()
