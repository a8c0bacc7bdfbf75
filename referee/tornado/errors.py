"""Tornado Splash referee errors: one subclass per failure, each message quotes the input."""

from __future__ import annotations

from referee.errors import InvalidInputError, RefcamError, UnknownNameError


class UnknownCourseError(UnknownNameError):
    """A --course value that is neither a packaged course id nor a course file."""


class CourseFileError(InvalidInputError):
    """A course file that cannot be used (not JSON, missing or wrong fields)."""


class MissingPiecesError(RefcamError):
    """The image lacks pieces the course needs (curve markers, curve cards, gates)."""


class CourseGeometryError(RefcamError):
    """The detected pieces do not form the course (e.g. a curve's entry cannot be told)."""


class WeightsError(InvalidInputError):
    """A malformed --weights value or weights naming boats that do not exist."""


class DuplicateBoatError(InvalidInputError):
    """Two boats in one observation carry the same id."""


class HistoryError(InvalidInputError):
    """A --history entry that cannot be read."""


class CourseNotIdentifiedError(RefcamError):
    """No --course given and the pieces in view fit several courses, or none."""


class CourseMismatchError(InvalidInputError):
    """The course given does not fit the pieces in view (the message names what contradicts it)."""
