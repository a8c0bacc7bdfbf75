"""Tornado Splash courses: the course file (fixed facts) and the course built from
the pieces seen in one image (boundary lines, zones, the course path).

Rulebook, Course Details: a course is a chain of straight zones and curve zones.
A straight zone ends at the next boundary line; a curve zone is the angular sector
at its curve marker between the curve's two boundary lines; boundary lines count
as extending without end (Course Details, Lines). The course file only gives the
order of the curves and their turn; where every line lies comes from the detected
pieces, and which curve card belongs to which marker, and which of a curve's two
lines is its entry, is found from geometry and the direction of travel, never from
card ids (SPEC section 2).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from referee import safeload
from referee.catalog import DATA_DIR, Catalog, default_catalog
from referee.observation import Observation, PiecePose

from . import geometry as g
from .errors import CourseFileError, CourseGeometryError, MissingPiecesError, UnknownCourseError

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
        if not path.is_file():
            raise UnknownCourseError(f"course file {name!r} does not exist")
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


# ---------------------------------------------------------------- boundary lines
@dataclass(frozen=True)
class BoundaryLine:
    """A zone boundary, counted as extending without end (Course Details, Lines).

    origin: the gate centre or the curve vertex; along: unit vector along the line
    (a gate: toward its left end; a curve ray: from the vertex through the card's
    sticker); forward: unit normal pointing the way boats travel across it.
    Uncertainty: the line is fixed by two points on it, at along-coordinates 0
    and ``s2`` with standard uncertainties ``sigma0`` and ``sigma2`` (mm).
    """

    name: str
    kind: str  # "gate" or "ray"
    origin: g.Point
    along: g.Point
    forward: g.Point
    half_length: float  # the physical part: |s| <= half_length (gate) or s >= 0 (ray)
    sigma0: float
    s2: float
    sigma2: float
    piece: str = ""
    sigma_dir: float | None = None  # rad; set when the direction is known apart from the two points (nominal)

    def signed(self, p: g.Point) -> float:
        """How far p lies past the line in the direction of travel (mm, + = past)."""
        return g.dot(g.sub(p, self.origin), self.forward)

    def along_coord(self, p: g.Point) -> float:
        return g.dot(g.sub(p, self.origin), self.along)

    def point_at(self, s: float) -> g.Point:
        return g.add(self.origin, g.scale(self.along, s))

    def sigma_at(self, s: float) -> float:
        """Standard uncertainty of the line's position across itself at along-coordinate s.

        First-order propagation from its two defining points: the offset at s is
        (1 - s/s2) * d0 + (s/s2) * d2.
        """
        if self.sigma_dir is not None:
            return math.hypot(self.sigma0, s * self.sigma_dir)
        t = s / self.s2
        return math.sqrt(((1 - t) * self.sigma0) ** 2 + (t * self.sigma2) ** 2)

    @property
    def sigma_direction_rad(self) -> float:
        if self.sigma_dir is not None:
            return self.sigma_dir
        return math.hypot(self.sigma0, self.sigma2) / abs(self.s2)

    def on_track_side(self, p: g.Point, track_width: float) -> bool:
        """Whether p lies beside the physical part of the line rather than its extension."""
        s = self.along_coord(p)
        if self.kind == "ray":
            return s >= -RAY_SIDE_MARGIN_MM
        return abs(s) <= self.half_length + track_width / 2

    def to_json(self) -> dict:
        return {"name": self.name, "kind": self.kind, "origin": list(self.origin), "along": list(self.along),
                "forward": list(self.forward), "half_length": None if math.isinf(self.half_length) else self.half_length,
                "piece": self.piece}


# ---------------------------------------------------------------- zones
@dataclass(frozen=True)
class Zone:
    """One zone of the course, in order from the start gate.

    Straight: between ``entry`` and ``exit`` lines. Curve: the sector at ``vertex``
    swept from the entry ray to the exit ray in the turn direction (``turn`` +1
    counter-clockwise for a left turn, -1 clockwise), ``sweep_deg`` wide.
    ``path``: the course centreline through the zone, polyline of (x, y) mm.
    """

    index: int
    name: str
    kind: str  # "straight" or "curve"
    entry: BoundaryLine
    exit: BoundaryLine
    path: tuple[g.Point, ...]
    vertex: g.Point | None = None
    sigma_vertex: float = 0.0
    turn: int = 0
    sweep_deg: float = 0.0
    marker: int | None = None
    path_radius: float = 0.0

    def sector_offset_deg(self, p: g.Point) -> float:
        """Curve only: how far p has turned past the entry ray, in [0, 360)."""
        phi = g.angle_deg(g.sub(p, self.vertex))
        return g.wrap360(self.turn * (phi - g.angle_deg(self.entry.along)))

    def path_distance(self, p: g.Point) -> float:
        return min(g.point_segment_distance(p, a, b) for a, b in zip(self.path, self.path[1:]))

    def to_json(self) -> dict:
        d = {"index": self.index, "name": self.name, "kind": self.kind, "entry": self.entry.name,
             "exit": self.exit.name, "path": [list(p) for p in self.path]}
        if self.kind == "curve":
            d.update(vertex=list(self.vertex), turn="left" if self.turn > 0 else "right",
                     sweep_deg=self.sweep_deg, marker=self.marker)
        return d


@dataclass(frozen=True)
class Course:
    """A course as laid out on the table in one image."""

    spec: CourseSpec
    zones: tuple[Zone, ...]
    start: BoundaryLine
    finish: BoundaryLine
    start_depth_mm: float  # a boat sitting on the start gate may lie this far behind its line
    finish_overrun_mm: float  # a boat that has just crossed may lie this far past the finish
    curve_cards: dict = field(default_factory=dict, hash=False, compare=False)  # marker -> (entry card, exit card)
    warnings: tuple[str, ...] = ()

    @property
    def finished_zone(self) -> int:
        """Index used for 'past the finish line' (one beyond the last zone)."""
        return len(self.zones)

    @property
    def track_width(self) -> float:
        return self.spec.track_width_mm

    def zone_name(self, index: int) -> str:
        return "past the finish line" if index == self.finished_zone else self.zones[index].name

    def lines(self) -> list[BoundaryLine]:
        out = [self.start]
        for z in self.zones:
            out.append(z.exit)
        return out

    def to_json(self) -> dict:
        return {"course": self.spec.id, "zones": [z.to_json() for z in self.zones],
                "lines": [ln.to_json() for ln in self.lines()],
                "curve_cards": {str(k): list(v) for k, v in self.curve_cards.items()}}


# ---------------------------------------------------------------- building
def _gate_line(pose: PiecePose, name: str, catalog: Catalog) -> BoundaryLine:
    """The line of a start gate or finish line: through its two end stickers, square to travel.

    Rulebook, How to Use the Start and Goal Gates / SPEC section 2: the stickers
    sit on the two ends of the gate's line, +x the direction of travel.
    """
    spec = catalog.piece(pose.name)
    half = abs(spec.sticker("left").y_mm - spec.sticker("right").y_mm) / 2
    sigma_theta = math.radians(pose.sigma_theta_deg) if pose.sigma_theta_deg > 0 else 2 * pose.sigma_mm / (2 * half)
    # equivalent two-point model: the centre (sigma0) and a point `half` along with
    # the extra angular uncertainty folded in
    sigma2 = math.hypot(pose.sigma_mm, half * sigma_theta)
    return BoundaryLine(name=name, kind="gate", origin=(pose.x_mm, pose.y_mm),
                        along=g.direction(pose.theta_deg + 90.0), forward=g.direction(pose.theta_deg),
                        half_length=half, sigma0=pose.sigma_mm, s2=half, sigma2=sigma2, piece=pose.name)


def _card_sticker_point(pose: PiecePose, catalog: Catalog) -> g.Point:
    """Where the curve card's sticker lies: on its boundary line, out from the apex (catalog)."""
    slot = None
    for mid in pose.marker_ids:
        st = catalog.sticker(mid)
        if st is not None and st.piece == pose.name:
            slot = st
            break
    if slot is None:
        spec = catalog.piece(pose.name)
        slot = next((s for s in spec.stickers if s.face == pose.face), spec.stickers[0])
    return g.to_world((pose.x_mm, pose.y_mm), pose.theta_deg, (slot.x_mm, slot.y_mm))


@dataclass(frozen=True)
class _CurveCard:
    name: str
    sticker: g.Point
    sigma: float
    face: str | None


def build_course(spec: CourseSpec, obs: Observation, catalog: Catalog | None = None,
                 nominal_fallback: bool = False) -> Course:
    """Build the zones of ``spec`` from the pieces in ``obs`` (game frame, mm).

    Raises MissingPiecesError naming every missing piece, CourseGeometryError when
    the pieces are there but do not form the course. nominal_fallback (the live
    page, whose camera may frame only part of the course): a finish line, or a
    curve whose marker and cards are all out of view, is taken from the course
    file's nominal layout with a wide sigma, and a warning says so.
    """
    catalog = catalog or default_catalog()
    warnings: list[str] = []
    nominal: set[str] = set()
    if nominal_fallback and spec.layout:
        obs, warnings, nominal = _fill_from_layout(spec, obs, catalog)
    start_pose, finish_pose = obs.piece(START_GATE), obs.piece(FINISH_LINE)
    missing = [n for n, p in ((START_GATE, start_pose), (FINISH_LINE, finish_pose)) if p is None]
    markers: dict[int, PiecePose] = {}
    for c in spec.curves:
        pose = obs.piece(f"{MARKER_PREFIX}{c.marker}")
        if pose is None:
            missing.append(f"{MARKER_PREFIX}{c.marker}")
        else:
            markers[c.marker] = pose

    cards_at = _curve_cards_at_markers(spec, obs, markers, catalog, warnings)
    for c in spec.curves:
        if c.marker in markers and len(cards_at[c.marker]) != 2:
            n = len(cards_at[c.marker])
            missing.append(f"curve cards at curve marker {c.marker} (found {n}, needs 2)")
    if missing:
        raise MissingPiecesError(f"course {spec.id!r} needs pieces not found in the image: {', '.join(missing)}")

    start = _gate_line(start_pose, "start gate", catalog)
    finish = _gate_line(finish_pose, "finish line", catalog)

    # Entry/exit of each curve, from the direction of travel: the course arrives
    # from the previous curve (or the start gate) and leaves toward the next one
    # (or the finish line).
    anchors = [start.origin] + [(markers[c.marker].x_mm, markers[c.marker].y_mm) for c in spec.curves] + [finish.origin]
    curve_lines: list[tuple[BoundaryLine, BoundaryLine, float]] = []
    curve_cards: dict[int, tuple[str, str]] = {}
    for k, c in enumerate(spec.curves):
        vertex = (markers[c.marker].x_mm, markers[c.marker].y_mm)
        a, b = cards_at[c.marker]
        entry_card, exit_card = _choose_entry(spec, c, vertex, a, b, anchors[k], anchors[k + 2])
        lines = [_curve_line(spec, c, markers[c.marker], role, card, nominal, warnings)
                 for role, card in (("entry", entry_card), ("exit", exit_card))]
        sweep = g.wrap360(c.sign * (g.angle_deg(lines[1].along) - g.angle_deg(lines[0].along)))
        curve_lines.append((lines[0], lines[1], sweep))
        curve_cards[c.marker] = (entry_card.name, exit_card.name)

    zones = _make_zones(spec, start, finish, markers, curve_lines)
    boat = catalog.piece("tornado/boat-1").footprint["size_mm"]
    gate_depth = float(catalog.family("tornado/gate")["footprint"]["size_mm"][0])
    card_len = float(catalog.family("tornado/racing-card")["footprint"]["size_mm"][0])
    return Course(spec=spec, zones=tuple(zones), start=start, finish=finish,
                  # a boat on the gate: gate half-depth plus the boat's half-length
                  start_depth_mm=gate_depth / 2 + boat[0] / 2,
                  # a boat that has just crossed stands at most about a card plus a boat past it
                  finish_overrun_mm=card_len + boat[0],
                  curve_cards=curve_cards, warnings=tuple(warnings))


def _curve_cards_at_markers(spec: CourseSpec, obs: Observation, markers: dict[int, PiecePose], catalog: Catalog,
                            warnings: list[str]) -> dict[int, list["_CurveCard"]]:
    """Which curve cards lie at which marker: a card's boundary line starts at its
    apex under the marker (How to Use the Curve Cards and Markers), so take the
    marker nearest the card's apex; card ids play no part."""
    cards_at: dict[int, list[_CurveCard]] = {m: [] for m in markers}
    for pose in obs.pieces:
        if not pose.name.startswith(CURVE_CARD_PREFIX):
            continue
        apex = (pose.x_mm, pose.y_mm)
        sticker = _card_sticker_point(pose, catalog)
        best = min(markers.items(), key=lambda kv: g.dist(apex, (kv[1].x_mm, kv[1].y_mm)), default=None)
        if best is None or g.dist(apex, (best[1].x_mm, best[1].y_mm)) > CARD_TO_MARKER_TOLERANCE_MM:
            warnings.append(f"curve card {pose.name} lies at no curve marker of course {spec.id!r}; ignored")
            continue
        cards_at[best[0]].append(_CurveCard(pose.name, sticker, pose.sigma_mm, pose.face))
    return cards_at


def _curve_line(spec: CourseSpec, c: CurveSpec, mpose: PiecePose, role: str, card: "_CurveCard", nominal: set,
                warnings: list[str]) -> BoundaryLine:
    """A curve's entry or exit boundary: the ray from the marker through the card's sticker."""
    vertex = (mpose.x_mm, mpose.y_mm)
    s2 = g.dist(card.sticker, vertex)
    if s2 < 1.0:
        raise CourseGeometryError(f"curve card {card.name} has its sticker on curve marker {c.marker}")
    along = g.unit(g.sub(card.sticker, vertex))
    # Curve cards lie face up for a left turn, face down for a right turn
    # (How to Use the Curve Cards and Markers): say so if a card disagrees.
    want = "left-turn" if c.turn == "left" else "right-turn"
    if card.face in ("left-turn", "right-turn") and card.face != want:
        warnings.append(f"curve card {card.name} at marker {c.marker} shows its {card.face} face; "
                        f"course {spec.id!r} turns {c.turn} there")
    return BoundaryLine(name=f"curve {c.marker} {role}", kind="ray", origin=vertex, along=along,
                        forward=g.rotate(along, 90.0 * c.sign), half_length=math.inf,
                        sigma0=mpose.sigma_mm, s2=s2, sigma2=card.sigma, piece=card.name,
                        sigma_dir=math.radians(NOMINAL_SIGMA_DEG) if card.name in nominal else None)


# How far the real pieces may lie from the course card's nominal layout.
NOMINAL_SIGMA_MM = 15.0
NOMINAL_SIGMA_DEG = 3.0


def _fill_from_layout(spec: CourseSpec, obs: Observation, catalog: Catalog) -> tuple[Observation, list[str], set]:
    """Complete the course from the course file's layout where pieces are out of view.

    Seen pieces always win: a curve marker out of view is placed at the apex of its
    curve cards when they are seen (the apex lies under the marker), else at its
    nominal place; a curve card out of view is laid from the (seen or nominal)
    marker along the nominal direction of the line it stands for.
    """
    from .layout import layout_poses  # layout builds on this module

    try:
        nominal = {p.name: p for p in layout_poses(spec, NOMINAL_SIGMA_MM, catalog)}
    except Exception:  # noqa: BLE001 - a layout that cannot place pieces simply gives no fallback
        return obs, [], set()
    added, warnings = [], []
    if obs.piece(START_GATE) is None:
        # Without the start gate the poses are not in the game frame: fit the layout
        # to the course pieces that are seen, then place the gate from it.
        fitted = _fit_layout(nominal, obs)
        if fitted is None:
            return obs, [], set()
        nominal, rms, n = fitted
        added.append(nominal[START_GATE])
        warnings.append(f"{START_GATE} is not in view: the course file's layout, fitted to {n} pieces seen "
                        f"(rms {rms:.0f} mm), places it (+-{math.hypot(NOMINAL_SIGMA_MM, rms):.0f} mm); positions "
                        "are not in the start-gate frame")
    if obs.piece(FINISH_LINE) is None and FINISH_LINE in nominal:
        added.append(nominal[FINISH_LINE])
        warnings.append(f"{FINISH_LINE} is not in view: the course file's nominal place stands in for it "
                        f"(+-{NOMINAL_SIGMA_MM:.0f} mm)")
    seen_cards = [p for p in obs.pieces if p.name.startswith(CURVE_CARD_PREFIX)]
    used_names = {p.name for p in obs.pieces}
    free = [p.name for p in catalog.pieces(family="tornado/curve-card") if p.name not in used_names]
    for c in spec.curves:
        notes = _fill_curve(c, nominal, obs, seen_cards, free, added)
        if notes:
            warnings.append(f"curve {c.marker} is not all in view: {'; '.join(notes)} from the course file "
                            f"(+-{NOMINAL_SIGMA_MM:.0f} mm, +-{NOMINAL_SIGMA_DEG:.0f} deg)")
    if not added:
        return obs, [], set()
    from dataclasses import replace

    return replace(obs, pieces=obs.pieces + tuple(added)), warnings, {p.name for p in added}



def _fill_curve(c: CurveSpec, nominal: dict[str, PiecePose], obs: Observation, seen_cards: list[PiecePose],
                free: list[str], added: list[PiecePose]) -> list[str]:
    """One curve's marker and cards out of view, from the layout (appended to ``added``;
    ``free`` lends unused curve-card names); returns notes saying what was assumed."""
    marker = f"{MARKER_PREFIX}{c.marker}"
    if marker not in nominal:
        return []
    nominal_v = (nominal[marker].x_mm, nominal[marker].y_mm)
    nominal_rays = [p.theta_deg for p in nominal.values() if p.name.startswith(CURVE_CARD_PREFIX)
                    and g.dist((p.x_mm, p.y_mm), nominal_v) < 1e-6]
    seen_marker = obs.piece(marker)
    # the layout lists a curve's entry card before its exit card (layout.layout_poses)
    nominal_entry = nominal_rays[0] if nominal_rays else None
    centre = (seen_marker.x_mm, seen_marker.y_mm) if seen_marker else nominal_v
    reach = CARD_TO_MARKER_TOLERANCE_MM if seen_marker else 2 * CARD_TO_MARKER_TOLERANCE_MM
    here = [p for p in seen_cards if g.dist((p.x_mm, p.y_mm), centre) <= reach]
    if seen_marker is not None and len(here) >= 2:
        return []
    notes = []
    if seen_marker is None:
        if here:
            ax = sum(p.x_mm for p in here) / len(here)
            ay = sum(p.y_mm for p in here) / len(here)
            sig = min(p.sigma_mm for p in here)
            vertex_pose = PiecePose(marker, (), ax, ay, 0.0, nominal[marker].z_mm, sig)
            notes.append(f"{marker} is placed at its curve cards' apex")
        else:
            vertex_pose = nominal[marker]
            notes.append(f"{marker} takes its nominal place")
        added.append(vertex_pose)
    else:
        vertex_pose = seen_marker
    # the lines not seen: the nominal ray whose direction no seen card takes
    missing_rays = list(nominal_rays)
    for p in here:
        if missing_rays:
            missing_rays.remove(min(missing_rays, key=lambda a: abs(g.wrap180(a - p.theta_deg))))
    for ang in missing_rays:
        if not free:
            break
        name = free.pop(0)
        face = "left-turn" if c.turn == "left" else "right-turn"
        added.append(PiecePose(name, (), vertex_pose.x_mm, vertex_pose.y_mm, ang, 0.3, vertex_pose.sigma_mm,
                               face=face))
        role = "entry" if nominal_entry is not None and abs(g.wrap180(ang - nominal_entry)) < 1e-6 else "exit"
        notes.append(f"its {role} curve card takes its nominal direction {ang:.0f} deg")
    return notes

def _fit_layout(nominal: dict[str, PiecePose], obs: Observation) -> tuple[dict, float, int] | None:
    """The layout moved rigidly onto the observation's frame, from the seen course
    pieces (curve markers, finish line); None with too little to fit.

    Returns (moved poses with sigma widened by the fit's rms, rms mm, pieces used).
    """
    pairs = [((q.x_mm, q.y_mm), (p.x_mm, p.y_mm)) for name, q in nominal.items()
             if (name.startswith(MARKER_PREFIX) or name == FINISH_LINE) and (p := obs.piece(name)) is not None]
    if not pairs:
        return None
    ca = (sum(a[0] for a, _ in pairs) / len(pairs), sum(a[1] for a, _ in pairs) / len(pairs))
    cb = (sum(b[0] for _, b in pairs) / len(pairs), sum(b[1] for _, b in pairs) / len(pairs))
    if len(pairs) >= 2:
        sxx = sum(g.dot(g.sub(a, ca), g.sub(b, cb)) for a, b in pairs)
        sxy = sum(g.cross(g.sub(a, ca), g.sub(b, cb)) for a, b in pairs)
        if math.hypot(sxx, sxy) < 1e-6:
            return None
        rot = math.degrees(math.atan2(sxy, sxx))
    else:
        finish = obs.piece(FINISH_LINE)
        if finish is not None and FINISH_LINE in nominal:
            rot = finish.theta_deg - nominal[FINISH_LINE].theta_deg
        else:
            rot = _turn_from_curve_cards(nominal, obs, pairs[0])
            if rot is None:
                return None  # one marker alone does not give the turn
    shift = g.sub(cb, g.rotate(ca, rot))

    def move(p: PiecePose, sigma: float) -> PiecePose:
        x, y = g.add(g.rotate((p.x_mm, p.y_mm), rot), shift)
        return PiecePose(p.name, p.marker_ids, x, y, p.theta_deg + rot, p.z_mm, sigma, p.sigma_theta_deg, p.face)

    rms = math.sqrt(sum(g.dist(g.add(g.rotate(a, rot), shift), b) ** 2 for a, b in pairs) / len(pairs))
    if rms > 4 * NOMINAL_SIGMA_MM:
        return None  # the pieces seen are not laid out as the course file says
    sigma = math.hypot(NOMINAL_SIGMA_MM, rms)
    return {n: move(p, sigma) for n, p in nominal.items()}, rms, len(pairs)


def _turn_from_curve_cards(nominal: dict[str, PiecePose], obs: Observation, pair) -> float | None:
    """The layout's turn from one seen curve: its two cards' directions against the
    nominal entry and exit directions (None when the pairing is ambiguous, as for a
    180-degree curve)."""
    (nv, sv) = pair
    rays = [p.theta_deg for n, p in nominal.items() if n.startswith(CURVE_CARD_PREFIX)
            and g.dist((p.x_mm, p.y_mm), nv) < 1e-6]
    seen = [p.theta_deg for p in obs.pieces if p.name.startswith(CURVE_CARD_PREFIX)
            and g.dist((p.x_mm, p.y_mm), sv) <= CARD_TO_MARKER_TOLERANCE_MM]
    if len(rays) != 2 or len(seen) != 2:
        return None
    options = []
    for a, b in ((rays[0], rays[1]), (rays[1], rays[0])):
        d1, d2 = g.wrap180(seen[0] - a), g.wrap180(seen[1] - b)
        options.append((abs(g.wrap180(d1 - d2)), d1 + g.wrap180(d2 - d1) / 2))
    options.sort()
    if options[1][0] - options[0][0] < 30.0:
        return None
    return options[0][1]


def _choose_entry(spec: CourseSpec, curve: CurveSpec, vertex: g.Point, a: _CurveCard, b: _CurveCard,
                  prev_anchor: g.Point, next_anchor: g.Point) -> tuple[_CurveCard, _CurveCard]:
    """Tell which card gives the curve's entry line, from the direction of travel.

    For the right choice the course arrives from behind the entry line and from
    outside the sector, and leaves ahead of the exit line and outside the sector.
    """
    def score(entry: _CurveCard, exit_: _CurveCard) -> float:
        e = g.unit(g.sub(entry.sticker, vertex))
        x = g.unit(g.sub(exit_.sticker, vertex))
        sweep = g.wrap360(curve.sign * (g.angle_deg(x) - g.angle_deg(e)))

        def inside(p: g.Point) -> bool:
            off = g.wrap360(curve.sign * (g.angle_deg(g.sub(p, vertex)) - g.angle_deg(e)))
            return 1e-6 < off < sweep - 1e-6

        def sign(v: float) -> float:
            return 0.0 if abs(v) < 1e-6 else (1.0 if v > 0 else -1.0)

        s = 0.0
        s += -1.0 if inside(prev_anchor) else 1.0
        s += -1.0 if inside(next_anchor) else 1.0
        s += -sign(g.dot(g.sub(prev_anchor, vertex), g.rotate(e, 90.0 * curve.sign)))
        s += sign(g.dot(g.sub(next_anchor, vertex), g.rotate(x, 90.0 * curve.sign)))
        return s

    sa, sb = score(a, b), score(b, a)
    if sa != sb:
        return (a, b) if sa > sb else (b, a)
    nominal = spec.layout_entry_deg(curve.marker)
    if nominal is not None:
        da = abs(g.wrap180(g.angle_deg(g.sub(a.sticker, vertex)) - nominal))
        db = abs(g.wrap180(g.angle_deg(g.sub(b.sticker, vertex)) - nominal))
        if da != db:
            return (a, b) if da < db else (b, a)
    raise CourseGeometryError(f"cannot tell which of curve cards {a.name} and {b.name} is the entry of curve "
                              f"marker {curve.marker}: the course path does not pass it in a clear direction")


def _make_zones(spec: CourseSpec, start: BoundaryLine, finish: BoundaryLine, markers: dict[int, PiecePose],
                curve_lines: list[tuple[BoundaryLine, BoundaryLine, float]]) -> list[Zone]:
    zones: list[Zone] = []
    pos, heading = start.origin, start.forward
    prev_line = start
    n = len(spec.curves)
    for k, (c, (entry, exit_, sweep)) in enumerate(zip(spec.curves, curve_lines)):
        vertex = entry.origin
        r_in = _radius_on(entry, pos, heading, spec.curve_radius_mm)
        if k == n - 1:
            r_out = _radius_on(exit_, finish.origin, g.scale(finish.forward, -1.0), r_in)
        else:
            r_out = r_in
        entry_pt = entry.point_at(r_in)
        name = "start straight" if k == 0 else f"straight after curve {spec.curves[k - 1].marker}"
        zones.append(Zone(index=len(zones), name=name, kind="straight", entry=prev_line, exit=entry,
                          path=(pos, entry_pt)))
        # a point every 5 degrees or less; the 1e-6 keeps a sweep measured a hair under a multiple of
        # 5 degrees (a right angle read as 89.9999999) from dropping a point
        steps = max(2, int(sweep / 5 + 1e-6) + 1)
        arc = []
        for i in range(steps + 1):
            f = i / steps
            r = r_in + (r_out - r_in) * f
            arc.append(g.add(vertex, g.scale(g.rotate(entry.along, c.sign * sweep * f), r)))
        mpose = markers[c.marker]
        zones.append(Zone(index=len(zones), name=f"curve {c.marker}", kind="curve", entry=entry, exit=exit_,
                          path=tuple(arc), vertex=vertex, sigma_vertex=mpose.sigma_mm, turn=c.sign,
                          sweep_deg=sweep, marker=c.marker, path_radius=(r_in + r_out) / 2))
        pos, heading, prev_line = arc[-1], exit_.forward, exit_
    name = "final straight" if n else "straight to the finish"
    zones.append(Zone(index=len(zones), name=name, kind="straight", entry=prev_line, exit=finish,
                      path=(pos, finish.origin)))
    return zones


def _radius_on(ray: BoundaryLine, p: g.Point, heading: g.Point, fallback: float) -> float:
    """Where the travel line (p, heading) meets a curve ray, as a distance from the vertex."""
    hit = g.line_intersection(p, heading, ray.origin, ray.along)
    if hit is None or not MIN_PATH_RADIUS_MM <= hit[1] <= MAX_PATH_RADIUS_MM:
        return fallback
    return hit[1]
