"""Tornado Splash course files: the fixed facts of a course (its curves, their order
and turn, track width, nominal layout), parsed and checked. Geometry built from the
pieces seen lives in course.py; the nominal layout's poses in layout.py.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from referee import safeload
from referee.catalog import DATA_DIR

from .errors import CourseFileError, UnknownCourseError

COURSES_DIR = DATA_DIR / "courses"
DEFAULT_COURSE = "tornado-circuit"
START_GATE = "tornado/start-gate"
FINISH_LINE = "tornado/finish-line"
MARKER_PREFIX = "tornado/curve-marker-"
CURVE_CARD_PREFIX = "tornado/curve-card-"

# A curve card's apex lies under its marker; allow this much for a card pushed aside.
CARD_TO_MARKER_TOLERANCE_MM = 60.0
# A boat counts as "on the track side" of a curve's boundary ray when it is at most
# this far behind the ray's vertex (boats never ride over the marker itself).
RAY_SIDE_MARGIN_MM = 20.0
# Radii outside this range mean the detected pieces do not line up with the path.
MIN_PATH_RADIUS_MM, MAX_PATH_RADIUS_MM = 20.0, 2000.0

DEFAULT_TRACK_WIDTH_MM = 300.0
DEFAULT_CURVE_RADIUS_MM = 250.0


# ---------------------------------------------------------------- course files
@dataclass(frozen=True)
class CurveSpec:
    """One curve of the course file: which marker, which way it turns."""

    marker: int
    turn: str  # "left" (counter-clockwise seen from above) or "right"

    @property
    def sign(self) -> int:
        return 1 if self.turn == "left" else -1


@dataclass(frozen=True)
class CourseSpec:
    """The fixed facts of a course (from its file): the curve order and turns."""

    id: str
    name: str
    curves: tuple[CurveSpec, ...]
    track_width_mm: float = DEFAULT_TRACK_WIDTH_MM
    curve_radius_mm: float = DEFAULT_CURVE_RADIUS_MM
    source: str = "<memory>"
    layout: dict = field(default_factory=dict, hash=False, compare=False)

    def layout_entry_deg(self, marker: int) -> float | None:
        try:
            return float(self.layout["curves"][str(marker)]["entry_deg"])
        except (KeyError, TypeError, ValueError):
            return None

    def to_json(self) -> dict:
        return {"id": self.id, "name": self.name,
                "curves": [{"marker": c.marker, "turn": c.turn} for c in self.curves],
                "track_width_mm": self.track_width_mm, "curve_radius_mm": self.curve_radius_mm}


def course_ids() -> list[str]:
    return sorted(p.stem for p in COURSES_DIR.glob("*.json"))


def load_course(name_or_path: str | os.PathLike | None = None) -> CourseSpec:
    """A packaged course by id, or a user's course file by path.

    Raises UnknownCourseError for a name that is neither, CourseFileError for a
    file that is not a valid course.
    """
    name = str(name_or_path) if name_or_path is not None else DEFAULT_COURSE
    if name in course_ids():
        return _read_course_file(COURSES_DIR / f"{name}.json")
    path = Path(name)
    if path.suffix.lower() == ".json" or path.exists() or os.sep in name:
        if path.is_dir():
            raise UnknownCourseError(f"course file {name!r} is a folder, not a course file")
        safeload.regular_file(path, "course file", UnknownCourseError)  # missing, a FIFO, a device, a loop
        return _read_course_file(path)
    raise UnknownCourseError(f"unknown course {name!r} (known: {', '.join(course_ids())}; or pass a course file path)")


def _read_course_file(path: Path) -> CourseSpec:
    doc = safeload.load_json(path, "course file", CourseFileError)  # size, depth, finite numbers
    return parse_course(doc, str(path))


def parse_course(doc: object, source: str = "<memory>") -> CourseSpec:
    """Validate a course document; every problem is reported in one line."""

    def bad(reason: str) -> CourseFileError:
        return CourseFileError(f"course file {source!r}: {reason}")

    if not isinstance(doc, dict):
        raise bad("the document must be a JSON object")
    cid = doc.get("id")
    if not isinstance(cid, str) or not cid.strip():
        raise bad("'id' must be a non-empty string")
    seq = doc.get("sequence")
    if not isinstance(seq, list) or len(seq) < 2:
        raise bad("'sequence' must be a list from a start-gate to a finish-line")
    kinds = [s.get("kind") if isinstance(s, dict) else None for s in seq]
    if kinds[0] != "start-gate":
        raise bad(f"'sequence' must begin with kind 'start-gate', not {kinds[0]!r}")
    if kinds[-1] != "finish-line":
        raise bad(f"'sequence' must end with kind 'finish-line', not {kinds[-1]!r}")
    curves: list[CurveSpec] = []
    for i, step in enumerate(seq[1:-1], start=1):
        if kinds[i] != "curve":
            raise bad(f"sequence[{i}] has kind {kinds[i]!r}; between the gates only 'curve' steps are allowed")
        marker, turn = step.get("marker"), step.get("turn")
        if not isinstance(marker, int) or isinstance(marker, bool) or not 1 <= marker <= 3:
            raise bad(f"sequence[{i}] marker must be 1, 2 or 3 (curve markers 230-232), not {marker!r}")
        if turn not in ("left", "right"):
            raise bad(f"sequence[{i}] turn must be 'left' or 'right', not {turn!r}")
        if any(c.marker == marker for c in curves):
            raise bad(f"curve marker {marker} is used twice")
        curves.append(CurveSpec(marker, turn))
    layout = doc.get("layout", {})
    if not isinstance(layout, dict):
        raise bad("'layout' must be an object")

    def positive(key: str, default: float) -> float:
        v = layout.get(key, default)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not 0 < v < 5000:
            raise bad(f"layout.{key} must be a positive number of mm, not {v!r}")
        return float(v)

    return CourseSpec(id=cid, name=str(doc.get("name", cid)), curves=tuple(curves),
                      track_width_mm=positive("track_width_mm", DEFAULT_TRACK_WIDTH_MM),
                      curve_radius_mm=positive("curve_radius_mm", DEFAULT_CURVE_RADIUS_MM),
                      source=source, layout=layout)

