"""What `refcam rank` adds around the standings to settle a dispute from an ordinary photo.

- Which course (rulebook, Variant Courses): the one given, else the one the pieces in
  view fit (referee/tornado/identify.py), else a list of those that fit and a question.
- Hidden boats (Ranking Phase: every racing boat has a place): a boat in play (from
  --boats, seen earlier in the history, or whose deck's racing cards lie on the table) but
  not seen now is named and the ranking is marked incomplete, never silently dropped; when
  the boats in play are not known, completeness is not claimed.
- The numbers behind each call: one line per adjacent pair (Delta, sigma_Delta, band,
  reason) for the picture's panel, and the grouping rule that the order follows.
"""

from __future__ import annotations

from typing import Iterable

from referee.catalog import Catalog, default_catalog
from referee.errors import InvalidInputError
from referee.observation import Observation

from .cards import BOAT_PREFIX, CARD_PREFIX
from .course_spec import CourseSpec, load_course
from .errors import CourseMismatchError
from .identify import choose_course, fit_course, identify_course
from .turns import hidden_boat_warnings


def course_for(course_arg: str | None, obs: Observation) -> tuple[CourseSpec, list[str]]:
    """The course to rank on, and a warning when it was identified rather than given. A
    course given that the pieces in view contradict (Variant Courses: markers, curve faces,
    where the gate, finish line and markers stand) is refused, naming what contradicts it
    and the courses that do fit: ranking on the wrong course is an answer, and a wrong one."""
    if not course_arg:
        spec, why = choose_course(obs)
        return spec, [why]
    spec = load_course(course_arg)
    fit = fit_course(spec, obs)
    if fit.fits:
        return spec, []
    more = f" (+{len(fit.against) - 3} more)" if len(fit.against) > 3 else ""
    good = [f.course for f in identify_course(obs) if f.fits and f.course != spec.id]
    hint = f"; the pieces in view fit {', '.join(good)}" if good else ""
    raise CourseMismatchError(f"--course {course_arg!r} does not fit the pieces in view: "
                              f"{'; '.join(fit.against[:3])}{more}{hint}")


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
    notes = hidden_boat_warnings(missing, (), obs.warnings)
    if missing:
        notes.append("ranking incomplete: " + ", ".join(m.split("/")[-1] for m in missing) +
                     " not placed; the places behind it may shift")
    return notes


def parse_boats(text: str | None, catalog: Catalog | None = None) -> list[str]:
    """The boats in play as the players say them: 'boat-1,boat-6' or '1,6' (Player Setup:
    one boat per player). Refused, quoting the text: a boat the game does not have."""
    if not text:
        return []
    known = boat_names(catalog)
    out = []
    for item in text.split(","):
        item = item.strip()
        name = f"{BOAT_PREFIX}{item}" if item.isdigit() else (item if item.startswith("tornado/") else f"tornado/{item}")
        if name not in known:
            raise InvalidInputError(f"boats {text!r}: {item!r} is not a boat of the game "
                                    f"(boats: {', '.join(n.split('/')[-1] for n in known)})")
        out.append(name)
    return sorted(set(out))


def boat_names(catalog: Catalog | None = None) -> list[str]:
    """Components: every boat token the game has."""
    return [p.name for p in (catalog or default_catalog()).pieces(family="tornado/boat")]


def completeness(obs: Observation, declared: Iterable[str], seen_before: Iterable[str], gone: Iterable[str],
                 history: bool) -> tuple[bool | None, list[str]]:
    """Ranking Phase: every boat still in the race has a place. (complete, notes): False when
    a boat in play is not in view (named); None when the boats in play are not known (no
    --boats, no history, and fewer boats in view than the game has), so completeness cannot
    be claimed; True when every boat in play is ranked."""
    declared = set(declared)
    notes = hidden_boat_notes(obs, set(seen_before) | declared, gone)
    if any(n.startswith("ranking incomplete") for n in notes):
        return False, notes
    in_view = {p.name for p in obs.pieces if p.name.startswith(BOAT_PREFIX)}
    if declared or history or len(in_view | set(gone)) >= len(boat_names()):
        return True, notes
    return None, notes + ["the boats in play are not known (give --boats or --history): a boat out of view, "
                          "under a hand, would not be ranked, so this ranking is not claimed complete"]


def pair_panel_lines(pairs) -> list[str]:
    """The picture's panel: the grouping rule, then one line per adjacent pair."""
    if not pairs:
        return []
    # the full rule is in the JSON (GROUPING_RULE); the panel keeps lines phone-short
    return ["D: difference, sD: its sigma, band = 2 sD", "equal boats grouped front first, lighter first"] + \
        [p.line() for p in pairs]
