"""Tornado Splash courses: the course built from the pieces seen in one image (boundary
lines, zones, the course path).

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
from dataclasses import dataclass, field

from referee.camera_field import CameraField
from referee.catalog import Catalog, default_catalog
from referee.observation import Observation, PiecePose

from . import geometry as g
from .errors import CourseGeometryError, MissingPiecesError

# the course file's facts: course_spec.py; the layout fallback: nominal.py (which builds on layout.py)
from .course_spec import (CARD_TO_MARKER_TOLERANCE_MM, CURVE_CARD_PREFIX, FINISH_LINE, MARKER_PREFIX, MAX_PATH_RADIUS_MM,
                          MIN_PATH_RADIUS_MM, RAY_SIDE_MARGIN_MM, START_GATE, CourseSpec, CurveSpec)
from .nominal import NOMINAL_SIGMA_DEG, fill_from_layout


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
    # rad; set when the direction is known apart from the two points (a nominal card; a gate's own heading)
    sigma_dir: float | None = None
    # the heights (mm) its two points were read at, for the camera's field (referee.camera_field);
    # None when a point was not read by the camera (a nominal piece): no field moves it
    heights_mm: tuple[float, float] | None = None
    # the camera's share of sigma0 and sigma2 (PiecePose.sigma_camera_mm of the pieces read there): it
    # moves with the camera's field, which a comparison that uses the field counts on its own
    camera0: float = 0.0
    camera2: float = 0.0

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

    def direction_sigma_split(self) -> tuple[float, float]:
        """(the direction's sigma without the camera's share, the camera's share alone), rad: the
        camera's share turns the line as its field moves the two points, the rest independently."""
        if self.sigma_dir is not None or self.heights_mm is None:
            return self.sigma_direction_rad, 0.0
        cam0, cam2 = min(self.camera0, self.sigma0), min(self.camera2, self.sigma2)
        own = math.hypot(math.sqrt(self.sigma0 ** 2 - cam0 ** 2), math.sqrt(self.sigma2 ** 2 - cam2 ** 2))
        return own / abs(self.s2), math.hypot(cam0, cam2) / abs(self.s2)

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
    vertex_z_mm: float | None = None  # the marker's height as read (None: a nominal marker), for the camera's field
    vertex_camera_mm: float = 0.0  # the camera's share of sigma_vertex (BoundaryLine.camera0)

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
    # the camera's error as a field over the table (Observation.frame['camera_field']), or None
    camera_field: CameraField | None = field(default=None, hash=False, compare=False)

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
def _gate_line(pose: PiecePose, name: str, catalog: Catalog, nominal: set) -> BoundaryLine:
    """The line of a start gate or finish line: through its two end stickers, square to travel.

    Rulebook, How to Use the Start and Goal Gates / SPEC section 2: the stickers
    sit on the two ends of the gate's line, +x the direction of travel. Its uncertainty is its
    pose's: where its middle lies across the line (along +x; a placement tolerance may be tighter
    across it than along it) and its heading, apart (sigma_dir), since a shift of the line does
    not turn it. (A two-point model, the middle and one end, was lopsided: wider at the far end
    than the near one, and it turned the line by the middle's shift too.)
    """
    spec = catalog.piece(pose.name)
    half = abs(spec.sticker("left").y_mm - spec.sticker("right").y_mm) / 2
    across = pose.sigma_toward_mm(pose.theta_deg)
    sigma_theta = math.radians(pose.sigma_theta_deg) if pose.sigma_theta_deg > 0 else 2 * across / (2 * half)
    # the pose's own two terms: where its middle is across the line (sigma0) and its heading (sigma_dir),
    # apart; at `half` along, both
    sigma2 = math.hypot(across, half * sigma_theta)
    return BoundaryLine(name=name, kind="gate", origin=(pose.x_mm, pose.y_mm),
                        along=g.direction(pose.theta_deg + 90.0), forward=g.direction(pose.theta_deg),
                        half_length=half, sigma0=across, s2=half, sigma2=sigma2, piece=pose.name, sigma_dir=sigma_theta,
                        heights_mm=None if pose.name in nominal else (pose.z_mm, pose.z_mm))


def _card_sticker_point(pose: PiecePose, catalog: Catalog) -> g.Point:
    """The point of the curve card's boundary line (its +x from the apex) at its sticker's distance out:
    where the sticker itself lies when it sits on the line as the catalog's default does; a measured
    copy's sticker off the line (`refcam measure tornado-course`) no longer tilts the line."""
    slot = None
    for mid in pose.marker_ids:
        st = catalog.sticker(mid)
        if st is not None and st.piece == pose.name:
            slot = st
            break
    if slot is None:
        spec = catalog.piece(pose.name)
        slot = next((s for s in spec.stickers if s.face == pose.face), spec.stickers[0])
    return g.to_world((pose.x_mm, pose.y_mm), pose.theta_deg, (slot.x_mm, 0.0))


@dataclass(frozen=True)
class _CurveCard:
    name: str
    sticker: g.Point
    sigma: float
    face: str | None
    z_mm: float = 0.0  # the height its sticker was read at
    camera: float = 0.0  # the camera's share of sigma (PiecePose.sigma_camera_mm)


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
        obs, warnings, nominal = fill_from_layout(spec, obs, catalog)
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

    start = _gate_line(start_pose, "start gate", catalog, nominal)
    finish = _gate_line(finish_pose, "finish line", catalog, nominal)

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

    zones = _make_zones(spec, start, finish, markers, curve_lines, nominal)
    boat = catalog.piece("tornado/boat-1").footprint["size_mm"]
    gate_depth = float(catalog.family("tornado/gate")["footprint"]["size_mm"][0])
    card_len = float(catalog.family("tornado/racing-card")["footprint"]["size_mm"][0])
    return Course(spec=spec, zones=tuple(zones), start=start, finish=finish,
                  # a boat on the gate: gate half-depth plus the boat's half-length
                  start_depth_mm=gate_depth / 2 + boat[0] / 2,
                  # a boat that has just crossed stands at most about a card plus a boat past it
                  finish_overrun_mm=card_len + boat[0],
                  curve_cards=curve_cards, warnings=tuple(warnings), camera_field=CameraField.from_frame(obs.frame))


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
        # what tilts the line is the point's sigma across the card's edge (a measured copy knows it better
        # than along the edge); with the catalog's default, the same in every direction
        cards_at[best[0]].append(_CurveCard(pose.name, sticker, pose.sigma_toward_mm(pose.theta_deg + 90.0),
                                            pose.face, pose.z_mm, pose.sigma_camera_mm))
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
                        sigma_dir=math.radians(NOMINAL_SIGMA_DEG) if card.name in nominal else None,
                        heights_mm=None if nominal & {mpose.name, card.name} else (mpose.z_mm, card.z_mm),
                        camera0=mpose.sigma_camera_mm, camera2=card.camera)



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
                curve_lines: list[tuple[BoundaryLine, BoundaryLine, float]], nominal: set) -> list[Zone]:
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
                          sweep_deg=sweep, marker=c.marker, path_radius=(r_in + r_out) / 2,
                          vertex_z_mm=None if mpose.name in nominal else mpose.z_mm,
                          vertex_camera_mm=mpose.sigma_camera_mm))
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
