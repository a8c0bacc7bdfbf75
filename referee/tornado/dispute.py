"""What `refcam rank` adds around the standings to settle a dispute from an ordinary photo.

- Which course (rulebook, Variant Courses): the one given, else the one the pieces in
  view fit (referee/tornado/identify.py), else a list of those that fit and a question.
- Hidden boats (Ranking Phase: every racing boat has a place): a boat seen earlier in
  the history, or whose deck's racing cards lie on the table, but not seen now is named
  and the ranking is marked incomplete, never silently dropped.
- The numbers behind each call: one line per adjacent pair (Delta, sigma_Delta, band,
  reason) for the picture's panel, and the grouping rule that the order follows.
"""

from __future__ import annotations

from typing import Iterable

from referee.observation import Observation

from .cards import BOAT_PREFIX, CARD_PREFIX
from .course_spec import CourseSpec, load_course
from .identify import choose_course
from .turns import hidden_boat_warnings


def course_for(course_arg: str | None, obs: Observation) -> tuple[CourseSpec, list[str]]:
    """The course to rank on, and a warning when it was identified rather than given."""
    if course_arg:
        return load_course(course_arg), []
    spec, why = choose_course(obs)
    return spec, [why]


def deck_owners(obs: Observation) -> set[str]:
    """Player Setup: deck d belongs to boat d, so a card of deck d on the table means boat d is racing."""
    return {f"{BOAT_PREFIX}{p.name[len(CARD_PREFIX):].split('-')[0]}" for p in obs.pieces
            if p.name.startswith(CARD_PREFIX)}


def missing_boats(obs: Observation, seen_before: Iterable[str] = (), gone: Iterable[str] = ()) -> list[str]:
    """Boats still in the race that this observation does not show (gone: crossed or eliminated)."""
    here = {p.name for p in obs.pieces if p.name.startswith(BOAT_PREFIX)}
    return sorted((set(seen_before) | deck_owners(obs)) - here - set(gone))


def hidden_boat_notes(obs: Observation, seen_before: Iterable[str] = (), gone: Iterable[str] = ()) -> list[str]:
    missing = missing_boats(obs, seen_before, gone)
    notes = hidden_boat_warnings(missing, ())
    if missing:
        notes.append("ranking incomplete: " + ", ".join(m.split("/")[-1] for m in missing) +
                     " not placed; the places behind it may shift")
    return notes


def pair_panel_lines(pairs) -> list[str]:
    """The picture's panel: the grouping rule, then one line per adjacent pair."""
    if not pairs:
        return []
    # the full rule is in the JSON (GROUPING_RULE); the panel keeps lines phone-short
    return ["D: difference, sD: its sigma, band = 2 sD", "equal boats grouped front first, lighter first"] + \
        [p.line() for p in pairs]
