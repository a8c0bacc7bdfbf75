"""Random legal table setups for the renderer, from a seed, for all three games.

``build_scene(game, seed, ...)`` returns a scene dict (docs/scene-format.md) with a
camera that sees the whole relevant area. The game-specific pieces come from
``kang_pieces``, ``kayak_pieces`` and ``tornado_pieces``; their legality helpers
(``kayak_joint_open_lanes``, ``Track``) are shared with the tests and the sample
sessions. Everything geometric is read from referee.catalog and the course files.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from referee import safeload
from referee.catalog import Catalog, default_catalog
from referee.tornado.course_spec import COURSES_DIR, course_ids
from referee.errors import InvalidInputError, UnknownNameError

RESOLUTIONS = {"720p": (1280, 720), "1080p": (1920, 1080), "4k": (3840, 2160)}
FX_1080P = (1000.0, 1500.0)  # realistic webcam focal lengths at 1920x1080
CAMERA_HEIGHT_MM = (600.0, 1200.0)
TILT_MAX_DEG = 40.0
VIEW_MARGIN = 0.05  # share of the image kept free around the relevant area
MIN_STICKER_PX_1080P = 17.0  # smallest sticker side a still may show at 1080p (scaled with the width)


# --- geometry helpers ------------------------------------------------------------------------
def _frame_apply(x, y, theta_deg, pts) -> np.ndarray:
    a = math.radians(theta_deg)
    c, s = math.cos(a), math.sin(a)
    p = np.asarray(pts, dtype=np.float64).reshape(-1, 2)
    return np.column_stack([x + c * p[:, 0] - s * p[:, 1], y + s * p[:, 0] + c * p[:, 1]])


def piece_outline(catalog: Catalog, piece: dict) -> np.ndarray:
    """(N, 2) world outline of a scene piece's footprint (mirrored wedges handled)."""
    from .draw import curve_card_opens_left

    spec = catalog.piece(piece["name"])
    poly = np.array(spec.footprint_polygon(24), dtype=np.float64)
    if spec.footprint.get("kind") == "wedge" and not curve_card_opens_left(spec, piece.get("face")):
        poly[:, 1] *= -1
    return _frame_apply(piece["x_mm"], piece["y_mm"], piece.get("theta_deg", 0.0), poly)


def piece_polygon(catalog: Catalog, piece: dict):
    from shapely.geometry import Polygon

    return Polygon(piece_outline(catalog, piece)).buffer(0)


def sticker_points(catalog: Catalog, piece: dict, z_mm: float | None = None) -> np.ndarray:
    """(N, 3) world corners of the quiet zones of a piece's showing stickers."""
    from .render import showing_stickers

    spec = catalog.piece(piece["name"])
    z = catalog.family(spec.family)["top_z_mm"] if z_mm is None else z_mm
    q = catalog.quiet_zone_fraction
    out = []
    for st in showing_stickers(spec, piece.get("face")):
        c = np.array(st.corners_local())
        centre = c.mean(axis=0)
        quiet = centre + (c - centre) * (1 + 2 * q)
        w = _frame_apply(piece["x_mm"], piece["y_mm"], piece.get("theta_deg", 0.0), quiet)
        out.append(np.column_stack([w, np.full(4, float(z))]))
    return np.vstack(out) if out else np.zeros((0, 3))


def relevant_points(catalog: Catalog, pieces: list[dict]) -> np.ndarray:
    """(N, 3) points that must be in view: outlines and sticker corners of the pieces."""
    pts = []
    for p in pieces:
        spec = catalog.piece(p["name"])
        top = float(max([catalog.family(spec.family)["top_z_mm"]]
                        + list(catalog.family(spec.family).get("top_z_mm_on", {}).values())))
        outline = piece_outline(catalog, p)
        pts.append(np.column_stack([outline, np.zeros(len(outline))]))
        pts.append(np.column_stack([outline, np.full(len(outline), top)]))
        pts.append(sticker_points(catalog, p, top))
    return np.vstack(pts)


# --- camera ----------------------------------------------------------------------------------
def random_intrinsics(rng: np.random.Generator, size: tuple[int, int], fx: float | None = None):
    """A webcam-like camera matrix (3, 3) and mild distortion (5,) for an image size;
    focal lengths follow 1080p figures scaled by the width."""
    w, h = size
    scale = w / 1920.0
    f = float(fx if fx is not None else rng.uniform(*FX_1080P)) * scale
    K = np.array([[f * (1 + rng.uniform(-0.002, 0.002)), 0.0, w / 2 + rng.normal(0, 0.006 * w)],
                  [0.0, f, h / 2 + rng.normal(0, 0.006 * h)], [0.0, 0.0, 1.0]])
    dist = np.array([rng.uniform(-0.12, 0.04), rng.uniform(-0.03, 0.06), rng.uniform(-8e-4, 8e-4),
                     rng.uniform(-8e-4, 8e-4), 0.0])
    return K, dist


def _fits(points: np.ndarray, K, dist, R, t, size, margin: float) -> bool:
    import cv2

    pc = points @ R.T + t
    if np.any(pc[:, 2] <= 10):
        return False
    w, h = size
    ideal = pc[:, :2] / pc[:, 2:3]
    # the distortion polynomial is only trusted near the frame: check the ideal rays first
    u = K[0, 0] * ideal[:, 0] + K[0, 2]
    v = K[1, 1] * ideal[:, 1] + K[1, 2]
    if np.any(u < -0.3 * w) or np.any(u > 1.3 * w) or np.any(v < -0.3 * h) or np.any(v > 1.3 * h):
        return False
    rvec = cv2.Rodrigues(R)[0]
    img, _ = cv2.projectPoints(points.reshape(-1, 1, 3), rvec, t, K, dist)
    img = img.reshape(-1, 2)
    mx, my = margin * w, margin * h
    return bool(np.all(img[:, 0] >= mx) and np.all(img[:, 0] <= w - 1 - mx)
                and np.all(img[:, 1] >= my) and np.all(img[:, 1] <= h - 1 - my))


def fit_camera(rng: np.random.Generator, points: np.ndarray, size: tuple[int, int], tilt_deg: float | None = None,
               fx: float | None = None, height_range=CAMERA_HEIGHT_MM, azimuth_deg: float | None = None,
               roll_deg: float | None = None, attempts: int = 30) -> dict | None:
    """A camera (scene format) looking down at points (N, 3) from a height in height_range,
    tilted tilt_deg from vertical, as close as it can be while every point stays in
    view with a margin. None when no such camera exists."""
    from .camera import look_at_pose

    lo_pt, hi_pt = points.min(axis=0), points.max(axis=0)
    target = np.array([(lo_pt[0] + hi_pt[0]) / 2, (lo_pt[1] + hi_pt[1]) / 2, 0.0])
    for attempt in range(attempts):
        tilt = float(rng.uniform(0, TILT_MAX_DEG) if tilt_deg is None else tilt_deg)
        az = math.radians(float(rng.uniform(0, 360) if azimuth_deg is None else azimuth_deg))
        roll = float(rng.uniform(-8, 8) if roll_deg is None else roll_deg)
        fx_try = fx if fx is not None else (rng.uniform(*FX_1080P) if attempt < attempts // 2 else FX_1080P[0])
        K, dist = random_intrinsics(rng, size, fx_try)
        jitter = rng.normal(0, 15, 2) if attempt < attempts // 2 else np.zeros(2)
        look = target + np.array([jitter[0], jitter[1], 0.0])
        direction = np.array([-math.sin(math.radians(tilt)) * math.cos(az),
                              -math.sin(math.radians(tilt)) * math.sin(az), math.cos(math.radians(tilt))])

        def pose_at(height):
            pos = look + direction * (height / max(1e-9, direction[2]))
            return pos, look_at_pose(pos, look, roll)

        lo, hi = height_range
        pos, (R, t) = pose_at(hi)
        if not _fits(points, K, dist, R, t, size, VIEW_MARGIN):
            continue
        pos, (R, t) = pose_at(lo)
        if not _fits(points, K, dist, R, t, size, VIEW_MARGIN):
            for _ in range(24):  # closest height that still fits
                mid = (lo + hi) / 2
                pos, (R, t) = pose_at(mid)
                if _fits(points, K, dist, R, t, size, VIEW_MARGIN):
                    hi = mid
                else:
                    lo = mid
            height = hi * float(rng.uniform(1.0, 1.08))
            height = min(height, height_range[1])
        else:
            height = lo
        pos, _ = pose_at(height)
        return {"image_size": [int(size[0]), int(size[1])], "camera_matrix": K.tolist(),
                "dist_coeffs": dist.tolist(),
                "pose": {"position_mm": [float(v) for v in pos], "look_at_mm": [float(v) for v in look],
                         "roll_deg": roll}}
    return None


# --- Kang ------------------------------------------------------------------------------------
def kang_square_centre(catalog: Catalog, file_index: int, row: int) -> tuple[float, float]:
    """Centre of square (file 1-6, row 1-6) in the board frame (SPEC section 2)."""
    g = catalog.game("kang")["grid"]
    a = float(g["square_mm"])
    return ((file_index - (g["files"] + 1) / 2) * a, (row - (g["rows"] + 1) / 2) * a)


def kang_zone_slots(catalog: Catalog, coach: str) -> list[tuple[float, float]]:
    """Token places in a coach's start zone beyond the board edge (two rows of six)."""
    half = float(catalog.game("kang")["board_half_extent_mm"])
    d = float(catalog.piece("kang/small-1").footprint["diameter_mm"])
    sign = -1.0 if coach == "A" else 1.0
    out = []
    for row in range(2):
        for k in range(6):
            out.append(((k - 2.5) * (d + 8), sign * (half + 6 + d / 2 + row * (d + 8))))
    return out


def kang_pieces(rng: np.random.Generator, catalog: Catalog | None = None, on_board: int | None = None,
                alfalfa: int | None = None) -> list[dict]:
    """Board at the game-frame origin; kangaroo tokens on distinct squares or in the two
    start zones; optional alfalfa tokens beside the board."""
    catalog = catalog or default_catalog()
    g = catalog.game("kang")["grid"]
    pieces = [{"name": "kang/board", "x_mm": 0.0, "y_mm": 0.0, "theta_deg": 0.0}]
    tokens = [p.name for p in catalog.pieces(family="kang/kangaroo")]
    n_on = int(rng.integers(2, 9) if on_board is None else on_board)
    order = list(rng.permutation(len(tokens)))
    squares = [(f, r) for f in range(1, g["files"] + 1) for r in range(1, g["rows"] + 1)]
    chosen = [squares[i] for i in rng.choice(len(squares), size=n_on, replace=False)]
    zone_free = {"A": kang_zone_slots(catalog, "A"), "B": kang_zone_slots(catalog, "B")}
    for k, idx in enumerate(order):
        name = tokens[idx]
        face = str(rng.choice(["front", "back"]))
        if k < n_on:
            x, y = kang_square_centre(catalog, *chosen[k])
            x, y = x + rng.uniform(-3, 3), y + rng.uniform(-3, 3)
            pieces.append({"name": name, "x_mm": x, "y_mm": y, "theta_deg": float(rng.uniform(-180, 180)),
                           "face": face, "resting_on": "kang/board"})
        else:
            coach = "A" if k % 2 else "B"
            slot = zone_free[coach].pop(int(rng.integers(0, 6 if len(zone_free[coach]) > 6 else len(zone_free[coach]))))
            pieces.append({"name": name, "x_mm": slot[0] + rng.uniform(-2, 2), "y_mm": slot[1] + rng.uniform(-2, 2),
                           "theta_deg": float(rng.uniform(-180, 180)), "face": face})
    n_alf = int(rng.integers(0, 4) if alfalfa is None else alfalfa)
    half = float(catalog.game("kang")["board_half_extent_mm"])
    d_alf = float(catalog.piece("kang/alfalfa-1").footprint["diameter_mm"])
    for k in range(n_alf):
        side = 1 if k % 2 else -1
        pieces.append({"name": f"kang/alfalfa-{k + 1}", "x_mm": side * (half + 10 + d_alf / 2),
                       "y_mm": (k // 2) * (d_alf + 6) * -side + rng.uniform(-3, 3),
                       "theta_deg": float(rng.uniform(-180, 180))})
    return pieces


# --- Kayak -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class RiverTile:
    tile: int  # 0..7
    side: str  # "A" / "B"
    rotation: int  # 0 / 180
    shift: int  # whole lanes toward the left bank (+y), relative to the Start tile


def kayak_geometry(catalog: Catalog) -> tuple[int, int, float]:
    t = catalog.game("kayak")["tile"]
    return int(t["rows"]), int(t["lanes"]), float(t["space_mm"])


def tile_layout_as_lying(catalog: Catalog, rt: RiverTile) -> list[str]:
    """The tile's layout rows as it lies (rotation applied), upstream row first."""
    layout = catalog.piece(f"kayak/tile-{rt.tile}").attrs["layout"][rt.side]
    if rt.rotation == 180:
        return [row[::-1] for row in layout[::-1]]
    return list(layout)


def kayak_tile_pose(catalog: Catalog, index: int, rt: RiverTile) -> tuple[float, float, float]:
    rows, _, a = kayak_geometry(catalog)
    return (index * rows * a, rt.shift * a, float(rt.rotation))


def kayak_joint_open_lanes(catalog: Catalog, up: RiverTile, down: RiverTile) -> list[int]:
    """World lanes (relative to the Start tile) open on both sides of a joint: the
    upstream tile's last row and the downstream tile's first row hold no rock there."""
    a_rows = tile_layout_as_lying(catalog, up)
    b_rows = tile_layout_as_lying(catalog, down)
    _, lanes, _ = kayak_geometry(catalog)
    open_up = {lane + up.shift for lane in range(lanes) if a_rows[-1][lane] != "R"}
    open_down = {lane + down.shift for lane in range(lanes) if b_rows[0][lane] != "R"}
    return sorted(open_up & open_down)


def kayak_river(rng: np.random.Generator, catalog: Catalog | None = None, n_river: int | None = None,
                finish: bool | None = None, max_shift: int = 1) -> list[RiverTile]:
    """Start tile, then river tiles with random sides, rotations and lane shifts, then
    optionally the Finish tile; every neighbouring pair shares an open lane."""
    catalog = catalog or default_catalog()
    n = int(rng.integers(2, 5) if n_river is None else n_river)
    with_finish = bool(rng.random() < 0.4) if finish is None else finish
    for _ in range(200):
        river = [RiverTile(0, str(rng.choice(["A", "B"])), 0, 0)]
        for t in rng.permutation(np.arange(1, 7))[:n]:
            shift = int(np.clip(river[-1].shift + rng.integers(-1, 2), -max_shift, max_shift))
            river.append(RiverTile(int(t), str(rng.choice(["A", "B"])), int(rng.choice([0, 180])), shift))
        if with_finish:
            river.append(RiverTile(7, str(rng.choice(["A", "B"])), 0, 0))
        if all(kayak_joint_open_lanes(catalog, a, b) for a, b in zip(river[:-1], river[1:])):
            return river
    raise InvalidInputError("could not build a legal Kayak river from this seed")


def kayak_open_spaces(catalog: Catalog, river: list[RiverTile]) -> list[tuple[int, int, int]]:
    """(tile index, row, lane) of spaces a kayak may stand on, as the tiles lie: no rock,
    and for a double space only its downstream half (a kayak rides to it at once)."""
    out = []
    for i, rt in enumerate(river):
        rows = tile_layout_as_lying(catalog, rt)
        for r, row in enumerate(rows):
            for lane, ch in enumerate(row):
                if ch == "R":
                    continue
                if ch == "D" and r + 1 < len(rows) and rows[r + 1][lane] == "D" and (r == 0 or rows[r - 1][lane] != "D"):
                    continue  # upstream half of a double space
                out.append((i, r, lane))
    return out


def kayak_space_world(catalog: Catalog, river: list[RiverTile], index: int, row: int, lane: int) -> tuple[float, float]:
    """World centre of (tile index, row, lane) counted as the tile lies now."""
    rows, lanes, a = kayak_geometry(catalog)
    x0, y0, _ = kayak_tile_pose(catalog, index, river[index])
    return (x0 + (row - rows / 2 + 0.5) * a, y0 + (lane - lanes / 2 + 0.5) * a)


def kayak_tile_pieces(catalog: Catalog, river: list[RiverTile]) -> list[dict]:
    out = []
    for i, rt in enumerate(river):
        x, y, th = kayak_tile_pose(catalog, i, rt)
        out.append({"name": f"kayak/tile-{rt.tile}", "x_mm": x, "y_mm": y, "theta_deg": th, "face": rt.side})
    return out


def kayak_pieces(rng: np.random.Generator, catalog: Catalog | None = None, pawns: int | None = None,
                 river: list[RiverTile] | None = None) -> tuple[list[dict], list[RiverTile], dict]:
    """Tiles end to end from the Start tile (the game frame) and pawns on distinct open
    spaces. Returns (pieces, river, {pawn name: (tile index, row, lane)})."""
    catalog = catalog or default_catalog()
    river = river or kayak_river(rng, catalog)
    pieces = kayak_tile_pieces(catalog, river)
    spaces = kayak_open_spaces(catalog, river)
    n = int(rng.integers(2, 5) if pawns is None else pawns)
    where = {}
    for k, idx in enumerate(rng.choice(len(spaces), size=n, replace=False)):
        name = f"kayak/pawn-{k + 1}"
        where[name] = spaces[int(idx)]
        x, y = kayak_space_world(catalog, river, *spaces[int(idx)])
        pieces.append({"name": name, "x_mm": x + rng.uniform(-2, 2), "y_mm": y + rng.uniform(-2, 2),
                       "theta_deg": float(rng.uniform(-180, 180))})
    return pieces, river, where


# --- Tornado ---------------------------------------------------------------------------------
course_names = course_ids  # the packaged Tornado courses, by id


@lru_cache(maxsize=8)
def _course_text(course_id: str) -> str:
    path = COURSES_DIR / f"{course_id}.json"
    if not path.is_file():
        raise UnknownNameError(f"unknown course {course_id!r} (known: {', '.join(course_names())})")
    return path.read_text()


def load_course(course_id: str) -> dict:
    return safeload.parse_json(_course_text(course_id), f"course {course_id!r}")


class Track:
    """The course centreline: straights between curves and arcs of curve_radius_mm
    around each curve vertex, from the start gate to the finish line."""

    def __init__(self, course: dict, step_mm: float = 2.0):
        lay = course["layout"]
        self.width = float(lay["track_width_mm"])
        radius = float(lay["curve_radius_mm"])
        gx, gy, gth = lay["start-gate"]
        pts = [(float(gx), float(gy))]
        for item in course["sequence"]:
            if item["kind"] != "curve":
                continue
            c = lay["curves"][str(item["marker"])]
            vx, vy = c["vertex"]
            a0, a1 = float(c["entry_deg"]), float(c["exit_deg"])
            if item["turn"] == "left":
                while a1 <= a0:
                    a1 += 360
            else:
                while a1 >= a0:
                    a1 -= 360
            n = max(2, int(abs(a1 - a0) / 2))
            for k in range(n + 1):
                a = math.radians(a0 + (a1 - a0) * k / n)
                pts.append((vx + radius * math.cos(a), vy + radius * math.sin(a)))
        fx, fy, _ = lay["finish-line"]
        pts.append((float(fx), float(fy)))
        # resample at a fixed step
        pts = np.array(pts)
        seg = np.hypot(*np.diff(pts, axis=0).T)
        s = np.concatenate([[0], np.cumsum(seg)])
        self.length = float(s[-1])
        self.s = np.arange(0, self.length, step_mm)
        self.xy = np.column_stack([np.interp(self.s, s, pts[:, 0]), np.interp(self.s, s, pts[:, 1])])
        d = np.gradient(self.xy, axis=0)
        self.heading = np.degrees(np.arctan2(d[:, 1], d[:, 0]))

    def at(self, s_mm: float, offset_mm: float = 0.0) -> tuple[float, float, float]:
        """Point at arc length s_mm, offset_mm to the left of travel, and the heading."""
        i = int(np.clip(round(s_mm / (self.s[1] - self.s[0])), 0, len(self.s) - 1))
        x, y = self.xy[i]
        h = math.radians(self.heading[i])
        return (float(x - math.sin(h) * offset_mm), float(y + math.cos(h) * offset_mm), float(self.heading[i]))

    def locate(self, x: float, y: float) -> tuple[float, float]:
        """(arc length, distance from the centreline) of the nearest centreline point."""
        d = np.hypot(self.xy[:, 0] - x, self.xy[:, 1] - y)
        i = int(np.argmin(d))
        return float(self.s[i]), float(d[i])


def course_layout_pieces(rng: np.random.Generator, course: dict, jitter: bool = True) -> list[dict]:
    """Start gate at the origin (the game frame), finish line, curve markers at each
    vertex with their two curve cards along entry / exit, and the course tools."""
    lay = course["layout"]
    j = (lambda s: float(rng.normal(0, s))) if jitter else (lambda s: 0.0)
    gx, gy, gth = lay["start-gate"]
    pieces = [{"name": "tornado/start-gate", "x_mm": float(gx), "y_mm": float(gy), "theta_deg": float(gth)}]
    fx, fy, fth = lay["finish-line"]
    pieces.append({"name": "tornado/finish-line", "x_mm": fx + j(2), "y_mm": fy + j(2), "theta_deg": fth + j(0.5)})
    curve_index = 0
    for item in course["sequence"]:
        if item["kind"] != "curve":
            continue
        c = lay["curves"][str(item["marker"])]
        vx, vy = c["vertex"][0] + j(2), c["vertex"][1] + j(2)
        pieces.append({"name": f"tornado/curve-marker-{item['marker']}", "x_mm": vx, "y_mm": vy,
                       "theta_deg": float(rng.uniform(-180, 180)) if jitter else 0.0})
        face = f"{item['turn']}-turn"
        # entry card: a top card; exit card: a bottom card; both wedges open into the curve zone
        pieces.append({"name": f"tornado/curve-card-{curve_index + 1}", "x_mm": vx, "y_mm": vy,
                       "theta_deg": float(c["entry_deg"]) + j(0.7), "face": face})
        pieces.append({"name": f"tornado/curve-card-{curve_index + 4}", "x_mm": vx, "y_mm": vy,
                       "theta_deg": float(c["exit_deg"]) + j(0.7), "face": face})
        curve_index += 1
    for k, (tx, ty, tth) in enumerate(lay.get("course-tools", [])):
        pieces.append({"name": f"tornado/course-tool-{k + 1}", "x_mm": tx + j(3), "y_mm": ty + j(3),
                       "theta_deg": tth + j(0.5)})
    return pieces


def racing_card_names(catalog: Catalog, deck: int, kind: str) -> list[str]:
    return [p.name for p in catalog.pieces(family="tornado/racing-card")
            if int(p.attrs["deck"]) == deck and p.attrs["kind"] == kind]


def tornado_pieces(rng: np.random.Generator, course_id: str, catalog: Catalog | None = None,
                   boats: int | None = None, close_call: bool = False, window: tuple[float, float] | None = None,
                   cards: bool | None = None, characters: bool | None = None) -> tuple[list[dict], dict]:
    """Course pieces plus boats on the track (sometimes on racing cards, with character
    cards beside the course). close_call puts two boats nearly level, a few mm apart.

    Returns (pieces, info) with info {"course", "boats": {name: s_mm}, "close_call": ...,
    "focus": names of the pieces around the boats}."""
    catalog = catalog or default_catalog()
    course = load_course(course_id)
    track = Track(course)
    layout = course_layout_pieces(rng, course)
    taken = [piece_polygon(catalog, p) for p in layout if "curve-card" not in p["name"]]
    n = int(rng.integers(2, 5) if boats is None else boats)
    use_cards = bool(rng.random() < 0.6) if cards is None else cards
    boat_names = [f"tornado/boat-{k}" for k in sorted(rng.choice(np.arange(1, 7), size=n, replace=False))]
    lo, hi = window if window is not None else (0.0, track.length)
    span = float(rng.uniform(350, 600))
    start = float(rng.uniform(lo + 60, max(lo + 61, min(hi, track.length) - span - 60)))
    placed, info_boats, close = _place_boats(rng, catalog, track, taken, boat_names, (start, span), close_call,
                                             course_id)
    cards_placed = _place_racing_cards(rng, catalog, layout, placed) if use_cards else []
    chars = []
    if characters if characters is not None else rng.random() < 0.6:
        chars = _place_character_cards(rng, catalog, track, layout + placed + cards_placed, placed, info_boats)
    pieces = layout + cards_placed + placed + chars
    info = {"course": course_id, "boats": {k: round(v[0], 2) for k, v in info_boats.items()}, "close_call": close,
            "focus": _focus_near_boats(catalog, pieces, placed)}
    return pieces, info


def _place_boats(rng: np.random.Generator, catalog: Catalog, track: "Track", taken: list, boat_names: list[str],
                 stretch: tuple[float, float], close_call: bool, course_id: str):
    """Each boat somewhere on the stretch (start, span) of the track, clear of the course pieces
    and the other boats; with close_call the second boat nearly level with the first.

    Returns (boats, {name: (s_mm, offset_mm)}, close-call info or None)."""
    start, span = stretch
    half_width = track.width / 2 - 22
    placed, info_boats = [], {}
    close = None
    for k, name in enumerate(boat_names):
        for _ in range(200):
            if close_call and k == 1:
                s_ref, off_ref = info_boats[boat_names[0]]
                gap = float(rng.uniform(0.5, 6.0)) * (1 if rng.random() < 0.5 else -1)
                s = s_ref + gap
                off = -off_ref + float(rng.uniform(-8, 8)) if abs(off_ref) > 45 else (
                    off_ref + (70 if off_ref < 0 else -70))
            else:
                s = float(rng.uniform(start, start + span))
                off = float(rng.uniform(-half_width, half_width))
            x, y, h = track.at(s, off)
            boat = {"name": name, "x_mm": x, "y_mm": y, "theta_deg": h + (0.0 if close_call and k < 2 else float(rng.uniform(-8, 8)))}
            poly = piece_polygon(catalog, boat).buffer(4)
            if any(poly.intersects(t) for t in taken):
                continue
            if abs(off) > half_width:
                continue
            taken.append(poly)
            placed.append(boat)
            info_boats[name] = (s, off)
            break
        else:
            raise InvalidInputError(f"could not place {name} on course {course_id!r}")
        if close_call and k == 1:
            s0 = info_boats[boat_names[0]][0]
            close = {"boats": boat_names[:2], "gap_mm": round(abs(s - s0), 3)}
    return placed, info_boats, close


def _place_racing_cards(rng: np.random.Generator, catalog: Catalog, layout: list[dict], placed: list[dict]) -> list[dict]:
    """Racing cards under some boats: the boat on a card's last movement space, sometimes with
    the card played before it touching it from behind."""
    cards_placed = []
    for boat in placed:
        if rng.random() < 0.35:
            continue
        deck = int(boat["name"].rsplit("-", 1)[1])
        kind = str(rng.choice(["straight-1", "straight-2", "straight-3"]))
        names = [c for c in racing_card_names(catalog, deck, kind) if c not in {q["name"] for q in cards_placed}]
        if not names:
            continue
        last = catalog.racing_card_kind(kind)["spaces"][-1]["centre_x"]
        th = boat["theta_deg"]
        cx, cy = _frame_apply(boat["x_mm"], boat["y_mm"], th, [(-last, 0)])[0]
        card = {"name": names[0], "x_mm": float(cx), "y_mm": float(cy), "theta_deg": th}
        cpoly = piece_polygon(catalog, card)
        others = [piece_polygon(catalog, q) for q in cards_placed] + \
                 [piece_polygon(catalog, b).buffer(2) for b in placed if b is not boat]
        if any(cpoly.intersects(o) for o in others):
            continue
        if any(cpoly.intersects(piece_polygon(catalog, p)) for p in layout if "curve-card" not in p["name"]):
            continue
        cards_placed.append(card)
        # sometimes the card played before it, touching it from behind
        names = [c for c in racing_card_names(catalog, deck, "straight-1")
                 if c not in {q["name"] for q in cards_placed}]
        if names and rng.random() < 0.4:
            length = catalog.piece(names[0]).footprint["size_mm"][0]
            bx, by = _frame_apply(cx, cy, th, [(-length, 0)])[0]
            behind = {"name": names[0], "x_mm": float(bx), "y_mm": float(by), "theta_deg": th}
            bpoly = piece_polygon(catalog, behind).buffer(-0.5)
            if not any(bpoly.intersects(o) for o in others) and not any(
                    bpoly.intersects(piece_polygon(catalog, p)) for p in layout if "curve-card" not in p["name"]):
                cards_placed.append(behind)
    return cards_placed


def _place_character_cards(rng: np.random.Generator, catalog: Catalog, track: "Track", blocking: list[dict],
                           placed: list[dict], info_boats: dict) -> list[dict]:
    """Character cards beside the course near their boats, clear of every piece."""
    chars = []
    blocked = [piece_polygon(catalog, p) for p in blocking]
    for boat in placed:
        k = int(boat["name"].rsplit("-", 1)[1])
        s, _ = info_boats[boat["name"]]
        for _ in range(40):
            side = 1 if rng.random() < 0.5 else -1
            x, y, h = track.at(s + float(rng.uniform(-150, 150)), side * (track.width / 2 + float(rng.uniform(55, 90))))
            card = {"name": f"tornado/character-{k}", "x_mm": x, "y_mm": y, "theta_deg": h + float(rng.uniform(-20, 20)),
                    "face": str(rng.choice(["face-up", "face-down"]))}
            cp = piece_polygon(catalog, card)
            if any(cp.intersects(b) for b in blocked) or track.locate(x, y)[1] < track.width / 2 + 35:
                continue
            blocked.append(cp)
            chars.append(card)
            break
    return chars


def _focus_near_boats(catalog: Catalog, pieces: list[dict], placed: list[dict]) -> list[str]:
    """The start gate and every piece within 260 mm of a boat: what a close-up should show."""
    from shapely.geometry import Point

    boat_pts = [Point(b["x_mm"], b["y_mm"]) for b in placed]
    focus = set()
    for p in pieces:
        poly = piece_polygon(catalog, p)
        if p["name"] == "tornado/start-gate" or any(poly.distance(bp) < 260 for bp in boat_pts):
            focus.add(p["name"])
    return sorted(focus)


# --- table, effects, occluders -----------------------------------------------------------------
def table_for(rng: np.random.Generator, catalog: Catalog, pieces: list[dict], margin_mm: float = 80.0) -> dict:
    """A table under all the pieces, at a random pose relative to the game frame."""
    from shapely.affinity import rotate
    from shapely.geometry import MultiPoint

    pts = np.vstack([piece_outline(catalog, p) for p in pieces])
    theta = float(rng.uniform(-12, 12))
    # the hull rotated into the table frame gives the size the table needs
    hull = rotate(MultiPoint([tuple(p) for p in pts]).convex_hull, -theta, origin=(0, 0))
    x0, y0, x1, y1 = hull.bounds
    extra = rng.uniform(margin_mm, margin_mm + 250, 4)
    w, h = (x1 - x0) + extra[0] + extra[1], (y1 - y0) + extra[2] + extra[3]
    cx_t, cy_t = (x0 - extra[0] + x1 + extra[1]) / 2, (y0 - extra[2] + y1 + extra[3]) / 2
    c, s = math.cos(math.radians(theta)), math.sin(math.radians(theta))
    colours = ["#c49a6c", "#a8845e", "#d2b48c", "#8a6a4f", "#b9a58f", "#6f7f8f", "#dcd6cc"]
    return {"size_mm": [round(float(w), 2), round(float(h), 2)],
            "centre_mm": [round(float(c * cx_t - s * cy_t), 3), round(float(s * cx_t + c * cy_t), 3)],
            "theta_deg": round(theta, 3), "colour": str(rng.choice(colours)), "texture_seed": int(rng.integers(0, 10_000))}


def random_effects(rng: np.random.Generator, jpeg_quality: int = 88) -> dict:
    return {"lighting": {"gradient": float(rng.uniform(0.0, 0.3)), "direction_deg": float(rng.uniform(0, 360)),
                         "vignette": float(rng.uniform(0.05, 0.3)), "brightness": float(rng.uniform(0.85, 1.08))},
            "noise_sigma": float(rng.uniform(1.0, 2.5)), "blur_sigma": float(rng.uniform(0.3, 0.7)),
            "jpeg_quality": int(jpeg_quality), "supersample": 3, "seed": int(rng.integers(0, 2**31 - 1))}


def random_hand(rng: np.random.Generator, over_xy, away_from_xy=(0.0, 0.0), z_mm: float | None = None) -> dict:
    """A hand reaching over the point over_xy, its arm trailing away from the scene centre."""
    dx, dy = over_xy[0] - away_from_xy[0], over_xy[1] - away_from_xy[1]
    heading = math.degrees(math.atan2(dy, dx)) + 180.0 if abs(dx) + abs(dy) > 1 else float(rng.uniform(0, 360))
    return {"kind": "hand", "x_mm": float(over_xy[0]), "y_mm": float(over_xy[1]),
            "theta_deg": heading + float(rng.uniform(-25, 25)),
            "z_mm": float(rng.uniform(70, 170) if z_mm is None else z_mm), "scale": float(rng.uniform(0.9, 1.1)),
            "arm_length_mm": 700.0}


# --- whole scenes ----------------------------------------------------------------------------
def build_scene(game: str, seed: int, resolution: str | tuple[int, int] = "1080p", tilt_deg: float | None = None,
                course: str | None = None, close_call: bool = False, occluded: bool = False,
                jpeg_quality: int = 88, catalog: Catalog | None = None) -> dict:
    """A random legal scene of `game` from `seed` (deterministic), with a camera that
    keeps the relevant area in view. Extra facts go in scene["tags"]."""
    catalog = catalog or default_catalog()
    size = RESOLUTIONS[resolution] if isinstance(resolution, str) else tuple(resolution)
    rng = np.random.default_rng(seed)
    tags: dict = {"seed": seed}
    for attempt in range(40):
        if game == "kang":
            pieces = kang_pieces(rng, catalog)
            must = pieces
        elif game == "kayak":
            pieces, river, where = kayak_pieces(rng, catalog)
            tags["river"] = [rt.__dict__ for rt in river]
            tags["pawns"] = {k: list(v) for k, v in where.items()}
            must = pieces
        elif game == "tornado":
            course_id = course or str(rng.choice(course_names()))
            pieces, info = tornado_pieces(rng, course_id, catalog, close_call=close_call)
            tags.update(course=course_id, boats_s_mm=info["boats"], close_call=info["close_call"])
            focus = [p for p in pieces if p["name"] in info["focus"]]
            # the whole course when it fits, else the part around the boats (with the gate if possible)
            options = ([pieces] if rng.random() < 0.3 else []) + [
                focus, [p for p in focus if p["name"] != "tornado/start-gate"]]
        else:
            raise UnknownNameError(f"unknown game {game!r}")
        if game != "tornado":
            options = [must]
        camera = None
        for must in options:
            points = relevant_points(catalog, must)
            camera = fit_camera(rng, points, size, tilt_deg=tilt_deg)
            if camera is not None and min_sticker_side_px(catalog, must, camera) >= MIN_STICKER_PX_1080P * size[0] / 1920:
                break
            camera = None
        if camera is not None:
            break
    else:
        raise InvalidInputError(f"no camera keeps the {game} scene of seed {seed} in view")
    scene = {"refcam_scene": 1, "game": game, "camera": camera, "table": table_for(rng, catalog, pieces),
             "pieces": pieces, "effects": random_effects(rng, jpeg_quality), "occluders": []}
    if game == "tornado":
        scene["course"] = tags["course"]
    if occluded:
        target = must[int(rng.integers(1, len(must)))] if len(must) > 1 else must[0]
        centre = points[:, :2].mean(axis=0)
        scene["occluders"].append(random_hand(rng, (target["x_mm"], target["y_mm"]), tuple(centre)))
    tags["tilt_deg"] = round(_tilt_of(camera), 2)
    tags["relevant"] = sorted(p["name"] for p in must)
    scene["tags"] = tags
    return scene


def min_sticker_side_px(catalog: Catalog, pieces: list[dict], camera: dict) -> float:
    """Shortest sticker side (px) among the pieces' showing stickers, as the camera sees them."""
    import cv2

    from .render import camera_pose, showing_stickers

    R, t = camera_pose(camera)
    K, dist = np.array(camera["camera_matrix"]), np.array(camera["dist_coeffs"])
    rvec = cv2.Rodrigues(R)[0]
    best = math.inf
    for p in pieces:
        spec = catalog.piece(p["name"])
        z = float(catalog.family(spec.family)["top_z_mm"])
        for st in showing_stickers(spec, p.get("face")):
            c = _frame_apply(p["x_mm"], p["y_mm"], p.get("theta_deg", 0.0), st.corners_local())
            px, _ = cv2.projectPoints(np.column_stack([c, np.full(4, z)]).reshape(-1, 1, 3), rvec, t, K, dist)
            px = px.reshape(4, 2)
            best = min(best, min(float(np.linalg.norm(px[(k + 1) % 4] - px[k])) for k in range(4)))
    return best


def _tilt_of(camera: dict) -> float:
    pos = np.array(camera["pose"]["position_mm"])
    at = np.array(camera["pose"]["look_at_mm"])
    d = at - pos
    return math.degrees(math.acos(max(-1.0, min(1.0, -d[2] / np.linalg.norm(d)))))
