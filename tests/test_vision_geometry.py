"""Table pose, parallax-correct piece poses and sigma, from exactly projected sticker corners.

No images here: corners come from cv2.projectPoints for a known camera (plus noise drawn
from refcam's own corner-noise model), so the geometry and the uncertainty propagation
are tested on their own.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from referee.catalog import default_catalog
from tests.bench import synth
from vision.detect import Detection, DetectionResult
from vision.pieces import corner_sigma_px
from vision.pipeline import NoStickersError, observe

CAT = default_catalog()


def detections_for(cam, pieces, rng=None, noise_scale=1.0, edge_rms=0.05, extra=()):
    """DetectionResult of every sticker of `pieces` projected by `cam` (+ corner noise)."""
    dets = []
    for mid, corners3 in synth.scene_stickers(CAT, pieces) + list(extra):
        px = synth.project(cam, corners3)
        side = float(np.mean(np.linalg.norm(px - np.roll(px, -1, axis=0), axis=1)))
        if rng is not None:
            px = px + rng.normal(0, noise_scale * corner_sigma_px(side, edge_rms), px.shape)
        dets.append(Detection(marker_id=mid, corners=px, side_px=side, edge_rms_px=edge_rms))
    return DetectionResult(tuple(sorted(dets, key=lambda d: d.marker_id)), ())


def kayak_pieces(rng):
    pieces = [synth.SynthPiece(f"kayak/tile-{k}", 160.0 * k, 0.0 if k in (0, 7) else 40.0 * (k % 3 - 1),
                               0.0 if k % 3 else 180.0, ("A-upstream", "A-downstream") if k % 2 else
                               ("B-upstream", "B-downstream")) for k in range(8)]
    pieces[0].theta_deg = 0.0
    for k in range(4):
        pieces.append(synth.SynthPiece(f"kayak/pawn-{k + 1}", float(rng.uniform(0, 1100)), float(rng.uniform(-70, 70)),
                                       float(rng.uniform(-180, 180)), ("main",)))
    return pieces


def kayak_camera(image_size=(1920, 1080)):
    return synth.look_at_camera(image_size=image_size, target=(560, 0, 0), distance_mm=1000, elevation_deg=55,
                                hfov_deg=70)


def errors(obs, pieces):
    truth = {p.name: p for p in pieces}
    out = []
    for p in obs.pieces:
        t = truth[p.name]
        out.append((p, p.x_mm - t.x_mm, p.y_mm - t.y_mm, math.radians(p.theta_deg - t.theta_deg)))
    return out


def test_exact_corners_give_exact_poses_with_parallax():
    rng = np.random.default_rng(0)
    pieces = kayak_pieces(rng)
    cam = kayak_camera()
    obs = observe(np.zeros((1080, 1920, 3), np.uint8), cam.camera_model(), catalog=CAT,
                  detections=detections_for(cam, pieces))
    assert obs.game == "kayak" and obs.frame["anchor"] == "kayak/tile-0" and obs.frame["game_frame"]
    assert len(obs.pieces) == len(pieces)
    for p, ex, ey, eth in errors(obs, pieces):
        assert math.hypot(ex, ey) < 0.02, p.name
        assert abs(math.sin(eth)) < 1e-4, p.name
    pawn = obs.piece("kayak/pawn-1")
    assert pawn.z_mm == 15 and pawn.face is None
    tile = obs.piece("kayak/tile-1")
    assert tile.face == "A" and tile.marker_ids == (104, 105)


def test_flat_mapping_would_be_off_by_parallax():
    """The same pawn sticker cut with the table plane (z=0) lands ~10 mm away: the height matters."""
    from vision.table_pose import intersect_plane
    rng = np.random.default_rng(1)
    pieces = kayak_pieces(rng)
    cam = kayak_camera()
    obs = observe(np.zeros((1080, 1920, 3), np.uint8), cam.camera_model(), catalog=CAT,
                  detections=detections_for(cam, pieces))
    pose = obs.frame["camera_pose"]
    K = np.array(pose["camera_matrix"])
    pawn = next(p for p in pieces if p.name == "kayak/pawn-1")
    corners3 = synth.sticker_world_corners(CAT, pawn, 140)
    ideal = synth.project(synth.SynthCamera(cam.image_size, cam.K, np.zeros(5), cam.rvec, cam.tvec), corners3)
    on_table = intersect_plane(ideal, 0.0, np.array(pose["rvec"]), np.array(pose["tvec"]), K).mean(axis=0)
    offset = math.hypot(on_table[0] - pawn.x_mm, on_table[1] - pawn.y_mm)
    assert offset > 7.0  # ~15 mm * tan(35 deg) at the image centre
    got = obs.piece("kayak/pawn-1")
    assert math.hypot(got.x_mm - pawn.x_mm, got.y_mm - pawn.y_mm) < 0.05


def test_kang_tokens_are_higher_on_the_board():
    pieces = [synth.SynthPiece("kang/board", 0, 0, 0, ("SW", "SE", "NE", "NW")),
              synth.SynthPiece("kang/small-1", 60.0, 20.0, 30.0, ("front",)),
              synth.SynthPiece("kang/large-2", -100.0, -230.0, -10.0, ("back",))]
    pieces[1].z_mm = {20: 4.0}
    cam = synth.look_at_camera(target=(0, 0, 0), distance_mm=700, elevation_deg=55, hfov_deg=70)
    obs = observe(np.zeros((1080, 1920, 3), np.uint8), cam.camera_model(), catalog=CAT,
                  detections=detections_for(cam, pieces))
    on, off = obs.piece("kang/small-1"), obs.piece("kang/large-2")
    assert on.z_mm == 4 and off.z_mm == 2
    assert on.face == "front" and off.face == "back"
    for p, ex, ey, _ in errors(obs, pieces):
        assert math.hypot(ex, ey) < 0.02, p.name


@pytest.mark.parametrize("with_camera", [True, False])
def test_sigma_covers_the_errors(with_camera):
    """Per-axis errors: >= 90 % within 2 sigma, and sigma not inflated (<= 99 % within 0.5 sigma)."""
    rng = np.random.default_rng(5)
    z = []
    for trial in range(12 if with_camera else 6):
        pieces = kayak_pieces(rng) if trial % 2 else synth.tornado_scene(rng, catalog=CAT)
        cam = kayak_camera() if trial % 2 else synth.look_at_camera(target=(400, 150, 0), distance_mm=1100,
                                                                     elevation_deg=float(rng.uniform(50, 65)))
        cam.dist[:] = 0.0 if not with_camera else cam.dist
        obs = observe(np.zeros((1080, 1920, 3), np.uint8), cam.camera_model() if with_camera else None, catalog=CAT,
                      detections=detections_for(cam, pieces, rng))
        for p, ex, ey, _ in errors(obs, pieces):
            z += [abs(ex) / p.sigma_mm, abs(ey) / p.sigma_mm]
    z = np.array(z)
    assert len(z) > 150
    assert (z <= 2).mean() >= 0.90
    assert (z <= 0.5).mean() <= 0.99


def test_bumped_flat_piece_is_left_out_of_the_plane():
    rng = np.random.default_rng(3)
    pieces = kayak_pieces(rng)
    cam = kayak_camera()
    good = detections_for(cam, pieces)
    # tilt tile 5 by lifting its downstream sticker 12 mm (someone's finger under it)
    tile5 = next(p for p in pieces if p.name == "kayak/tile-5")
    mid = CAT.piece("kayak/tile-5").sticker(tile5.slots[1]).marker_id
    lifted = dict(tile5.z_mm)
    lifted[mid] = 14.0
    tile5.z_mm = lifted
    bumped = detections_for(cam, pieces)
    obs = observe(np.zeros((1080, 1920, 3), np.uint8), cam.camera_model(), catalog=CAT, detections=bumped)
    assert any("kayak/tile-5" in w and "flat" in w for w in obs.warnings)
    ref = observe(np.zeros((1080, 1920, 3), np.uint8), cam.camera_model(), catalog=CAT, detections=good)
    for name in ("kayak/tile-3", "kayak/pawn-2", "kayak/tile-7"):
        a, b = obs.piece(name), ref.piece(name)
        assert math.hypot(a.x_mm - b.x_mm, a.y_mm - b.y_mm) < 0.3, name


def test_anchor_out_of_view_falls_back_with_a_warning():
    rng = np.random.default_rng(4)
    pieces = [p for p in synth.tornado_scene(rng, catalog=CAT) if p.name != "tornado/start-gate"]
    cam = synth.look_at_camera(target=(400, 150, 0), distance_mm=1100, elevation_deg=60)
    obs = observe(np.zeros((1080, 1920, 3), np.uint8), cam.camera_model(), catalog=CAT,
                  detections=detections_for(cam, pieces))
    assert obs.frame["kind"] == "camera-plane" and not obs.frame["game_frame"]
    assert any("start-gate" in w and "not in view" in w for w in obs.warnings)
    # distances between pieces do not depend on the frame
    a, b = obs.piece("tornado/boat-1"), obs.piece("tornado/boat-2")
    ta, tb = (next(p for p in pieces if p.name == n) for n in ("tornado/boat-1", "tornado/boat-2"))
    assert abs(math.hypot(a.x_mm - b.x_mm, a.y_mm - b.y_mm) - math.hypot(ta.x_mm - tb.x_mm, ta.y_mm - tb.y_mm)) < 0.05


def test_duplicate_id_is_left_out_with_a_warning():
    rng = np.random.default_rng(6)
    pieces = kayak_pieces(rng)
    cam = kayak_camera()
    copy = synth.SynthPiece("kayak/pawn-2", 300.0, 60.0, 0.0, ("main",))
    extra = [(141, synth.sticker_world_corners(CAT, copy, 141))]
    obs = observe(np.zeros((1080, 1920, 3), np.uint8), cam.camera_model(), catalog=CAT,
                  detections=detections_for(cam, pieces, extra=extra))
    assert obs.piece("kayak/pawn-2") is None
    assert any("141" in w and "kayak/pawn-2" in w and "left out" in w for w in obs.warnings)
    assert obs.piece("kayak/pawn-1") is not None


def test_no_camera_file_estimates_focal_and_warns():
    rng = np.random.default_rng(8)
    pieces = kayak_pieces(rng)
    cam = kayak_camera()
    cam.dist[:] = 0.0
    obs = observe(np.zeros((1080, 1920, 3), np.uint8), None, catalog=CAT, detections=detections_for(cam, pieces, rng))
    assert abs(obs.frame["focal_px"] / cam.K[0, 0] - 1) < 0.05
    assert any("no camera file" in w for w in obs.warnings)
    with_cam = observe(np.zeros((1080, 1920, 3), np.uint8), cam.camera_model(), catalog=CAT,
                       detections=detections_for(cam, pieces, np.random.default_rng(8)))
    assert np.median([p.sigma_mm for p in obs.pieces]) > 1.5 * np.median([p.sigma_mm for p in with_cam.pieces])


def test_nothing_known_in_view_is_an_error():
    with pytest.raises(NoStickersError, match="no refcam stickers"):
        observe(np.zeros((100, 120, 3), np.uint8), None, catalog=CAT, detections=DetectionResult((), (700, 701)))


def test_wrong_or_poor_camera_file_is_reported():
    from calibration.camera import CameraModel
    rng = np.random.default_rng(9)
    pieces = kayak_pieces(rng)
    cam = kayak_camera()
    dets = detections_for(cam, pieces, rng)
    K = cam.K
    wrong = CameraModel.from_intrinsics(cam.image_size, K[0, 0] * 0.85, K[1, 1] * 0.85, K[0, 2] + 40, K[1, 2],
                                        (0.2, 0, 0, 0, 0))
    obs = observe(np.zeros((1080, 1920, 3), np.uint8), wrong, catalog=CAT, detections=dets)
    assert any("camera file for this camera" in w for w in obs.warnings)
    poor = CameraModel.from_intrinsics(cam.image_size, K[0, 0], K[1, 1], K[0, 2], K[1, 2], tuple(cam.dist), rms_px=1.6)
    obs = observe(np.zeros((1080, 1920, 3), np.uint8), poor, catalog=CAT, detections=dets)
    assert any("calibration is poor" in w for w in obs.warnings)


def test_any_piece_resting_on_a_support_is_read_at_its_height_there():
    """vision names no game: the rule is the catalog's top_z_mm_on. Give Tornado boats one (a boat
    standing on a racing card sits 0.3 mm higher) and the boat on the card is read at that height,
    the one beside it at its own."""
    import copy

    from referee.catalog import Catalog

    data = copy.deepcopy(CAT.data)
    next(f for f in data["families"] if f["family"] == "tornado/boat")["top_z_mm_on"] = {"tornado/racing-card": 5.3}
    catalog = Catalog(data, "boats rest on cards")
    pieces = [synth.SynthPiece("tornado/start-gate", 0, 0, 0, ("left", "right")),
              synth.SynthPiece("tornado/card-1-01", 150.0, 40.0, 0.0, ("rear", "front")),
              synth.SynthPiece("tornado/boat-1", 150.0, 40.0, 5.0, ("main",)),
              synth.SynthPiece("tornado/boat-2", 150.0, -60.0, -5.0, ("main",))]
    pieces[2].z_mm = {catalog.piece("tornado/boat-1").stickers[0].marker_id: 5.3}
    cam = synth.look_at_camera(target=(100, 0, 0), distance_mm=700, elevation_deg=55, hfov_deg=70)
    obs = observe(np.zeros((1080, 1920, 3), np.uint8), cam.camera_model(), catalog=catalog, game="tornado",
                  detections=detections_for(cam, pieces))
    on, beside = obs.piece("tornado/boat-1"), obs.piece("tornado/boat-2")
    assert on.z_mm == pytest.approx(5.3) and beside.z_mm == pytest.approx(5.0)
    for p, ex, ey, _ in errors(obs, pieces):
        assert math.hypot(ex, ey) < 0.05, p.name
