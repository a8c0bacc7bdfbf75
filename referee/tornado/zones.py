"""Which zone a point lies in: boundary-line geometry first, then the track side,
the course path, and the race history; what stays ambiguous is reported, never guessed.

Rulebook, Course Details: zones follow each other along the course; a straight zone
runs up to the next boundary line and a curve zone is the sector at its marker.
Because boundary lines extend without end (Lines), the half-plane of a line can
also take in far parts of the course (on Tornado Circuit the lines of each
180-degree curve are collinear and cut the other straight; the finish line stands
just behind the start gate), so the half-plane tests alone may leave several
candidates.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import geometry as g
from .course import Course


@dataclass(frozen=True)
class Location:
    """Where one point (a boat's reference point, a card centre) lies on the course.

    zone: the zone index, ``course.finished_zone`` for past the finish line, or
    None (outside every zone, or ambiguous: then ``candidates`` lists the options).
    how: a short note on what decided it (for the rank document and the picture).
    """

    zone: int | None
    candidates: tuple[int, ...]
    how: str
    on_start_gate: bool = False

    @property
    def ambiguous(self) -> bool:
        return self.zone is None and len(self.candidates) > 1

    @property
    def outside(self) -> bool:
        return self.zone is None and not self.candidates


def in_zone(course: Course, index: int, p: g.Point) -> bool:
    """The pure boundary-line test for one zone (lines extended without end)."""
    if index == course.finished_zone:
        # Just past the finish line, beside its segment: a boat that has crossed
        # is taken off the course at once (Final Rankings), so it can only stand
        # about one card past the line.
        past = course.finish.signed(p)
        return 0.0 <= past <= course.finish_overrun_mm and course.finish.on_track_side(p, course.track_width)
    z = course.zones[index]
    if z.kind == "curve":
        return z.sector_offset_deg(p) < z.sweep_deg
    # a boat sitting on the start gate may lie a little behind its line (Determining Start Position)
    behind_ok = course.start_depth_mm if index == 0 else 0.0
    return z.entry.signed(p) >= -behind_ok and z.exit.signed(p) < 0.0


def on_track_side(course: Course, index: int, p: g.Point) -> bool:
    """Whether p lies beside the physical pieces bounding the zone, not a far extension of their lines."""
    if index == course.finished_zone:
        return True
    z = course.zones[index]
    if z.kind == "curve":
        return g.dist(p, z.vertex) <= z.path_radius + course.track_width
    return z.entry.on_track_side(p, course.track_width) and z.exit.on_track_side(p, course.track_width)


def path_distance(course: Course, index: int, p: g.Point) -> float:
    if index == course.finished_zone:
        s = max(-course.finish.half_length, min(course.finish.half_length, course.finish.along_coord(p)))
        return g.dist(p, course.finish.point_at(s))
    return course.zones[index].path_distance(p)


def is_on_start_gate(course: Course, p: g.Point) -> bool:
    """On the gate's spaces: within the gate's depth of its line, beside its segment."""
    s = course.start.signed(p)
    return -course.start_depth_mm <= s <= course.start_depth_mm and \
        abs(course.start.along_coord(p)) <= course.start.half_length + course.start_depth_mm


def candidate_zones(course: Course, p: g.Point) -> tuple[int, ...]:
    return tuple(i for i in range(course.finished_zone + 1) if in_zone(course, i, p))


def locate(course: Course, p: g.Point, min_zone: int = 0, start_evidence: str | None = None) -> Location:
    """Locate p; ``min_zone`` is what the history (or the boat's own cards) proves it
    has reached already; ``start_evidence`` says why the boat provably is still on
    its first stretch from the start gate (None when nothing proves it)."""
    gate = is_on_start_gate(course, p)
    cands = candidate_zones(course, p)
    if not cands:
        return Location(None, (), "outside every zone", gate)
    how = "boundary lines"
    side = tuple(c for c in cands if on_track_side(course, c, p))
    if not side:
        # Inside the extended lines of some zones but beside none of their pieces:
        # off the course altogether.
        far = min(path_distance(course, c, p) for c in cands)
        return Location(None, (), f"outside every zone ({far:.0f} mm from the course path)", gate)
    if len(side) < len(cands) and len(cands) > 1:
        how = "track side"
    cands = side
    if len(cands) > 1:
        dists = {c: path_distance(course, c, p) for c in cands}
        best = min(dists.values())
        near = tuple(c for c in cands if dists[c] < best + course.track_width / 2)
        if len(near) < len(cands):
            how = "nearest course path"
        cands = near
    if len(cands) > 1 and min_zone > 0:
        later = tuple(c for c in cands if c >= min_zone)
        if later:
            if len(later) < len(cands):
                how = "race history"
            cands = later
    if len(cands) > 1 and start_evidence and 0 in cands and min_zone == 0:
        cands = (0,)
        how = start_evidence
    if len(cands) == 1:
        return Location(cands[0], cands, how, gate)
    return Location(None, cands, "ambiguous: " + " or ".join(course.zone_name(c) for c in cands), gate)
