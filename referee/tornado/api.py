"""Python API mirroring `refcam rank`, for the web page and scripts.

    from referee.tornado.api import rank
    result = rank(observation, course="tornado-circuit", weights={"boat-1": 3}, history=[earlier_obs])
    result.to_json()  # the SPEC section 4 rank document
"""

from __future__ import annotations

from typing import Iterable, Mapping

from referee.catalog import Catalog
from referee.observation import Observation

from .course_spec import DEFAULT_COURSE, CourseSpec, course_ids, load_course
from .referee import TornadoReferee
from .rounds import GrandPrix, cards_to_draw, grand_prix_points, hand_limit
from .standings import RankResult, TornadoGame, parse_weights

__all__ = ["rank", "RankResult", "TornadoReferee", "TornadoGame", "load_course", "course_ids", "parse_weights",
           "hand_limit", "cards_to_draw", "grand_prix_points", "GrandPrix"]


def rank(observation: Observation, course: str | CourseSpec = DEFAULT_COURSE,
         weights: str | Mapping | None = None, history: Iterable[Observation] | None = None,
         catalog: Catalog | None = None) -> RankResult:
    """Rank the boats of one observation; ``history``: earlier observations of the same
    race, oldest first, which settle positions one image leaves ambiguous.

    Raises UnknownCourseError / CourseFileError, WeightsError, DuplicateBoatError,
    MissingPiecesError (all RefcamError) for bad input.
    """
    referee = TornadoReferee(course, weights, catalog, nominal_fallback=False)
    for i, earlier in enumerate(history or ()):
        referee.observe_stable(earlier, float(i))
    return referee.assess(observation)
