"""Photo-like renders of a described table, with their exact ground truth.

``render_scene(scene) -> (image, truth)`` paints every planar element through its
plane-to-image homography at its catalog height on a supersampled ideal pinhole
canvas (painter's order by height), area-averages it, bends it with the lens model
so each sticker corner lands where cv2.projectPoints puts it, and then adds
lighting, blur and noise. The scene format is documented in docs/scene-format.md.

``load_scene(path)`` reads and validates a scene file; ``write_render`` writes the
JPEG and its truth JSON.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np

from calibration.camera import CameraModel
from referee import safeload
from referee.catalog import Catalog, PieceSpec, default_catalog, GAMES
from referee.errors import InvalidInputError, UnknownNameError

from .camera import camera_centre, look_at_pose, project_ideal, rodrigues, rotation, tilt_deg
from .canvas import MAX_CANVAS_PIXELS

TRUTH_VERSION = 1
DEFAULT_EFFECTS = {
    "lighting": {"gradient": 0.15, "direction_deg": 30.0, "vignette": 0.2, "brightness": 1.0},
    "noise_sigma": 2.0,
    "blur_sigma": 0.5,
    "jpeg_quality": 90,
    "supersample": 3,
    "seed": 0,
}
DEFAULT_TABLE = {"size_mm": [1600.0, 1000.0], "centre_mm": [0.0, 0.0], "theta_deg": 0.0,
                 "colour": [196, 160, 120], "texture_seed": 0}
FLOOR_RGB = (70, 62, 58)
VISIBLE_MIN_FRACTION = 0.995  # share of a sticker (quiet zone included) left uncovered to call it visible
IMAGE_MARGIN_PX = 1.0
# Every number of a scene has a declared range (docs/scene-format.md); the default below covers
# positions (mm) and angles (degrees). Past it float precision goes, and shapely and OpenCV fail
# deep inside (pieces at 1e10 mm gave a shapely traceback, blur_sigma 1e4 a segfault,
# supersample 1e9 never ended).
MAX_SCENE_NUMBER = 100_000.0  # mm and degrees: a table is a metre or two, a room 10 m
MAX_SEED = 2**31 - 1
MAX_BLUR_SIGMA_PX = 20.0  # a picture blurred past this shows no sticker at all
MAX_NOISE_SIGMA = 255.0
MAX_SUPERSAMPLE = 8  # memory and time grow with its square
MAX_ROTATION_RAD = 4 * math.pi  # a rotation vector's parts: one turn is 2 pi
MAX_LIGHTING = 1_000.0  # gradient, vignette, brightness (fractions) and direction (degrees)
MAX_PIECE_SIZE_MM = 1_000.0  # a marker, a board, an occluder's axes
MAX_TABLE_MM = 5_000.0  # its texture is drawn at 2 mm a pixel: 5 m peaks near 0.5 GB, 10 m at 1.17 GB
# `refcam render` of a scene file: at most 4K, the largest bundled scene (a render peaked at 266 MB at
# 1080p, 734 MB at 4K and 2.2 GB at 8K; issue 22 asks for 600 MB: 4K is still above it)
MAX_FILE_RENDER_PIXELS = 3840 * 2160
MAX_CAMERA_MM = 20_000.0  # camera position and aim: a table top seen from up to 20 m (rooms are smaller)
MAX_OCCLUDER_POINTS = 1_000  # a hand-drawn occluder outline; each point is projected and painted
MAX_OCCLUDERS = 100


class SceneError(InvalidInputError):
    """A scene description that cannot be rendered."""


class DuplicateError(SceneError):
    """The same piece or marker id appears twice in one scene."""


# --- validation ----------------------------------------------------------------------------
def load_scene(path: str | os.PathLike) -> dict:
    """Read a scene JSON file and return it validated and completed with defaults. A scene file's
    image is at most MAX_FILE_RENDER_PIXELS (the renderer's own scenes, synth.scenes, may be 4K)."""
    path = Path(path)
    scene = safeload.load_json(path, "scene file", SceneError)  # size, depth, finite numbers: one line each
    scene = validate_scene(scene, source=str(path))
    w, h = scene["camera"]["image_size"]
    if w * h > MAX_FILE_RENDER_PIXELS:
        raise SceneError(f"{path}: camera image_size {w}x{h} is larger than a scene file may ask for "
                         f"(at most {MAX_FILE_RENDER_PIXELS / 1e6:.1f} Mpx, e.g. 3840x2160; rendering costs "
                         f"about 80 bytes a pixel)")
    return scene


def _number(value, what: str, positive: bool = False, minimum: float | None = None,
            maximum: float = MAX_SCENE_NUMBER) -> float:
    """A finite number within [-maximum, maximum] (and positive, or at least minimum, when asked)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SceneError(f"{what} must be a number, got {safeload.show(value)}")
    if abs(value) > maximum:  # y_mm 1e308 used to overflow deep in the projection
        raise SceneError(f"{what} must be within +-{maximum:g}, got {safeload.show(value)}")
    if positive and value <= 0:
        raise SceneError(f"{what} must be positive, got {safeload.show(value)}")
    if minimum is not None and value < minimum:
        raise SceneError(f"{what} must be at least {minimum}, got {safeload.show(value)}")
    return float(value)


def _list_of(scene: dict, key: str, source: str) -> list:
    value = scene.get(key) or []
    if not isinstance(value, list):
        raise SceneError(f"{source}: {key} must be a list, got {json.dumps(value)[:40]}")
    return value


def _vector(value, n: int, what: str, positive: bool = False, maximum: float = MAX_SCENE_NUMBER) -> list[float]:
    if not isinstance(value, (list, tuple)) or len(value) != n:
        raise SceneError(f"{what} must be a list of {n} numbers, got {safeload.show(value)}")
    return [_number(v, what, positive=positive, maximum=maximum) for v in value]


def _colour(value, what: str) -> tuple[int, int, int]:
    """RGB (list of 3 ints or "#rrggbb") -> BGR tuple."""
    if isinstance(value, str) and len(value) == 7 and value.startswith("#"):
        try:
            r, g, b = (int(value[i:i + 2], 16) for i in (1, 3, 5))
        except ValueError:
            raise SceneError(f"{what} must be [r, g, b] or \"#rrggbb\", got {json.dumps(value)}") from None
        return (b, g, r)
    if isinstance(value, (list, tuple)) and len(value) == 3 and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 255 for v in value):
        return (int(value[2]), int(value[1]), int(value[0]))
    raise SceneError(f"{what} must be [r, g, b] or \"#rrggbb\", got {json.dumps(value)}")


SAME_PLACE_MM = 5.0
SAME_PLACE_DEG = 15.0


def piece_faces(spec: PieceSpec) -> list[str | None]:
    """The faces a piece can show. Slots carrying a `face` group by it (tile sides,
    curve-card faces); two slots at the same place are the two faces of a double-sided
    piece (Kang tokens, character cards); otherwise the piece has one face."""
    faces = [s.face for s in spec.stickers if s.face]
    if faces:
        return list(dict.fromkeys(faces))
    first = spec.stickers[0]
    # about the same place: a hand-stuck copy's two faces are never stuck exactly alike (synth/handstuck.py)
    if len(spec.stickers) > 1 and all(abs(s.x_mm - first.x_mm) + abs(s.y_mm - first.y_mm) < SAME_PLACE_MM
                                      and abs(s.rot_deg - first.rot_deg) < SAME_PLACE_DEG for s in spec.stickers):
        return [s.slot for s in spec.stickers]
    return [None]


def showing_stickers(spec: PieceSpec, face: str | None):
    """The stickers on the face that is up."""
    faces = piece_faces(spec)
    if faces == [None]:
        return list(spec.stickers)
    if any(s.face for s in spec.stickers):
        return [s for s in spec.stickers if s.face == face]
    return [s for s in spec.stickers if s.slot == face]


def _validate_camera(cam, source: str) -> dict:
    if not isinstance(cam, dict):
        raise SceneError(f"{source}: camera must be an object")
    model = CameraModel.from_json({"image_size": cam.get("image_size"), "camera_matrix": cam.get("camera_matrix"),
                                   "dist_coeffs": cam.get("dist_coeffs", [0, 0, 0, 0, 0])}
                                  if "image_size" in cam and "camera_matrix" in cam else cam,
                                  source=f"{source}: camera")
    w, h = model.image_size
    if int(w) != w or int(h) != h:
        raise SceneError(f"{source}: camera image_size must be whole pixels, got {json.dumps(cam['image_size'])}")
    if w * h > MAX_CANVAS_PIXELS:  # the canvas alone would not fit in memory
        raise SceneError(f"{source}: camera image_size {w}x{h} is too large to render "
                         f"(at most {MAX_CANVAS_PIXELS / 1e6:.0f} Mpx, e.g. 7680x4320)")
    pose = cam.get("pose")
    if not isinstance(pose, dict):
        raise SceneError(f"{source}: camera pose must be an object with position_mm/look_at_mm or rvec/tvec")
    if "rvec" in pose or "tvec" in pose:
        rvec = _vector(pose.get("rvec"), 3, "camera pose rvec", maximum=MAX_ROTATION_RAD)
        tvec = _vector(pose.get("tvec"), 3, "camera pose tvec", maximum=MAX_CAMERA_MM)
        out_pose = {"rvec": rvec, "tvec": tvec}
    else:
        pos = _vector(pose.get("position_mm"), 3, "camera pose position_mm")
        at = _vector(pose.get("look_at_mm"), 3, "camera pose look_at_mm")
        for name, point in (("position_mm", pos), ("look_at_mm", at)):
            if max(abs(v) for v in point) > MAX_CAMERA_MM:
                raise SceneError(f"{source}: camera pose {name} must be within +-{MAX_CAMERA_MM:g} mm, "
                                 f"got {json.dumps(point)}")
        roll = _number(pose.get("roll_deg", 0.0), "camera pose roll_deg")
        if pos[2] <= at[2]:
            raise SceneError(f"{source}: the camera must look down at the table (position_mm z {pos[2]} "
                             f"is not above look_at_mm z {at[2]})")
        look_at_pose(pos, at, roll)  # rejects coinciding points
        out_pose = {"position_mm": pos, "look_at_mm": at, "roll_deg": roll}
    dist = list(model.dist_coeffs) + [0.0] * (5 - len(model.dist_coeffs))
    return {"image_size": [int(w), int(h)], "camera_matrix": [list(r) for r in model.camera_matrix],
            "dist_coeffs": dist[:5], "pose": out_pose}


def validate_scene(scene, source: str = "scene", catalog: Catalog | None = None) -> dict:
    """Check a scene dict and return a completed copy (defaults filled in).

    Raises SceneError / DuplicateError / UnknownNameError (one line each)."""
    catalog = catalog or default_catalog()
    if not isinstance(scene, dict):
        raise SceneError(f"{source}: a scene must be a JSON object")
    game = scene.get("game")
    if game not in GAMES:
        raise UnknownNameError(f"{source}: unknown game {json.dumps(game)} (choose one of: {', '.join(GAMES)})")
    out: dict = {"refcam_scene": 1, "game": game, "camera": _validate_camera(scene.get("camera"), source)}
    for key in ("course", "note", "tags"):
        if key in scene:
            out[key] = scene[key]

    out["table"] = _validate_table(scene.get("table", {}), source)
    out["pieces"] = _validate_pieces(scene.get("pieces", []), source, catalog)
    out["markers"] = _validate_markers(_list_of(scene, "markers", source), out["pieces"], source, catalog)
    out["effects"] = _validate_effects(scene.get("effects", {}) or {}, source)
    occluders = _list_of(scene, "occluders", source)
    if len(occluders) > MAX_OCCLUDERS:
        raise SceneError(f"{source}: at most {MAX_OCCLUDERS} occluders, got {len(occluders)}")
    out["occluders"] = [_validate_occluder(i, o, source) for i, o in enumerate(occluders)]
    if "boards" in scene:
        out["boards"] = [_validate_board(i, b, source) for i, b in enumerate(_list_of(scene, "boards", source))]
    return out


def _validate_board(i: int, b, source: str) -> dict:
    """A printed target of another system lying on the table (synth/boards.py)."""
    from .boards import BOARD_KINDS

    if not isinstance(b, dict) or b.get("kind") not in BOARD_KINDS:
        raise SceneError(f"{source}: board {i} must be an object with a kind, one of: {', '.join(BOARD_KINDS)}")
    return {"kind": b["kind"], "x_mm": _number(b.get("x_mm"), f"board {i} x_mm"),
            "y_mm": _number(b.get("y_mm"), f"board {i} y_mm"),
            "theta_deg": _number(b.get("theta_deg", 0.0), f"board {i} theta_deg"),
            "width_mm": _number(b.get("width_mm"), f"board {i} width_mm", positive=True, maximum=MAX_PIECE_SIZE_MM),
            "seed": int(_number(b.get("seed", 0), f"board {i} seed", minimum=0, maximum=MAX_SEED)),
            "z_mm": _number(b.get("z_mm", 0.2), f"board {i} z_mm", minimum=0.0)}


def _validate_table(table_in, source: str) -> dict:
    if not isinstance(table_in, dict):
        raise SceneError(f"{source}: table must be an object")
    table = dict(DEFAULT_TABLE)
    table.update(table_in)
    table["size_mm"] = _vector(table["size_mm"], 2, "table size_mm", positive=True, maximum=math.inf)
    if max(table["size_mm"]) > MAX_TABLE_MM:  # its texture is drawn at 2 mm a pixel
        raise SceneError(f"table size_mm must be at most {MAX_TABLE_MM:g} mm a side, "
                         f"got {safeload.show(table['size_mm'])}")
    table["centre_mm"] = _vector(table["centre_mm"], 2, "table centre_mm")
    table["theta_deg"] = _number(table["theta_deg"], "table theta_deg")
    _colour(table["colour"], "table colour")
    table["texture_seed"] = int(_number(table["texture_seed"], "table texture_seed", minimum=0, maximum=MAX_SEED))
    if "texture_contrast" in table:
        table["texture_contrast"] = _number(table["texture_contrast"], "table texture_contrast", minimum=0.0,
                                              maximum=MAX_LIGHTING)
    return table


def _validate_pieces(pieces_in, source: str, catalog: Catalog) -> list[dict]:
    if not isinstance(pieces_in, list):
        raise SceneError(f"{source}: pieces must be a list")
    pieces, seen = [], set()
    for i, p in enumerate(pieces_in):
        if not isinstance(p, dict) or not isinstance(p.get("name"), str):
            raise SceneError(f"{source}: piece {i} must be an object with a name, got {json.dumps(p)[:80]}")
        name = p["name"]
        spec = catalog.piece(name)  # UnknownNameError quotes the name
        if name in seen:
            raise DuplicateError(f"{source}: duplicate piece {name!r}")
        seen.add(name)
        faces = piece_faces(spec)
        face = p.get("face", faces[0])
        if face not in faces:
            raise SceneError(f"{source}: piece {name!r} has no face {json.dumps(face)} "
                             f"(choose one of: {', '.join(str(f) for f in faces)})")
        q = {"name": name, "x_mm": _number(p.get("x_mm"), f"piece {name!r} x_mm"),
             "y_mm": _number(p.get("y_mm"), f"piece {name!r} y_mm"),
             "theta_deg": _number(p.get("theta_deg", 0.0), f"piece {name!r} theta_deg"), "face": face}
        if p.get("resting_on") is not None:
            if not isinstance(p["resting_on"], str):
                raise SceneError(f"{source}: piece {name!r} resting_on must be a piece name")
            q["resting_on"] = p["resting_on"]
        pieces.append(q)
    for q in pieces:
        if "resting_on" in q and q["resting_on"] not in seen:
            raise SceneError(f"{source}: piece {q['name']!r} rests on {q['resting_on']!r}, which is not in the scene")
    return pieces


def _validate_markers(markers_in, pieces: list[dict], source: str, catalog: Catalog) -> list[dict]:
    """Loose markers: ids 0-999 that no piece of the scene carries."""
    ids: dict[int, str] = {}
    for q in pieces:
        for mid in catalog.piece(q["name"]).marker_ids:
            ids[mid] = q["name"]
    markers = []
    for m in markers_in:
        if not isinstance(m, dict):
            raise SceneError(f"{source}: markers entries must be objects, got {json.dumps(m)[:80]}")
        mid = m.get("id")
        if isinstance(mid, bool) or not isinstance(mid, int) or not 0 <= mid < 1000:
            raise SceneError(f"{source}: marker id must be an integer 0-999, got {json.dumps(mid)}")
        if mid in ids:
            raise DuplicateError(f"{source}: duplicate marker id {mid} (also on {ids[mid]!r})")
        ids[mid] = f"marker {mid}"
        markers.append({"id": mid, "size_mm": _number(m.get("size_mm"), f"marker {mid} size_mm", positive=True,
                                                           maximum=MAX_PIECE_SIZE_MM),
                        "x_mm": _number(m.get("x_mm"), f"marker {mid} x_mm"),
                        "y_mm": _number(m.get("y_mm"), f"marker {mid} y_mm"),
                        "theta_deg": _number(m.get("theta_deg", 0.0), f"marker {mid} theta_deg"),
                        "z_mm": _number(m.get("z_mm", 0.0), f"marker {mid} z_mm", minimum=0.0)})
    return markers


def _validate_effects(eff_in, source: str) -> dict:
    if not isinstance(eff_in, dict):
        raise SceneError(f"{source}: effects must be an object")
    eff = json.loads(json.dumps(DEFAULT_EFFECTS))
    light = dict(eff["lighting"])
    light_in = eff_in.get("lighting", {}) or {}
    if not isinstance(light_in, dict):
        raise SceneError(f"{source}: effects lighting must be an object, got {json.dumps(light_in)[:40]}")
    light.update(light_in)
    eff.update({k: v for k, v in eff_in.items() if k != "lighting"})
    eff["lighting"] = {k: _number(v, f"effects lighting {k}", maximum=MAX_LIGHTING) for k, v in light.items()}
    eff["noise_sigma"] = _number(eff["noise_sigma"], "effects noise_sigma", minimum=0.0, maximum=MAX_NOISE_SIGMA)
    eff["blur_sigma"] = _number(eff["blur_sigma"], "effects blur_sigma", minimum=0.0, maximum=MAX_BLUR_SIGMA_PX)
    q = _number(eff["jpeg_quality"], "effects jpeg_quality", positive=True)
    if q > 100:
        raise SceneError(f"effects jpeg_quality must be 1-100, got {json.dumps(eff['jpeg_quality'])}")
    eff["jpeg_quality"] = int(q)
    eff["supersample"] = int(_number(eff["supersample"], "effects supersample", minimum=1, maximum=MAX_SUPERSAMPLE))
    eff["seed"] = int(_number(eff["seed"], "effects seed", minimum=0, maximum=MAX_SEED))
    if "print" in eff:
        eff["print"] = _validate_print(eff["print"], source)
    return eff


def _validate_print(printed, source: str) -> dict:
    """How the stickers were printed: paper and ink colours, and the ink's spread past the
    design's edges (mm; < 0: thin ink)."""
    if not isinstance(printed, dict):
        raise SceneError(f"{source}: effects print must be an object, got {json.dumps(printed)[:40]}")
    out = {"ink_spread_mm": _number(printed.get("ink_spread_mm", 0.0), "effects print ink_spread_mm")}
    if abs(out["ink_spread_mm"]) > 0.5:
        raise SceneError(f"effects print ink_spread_mm must be within +-0.5 mm, got {out['ink_spread_mm']}")
    for key in ("paper", "ink"):
        if key in printed:
            b, g, r = _colour(printed[key], f"effects print {key}")
            out[key] = [r, g, b]
    return out


def _validate_occluder(i: int, o, source: str) -> dict:
    """One occluder (a hand, an ellipse or a polygon) with its defaults."""
    if not isinstance(o, dict):
        raise SceneError(f"{source}: occluder {i} must be an object")
    kind = o.get("kind", "hand")
    oo = {"kind": kind, "z_mm": _number(o.get("z_mm", 120.0), f"occluder {i} z_mm", positive=True)}
    if kind == "hand":
        oo.update(x_mm=_number(o.get("x_mm"), f"occluder {i} x_mm"), y_mm=_number(o.get("y_mm"), f"occluder {i} y_mm"),
                  theta_deg=_number(o.get("theta_deg", 0.0), f"occluder {i} theta_deg"),
                  scale=_number(o.get("scale", 1.0), f"occluder {i} scale", positive=True, maximum=100.0),
                  arm_length_mm=_number(o.get("arm_length_mm", 350.0), f"occluder {i} arm_length_mm", minimum=0.0,
                                        maximum=MAX_PIECE_SIZE_MM * 10))
    elif kind == "ellipse":
        oo.update(centre_mm=_vector(o.get("centre_mm"), 2, f"occluder {i} centre_mm"),
                  axes_mm=_vector(o.get("axes_mm"), 2, f"occluder {i} axes_mm", positive=True, maximum=MAX_TABLE_MM),
                  theta_deg=_number(o.get("theta_deg", 0.0), f"occluder {i} theta_deg"))
    elif kind == "polygon":
        pts = o.get("points_mm")
        if not isinstance(pts, list) or not 3 <= len(pts) <= MAX_OCCLUDER_POINTS:
            raise SceneError(f"occluder {i} points_mm must list 3 to {MAX_OCCLUDER_POINTS} [x, y] points, "
                             f"got {len(pts) if isinstance(pts, list) else safeload.show(pts)}")
        oo["points_mm"] = [_vector(pt, 2, f"occluder {i} points_mm") for pt in pts]
    else:
        raise SceneError(f"{source}: occluder {i} has unknown kind {json.dumps(kind)} (hand, ellipse, polygon)")
    if "colour" in o:
        _colour(o["colour"], f"occluder {i} colour")
        oo["colour"] = o["colour"]
    return oo


# --- rendering ------------------------------------------------------------------------------
def camera_pose(camera: dict) -> tuple[np.ndarray, np.ndarray]:
    """World->camera R (3, 3) and t (3,) of a validated camera."""
    pose = camera["pose"]
    if "rvec" in pose:
        return rotation(pose["rvec"]), np.asarray(pose["tvec"], dtype=np.float64)
    return look_at_pose(pose["position_mm"], pose["look_at_mm"], pose.get("roll_deg", 0.0))


def piece_top_z(catalog: Catalog, spec: PieceSpec, piece: dict, scene_pieces: dict) -> tuple[float, str | None]:
    """Sticker height of a piece and what it rests on (SPEC section 2: Kang tokens are
    higher on the board). Without an explicit resting_on, a piece rests on any scene
    piece listed in its family's top_z_mm_on whose footprint holds its reference point."""
    fam = catalog.family(spec.family)
    on = fam.get("top_z_mm_on", {})
    resting = piece.get("resting_on")
    if resting is None and on:
        from shapely.geometry import Point, Polygon

        from .draw import PieceFrame

        for base_name in on:
            base = scene_pieces.get(base_name)
            if base is None:
                continue
            poly = Polygon(PieceFrame(base["x_mm"], base["y_mm"], base["theta_deg"]).apply(
                catalog.piece(base_name).footprint_polygon()))
            if poly.contains(Point(piece["x_mm"], piece["y_mm"])):
                resting = base_name
                break
    if resting is not None and resting in on:
        return float(on[resting]), resting
    return float(fam["top_z_mm"]), resting


def render_scene(scene: dict, apply_jpeg: bool = False, catalog: Catalog | None = None) -> tuple[np.ndarray, dict]:
    """Render a scene (validated here if it was not already).

    Returns (image, truth): image (H, W, 3) BGR uint8 before JPEG compression unless
    apply_jpeg (then it is the decoded JPEG at the scene's quality), truth a JSON-ready dict.
    """
    import cv2

    from .canvas import Canvas
    from .draw import draw_boards, draw_table

    catalog = catalog or default_catalog()
    scene = validate_scene(scene, catalog=catalog)  # idempotent: a validated scene passes unchanged
    cam = scene["camera"]
    K = np.array(cam["camera_matrix"], dtype=np.float64)
    dist = np.array(cam["dist_coeffs"], dtype=np.float64)
    size = tuple(cam["image_size"])
    R, t = camera_pose(cam)
    eff = scene["effects"]
    canvas = Canvas(K, dist, R, t, size, eff["supersample"])
    canvas.image[:] = _colour(list(FLOOR_RGB), "floor")
    table = dict(scene["table"])
    table["colour"] = _colour(table["colour"], "table colour")
    draw_table(canvas, table)
    draw_boards(canvas, scene.get("boards", []))

    jobs, pose_truth = _paint_jobs(scene, catalog, R, t)
    sticker_records = _paint(canvas, jobs, catalog, eff.get("print"))
    image = canvas.finish()
    image = apply_effects(image, eff)
    if apply_jpeg:
        image = cv2.imdecode(encode_jpeg(image, eff["jpeg_quality"]), cv2.IMREAD_COLOR)

    stickers_truth = [_sticker_truth(canvas, record, K, dist, R, t, catalog.quiet_zone_fraction)
                      for record in sticker_records]
    w, h = size
    centre_cam = camera_centre(R, t)
    truth = {
        "refcam_truth": TRUTH_VERSION,
        "game": scene["game"],
        "course": scene.get("course"),
        "frame": f"{scene['game']} game frame ({catalog.game(scene['game'])['frame_anchor']}), mm, z up",
        "image_size": [int(w), int(h)],
        "camera": {"image_size": [int(w), int(h)], "camera_matrix": K.tolist(), "dist_coeffs": dist.tolist(),
                   "model": "pinhole-radtan", "rms_px": 0.0, "rvec": [float(v) for v in rodrigues(R)],
                   "tvec": [float(v) for v in t], "position_mm": [round(float(v), 3) for v in centre_cam],
                   "tilt_deg": round(tilt_deg(R), 3)},
        "pieces": pose_truth,
        "stickers": stickers_truth,
        "occluders": len(scene["occluders"]),
        "supersample": canvas.s,
    }
    return image, truth


def _paint_jobs(scene: dict, catalog: Catalog, R: np.ndarray, t: np.ndarray) -> tuple[list, list[dict]]:
    """What to paint in which order (lowest first; flat before raised at one height, then far
    before near), and the pose truth of every piece."""
    from .draw import PieceFrame

    by_name = {p["name"]: p for p in scene["pieces"]}
    jobs = []  # (sort key, kind, payload)
    pose_truth = []
    for index, p in enumerate(scene["pieces"]):
        spec = catalog.piece(p["name"])
        z_top, resting = piece_top_z(catalog, spec, p, by_name)
        frame = PieceFrame(p["x_mm"], p["y_mm"], p["theta_deg"])
        ref = np.array([[p["x_mm"], p["y_mm"], z_top]])
        depth = float((ref @ R.T + t)[0, 2])
        tiebreak = index if spec.flat else -depth
        jobs.append(((round(z_top, 4), 0 if spec.flat else 1, tiebreak, index), "piece", (p, spec, frame, z_top)))
        shown = showing_stickers(spec, p["face"])
        pose_truth.append({"name": p["name"], "x_mm": p["x_mm"], "y_mm": p["y_mm"], "theta_deg": p["theta_deg"],
                           "z_mm": z_top, "face": p["face"], "resting_on": resting,
                           "marker_ids": [s.marker_id for s in shown]})
    for m in scene["markers"]:
        jobs.append(((round(m["z_mm"], 4), 0, 1e9 + m["id"], 0), "marker", m))
    for i, o in enumerate(scene["occluders"]):
        jobs.append(((round(o["z_mm"], 4), 2, i, 0), "occluder", o))
    jobs.sort(key=lambda j: j[0])
    return jobs, pose_truth


def _paint(canvas, jobs: list, catalog: Catalog, printed: dict | None = None) -> list[tuple]:
    """Paint the jobs; returns every sticker painted: (truth dict, corners mm, paint order, owner)."""
    from .draw import PieceFrame, draw_body, draw_sticker, occluder_polygons, SKIN

    qz = catalog.quiet_zone_fraction
    sticker_records = []
    for _, kind, payload in jobs:
        if kind == "piece":
            p, spec, frame, z_top = payload
            draw_body(canvas, catalog, spec, frame, p["face"], z_top, owner=f"piece:{p['name']}")
            for st in showing_stickers(spec, p["face"]):
                corners = frame.apply(st.corners_local())
                owner = f"sticker:{st.marker_id}"
                order = draw_sticker(canvas, st.marker_id, corners, z_top, qz, owner, printed)
                sticker_records.append(({"id": st.marker_id, "piece": p["name"], "slot": st.slot,
                                         "size_mm": st.size_mm, "z_mm": z_top}, corners, order, owner))
        elif kind == "marker":
            m = payload
            h = m["size_mm"] / 2
            corners = PieceFrame(m["x_mm"], m["y_mm"], m["theta_deg"]).apply([(-h, h), (h, h), (h, -h), (-h, -h)])
            owner = f"sticker:{m['id']}"
            order = draw_sticker(canvas, m["id"], corners, m["z_mm"], qz, owner, printed)
            sticker_records.append(({"id": m["id"], "piece": None, "slot": None, "size_mm": m["size_mm"],
                                     "z_mm": m["z_mm"]}, corners, order, owner))
        else:
            o = payload
            colour = _colour(o["colour"], "occluder colour") if "colour" in o else SKIN
            for poly in occluder_polygons(o):
                canvas.fill(poly, o["z_mm"], colour, owner="occluder")
    return sticker_records


def _sticker_truth(canvas, record: tuple, K, dist, R, t, qz: float) -> dict:
    """One painted sticker's truth: corners in mm and px, side, and how much of it shows
    (in the image, and not covered by anything painted later)."""
    import cv2
    from shapely.geometry import Polygon
    from shapely.ops import unary_union

    info, corners, order, owner = record
    w, h = canvas.size
    z = info["z_mm"]
    pts3 = np.column_stack([corners, np.full(4, z)])
    img_pts, _ = cv2.projectPoints(pts3.reshape(-1, 1, 3), rodrigues(R), t, K, dist)
    img_pts = img_pts.reshape(4, 2)
    ideal, depth = project_ideal(pts3, K, R, t)
    centre = corners.mean(axis=0)
    quiet = centre + (corners - centre) * (1 + 2 * qz)
    ideal_quiet, _ = project_ideal(np.column_stack([quiet, np.full(4, z)]), K, R, t)
    inside = bool(np.all(depth > 0)
                  and np.all(img_pts[:, 0] >= IMAGE_MARGIN_PX) and np.all(img_pts[:, 0] <= w - 1 - IMAGE_MARGIN_PX)
                  and np.all(img_pts[:, 1] >= IMAGE_MARGIN_PX) and np.all(img_pts[:, 1] <= h - 1 - IMAGE_MARGIN_PX)
                  and _ideal_inside(canvas, ideal))
    square = Polygon(ideal).buffer(0)
    whole = Polygon(ideal_quiet).buffer(0)
    covers = [Polygon(pp.polygon_px).buffer(0) for pp in canvas.painted if pp.order > order and pp.owner != owner]
    covers = [c for c in covers if c.intersects(whole)]
    cover = unary_union(covers) if covers else None
    if cover is None or square.area <= 0:
        frac_square, frac_whole = 1.0, 1.0
    else:
        frac_square = 1.0 - square.intersection(cover).area / square.area
        frac_whole = 1.0 - whole.intersection(cover).area / whole.area
    side = float(np.mean([np.linalg.norm(img_pts[(k + 1) % 4] - img_pts[k]) for k in range(4)]))
    occluded = frac_whole < VISIBLE_MIN_FRACTION
    return dict(info, corners_mm=[[round(float(v), 4) for v in row] for row in pts3],
                corners_px=[[round(float(v), 4) for v in row] for row in img_pts],
                centre_px=[round(float(v), 4) for v in img_pts.mean(axis=0)],
                side_px=round(side, 3), visible_fraction=round(max(0.0, frac_square), 4),
                in_image=inside, occluded=bool(occluded), visible=bool(inside and not occluded))


def _ideal_inside(canvas, ideal_pts: np.ndarray) -> bool:
    x0, y0 = canvas.origin
    return bool(np.all(ideal_pts[:, 0] > x0) and np.all(ideal_pts[:, 0] < x0 + canvas.ideal_w)
                and np.all(ideal_pts[:, 1] > y0) and np.all(ideal_pts[:, 1] < y0 + canvas.ideal_h))


def apply_effects(image: np.ndarray, eff: dict) -> np.ndarray:
    """Lighting gradient and vignette, optical blur, then sensor noise: (H, W, 3) uint8."""
    import cv2

    h, w = image.shape[:2]
    light = eff["lighting"]
    # the gain field is smooth: compute it on a small grid and scale it up
    gw, gh = 64, max(2, int(round(64 * h / w)))
    yy, xx = np.mgrid[0:gh, 0:gw].astype(np.float32)
    xn, yn = (xx + 0.5) / gw * 2 - 1, (yy + 0.5) / gh * 2 - 1
    a = math.radians(light.get("direction_deg", 0.0))
    ramp = (math.cos(a) * xn + math.sin(a) * yn) / 2
    gain = light.get("brightness", 1.0) * (1 + light.get("gradient", 0.0) * ramp) \
        * (1 - light.get("vignette", 0.0) * 0.5 * (xn * xn + yn * yn) / 2)
    gain = cv2.resize(gain.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    out = image.astype(np.float32)
    out *= gain[:, :, None]
    if eff["blur_sigma"] > 0:
        out = cv2.GaussianBlur(out, (0, 0), eff["blur_sigma"])
    if eff["noise_sigma"] > 0:
        rng = np.random.default_rng(eff.get("seed", 0))
        noise = rng.standard_normal(out.shape, dtype=np.float32)
        noise *= np.float32(eff["noise_sigma"])
        out += noise
    return np.clip(out + 0.5, 0, 255).astype(np.uint8)


def encode_jpeg(image: np.ndarray, quality: int) -> np.ndarray:
    import cv2

    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise SceneError("could not encode the rendered image as JPEG")
    return buf


def default_truth_path(out_image: str | os.PathLike) -> Path:
    p = Path(out_image)
    return p.with_name(p.stem + ".truth.json")


def write_render(scene: dict, out_image: str | os.PathLike, truth_path: str | os.PathLike | None = None,
                 catalog: Catalog | None = None) -> tuple[Path, Path, dict]:
    """Render a scene to a JPEG (or PNG by extension) and write the truth JSON beside it."""
    import cv2

    out_image = Path(out_image)
    truth_path = Path(truth_path) if truth_path else default_truth_path(out_image)
    for target in (out_image, truth_path):
        folder = target.parent if str(target.parent) else Path(".")
        if not folder.is_dir():
            raise SceneError(f"cannot write {target}: folder {folder} does not exist")
        if not os.access(folder, os.W_OK):
            raise SceneError(f"cannot write {target}: folder {folder} is not writable")
        if target.is_dir():
            raise SceneError(f"cannot write {target}: it is a folder")
    ext = out_image.suffix.lower()
    if ext not in (".jpg", ".jpeg", ".png"):
        raise SceneError(f"output image {out_image} must end in .jpg, .jpeg or .png")
    scene = validate_scene(scene, catalog=catalog)
    image, truth = render_scene(scene, catalog=catalog)
    if ext == ".png":
        data = cv2.imencode(".png", image)[1].tobytes()
    else:
        data = encode_jpeg(image, scene["effects"]["jpeg_quality"]).tobytes()
    safeload.write_bytes(out_image, data, "output image", SceneError)  # whole or not at all; names the file
    safeload.write_text(truth_path, json.dumps(truth, indent=1) + "\n", "truth file", SceneError)
    return out_image, truth_path, truth
