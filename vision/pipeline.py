"""One image -> an Observation: every piece in view, in millimetres in the game frame, with sigma.

Stages of observe(), one function each: detect (which pieces; _detect) -> undistort corners
(_undistort) -> camera pose from the flat stickers (table_pose; _plane) -> game frame (the
game's anchor piece; table corner or camera-plane frame as fall-backs, with a warning; _frame)
-> each piece's parallax-correct pose and covariance (pieces; _piece_pose) -> warnings
(_closing_warnings). The Observation also carries the one image-from-game mapping
(_image_from_game) that everything drawing on the picture uses.
"""

from __future__ import annotations

import math
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from typing import Any

import cv2
import numpy as np

from referee.catalog import Catalog, Placement, default_catalog
from referee.errors import RefcamError
from referee.observation import NOT_READ, ImageFromGame, Observation, PiecePose

from . import detect
from .camera_field import camera_field, camera_field_gradient, in_game_frame
from .pieces import (PieceFit, corner_sigma_px, fit_by_centres, fit_piece, fit_pieces, sigma_from_cov,
                     transform_pose, with_frame_uncertainty, wrap_deg)
from .table_pose import (JACKKNIFE_MAX_STICKERS, Intrinsics, StickerObs, TablePoseError, centre_shift_px, check_camera_file, layout_mismatches,
                         leave_one_out, plane_support, psd, solve_table_pose, unbias_sticker)

# Sticker side (px) from which refcam finds >= 99 % of pieces through a cheap webcam's whole chain
# (synth/webcam.py's harsher chain: defocus disc, sharpening halos, JPEG q50-75, matte paper and grey
# ink, rolling exposure, pattern noise; tests/bench/webcam.py, its held-back conditions, still
# tables: 100 % from 14 px at 1080p and 720p, 95.8 % at 12-14 px; docs/vision-webcam.md); below
# it, observe says which camera distance, resolution or sticker size gets there.
SIDE_PX_FOR_99 = 14.0
# Without a camera file: focal-length starting guesses (x the longer image side) for the fit.
FOCAL_GUESSES = (0.55, 0.8, 1.2)
FOCAL_PRIOR = 0.75  # a typical webcam: ~67 deg across the longer side
# Without a camera file, unmodelled lens distortion and principal point: relative model error.
NO_CAMERA_REL_ERROR = 0.001
NO_CAMERA_FLOOR_MM = 0.15
DISAGREE_SIGMA = 8.0
# Stickers at most this high count as on the table plane for the image-from-game homography.
FLAT_STICKER_MAX_Z_MM = 2.0
POOR_CALIBRATION_PX = 1.0  # camera file rms_px above which we suggest recalibrating
MISMATCH_SIGMA = 4.0  # plane-fit rms residual (corner sigmas) that suggests a wrong camera file  # rms reprojection residual (in corner sigmas) above which a piece's stickers disagree


class NoStickersError(RefcamError):
    """No sticker of the catalog is in view."""


def observe(image: np.ndarray, camera=None, game: str | None = None, catalog: Catalog | None = None,
            detections: detect.DetectionResult | None = None, expected=(), evidence=None,
            motion: np.ndarray | None = None) -> Observation:
    """Pieces in one (H, W, 3) BGR image, in the game frame (mm), with uncertainty.

    camera: calibration.camera.CameraModel or None (then the focal length and radial
    distortion are estimated from the stickers, with webcam priors, and sigma widened).
    game: "kang", "kayak", "tornado" or None to infer it from the ids in view.
    detections: a detect.detect_all result to reuse (the live page keeps it for its overlay).
    expected: the pieces the game needs and where they should be (referee.game.ExpectedPiece,
    from expected_pieces_of): each one not read is read again at its place (vision/reread.py;
    its PiecePose.source says "reread" or "reread(Nx)" for N frames of evidence), a place seen
    empty is reported in Observation.seen_empty, and each one still not read gets a warning with
    its sticker's size in px and what would fix it. evidence: a vision.reread.Evidence kept
    across the frames of a stream (a still period's frames add up); motion: (H, W) bool mask of
    what moved since the last frame (a place under it is never seen empty).
    Raises NoStickersError when no known sticker shows, TablePoseError when the stickers
    in view do not fix the table plane, CameraFileError when the camera file is for
    another image size.

    Observation.frame: kind ("piece": the game's anchor, "table-corner", "camera-plane"),
    anchor, game_frame (bool), camera_file, focal_px, tilt_deg, camera_distance_mm,
    camera_pose {rvec, tvec, camera_matrix, dist_coeffs} (game frame -> camera, for
    cv2.projectPoints), image_from_game (3x3: table plane z=0 in mm -> undistorted pixels).
    Observation.image_from_game: the mapping game-frame mm -> image pixels (see
    _image_from_game), the one the overlay and the explanation pictures draw with.
    """
    catalog = catalog or default_catalog()
    h, w = image.shape[:2]
    if camera is not None:
        camera.check_image_size(w, h)
    result = detections or detect.detect_all(image, catalog, game=game)
    obs, stages = _observe_detections(image, camera, game, catalog, result)
    if expected:
        t0 = time.perf_counter()
        obs = _with_rereads(image, camera, catalog, result, obs, stages, expected, evidence, motion)
        if evidence is not None:  # its own cost, apart from the frame's (tests/bench/speed.py)
            evidence.cost_s += time.perf_counter() - t0
            evidence.frames += 1
    return obs


@dataclass(frozen=True)
class Stages:
    """What observe's stages found that a re-read piece is placed with (the same camera, frame and
    reference error as the pieces of the first pass)."""

    plane: Any  # Plane
    frame_pose: tuple
    frame_cov: Any
    gauge: np.ndarray


def _observe_detections(image: np.ndarray, camera, game: str | None, catalog: Catalog,
                        result: detect.DetectionResult) -> tuple[Observation, Stages]:
    """observe() on the stickers of result (the stages, one function each), and those stages."""
    h, w = image.shape[:2]
    warnings: list[str] = []
    game, by_piece = _detect(result, catalog, game, w, h, warnings)
    intr, obs_by_piece = _undistort(by_piece, catalog, camera, w, h, warnings)
    plane = _plane(obs_by_piece, catalog, game, intr, camera, w, h, warnings)
    tp, obs_by_piece = plane.tp, plane.obs_by_piece  # corners corrected for the tone curve's edge bias
    frame_pose, frame_cov, frame_info = _frame(plane, camera, w, h)
    spread = _plane_spread(plane)
    fits, reference_fit = _fits(obs_by_piece, plane, catalog, reference_fit=True)
    gauge = _gauge_of(reference_fit, plane)
    frame_info["camera_field_gradient"] = _camera_gradient(plane, fits)
    frame_info["camera_field"] = camera_field(plane.tp, frame_pose)
    poses = [_piece_pose(name, obs_by_piece[name], plane, frame_pose, frame_cov, camera, catalog, warnings,
                         fits.get(name), spread.get(name), gauge) for name in sorted(obs_by_piece)]
    warnings.extend(_spread_warnings(poses, spread, plane))
    warnings.extend(_closing_warnings(poses, tp, camera, catalog, (w, h)))
    obs = Observation(pieces=tuple(poses), frame=frame_info, unknown_markers=tuple(result.unknown_ids),
                      warnings=tuple(warnings), game=game, image_size=(w, h),
                      image_from_game=_image_from_game(tp, frame_info["camera_pose"], camera, poses, catalog))
    return obs, Stages(plane, frame_pose, frame_cov, gauge)


def _with_rereads(image: np.ndarray, camera, catalog: Catalog, result: detect.DetectionResult, obs: Observation,
                  stages: Stages, expected, evidence, motion) -> Observation:
    """obs with the expected pieces it did not read read again at their places (vision/reread.py),
    the places seen empty, and a warning naming each needed piece still not read."""
    from . import reread

    if "camera_pose" not in obs.frame:
        return obs  # no table pose: the expected places cannot be found
    if not obs.frame.get("game_frame"):  # the anchor not in view: the pieces read tie the places to the table
        expected = reread.expected_in_frame(expected, obs.pieces)
    read = {p.name for p in obs.pieces}
    wanted = [e for e in expected if e.name not in read]
    if not wanted:
        return obs
    occupied = np.array([d.corners for d in result.detections]) if result.detections else np.zeros((0, 4, 2))
    got = reread.reread(image, obs.frame["camera_pose"], wanted, catalog, obs.game, occupied, evidence, motion)
    warnings: list[str] = []
    poses = _reread_poses(got.reads, image, camera, catalog, stages, warnings)
    pieces = tuple(sorted(obs.pieces + poses, key=lambda p: p.name))
    read = {p.name for p in pieces}
    missing = [m for m in got.not_read if m[0] not in read and m[0] not in got.seen_empty]
    return replace(obs, pieces=pieces, seen_empty=tuple(n for n in got.seen_empty if n not in read),
                   warnings=obs.warnings + tuple(warnings) + tuple(not_read_warnings(missing)))


def _reread_poses(reads, image: np.ndarray, camera, catalog: Catalog, stages: Stages,
                  warnings: list[str]) -> tuple[PiecePose, ...]:
    """The re-read pieces' poses, each fitted on its own with the camera the first pass found held
    (a re-read sticker never moves the table plane the other pieces were placed with), with the
    same frame and reference error as theirs; PiecePose.source "reread" or "reread(Nx)"."""
    if not reads:
        return ()
    h, w = image.shape[:2]
    by_piece: dict[str, list] = defaultdict(list)
    for r in reads:
        by_piece[r.piece].append(r.detection)
    _, sts = _undistort(by_piece, catalog, camera, w, h, [])
    tp = stages.plane.tp
    sts = {n: [unbias_sticker(s, tp.edge_bias_px, tp.edge_bias_blur_px) for s in lst] for n, lst in sts.items()}
    plane = replace(stages.plane, obs_by_piece={**stages.plane.obs_by_piece, **sts})
    fits = _piece_fits(sts, plane, catalog)
    frames = {r.piece: r.frames for r in reads}
    return tuple(replace(_piece_pose(n, sts[n], plane, stages.frame_pose, stages.frame_cov, camera, catalog, warnings,
                                     fits.get(n), None, stages.gauge),
                         source=f"reread({frames[n]}x)" if frames[n] > 1 else "reread") for n in sorted(sts))


def not_read_warnings(missing: list[tuple[str, float, str]]) -> list[str]:
    """One line per piece the game needs that was not read (vision.reread.RereadResult.not_read): its
    sticker's size in px where it should be, and what would get it read (nearer or a bigger sticker
    when small; more light, a still table and a focused camera when large enough), or that its place
    is out of view or holds another sticker."""
    out = []
    for name, side, why in missing:
        if why == "moving":  # a hand or a piece moving over its place: looked for again once it is still
            continue
        if why == "out of view":
            out.append(NOT_READ.format(name) + "its place is out of the camera's view; move the camera "
                       f"or the piece into view")
            continue
        if why == "occupied":
            out.append(NOT_READ.format(name) + "another piece's sticker is where it should be "
                       f"(moved or swapped?); its sticker would show about {side:.0f} px wide there")
            continue
        if side < SIDE_PX_FOR_99:
            fix = (f"bring the camera nearer or print a bigger sticker (x{SIDE_PX_FOR_99 / side:.1f} to reach "
                   f"{SIDE_PX_FOR_99:.0f} px), or add light")
        else:
            fix = "add light, keep the table still and check the camera's focus; a hand or glare may hide it"
        out.append(NOT_READ.format(name) + f"its sticker shows about {side:.0f} px wide here; {fix}")
    return out


def _detect(result: detect.DetectionResult, catalog: Catalog, game: str | None, w: int, h: int,
            warnings: list[str]) -> tuple[str | None, dict[str, list]]:
    """Stage 1, which pieces: the detections grouped by piece, without duplicated ids, pieces
    showing both faces, or pieces of another game than the one observed (each with a warning)."""
    if not result.detections:
        extra = f" (other ArUco ids seen: {', '.join(map(str, result.unknown_ids[:10]))})" if result.unknown_ids else ""
        raise NoStickersError(f"no refcam stickers found in the {w}x{h} image{extra}")
    counts = Counter(d.marker_id for d in result.detections)
    by_piece: dict[str, list] = defaultdict(list)
    for d in result.detections:
        if counts[d.marker_id] == 1:
            by_piece[catalog.sticker(d.marker_id).piece].append(d)
    for mid in sorted(m for m, n in counts.items() if n > 1):
        name = catalog.sticker(mid).piece
        warnings.append(f"sticker id {mid} ({name}) is seen {counts[mid]} times but there is one such piece: "
                        f"{name} left out")
        by_piece.pop(name, None)
    for name in list(by_piece):
        faces = {_face_of(catalog, d.marker_id) for d in by_piece[name]} - {None}
        if len(faces) > 1:
            warnings.append(f"{name} shows both faces ({', '.join(sorted(faces))}): two copies? left out")
            del by_piece[name]
    games = Counter(catalog.piece(n).game for n in by_piece for _ in by_piece[n])
    game_counts = {g: c for g, c in games.items() if g != "table"}
    if game is None:
        game = max(game_counts, key=game_counts.get) if game_counts else None
    for g in sorted(game_counts):
        if g != game:
            names = sorted(n for n in by_piece if catalog.piece(n).game == g)
            warnings.append(f"{len(names)} piece(s) of {g} ignored while observing {game}: {', '.join(names[:5])}")
            for n in names:
                del by_piece[n]
    if not by_piece:
        others = sorted(g for g in game_counts if g != game)
        if others:  # the stickers of another game were dropped above: say so rather than "none"
            raise NoStickersError(f"no {game} stickers in the {w}x{h} image, only {' and '.join(others)} pieces")
        raise NoStickersError(f"no usable refcam stickers in the {w}x{h} image")
    return game, by_piece


# one sticker's turn on its piece, per mm of its placement tolerance: the catalog's one-sticker
# tolerance (0.5 mm, 1 degree; referee/data/catalog.json's placement note)
STICKER_TURN_DEG_PER_MM = 2.0


def _places_on_a_face(spec) -> int:
    """How many distinct sticker places the piece's fullest face has (1: one sticker a face)."""
    places: dict = defaultdict(set)
    for st in spec.stickers:
        places[st.face].add((st.x_mm, st.y_mm))
    return max(map(len, places.values()), default=0)


def sticker_placement(spec) -> tuple[float, float]:
    """(mm per axis, deg): how far each of the piece's stickers may sit off its catalog place. The
    catalog gives the piece's term, which averages its n stickers on a face (0.5 / sqrt(n) mm): one
    sticker's is sqrt(n) times it. Only pieces with several stickers on a face need it (the plane fit
    weighs their disagreement with the catalog layout by it); a single sticker's own error is
    its piece's term and moves nothing else."""
    n = _places_on_a_face(spec)
    if n < 2:
        return 0.0, 0.0
    mm = spec.placement.sigma_mm * math.sqrt(n)
    return mm, STICKER_TURN_DEG_PER_MM * mm


def placement_seen(spec, sts: list[StickerObs]) -> Placement:
    """The piece's placement term as far as the stickers seen carry it. The catalog's term for a
    piece with several stickers on a face averages them and takes the heading from their spacing;
    seen with fewer, the piece's pose is its seen stickers' (0.5 / sqrt(seen) of the one-sticker
    term), and with one, that sticker's own turn (1 degree) swings the piece's reference point by its
    distance from it (a finish line seen by one end: 1 degree over 150 mm, 2.6 mm). A measured
    piece keeps its measured term when all of its stickers on the face are seen: a measured finish
    line's term (`refcam measure tornado-finish`) is where its two stickers sit together, and one
    sticker alone still turns the line by its own unmeasured turn."""
    placed = spec.placement
    ids = {s.marker_id for s in sts}
    seen = {(st.x_mm, st.y_mm) for st in spec.stickers if st.marker_id in ids}
    n = _places_on_a_face(spec)
    if n < 2 or len(seen) >= n:
        return placed
    one_mm, one_deg = sticker_placement(spec)
    if len(seen) > 1:
        mm = one_mm / math.sqrt(len(seen))
        return Placement(mm, mm, placed.sigma_deg * n / len(seen))  # seen < n: a shorter spacing
    (x, y), turn = next(iter(seen)), math.radians(one_deg)
    # turned about the seen sticker, the reference point moves square to the lever (x, y) to it
    return Placement(math.hypot(one_mm, x * turn), math.hypot(one_mm, y * turn), one_deg)


def _undistort(by_piece: dict[str, list], catalog: Catalog, camera, w: int, h: int,
               warnings: list[str]) -> tuple[Intrinsics, dict[str, list[StickerObs]]]:
    """Stage 2: the intrinsics to solve with and every sticker's corners in ideal pixels
    (undistorted with the camera file; as detected without one, the fit estimates the lens)."""
    if camera is not None:
        K = camera.K
        intr = Intrinsics(K[0, 0], K[1, 1], K[0, 2], K[1, 2], focal_free=False)
    else:
        f0 = FOCAL_PRIOR * max(w, h)
        intr = Intrinsics(f0, f0, (w - 1) / 2.0, (h - 1) / 2.0, focal_free=True, prior_f=f0)
    # a camera file's own reprojection error: half of it as extra (independent) corner noise
    calib_px = 0.5 * float(camera.rms_px) if camera is not None else 0.0
    if camera is not None and camera.rms_px > POOR_CALIBRATION_PX:
        warnings.append(f"the camera file's calibration is poor (rms {camera.rms_px:.2f} px): recalibrate with "
                        f"more ChArUco views for tighter positions")
    obs_by_piece: dict[str, list[StickerObs]] = {}
    ideals = _undistorted_corners(by_piece, camera)
    for name, ds in by_piece.items():
        lst = []
        sticker_mm, sticker_deg = sticker_placement(catalog.piece(name))
        for d in ds:
            st = catalog.sticker(d.marker_id)
            ideal = ideals[id(d)]
            lst.append(StickerObs(marker_id=d.marker_id, piece=name, ideal_px=ideal,
                                  local_mm=np.array(st.corners_local(), dtype=np.float64), z_mm=st.top_z_mm,
                                  sigma_px=math.hypot(corner_sigma_px(d.side_px, d.edge_rms_px, d.source, d.blur_px),
                                                      calib_px), size_mm=st.size_mm,
                                  side_px=d.side_px, blur_px=d.blur_px, streak_px=sticker_streak(d),
                                  edge_blur_px=tuple(d.extra.get("edge_blur_px", ())),
                                  placement_mm=sticker_mm, placement_deg=sticker_deg))
        obs_by_piece[name] = lst
    return intr, obs_by_piece


def sticker_streak(d: detect.Detection) -> float:
    """How much more blurred a sticker's most blurred edge is than its sharpest (px, in quadrature):
    motion blur spreads the edges across its path and spares the others, which the sticker's one
    blur figure (a median over all four edges) does not show. 0 when the edges were not measured."""
    per_edge = d.extra.get("edge_blur_px")
    if not per_edge:
        return 0.0
    return math.sqrt(max(0.0, max(per_edge) ** 2 - min(per_edge) ** 2))


def _plane(obs_by_piece: dict[str, list[StickerObs]], catalog: Catalog, game: str | None, intr: Intrinsics,
           camera, w: int, h: int, warnings: list[str]):
    """Stage 3: the table plane (camera pose) from the flat stickers, held at a reference piece.

    A piece whose stickers disagree with its catalog layout is named and kept out of the fit
    (it would bend the plane for every piece); the camera file is checked against the
    stickers; the tone curve's edge bias the fit measures is taken out of every sticker."""
    flat = {n: o for n, o in obs_by_piece.items() if catalog.piece(n).flat}
    plane_from_tops = False
    if not flat:
        flat = dict(obs_by_piece)
        plane_from_tops = True
        warnings.append("no flat sticker (board, tiles, gate, cards, table corners) in view: the table plane "
                        "comes from the piece tops, which may tilt; positions are less certain")
    anchor = catalog.game(game)["frame_anchor"] if game else None
    frame_kind = "piece"
    if anchor in flat:
        reference = anchor
    else:
        corners = sorted(n for n in flat if n.startswith("table/corner"))
        if corners:
            reference, frame_kind = corners[0], "table-corner"
        else:
            reference = max(flat, key=lambda n: sum(s.side_px for s in flat[n]) * (1 + len(flat[n])))
            frame_kind = "camera-plane"
        if anchor:
            warnings.append(f"{anchor} (the {game} frame anchor) is not in view: poses are in the "
                            + ("frame of " + reference if frame_kind == "table-corner" else
                               "camera-plane frame (origin under the image centre, +x to the image right)")
                            + ", not the game frame")
    mismatched = layout_mismatches(flat, intr.K())
    for n, (seen, cat) in sorted(mismatched.items()):
        warnings.append(f"{n}: stickers {seen:.0f} mm apart, catalog {cat:.0f} mm: edit the catalog or re-stick "
                        "(left out of the table-plane estimate)")
    solve_flat = {n: o for n, o in flat.items() if n not in mismatched} or flat
    solve_ref = reference if reference in solve_flat else max(
        solve_flat, key=lambda n: sum(s.side_px for s in solve_flat[n]) * (1 + len(solve_flat[n])))
    try:
        tp = _solve(solve_flat, solve_ref, intr, camera is None, w, h)
    except (np.linalg.LinAlgError, cv2.error, FloatingPointError) as exc:
        raise TablePoseError(f"cannot find the table plane from the {sum(map(len, flat.values()))} flat "
                             f"sticker(s) in view ({type(exc).__name__})") from None
    tp, camera_warning = check_camera_file(solve_flat, solve_ref, intr, tp)
    if camera_warning:
        warnings.append(camera_warning)
    unbiased = {n: [unbias_sticker(s, tp.edge_bias_px, tp.edge_bias_blur_px) for s in sts]
                for n, sts in obs_by_piece.items()}
    if camera is not None and tp.rms_sigma > MISMATCH_SIGMA:
        warnings.append(f"the stickers fit the camera model poorly ({tp.rms_sigma:.1f} sigma rms): is the camera "
                        f"file for this camera and zoom? sigma is widened to match")
    for n in tp.outliers:
        warnings.append(f"{n} does not lie flat with the other pieces (bumped or lifted?): left out of the "
                        f"table-plane estimate, its pose is less certain")
    return Plane(tp, reference, frame_kind, plane_from_tops, mismatched, solve_ref, unbiased, solve_flat)


def _undistorted_corners(by_piece: dict[str, list], camera) -> dict[int, np.ndarray]:
    """id(detection) -> its (4, 2) corners in ideal pixels: one cv2.undistortPoints for every
    sticker (each point is undistorted on its own), or the corners as detected without a camera file."""
    dets = [d for ds in by_piece.values() for d in ds]
    if camera is None or not dets:
        return {id(d): d.corners.copy() for d in dets}
    corners = np.concatenate([np.asarray(d.corners, dtype=np.float64).reshape(4, 2) for d in dets])
    ideal = cv2.undistortPoints(corners.reshape(-1, 1, 2), camera.K, camera.dist, None, camera.K).reshape(-1, 4, 2)
    return {id(d): ideal[i] for i, d in enumerate(dets)}


@dataclass(frozen=True)
class Plane:
    """What stage 3 found: the table pose, the frame's reference piece, and how it was fixed."""

    tp: Any  # table_pose.TablePose
    reference: str  # the piece the frame is anchored on
    frame_kind: str  # "piece", "table-corner" or "camera-plane"
    plane_from_tops: bool  # no flat sticker: the plane came from the piece tops
    mismatched: dict  # piece -> (stickers apart, catalog) mm: kept out of the plane fit
    solve_ref: str  # the piece the fit was held at (the reference unless it is mismatched)
    obs_by_piece: dict  # every piece's stickers, corrected for the edge bias
    solve_groups: dict  # the flat pieces' stickers the plane was fitted to (before the edge-bias correction)


def _frame(plane: Plane, camera, w: int, h: int):
    """Stage 4, the frame poses are reported in: (x0, y0, phi) of it in the reference frame,
    its covariance (None when the plane fit holds it fixed), and Observation.frame."""
    tp, reference, frame_kind = plane.tp, plane.reference, plane.frame_kind
    frame_pose, frame_cov = (0.0, 0.0, 0.0), None
    if frame_kind == "camera-plane":
        frame_pose = _camera_plane_frame(tp, w, h)
    elif plane.solve_ref != reference:  # the anchor is mismatched: its own best fit still defines the frame
        anchor_fit = fit_by_centres(plane.obs_by_piece[reference], tp)
        frame_pose, frame_cov = anchor_fit.pose, anchor_fit.cov + mismatch_cov(plane.mismatched[reference])
    frame_info = {"kind": frame_kind, "anchor": reference if frame_kind != "camera-plane" else None,
                  "game_frame": frame_kind == "piece", "camera_file": camera is not None,
                  "focal_px": round(tp.f, 1), "tilt_deg": round(tp.tilt_deg(), 1),
                  "camera_distance_mm": round(float(np.linalg.norm(tp.camera_centre())), 1),
                  "plane_fit_rms_sigma": round(tp.rms_sigma, 2)}
    if frame_kind == "camera-plane":
        frame_info["description"] = "camera-plane frame: origin where the optical axis meets the table"
    frame_info.update(_camera_in_frame(tp, frame_pose, camera))
    return frame_pose, frame_cov, frame_info


def mismatch_cov(seen_catalog_mm: tuple[float, float]) -> np.ndarray:
    """The pose covariance a piece's own stickers say it has when they stand seen_mm apart while the
    catalog says catalog_mm: the pair's centre is off by up to half the difference along each axis
    and its heading by the difference over the distance. Re-stuck stickers do that, and so does a
    frame whose corners a motion blur bent (7 px: kayak tiles 10-16 mm off with sigma under 1 mm
    were their own anchor's doing); neither may leave a piece confidently placed."""
    seen, cat = seen_catalog_mm
    d = abs(seen - cat)
    return np.diag([(d / 2.0) ** 2, (d / 2.0) ** 2, (d / max(cat, 1.0)) ** 2])


def _piece_fits(obs_by_piece: dict[str, list[StickerObs]], plane: Plane,
                catalog: Catalog) -> dict[str, tuple[PieceFit, float]]:
    """Stage 5a: name -> (pose fit, sticker height used) of every piece the plane fit does not
    place, all fitted at once (vision.pieces.fit_pieces); a piece resting on a support the plane
    fit placed (the catalog's top_z_mm_on: a Kang token on its board) is fitted again at the
    height its sticker has there."""
    return _fits(obs_by_piece, plane, catalog)[0]


def _reference_stickers(plane: Plane) -> list[StickerObs]:
    """The stickers of the piece the plane fit was held at, as that fit saw them."""
    return plane.solve_groups.get(plane.solve_ref) or plane.obs_by_piece[plane.solve_ref]


def _fits(obs_by_piece: dict[str, list[StickerObs]], plane: Plane, catalog: Catalog,
          reference_fit: bool = False) -> tuple[dict[str, tuple[PieceFit, float]], PieceFit | None]:
    """(_piece_fits, the fit reference's own fit with the camera held when reference_fit, else
    None): the reference rides along in the same batch, left out of the pooled noise
    (frame_gauge_cov uses its camera sensitivity only)."""
    tp = plane.tp
    names = [n for n in sorted(obs_by_piece) if n not in plane.mismatched and not _placed_by_plane(n, plane)]
    groups = [obs_by_piece[n] for n in names]
    fitted = fit_pieces(groups + ([_reference_stickers(plane)] if reference_fit else []), tp, pooled=len(groups))
    fits = {n: (f, obs_by_piece[n][0].z_mm) for n, f in zip(names, fitted)}
    resting = {}
    for n in names:
        z_on = _resting_height(n, fits[n][0].pose, obs_by_piece[n], tp, catalog)
        if z_on is not None and z_on != fits[n][1]:
            resting[n] = z_on
    refits = fit_pieces([obs_by_piece[n] for n in resting], tp, list(resting.values()))
    fits.update({n: (f, z) for (n, z), f in zip(resting.items(), refits)})
    return fits, (fitted[-1] if reference_fit else None)


def _placed_by_plane(name: str, plane: Plane) -> bool:
    """Whether the plane fit's own pose of the piece is the one reported (stage 5)."""
    tp = plane.tp
    return name in tp.piece_poses and name not in tp.outliers and not plane.plane_from_tops


def _resting_height(name: str, pose, sts: list[StickerObs], tp, catalog: Catalog) -> float | None:
    """The height of the piece's sticker when the piece (pose: reference frame) lies within the
    footprint of a support the plane fit placed, from the catalog's top_z_mm_on; None on none."""
    sticker = catalog.sticker(sts[0].marker_id)
    for support_family in catalog.family(catalog.piece(name).family).get("top_z_mm_on", {}):
        for support in catalog.pieces(family=support_family):
            at = (0.0, 0.0, 0.0) if tp.reference == support.name else tp.piece_poses.get(support.name)
            if at is not None and _within(support.footprint_polygon(), at, pose):
                return catalog.sticker_top_z(sticker, support_family)
    return None


def _within(outline: list[tuple[float, float]], at, pose) -> bool:
    """Whether pose's point lies inside outline (a piece frame's polygon) of a piece at `at` (x, y, theta)."""
    (x, y, _), _ = transform_pose(pose, np.zeros((3, 3)), at)
    return cv2.pointPolygonTest(np.asarray(outline, dtype=np.float32).reshape(-1, 1, 2), (float(x), float(y)), False) > 0


def _piece_pose(name: str, sts: list[StickerObs], plane: Plane, frame_pose, frame_cov, camera, catalog: Catalog,
                warnings: list[str], fitted: tuple[PieceFit, float] | None = None,
                spread: tuple[float, float] | None = None, gauge: np.ndarray | None = None) -> PiecePose:
    """Stage 5: one piece's parallax-correct pose and sigma in the reported frame (fitted: its
    _piece_fits entry, when the plane fit does not place it; gauge: frame_gauge_cov; spread: the plane's
    leave-one-out variances for this piece, when it was refitted)."""
    tp = plane.tp
    z_used = sts[0].z_mm
    if _placed_by_plane(name, plane):
        fit = PieceFit(tp.piece_poses[name], tp.piece_cov[name], 0.0)
    elif name in plane.mismatched:
        fit = fit_by_centres(sts, tp)
        fit = PieceFit(fit.pose, fit.cov + mismatch_cov(plane.mismatched[name]), fit.rms_sigma, fit.camera_sensitivity)
    else:
        fit, z_used = fitted if fitted is not None else _piece_fits({name: sts}, plane, catalog)[name]
        fit = PieceFit(fit.pose, _with_centre_shift(fit.cov, sts), fit.rms_sigma, fit.camera_sensitivity)
        if name in tp.outliers:
            fit = PieceFit(fit.pose, fit.cov * 4.0, fit.rms_sigma)
        elif len(sts) > 1 and fit.rms_sigma > DISAGREE_SIGMA:
            warnings.append(f"the stickers of {name} disagree with its catalog layout ({fit.rms_sigma:.0f} sigma): "
                            f"bent, restuck, or two copies? its sigma is widened to match")
    gauge = np.zeros((3, 3)) if gauge is None else gauge
    # the fit reference's own error as it rides on this piece, through its lever arm (frame_gauge_cov)
    lever = with_frame_uncertainty(fit.pose, np.zeros((3, 3)), (0.0, 0.0, 0.0), gauge)
    pose, (sigma_mm, sigma_th), frame_term, own_mm = _sigma_in_frame(name, fit, plane, frame_pose, frame_cov,
                                                                     spread, gauge, lever)
    if camera is None:
        dist_mm = math.hypot(pose[0], pose[1])
        sigma_mm = math.hypot(sigma_mm, NO_CAMERA_FLOOR_MM, NO_CAMERA_REL_ERROR * dist_mm)
    face = None
    faces = {_face_of(catalog, s.marker_id) for s in sts} - {None}
    if faces:
        face = faces.pop()
    # SPEC section 2: hand-stuck stickers, a term of their own beside the measurement's
    placed = placement_seen(catalog.piece(name), sts)
    return PiecePose(name=name, marker_ids=tuple(sorted(s.marker_id for s in sts)),
                     x_mm=pose[0], y_mm=pose[1], theta_deg=wrap_deg(math.degrees(pose[2])), z_mm=z_used,
                     sigma_mm=math.hypot(sigma_mm, placed.bound_mm),
                     sigma_theta_deg=math.hypot(sigma_th, placed.sigma_deg),
                     face=face, size_px=min(s.side_px for s in sts), placement_sigma_mm=placed.sigma_mm,
                     placement_sigma_along_mm=placed.sigma_along_mm, placement_sigma_deg=placed.sigma_deg,
                     sigma_frame_mm=frame_term[0], sigma_frame_theta_deg=frame_term[1],
                     sigma_camera_mm=_camera_term(name, fit, plane, own_mm, lever), placement_shared_mm=placed.shared_mm)


def _camera_gradient(plane: Plane, fits: dict) -> float:
    """Observation.frame['camera_field_gradient'] (vision.camera_field): over the area the pieces
    cover, at the heights of those fitted with the camera held (the ones given a camera term)."""
    xy = [p[:2] for p in plane.tp.piece_poses.values()] + [f.pose[:2] for f, _ in fits.values()]
    heights = {z for _, z in fits.values()} or {0.0}
    return float(f"{camera_field_gradient(plane.tp, np.array(xy, dtype=np.float64), heights):.6g}")


def frame_gauge_cov(plane: Plane) -> np.ndarray:
    """How far the frame (the fit's reference piece, held at the identity) is off where its stickers
    truly are, as a pose covariance. The plane fit places the camera from the reference's stickers
    (where the table's origin and axes are) and from all the others (its tilt, height, focal length):
    the camera's uncertainty seen at the reference's own place is that frame error, with every
    per-sticker term the fit carries (twist, edge offsets, blur shifts). Every other piece is placed
    relative to that camera, so the error rides on each of them alike, through its lever arm."""
    return _gauge_of(fit_piece(_reference_stickers(plane), plane.tp), plane)


def _gauge_of(reference_fit: PieceFit, plane: Plane) -> np.ndarray:
    """frame_gauge_cov from the fit reference's own fit with the camera held."""
    S = reference_fit.camera_sensitivity
    if S is None:
        return np.zeros((3, 3))
    return S @ plane.tp.camera_cov @ S.T


def _camera_term(name: str, fit: PieceFit, plane: Plane, own_mm: float, lever: np.ndarray) -> float:
    """PiecePose.sigma_camera_mm: the part of a piece's own sigma (own_mm, the frame's term left out)
    that moves with the camera's field (referee.camera_field). A piece fitted on its own: S C S^T of
    its fit with the camera held (fit), less the frame's rigid move through its lever arm (lever).
    A piece the plane fit places claims only what a hand-stuck copy adds to its camera share
    (TablePose.camera_share_added): misplaced stickers loosen the fitted camera, which moves every
    piece alike. Its share with exact stickers stays counted as its own: on some exact-sticker tables
    the camera's true error bends the table more than its covariance says (README, "the plane fit's
    covariance"), and counting that share twice is what covers it. What its own corners give (its
    fit less the camera's) is never claimed shared."""
    if name == plane.solve_ref:
        return 0.0
    if _placed_by_plane(name, plane):
        added = plane.tp.camera_share_added.get(name)
        return 0.0 if added is None else math.sqrt(min(max(0.0, float(np.trace(added[:2, :2])) / 2.0), own_mm ** 2))
    S = fit.camera_sensitivity
    if S is None:
        return 0.0
    from_camera = S @ plane.tp.camera_cov @ S.T
    camera_var = max(0.0, float(np.trace((from_camera - lever)[:2, :2])) / 2.0)
    noise_var = max(0.0, float(np.trace((fit.cov - from_camera)[:2, :2])) / 2.0)
    return math.sqrt(min(camera_var, max(0.0, own_mm ** 2 - noise_var)))


def _sigma_in_frame(name: str, fit: PieceFit, plane: Plane, frame_pose, frame_cov, spread, gauge: np.ndarray,
                    lever: np.ndarray):
    """(pose in the reported frame, (sigma_mm, sigma_theta_deg) there, (sigma_frame_mm,
    sigma_frame_theta_deg), sigma_mm without the frame's term). The frame's own term is what moves
    every piece alike: the fit reference's own error (gauge, frame_gauge_cov) through the piece's
    lever arm (lever), the anchor's when it is not that reference (frame_cov), and the long axis its
    heading swings when one sticker holds the frame. The reference carries its own error (gauge) as
    its own term."""
    pose, own = transform_pose(fit.pose, psd(gauge if name == plane.solve_ref else fit.cov - lever), frame_pose)
    own_sigma = sigma_from_cov(_widened(own, spread))
    if name == plane.reference:
        return pose, own_sigma, (0.0, 0.0), own_sigma[0]
    cov = fit.cov if frame_cov is None else with_frame_uncertainty(fit.pose, fit.cov, frame_pose, frame_cov)
    _, cov = transform_pose(fit.pose, cov, frame_pose)
    one_sticker_frame = len(plane.solve_groups.get(plane.solve_ref, ())) == 1
    total = sigma_from_cov(_widened(cov, spread), long_axis=one_sticker_frame)
    total = tuple(max(t, o) for t, o in zip(total, own_sigma))
    return pose, total, tuple(math.sqrt(max(0.0, t ** 2 - o ** 2)) for t, o in zip(total, own_sigma)), own_sigma[0]


# the blur shift of each sticker (table_pose.centre_shift_px), for pieces fitted on their own
def _with_centre_shift(cov: np.ndarray, sts: list[StickerObs]) -> np.ndarray:
    """A piece's pose covariance plus its stickers' blur shifts (mm^2 per axis, averaged over them)."""
    var = 0.0
    for s in sts:
        var += (centre_shift_px(s) * s.size_mm / max(s.side_px, 1.0)) ** 2
    out = np.array(cov, dtype=np.float64)
    out[0, 0] += var / len(sts) ** 2
    out[1, 1] += var / len(sts) ** 2
    return out


def _plane_spread(plane: Plane) -> dict[str, tuple[float, float]]:
    """Per piece, (variance per axis mm^2, variance of theta rad^2) of its pose over refits of the
    table plane without each of its stickers in turn (jackknife), when few or blurred stickers fix
    the plane; empty otherwise (many sharp stickers: the fit's own covariance holds)."""
    if plane.plane_from_tops or not (plane_support(plane.solve_groups, plane.obs_by_piece).weak
                                     or _unmodelled_error(plane)):
        return {}
    tp = plane.tp
    # pieces outside the plane fit follow each refit through their sensitivity to the camera
    # (one fit each, not one per refit: the refits move the camera by a fraction of a degree)
    followers = {}
    for name, sts in plane.obs_by_piece.items():
        try:
            followers[name] = fit_piece(sts, tp)
        except (np.linalg.LinAlgError, ValueError, FloatingPointError):
            continue
    replicates = [_replicate_poses(tp_i, tp, followers) for tp_i in leave_one_out(plane.solve_groups, plane.solve_ref, tp)]
    if len(replicates) < 3:
        return {}
    out = {}
    for name in plane.obs_by_piece:
        got = np.array([r[name] for r in replicates if name in r])
        if len(got) < 3:
            continue
        n = len(got)
        th = np.angle(np.exp(1j * (got[:, 2] - got[0, 2])))  # wrapped about one replicate
        var_xy = (n - 1) / n * float(((got[:, :2] - got[:, :2].mean(axis=0)) ** 2).sum()) / 2.0
        out[name] = (var_xy, (n - 1) / n * float(((th - th.mean()) ** 2).sum()))
    return out


# The plane fit's residuals show this many times the corner noise modelled for its stickers:
# something the model does not know moved them (a lamp's glare is a tone curve on part of the
# table only; measured on varied tuning tables, synth/variety.py: Kang tokens 0.7 mm off at
# 2-5 sigma under glare, the noise factor 1.8). With few stickers it hides in the plane as much as
# in the residuals, so the plane is refitted without each sticker in turn, as for a weak plane.
# Clean pictures reach 1.5 (the bundled Tornado stills 0.2-1.53, with pair distances right within
# 0.25 mm): at 1.0 the refits tripled their sigma for nothing.
UNMODELLED_NOISE_FACTOR = 1.6


def _unmodelled_error(plane: Plane) -> bool:
    n = sum(len(sts) for sts in plane.solve_groups.values())
    return plane.tp.noise_factor > UNMODELLED_NOISE_FACTOR and n <= JACKKNIFE_MAX_STICKERS


def _replicate_poses(tp_i, tp, followers: dict[str, PieceFit]) -> dict[str, tuple[float, float, float]]:
    """Every piece's pose (reference frame) under one refitted table pose: from the refit itself
    for the pieces in it, else moved from its fit under tp by its camera sensitivity."""
    out = {name: tp_i.piece_poses[name] for name in tp_i.piece_poses if name not in tp_i.outliers}
    if len(tp_i.rvec) != len(tp.rvec) or tp_i.intrinsics.focal_free != tp.intrinsics.focal_free:
        return out
    extra = [np.array([tp_i.f, tp_i.k1, tp_i.k2]) - np.array([tp.f, tp.k1, tp.k2])] if tp.intrinsics.focal_free else []
    d_cam = np.concatenate([tp_i.rvec - tp.rvec, tp_i.tvec - tp.tvec] + extra)
    for name, fit in followers.items():
        if name not in out and fit.camera_sensitivity is not None and fit.camera_sensitivity.shape[1] == len(d_cam):
            out[name] = tuple(np.asarray(fit.pose) + fit.camera_sensitivity @ d_cam)
    return out


def _widened(cov: np.ndarray, spread: tuple[float, float] | None) -> np.ndarray:
    """The covariance with its position and heading variances raised to the jackknife's where larger."""
    if spread is None:
        return cov
    var_xy, var_th = spread
    out = np.array(cov, dtype=np.float64)
    lin_xy = (out[0, 0] + out[1, 1]) / 2.0
    if var_xy > lin_xy:
        out[0, 0] += var_xy - lin_xy
        out[1, 1] += var_xy - lin_xy
    out[2, 2] = max(out[2, 2], var_th)
    return out


# when few or blurred stickers fix the plane and some piece's sigma reaches this (mm), say why
SPREAD_WARN_MM = 1.0


def _spread_warnings(poses: list[PiecePose], spread: dict, plane: Plane) -> list[str]:
    """Say why sigma is wide when few or blurred stickers fix the table plane."""
    worst = max((p.sigma_mm for p in poses if p.name in spread), default=0.0)
    if worst < SPREAD_WARN_MM:
        return []
    support = plane_support(plane.solve_groups, plane.obs_by_piece)
    return [f"only {support.stickers} flat sticker(s) readable to fix the table plane: {support.cause()}; positions "
            f"are less certain, sigma widened to match (up to {worst:.1f} mm)"]


def _closing_warnings(poses: list[PiecePose], tp, camera, catalog: Catalog, image_size: tuple[int, int]
                      ) -> list[str]:
    """Stage 6: caveats about the whole picture (sticker sizes, the missing camera file)."""
    warnings = _size_warnings(poses, catalog, image_size, float(np.linalg.norm(tp.camera_centre())))
    if camera is None:
        warnings.append(f"no camera file: focal length ({tp.f:.0f} px) and radial distortion (k1 {tp.k1:+.3f}) "
                        f"estimated from the stickers, principal point assumed central; positions carry ~{NO_CAMERA_FLOOR_MM} mm + "
                        f"{NO_CAMERA_REL_ERROR * 100:.1f}% of the distance from the origin more uncertainty "
                        "(run `refcam calibrate` for a camera file)")
    return warnings


def _image_from_game(tp, pose_cam: dict, camera, poses: list[PiecePose], catalog: Catalog) -> ImageFromGame:
    """The one game mm -> image px mapping: the full camera projection (the camera file's,
    or without one the lens the plane fit estimated: f, central principal point, k1, k2),
    plus its best plane homography for callers that need a 3x3.

    Measured on the bundled stills against the true sticker corners (tests/test_image_from_game.py):
    the camera projection lands ~0.6 px rms without a camera file, where a homography fitted to the
    detected corners (the photo finish's way) is ~1.5 px rms and the ideal-pixel plane homography
    ~5 px rms. The homography is fitted to the camera projection of a grid over the stickers in view.
    """
    K = camera.K if camera is not None else tp.K()
    R = cv2.Rodrigues(np.array(pose_cam["rvec"]))[0]
    t = np.array(pose_cam["tvec"])
    dist = np.array(camera.dist_coeffs if camera is not None else (tp.k1, tp.k2, 0.0, 0.0, 0.0), dtype=np.float64)
    cam = tuple(float(v) for v in (*K.ravel(), *R.ravel(), *t, *dist))
    return ImageFromGame(homography=_plane_homography(K, R, t, dist, poses, catalog), camera=cam)


def _plane_homography(K, R, t, dist, poses: list[PiecePose], catalog: Catalog) -> tuple[float, ...]:
    """A 3x3 homography fitted to the (distorted) camera projection of the corners of the flat
    stickers in view, each at its own height (a board's squares are 2 mm up), so it follows the
    lens and the flat pieces as well as a homography can where they are. With fewer than two flat
    stickers: the table plane's pinhole homography."""
    plane, heights = [], []
    for p in poses:
        c, s = math.cos(math.radians(p.theta_deg)), math.sin(math.radians(p.theta_deg))
        for mid in p.marker_ids:
            sticker = catalog.sticker(mid)
            if sticker.top_z_mm > FLAT_STICKER_MAX_Z_MM:
                continue
            for lx, ly in sticker.corners_local():
                plane.append((p.x_mm + c * lx - s * ly, p.y_mm + s * lx + c * ly))
                heights.append(sticker.top_z_mm)
    H = K @ np.column_stack([R[:, 0], R[:, 1], t])
    if len(plane) >= 8:
        img = cv2.projectPoints(np.c_[plane, heights], cv2.Rodrigues(R)[0], t, K, dist)[0].reshape(-1, 2)
        fitted, _ = cv2.findHomography(np.array(plane), img, 0)
        if fitted is not None and np.all(np.isfinite(fitted)) and abs(fitted[2, 2]) > 1e-12:
            H = fitted
    H = H / H[2, 2]
    return tuple(float(v) for v in H.ravel())


def _solve(flat, reference, intr: Intrinsics, focal_free: bool, w: int, h: int):
    if not focal_free:
        return solve_table_pose(flat, reference, intr)
    best, err = None, None
    for g in FOCAL_GUESSES:
        try:
            tp = solve_table_pose(flat, reference, intr, f_init=g * max(w, h))
        except (TablePoseError, np.linalg.LinAlgError, ValueError) as exc:
            err = exc
            continue
        if tp.f > 0.2 * max(w, h) and (best is None or tp.cost < best.cost - 1e-9):
            best = tp
    if best is None:
        raise TablePoseError(f"cannot estimate the camera from the stickers in view ({err})")
    return best


def _camera_in_frame(tp, frame_pose, camera) -> dict:
    """The camera pose in the reported frame and the table-plane homography (game mm -> ideal px)."""
    R, t = in_game_frame(tp.R, tp.tvec, frame_pose)
    K = tp.K()
    H = K @ np.column_stack([R[:, 0], R[:, 1], t])
    H = H / H[2, 2]
    dist = list(camera.dist_coeffs) if camera is not None else [0.0] * 5
    return {"camera_pose": {"rvec": [float(v) for v in cv2.Rodrigues(R)[0].ravel()], "tvec": [float(v) for v in t],
                            "camera_matrix": K.tolist(), "dist_coeffs": [float(v) for v in dist]},
            "image_from_game": H.tolist()}


def _camera_plane_frame(tp, w, h):
    """(x0, y0, phi): where the optical axis meets the table, heading = image +x on the table."""
    from .table_pose import intersect_plane
    K = tp.K()
    pts = intersect_plane(np.array([[K[0, 2], K[1, 2]], [K[0, 2] + 100.0, K[1, 2]]]), 0.0, tp.rvec, tp.tvec, K)
    d = pts[1] - pts[0]
    return float(pts[0, 0]), float(pts[0, 1]), math.atan2(d[1], d[0])


def _face_of(catalog: Catalog, marker_id: int) -> str | None:
    """Which face a sticker shows: its slot's face, or the slot name of a double-sided piece."""
    st = catalog.sticker(marker_id)
    if st.face:
        return st.face
    spec = catalog.piece(st.piece)
    same_spot = [o for o in spec.stickers if o.slot != st.slot and (o.x_mm, o.y_mm) == (st.x_mm, st.y_mm)]
    return st.slot if same_spot else None


def _size_warnings(poses: list[PiecePose], catalog: Catalog, image_size: tuple[int, int],
                   distance_mm: float) -> list[str]:
    """Advice when the game's smallest stickers show under SIDE_PX_FOR_99 px: at the scale of the
    farthest piece seen (its px per mm), the smallest sticker the game uses (its catalog size)
    would show `expected` px; the camera distance, resolution or sticker size that brings it to
    SIDE_PX_FOR_99 px is said (sides scale as 1 / distance, with the resolution and with the size)."""
    if not poses:
        return []
    game = Counter(catalog.piece(p.name).game for p in poses).most_common(1)[0][0]
    px_per_mm = min(p.size_px / min(catalog.sticker(i).size_mm for i in p.marker_ids) for p in poses)
    smallest = min(st.size_mm for piece in catalog.pieces(game) for st in piece.stickers)
    expected = px_per_mm * smallest
    if expected >= SIDE_PX_FOR_99:
        return []
    need = SIDE_PX_FOR_99 / expected
    families = sorted({piece.family for piece in catalog.pieces(game)
                       if min(st.size_mm for st in piece.stickers) == smallest})
    w, h = image_size
    camera = next((name for name, width in (("1080p", 1920), ("4K", 3840)) if width >= w * need), None)
    options = [f"bring the camera to {distance_mm / need:.0f} mm or closer (now about {distance_mm:.0f} mm)"]
    if camera is not None:
        options.append(f"use a {camera} camera (now {w}x{h})")
    options.append(f"print {math.ceil(smallest * need):.0f} mm stickers")
    return [f"{smallest:.0f} mm stickers ({', '.join(families)}) show about {expected:.0f} px wide at the far side "
            f"here; refcam finds 99 % of pieces through a webcam from {SIDE_PX_FOR_99:.0f} px: "
            + ", or ".join(options)]
