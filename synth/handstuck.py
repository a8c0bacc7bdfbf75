"""Copies of a game whose stickers were stuck by hand, and the boat line-up photo that measures
them (issue 20; SPEC sections 2 and 4).

``hand_stuck_catalog(copy_seed)`` is the catalog of one physical copy: every sticker sits off
its catalog place by a normal error (per axis and in rotation), the same in every picture of
that copy. Render with it and observe with the nominal catalog to see what a player who never
measured their copy gets. ``lineup_scene`` is the measuring photo: the start gate on the
table and the boats behind it, noses touching its straight side (SPEC section 4).
"""

from __future__ import annotations

import copy
import math

import numpy as np

from referee.catalog import Catalog, default_catalog

from .scenes import RESOLUTIONS, fit_camera, random_effects, relevant_points, table_for

# what a careful player manages with the placement guide (issue 20's measurement)
HAND_SIGMA_MM = 0.6
HAND_SIGMA_DEG = 1.5
LINEUP_TURN_DEG = 2.0  # how square a player sets a boat to the gate, at most


def hand_stuck_catalog(copy_seed: int, sigma_mm: float = HAND_SIGMA_MM, sigma_deg: float = HAND_SIGMA_DEG,
                       base: Catalog | None = None, single_only: bool = False) -> Catalog:
    """One copy's true sticker places: each piece's slots moved and turned at random (from
    copy_seed, so the same copy is the same in every picture). single_only: only pieces with
    one sticker a face are stuck by hand, the others exactly (a diagnostic: it tells the
    placement of single stickers from the layout misfit of pieces with several)."""
    base = base or default_catalog()
    data = copy.deepcopy(base.data)
    rng = np.random.default_rng(copy_seed)
    for fam in data["families"]:
        for piece in fam["pieces"]:
            spec = base.piece(piece["name"])
            slots = {}
            for slot in sorted(piece["ids"]):
                st = spec.sticker(slot)
                dx, dy = rng.normal(0.0, sigma_mm, 2)
                slots[slot] = {"xy_mm": [st.x_mm + float(dx), st.y_mm + float(dy)],
                               "rot_deg": st.rot_deg + float(rng.normal(0.0, sigma_deg))}
            if not (single_only and _several_on_a_face(spec)):  # the same draws either way
                piece["slots"] = slots
    return Catalog(data, f"hand-stuck copy {copy_seed}")


def _several_on_a_face(spec) -> bool:
    """Whether some face of the piece carries stickers at different places (a gate, a card, a tile)."""
    places: dict = {}
    for st in spec.stickers:
        places.setdefault(st.face, set()).add((st.x_mm, st.y_mm))
    return any(len(p) > 1 for p in places.values())


def lineup_pieces(rng: np.random.Generator, catalog: Catalog, boats: list[str], line: str = "tornado/start-gate",
                  spacing: float = 24.0) -> list[dict]:
    """The start gate (or line: the finish line) at the origin and each boat behind it, heading along
    its +x, turned a little from square, its nose touching its straight side (footprints from
    catalog), spacing mm apart (the boats' line-up: side by side at the gate's middle, a finger's
    width apart; the finish line-up: spread along its length; SPEC section 4)."""
    gate = catalog.piece(line).footprint
    depth = float(gate["size_mm"][0])
    back_x = -depth / 2
    pieces = [{"name": line, "x_mm": 0.0, "y_mm": 0.0, "theta_deg": 0.0}]
    for k, name in enumerate(boats):
        turn = float(rng.uniform(-LINEUP_TURN_DEG, LINEUP_TURN_DEG))
        c, s = math.cos(math.radians(turn)), math.sin(math.radians(turn))
        reach = max(x * c - y * s for x, y in catalog.piece(name).footprint_polygon(96))
        y = (k - (len(boats) - 1) / 2) * spacing + float(rng.uniform(-3, 3))
        pieces.append({"name": name, "x_mm": back_x - reach, "y_mm": y, "theta_deg": turn})
    return pieces


def _renderable(camera: dict) -> bool:
    """Whether the renderer can invert the camera's lens over the image (a few random lenses bend too much)."""
    from referee.errors import InvalidInputError

    from .camera import ideal_source_map

    try:
        ideal_source_map(np.array(camera["camera_matrix"]), np.array(camera["dist_coeffs"]), camera["image_size"])
    except InvalidInputError:
        return False
    return True


def lineup_scene(seed: int, boats: list[str] | None = None, resolution: str = "1080p",
                 catalog: Catalog | None = None) -> dict:
    """The measuring photo of `refcam measure tornado-boats` as a scene (docs/scene-format.md)."""
    catalog = catalog or default_catalog()
    rng = np.random.default_rng(seed)
    boats = boats or [f"tornado/boat-{k}" for k in range(1, 7)]
    pieces = lineup_pieces(rng, catalog, boats)
    return _scene(rng, catalog, pieces, RESOLUTIONS[resolution], {"seed": seed, "lineup": True})


# the finish line-up (SPEC section 4, `refcam measure tornado-finish`): the six boats spread along the
# finish line's 330 mm, 50 mm apart
FINISH_LINEUP_SPACING_MM = 50.0


def finish_lineup_scene(seed: int, resolution: str = "1080p", catalog: Catalog | None = None) -> dict:
    """The measuring photo of `refcam measure tornado-finish` as a scene: the boats behind the finish line."""
    catalog = catalog or default_catalog()
    rng = np.random.default_rng(seed)
    boats = [f"tornado/boat-{k}" for k in range(1, 7)]
    pieces = lineup_pieces(rng, catalog, boats, "tornado/finish-line", FINISH_LINEUP_SPACING_MM)
    return _scene(rng, catalog, pieces, RESOLUTIONS[resolution], {"seed": seed, "lineup": True})


def _camera(rng: np.random.Generator, points: np.ndarray, size) -> dict:
    """A random camera that sees every point and that the renderer can invert."""
    camera = None
    while camera is None or not _renderable(camera):
        camera = fit_camera(rng, points, size, tilt_deg=float(rng.uniform(0, 25)))
    return camera


def _scene(rng: np.random.Generator, catalog: Catalog, pieces: list[dict], size, tags: dict,
           camera: dict | None = None) -> dict:
    """A scene of these pieces under the camera (default: a random one that sees them), on a random table."""
    camera = camera or _camera(rng, relevant_points(catalog, pieces), size)
    return {"refcam_scene": 1, "game": "tornado", "camera": camera, "table": table_for(rng, catalog, pieces),
            "pieces": pieces, "effects": random_effects(rng), "occluders": [], "tags": tags}


# The course line-up (SPEC section 4, `refcam measure tornado-course`): where along the gate's straight
# side the pieces lie, gate frame mm. Markers in the middle, a curve card at each end with its sticker
# past the gate's end (a sticker sits centred on the card's edge, so half of it would lie under the gate).
COURSE_MARKER_Y_MM = (-55.0, 0.0, 55.0)
COURSE_CARD_APEX_Y_MM = 88.0  # its 30 mm sticker, 120 mm out, then clears the gate's own end sticker
COURSE_LINEUP_PHOTOS = 6  # twelve card faces, two a photo; the markers a quarter turn further each photo
MARKER_TURN_SLOP_DEG = 15.0  # how exactly a player turns a marker a quarter turn, at most


def card_faces_by_side(catalog: Catalog) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Every (curve card, face) whose wedge opens toward its +y, and those opening toward -y: the first
    lie at the gate's +y end (edge along the gate's +y), the others at its -y end, so the card lies
    behind the gate, never over it."""
    from .draw import curve_card_opens_left

    plus, minus = [], []
    for spec in catalog.pieces("tornado", "tornado/curve-card"):
        for face in sorted({s.face for s in spec.stickers}):
            (plus if curve_card_opens_left(spec, face) else minus).append((spec.name, face))
    return sorted(plus), sorted(minus)


def course_lineup_pieces(rng: np.random.Generator, catalog: Catalog, photo: int) -> list[dict]:
    """Photo number `photo` (0, 1, ...) of the course line-up: the start gate at the origin; each
    curve marker's disc touching the gate's straight side, turned a quarter turn further than in the
    photo before (give or take MARKER_TURN_SLOP_DEG); one curve card at each end of that side, its
    boundary edge lying flush along it, the next card face of each kind in turn."""
    gate = catalog.piece("tornado/start-gate").footprint
    back_x = -float(gate["size_mm"][0]) / 2
    pieces = [{"name": "tornado/start-gate", "x_mm": 0.0, "y_mm": 0.0, "theta_deg": 0.0}]
    markers = sorted(p.name for p in catalog.pieces("tornado", "tornado/curve-marker"))
    for name, y in zip(markers, COURSE_MARKER_Y_MM):
        radius = catalog.piece(name).footprint["diameter_mm"] / 2
        turn = 90.0 * photo + float(rng.uniform(-MARKER_TURN_SLOP_DEG, MARKER_TURN_SLOP_DEG))
        pieces.append({"name": name, "x_mm": back_x - radius, "y_mm": y + float(rng.uniform(-3, 3)),
                       "theta_deg": turn})
    plus, minus = card_faces_by_side(catalog)
    # half the list apart: the two ends never want the same card (its two faces open to opposite sides)
    for faces, sign, shift in ((plus, 1.0, 0), (minus, -1.0, len(minus) // 2)):
        name, face = faces[(photo + shift) % len(faces)]
        apex_y = sign * (COURSE_CARD_APEX_Y_MM + float(rng.uniform(0, 6)))
        pieces.append({"name": name, "x_mm": back_x, "y_mm": apex_y, "theta_deg": 90.0 * sign, "face": face})
    return pieces


def course_lineup_scene(seed: int, photo: int = 0, resolution: str = "1080p", catalog: Catalog | None = None) -> dict:
    """One measuring photo of `refcam measure tornado-course` as a scene (docs/scene-format.md). The
    photos of one seed share one camera (a player's webcam, one camera file), which sees them all."""
    catalog = catalog or default_catalog()
    size = RESOLUTIONS[resolution]
    every = [course_lineup_pieces(np.random.default_rng([seed, k]), catalog, k)
             for k in range(max(COURSE_LINEUP_PHOTOS, photo + 1))]
    camera = _camera(np.random.default_rng(seed), np.vstack([relevant_points(catalog, p) for p in every]), size)
    rng = np.random.default_rng([seed, photo])
    return _scene(rng, catalog, course_lineup_pieces(rng, catalog, photo), size,
                  {"seed": seed, "photo": photo, "course_lineup": True}, camera)


def write_photos(scenes: list[dict], folder, catalog: Catalog, stem: str) -> tuple[list[str], object]:
    """Render the scenes into folder as stem-1.jpg, stem-2.jpg, ... with catalog (a copy's) and write
    the camera file of the first (pathlib.Path, camera.json): the photos a player takes of a line-up."""
    import json
    from pathlib import Path

    from .render import write_render

    images, cameras = [], []
    for k, scene in enumerate(scenes):
        image, _, truth = write_render(scene, Path(folder) / f"{stem}-{k + 1}.jpg", catalog=catalog)
        images.append(str(image))
        cameras.append(truth["camera"])
    camera = Path(folder) / "camera.json"
    camera.write_text(json.dumps(cameras[0]))
    return images, camera
