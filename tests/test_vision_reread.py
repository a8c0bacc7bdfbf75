"""The re-read at an expected place (vision/reread.py) and the camera term's cap (vision/pipeline.py).

A re-read must read a piece that is there and never make one out of an empty place or a
look-alike: another id, a marker of another dictionary, a QR code, a printed marker board.
Tables: synth.scenes through synth.webcam's TUNING condition "tune-soft" (never a held-back one).
"""

from __future__ import annotations

import math
from dataclasses import replace
from types import SimpleNamespace

import cv2
import numpy as np
import pytest

from referee.catalog import default_catalog
from referee.game import ExpectedPiece
from tests.bench import robust
from tests.bench import webcam as webcam_bench
from vision import detect, pipeline, reread
from vision.pieces import PieceFit

CATALOG = default_catalog()


@pytest.fixture(scope="module")
def table():
    from synth.render import render_scene
    from synth.scenes import build_scene

    scene = build_scene("kang", 198635310, "1080p")
    scene["effects"].update(blur_sigma=0.0, noise_sigma=0.0)
    image, truth = render_scene(scene)
    frame = webcam_bench.harsh_image(image, "tune-soft", None, 11)
    result = detect.detect_all(frame, CATALOG, game="kang")
    return SimpleNamespace(image=frame, clean=image, truth=truth, camera=robust.camera_of(truth), result=result)


def _truth_piece(table, name):
    return next(p for p in table.truth["pieces"] if p["name"] == name)


def _one_sticker_piece_on_table(table):
    """A kangaroo on the table whose sticker the first pass read (and only its)."""
    ids = {d.marker_id for d in table.result.detections}
    for p in table.truth["pieces"]:
        if p["name"].startswith("kang/large") and any(i in ids for i in p["marker_ids"]):
            return p
    pytest.skip("no large kangaroo read on this table")


def _absent_piece(table):
    """A piece of the game with one sticker place that is not on the table."""
    on = {p["name"] for p in table.truth["pieces"]}
    return next(p.name for p in CATALOG.pieces("kang") if p.name not in on and len(reread._spots(p)) == 1)


def _without(table, piece):
    """The first pass's result without the piece's stickers (as if it had not read them)."""
    return replace(table.result, detections=tuple(d for d in table.result.detections
                                                  if CATALOG.sticker(d.marker_id).piece != piece["name"]))


def _empty_spot(table, min_mm=45.0):
    """A plain table point (the clean render flat around it: off the printed board) at least min_mm
    from every piece and every sticker."""
    xy = np.array([[p["x_mm"], p["y_mm"]] for p in table.truth["pieces"]]
                  + [np.mean(st["corners_mm"], axis=0)[:2] for st in table.truth["stickers"]])
    rng = np.random.default_rng(3)
    gray = cv2.cvtColor(table.clean, cv2.COLOR_BGR2GRAY)
    for _ in range(2000):
        at = xy[rng.integers(len(xy))] + rng.uniform(-250, 250, 2)
        if np.linalg.norm(xy - at, axis=1).min() < min_mm:
            continue
        u, v = _to_image(table, at[0], at[1])
        patch = gray[max(v - 40, 0):v + 40, max(u - 40, 0):u + 40]
        if 100 <= u < gray.shape[1] - 100 and 100 <= v < gray.shape[0] - 100 and np.ptp(patch) < 25:
            return float(at[0]), float(at[1])
    pytest.skip("no plain empty spot on this table")


def _to_image(table, x_mm: float, y_mm: float) -> tuple[int, int]:
    pose = pipeline.observe(table.image, table.camera, "kang", catalog=CATALOG, detections=table.result).frame["camera_pose"]
    uv, _ = cv2.projectPoints(np.array([[x_mm, y_mm, 2.0]]), np.array(pose["rvec"]), np.array(pose["tvec"]),
                              np.array(pose["camera_matrix"]), np.array(pose["dist_coeffs"]))
    u, v = np.round(uv.ravel()).astype(int)
    return int(u), int(v)


def _observe(table, image=None, result=None, expected=(), evidence=None):
    return pipeline.observe(table.image if image is None else image, table.camera, "kang", catalog=CATALOG,
                            detections=table.result if result is None else result, expected=expected,
                            evidence=evidence)


def test_a_piece_not_read_is_read_again_where_it_should_be(table):
    p = _one_sticker_piece_on_table(table)
    exp = ExpectedPiece(p["name"], p["x_mm"] + 1.0, p["y_mm"] - 1.0, p["theta_deg"], 3.0)
    plain = _observe(table, result=_without(table, p))
    assert p["name"] not in {q.name for q in plain.pieces}
    obs = _observe(table, result=_without(table, p), expected=(exp,))
    got = next(q for q in obs.pieces if q.name == p["name"])
    assert got.source == "reread"
    assert math.hypot(got.x_mm - p["x_mm"], got.y_mm - p["y_mm"]) < 3 * got.measure_sigma_mm
    assert p["name"] not in obs.seen_empty


def test_still_frames_add_up_and_say_how_many(table):
    p = _one_sticker_piece_on_table(table)
    exp = (ExpectedPiece(p["name"], p["x_mm"], p["y_mm"], p["theta_deg"], 3.0),)
    evidence = reread.Evidence()
    for k in range(3):
        frame = webcam_bench.harsh_image(table.clean, "tune-soft", None, 11, frame_seed=100 + k)
        result = _without(SimpleNamespace(result=detect.detect_all(frame, CATALOG, game="kang")), p)
        obs = _observe(table, image=frame, result=result, expected=exp, evidence=evidence)
    assert next(q for q in obs.pieces if q.name == p["name"]).source == "reread(3x)"


def test_an_empty_place_is_seen_empty_and_never_read(table):
    name = _absent_piece(table)
    x, y = _empty_spot(table)
    obs = _observe(table, expected=(ExpectedPiece(name, x, y, 30.0, 3.0),))
    assert name not in {q.name for q in obs.pieces}
    assert name in obs.seen_empty


def test_a_place_holding_another_id_is_neither_read_nor_empty(table):
    """Another kangaroo stands where the absent one is expected, its sticker not read by the first
    pass: the re-read must not take its id for the expected one, nor call the place empty."""
    p = _one_sticker_piece_on_table(table)
    name = _absent_piece(table)
    obs = _observe(table, result=_without(table, p),
                   expected=(ExpectedPiece(name, p["x_mm"], p["y_mm"], p["theta_deg"], 3.0),))
    assert name not in {q.name for q in obs.pieces}
    assert name not in obs.seen_empty
    assert any(w.startswith(f"needed piece {name} not read: its sticker shows about") for w in obs.warnings)


def _pasted(table, picture: np.ndarray, x_mm: float, y_mm: float, side_px: int) -> np.ndarray:
    """The clean render with picture pasted (upright, side_px wide) at the table point, through the chain."""
    u, v = _to_image(table, x_mm, y_mm)
    out = table.clean.copy()
    tile = cv2.resize(picture, (side_px, side_px), interpolation=cv2.INTER_AREA)
    out[v - side_px // 2:v - side_px // 2 + side_px, u - side_px // 2:u - side_px // 2 + side_px] = tile
    return webcam_bench.harsh_image(out, "tune-soft", None, 11)


def _with_quiet_zone(gray: np.ndarray, pad_fraction: float = 0.25) -> np.ndarray:
    pad = int(gray.shape[0] * pad_fraction)
    return cv2.cvtColor(cv2.copyMakeBorder(gray, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=255), cv2.COLOR_GRAY2BGR)


def _look_alikes(expected_id: int):
    near = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_ARUCO_ORIGINAL).generateImageMarker(expected_id % 1000, 70)
    april = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_APRILTAG_25h9).generateImageMarker(3, 70)
    four = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50).generateImageMarker(7, 60)
    qr = cv2.QRCodeEncoder.create().encode("refcam")
    board = cv2.aruco.CharucoBoard((4, 4), 0.04, 0.03, cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50))
    return {"another dictionary": _with_quiet_zone(near), "AprilTag": _with_quiet_zone(april),
            "4x4 marker": _with_quiet_zone(four), "QR code": _with_quiet_zone(qr, 0.1),
            "printed marker board": cv2.cvtColor(board.generateImage((160, 160)), cv2.COLOR_GRAY2BGR)}


@pytest.mark.parametrize("kind", ["another dictionary", "AprilTag", "4x4 marker", "QR code", "printed marker board"])
def test_a_look_alike_at_the_place_is_never_read_as_the_piece(table, kind):
    name = _absent_piece(table)
    x, y = _empty_spot(table, 70.0)
    expected_id = CATALOG.piece(name).stickers[0].marker_id
    side = 60 if kind == "printed marker board" else 30
    frame = _pasted(table, _look_alikes(expected_id)[kind], x, y, side)
    result = detect.detect_all(frame, CATALOG, game="kang")
    obs = _observe(table, image=frame, result=result, expected=(ExpectedPiece(name, x, y, 0.0, 3.0),))
    assert name not in {q.name for q in obs.pieces}
    assert name not in obs.seen_empty
    truth = {p["name"] for p in table.truth["pieces"]}
    assert {q.name for q in obs.pieces} <= truth  # nothing else made of it either


def test_not_read_warning_names_size_and_fix():
    lines = pipeline.not_read_warnings([("kang/large-2", 10.6, ""), ("kayak/pawn-1", 17.0, ""),
                                        ("kang/small-1", 0.0, "out of view"), ("kang/small-2", 20.0, "occupied")])
    assert lines[0].startswith("needed piece kang/large-2 not read: its sticker shows about 11 px")
    assert "nearer" in lines[0] and "bigger sticker" in lines[0] and "light" in lines[0]
    assert "add light" in lines[1]
    assert "out of the camera's view" in lines[2] and "another piece's sticker is where it should be" in lines[3]


def test_a_pieces_camera_term_is_capped_by_its_own_sigma():
    """_camera_term: the camera's share of a piece's own sigma can never exceed that sigma, even
    when the camera's covariance alone says more (a fitted camera loosened by a few stickers)."""
    S = np.zeros((3, 6))
    S[0, 0] = S[1, 1] = 10.0
    plane = SimpleNamespace(solve_ref="kang/board", tp=SimpleNamespace(piece_poses={}, outliers=set(),
                                                                      camera_cov=np.eye(6) * 0.04),
                            plane_from_tops=False)
    fit = PieceFit((0.0, 0.0, 0.0), np.eye(3) * 0.01, 1.0, S)  # its camera share alone: 2 mm per axis
    own_mm = 0.5
    term = pipeline._camera_term("kang/large-1", fit, plane, own_mm, np.zeros((3, 3)))
    assert term <= own_mm + 1e-12
    # and a plane-placed piece: its hand-stuck share (3 mm) is capped by its own 0.5 mm too
    plane.tp.piece_poses = {"kang/large-1": (0.0, 0.0, 0.0)}
    plane.tp.camera_share_added = {"kang/large-1": np.eye(3) * 9.0}
    assert pipeline._camera_term("kang/large-1", fit, plane, own_mm, np.zeros((3, 3))) <= own_mm + 1e-12


def test_old_evidence_never_reads_a_piece_swapped_for_another(table, monkeypatch):
    """Three frames build evidence for a kangaroo at its place; then another kangaroo's sticker is
    where it is expected (and the place is not seen to move: the reset by distance is turned off).
    This frame's own evidence is against the id: it is not read."""
    p = _one_sticker_piece_on_table(table)
    ids = {d.marker_id for d in table.result.detections}
    q = next(o for o in table.truth["pieces"] if o["name"].startswith("kang/") and o["name"] != p["name"]
             and len(o["marker_ids"]) <= 2 and any(i in ids for i in o["marker_ids"])
             and o["name"] not in ("kang/board",))
    monkeypatch.setattr(reread, "MOVED_SIDES", 1e9)
    evidence = reread.Evidence()
    here = (ExpectedPiece(p["name"], p["x_mm"], p["y_mm"], p["theta_deg"], 3.0),)
    for k in range(3):
        frame = webcam_bench.harsh_image(table.clean, "tune-soft", None, 11, frame_seed=200 + k)
        result = _without(SimpleNamespace(result=detect.detect_all(frame, CATALOG, game="kang")), p)
        obs = _observe(table, image=frame, result=result, expected=here, evidence=evidence)
    assert next(o for o in obs.pieces if o.name == p["name"]).source == "reread(3x)"
    there = (ExpectedPiece(p["name"], q["x_mm"], q["y_mm"], q["theta_deg"], 3.0),)
    result = replace(table.result, detections=tuple(d for d in table.result.detections
                                                    if CATALOG.sticker(d.marker_id).piece not in (p["name"], q["name"])))
    obs = _observe(table, result=result, expected=there, evidence=evidence)
    assert p["name"] not in {o.name for o in obs.pieces}


def _moved(x, y, theta, turn_deg, shift):
    t = math.radians(turn_deg)
    return (math.cos(t) * x - math.sin(t) * y + shift[0], math.sin(t) * x + math.cos(t) * y + shift[1], theta + turn_deg)


def test_expected_places_are_tied_to_a_frame_by_the_pieces_read_there():
    """Worked by hand: the table frame is the game frame turned 30 deg and shifted (100, -50) mm. Three
    pieces read where that motion puts their expected places tie it; a fourth that a turn moved 60 mm
    does not spoil it; the piece not read is expected where the motion puts it."""
    places = {"a": (0.0, 0.0), "b": (200.0, 0.0), "c": (0.0, 150.0), "moved": (100.0, 100.0), "unread": (50.0, 40.0)}
    expected = tuple(ExpectedPiece(n, x, y, 10.0, 2.0) for n, (x, y) in places.items())
    read = []
    for n in ("a", "b", "c", "moved"):
        x, y, th = _moved(*places[n], 10.0, 30.0, (100.0, -50.0))
        read.append(SimpleNamespace(name=n, x_mm=x + (60.0 if n == "moved" else 0.0), y_mm=y, theta_deg=th, sigma_mm=0.5))
    tied = {e.name: e for e in reread.expected_in_frame(expected, read)}
    want = _moved(50.0, 40.0, 10.0, 30.0, (100.0, -50.0))
    got = tied["unread"]
    assert math.hypot(got.x_mm - want[0], got.y_mm - want[1]) < 1e-6 and abs(got.theta_deg - want[2]) < 1e-6
    assert got.sigma_mm == pytest.approx(2.0)  # the three agree exactly: the tie adds nothing


def test_expected_places_are_not_tied_by_pieces_at_fewer_than_three_places():
    expected = (ExpectedPiece("a", 0.0, 0.0, 0.0, 2.0), ExpectedPiece("b", 200.0, 0.0, 0.0, 2.0),
                ExpectedPiece("c", 5.0, 5.0, 0.0, 2.0), ExpectedPiece("d", 90.0, 90.0, 0.0, 2.0))
    read = [SimpleNamespace(name=n, x_mm=e.x_mm + 10.0, y_mm=e.y_mm, theta_deg=0.0, sigma_mm=0.5)
            for n, e in zip("abc", expected)]  # a and c stand at one place: two places in all
    assert reread.expected_in_frame(expected, read) == ()


def test_a_piece_is_read_again_where_the_anchor_is_out_of_view(table):
    """Without the board's stickers the frame is the table's own, not the game's: the pieces read
    tie the expected places to it, and the piece not read is re-read where the others put it."""
    p = _one_sticker_piece_on_table(table)
    anchor = _observe(table).frame["anchor"]
    result = replace(table.result, detections=tuple(d for d in table.result.detections
                                                    if CATALOG.sticker(d.marker_id).piece not in (anchor, p["name"])))
    expected = tuple(ExpectedPiece(q["name"], q["x_mm"], q["y_mm"], q["theta_deg"], 3.0) for q in table.truth["pieces"])
    plain = _observe(table, result=result)
    assert not plain.frame["game_frame"] and p["name"] not in {q.name for q in plain.pieces}
    obs = _observe(table, result=result, expected=expected)
    got = {q.name: q for q in obs.pieces}
    assert got[p["name"]].source == "reread"
    others = [q for q in table.truth["pieces"] if q["name"] in got and q["name"] != p["name"]]
    for q in others:  # the same distances between pieces as on the table
        d_true = math.hypot(q["x_mm"] - p["x_mm"], q["y_mm"] - p["y_mm"])
        d_read = math.hypot(got[q["name"]].x_mm - got[p["name"]].x_mm, got[q["name"]].y_mm - got[p["name"]].y_mm)
        assert abs(d_true - d_read) < 3 * math.hypot(got[q["name"]].sigma_mm, got[p["name"]].sigma_mm) + 1.0


def _soft_cheap_sticker(marker_id: int, frame_seed: int, side_px: float = 13.0):
    """(picture, its black square's corners): a sticker 13 px wide (cells under 2 px) on a cheap
    webcam's chain: grey ink on dim paper, a defocus disc of 2 px radius with a little Gaussian,
    in-camera sharpening, JPEG q55."""
    from synth import webcam as chain

    S = 8  # drawn 8x finer, then averaged down: the square's corners are known exactly
    drawing = cv2.aruco.getPredefinedDictionary(detect.DICTIONARY).generateImageMarker(
        marker_id, int(round(side_px * S)), borderBits=1)
    fine = np.full((int(6 * side_px) * S,) * 2, 255, np.uint8)
    o = int(round(2.5 * side_px * S))
    fine[o:o + len(drawing), o:o + len(drawing)] = drawing
    small = cv2.cvtColor(cv2.resize(fine, None, fx=1 / S, fy=1 / S, interpolation=cv2.INTER_AREA), cv2.COLOR_GRAY2BGR)
    a, b = o / S - 0.5, (o + len(drawing)) / S - 0.5
    camera = chain.WebcamSettings(blur_sigma_px=0.5, exposure=1.0, tint_bgr=(1.0, 1.0, 1.0), full_well=2000.0,
                                  read_noise=0.003, s_curve=1.2, jpeg_quality=55, defocus_disc_px=2.0,
                                  ink_paper=(0.07, 0.62), sharpen=(1.2, 1.0))
    return chain.webcam_frame(small, camera, frame_seed), np.array([[a, a], [b, a], [b, b], [a, b]])


def _llr_at(picture, quad, ids, models):
    k = 4.0  # as the re-read's crop
    big = cv2.resize(detect.to_gray(picture), None, fx=k, fy=k, interpolation=cv2.INTER_CUBIC).astype(np.float32)
    m = reread.unit_samples(big, (quad + 0.5) * k - 0.5)
    return reread._llr(reread.evidence_of(m, ids, (), models=models), ids)[0]


@pytest.mark.parametrize("marker_id", [3, 17, 40, 101])
def test_a_2px_cell_under_a_defocus_disc_and_sharpening_is_drawn_well_enough_to_read(marker_id):
    """Gaussian drawings leave such a sticker's halos and flat-topped blur as residual, counted as
    noise: its LLR stays near the threshold. Drawn under a disc with sharpening it clears it in every
    frame, and the same square is never read as another code."""
    other = marker_id + 1
    for seed in range(3):
        picture, quad = _soft_cheap_sticker(marker_id, seed)
        gauss = _llr_at(picture, quad, (marker_id,), reread.GAUSS_MODELS)
        every = _llr_at(picture, quad, (marker_id,), reread.MODELS)
        assert every >= reread.LLR_MIN and every > gauss + 10.0
        assert _llr_at(picture, quad, (other,), reread.MODELS) < 0
