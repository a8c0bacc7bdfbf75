"""The re-read at a wide expected place: a Kayak pawn a turn may have carried (the game's sigma covers
a turn's reach, referee.kayak.game.turn_spread_mm) is found where it went, among the read stickers of
the river, and never made up where it is not. One Kayak table (4 pawns, 16 mm stickers at ~20 px)
through the soft cheap webcam chain."""

from __future__ import annotations

import math
from dataclasses import replace
from types import SimpleNamespace

import cv2
import numpy as np
import pytest

from referee.catalog import default_catalog
from referee.game import ExpectedPiece
from referee.kayak.game import turn_spread_mm
from referee.kayak.tiles import tile_book
from tests.bench import robust
from tests.bench import webcam as webcam_bench
from vision import detect, pipeline

CATALOG = default_catalog()
BOOK = tile_book(CATALOG)
SEED = 11  # pawn-2 at (341, -79), pawn-3 beside it at (341, -40), pawn-4 at (379, -80): all read
CARRIED = "kayak/pawn-2"


def _table(without: str | None = None):
    from synth.render import render_scene
    from synth.scenes import build_scene

    scene = build_scene("kayak", SEED, "1080p")
    scene["effects"].update(blur_sigma=0.0, noise_sigma=0.0)
    if without:
        scene["pieces"] = [p for p in scene["pieces"] if p["name"] != without]
    image, truth = render_scene(scene)
    frame = webcam_bench.harsh_image(image, "tune-soft", None, 11)
    return SimpleNamespace(image=frame, clean=image, truth=truth, camera=robust.camera_of(truth),
                           result=detect.detect_all(frame, CATALOG, game="kayak"))


@pytest.fixture(scope="module")
def table():
    return _table()


@pytest.fixture(scope="module")
def emptied():
    """The same table with the carried pawn taken off: its place is empty."""
    return _table(without=CARRIED)


def _truth(table, name):
    return next(p for p in table.truth["pieces"] if p["name"] == name)


def _unread(table, *names):
    """The first pass's result as if it had not read these pieces' stickers."""
    return replace(table.result, detections=tuple(d for d in table.result.detections
                                                  if CATALOG.sticker(d.marker_id).piece not in names))


def _observe(table, result, expected, image=None):
    return pipeline.observe(table.image if image is None else image, table.camera, "kayak", catalog=CATALOG,
                            detections=result, expected=expected)


def _left_two_spaces_up(truth_piece, sigma_mm):
    """Where the pawn stood before a Double Paddle carried it two spaces downstream (+x)."""
    return ExpectedPiece(CARRIED, truth_piece["x_mm"] - 2 * BOOK.space_mm, truth_piece["y_mm"],
                         truth_piece["theta_deg"], sigma_mm)


def test_the_table_reads_the_pawns_beside_the_carried_one(table):
    read = {CATALOG.sticker(d.marker_id).piece for d in table.result.detections}
    assert {"kayak/pawn-2", "kayak/pawn-3", "kayak/pawn-4"} <= read


def test_a_pawn_carried_two_spaces_is_read_where_it_went_with_the_turns_reach(table):
    truth = _truth(table, CARRIED)
    result = _unread(table, CARRIED)
    narrow = _observe(table, result, (_left_two_spaces_up(truth, 3.0),))
    assert CARRIED not in {p.name for p in narrow.pieces}  # looked for only where it was: not found
    wide = _observe(table, result, (_left_two_spaces_up(truth, turn_spread_mm(BOOK)),))
    got = next(p for p in wide.pieces if p.name == CARRIED)
    assert got.source.startswith("reread")
    assert math.hypot(got.x_mm - truth["x_mm"], got.y_mm - truth["y_mm"]) < 3 * got.measure_sigma_mm
    assert CARRIED not in wide.seen_empty


def test_a_wide_search_never_takes_another_pawns_sticker_for_the_carried_one(emptied):
    """Its new place empty; pawn-3 and pawn-4 (other pawns' ids) within the reach, read or not read
    by the first pass: the carried pawn is never made up, nor called gone (the reach is not all calm
    table), and the others are not moved."""
    truth = _truth(_table(), CARRIED)
    expected = (_left_two_spaces_up(truth, turn_spread_mm(BOOK)),)
    for result in (emptied.result, _unread(emptied, "kayak/pawn-3", "kayak/pawn-4")):
        obs = _observe(emptied, result, expected)
        assert CARRIED not in {p.name for p in obs.pieces}
        assert CARRIED not in obs.seen_empty
        assert any(w.startswith(f"needed piece {CARRIED} not read") for w in obs.warnings)


def test_a_look_alike_of_another_dictionary_on_the_empty_place_is_never_read(emptied):
    """A marker of DICT_ARUCO_ORIGINAL with the carried pawn's id, pasted where the pawn went."""
    truth = _truth(_table(), CARRIED)
    near = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_ARUCO_ORIGINAL).generateImageMarker(
        CATALOG.piece(CARRIED).stickers[0].marker_id % 1000, 70)
    pad = 18
    picture = cv2.cvtColor(cv2.copyMakeBorder(near, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=255),
                           cv2.COLOR_GRAY2BGR)
    pose = pipeline.observe(emptied.image, emptied.camera, "kayak", catalog=CATALOG,
                            detections=emptied.result).frame["camera_pose"]
    uv, _ = cv2.projectPoints(np.array([[truth["x_mm"], truth["y_mm"], 2.0]]), np.array(pose["rvec"]),
                              np.array(pose["tvec"]), np.array(pose["camera_matrix"]), np.array(pose["dist_coeffs"]))
    u, v = np.round(uv.ravel()).astype(int)
    side = 26
    out = emptied.clean.copy()
    out[v - side // 2:v - side // 2 + side, u - side // 2:u - side // 2 + side] = cv2.resize(
        picture, (side, side), interpolation=cv2.INTER_AREA)
    frame = webcam_bench.harsh_image(out, "tune-soft", None, 11)
    result = detect.detect_all(frame, CATALOG, game="kayak")
    obs = _observe(emptied, result, (_left_two_spaces_up(truth, turn_spread_mm(BOOK)),), image=frame)
    assert CARRIED not in {p.name for p in obs.pieces}
    assert CARRIED not in obs.seen_empty
    assert {p.name for p in obs.pieces} <= {p["name"] for p in emptied.truth["pieces"]}


def test_an_empty_place_with_nothing_near_is_seen_empty_or_not_read(emptied):
    """The carried pawn expected where it was (now empty) with its measurement sigma: seen empty;
    with the turn's reach (the river's stickers inside it): not read, and never made up."""
    truth = _truth(_table(), CARRIED)
    at = ExpectedPiece(CARRIED, truth["x_mm"], truth["y_mm"], truth["theta_deg"], 3.0)
    narrow = _observe(emptied, emptied.result, (at,))
    assert CARRIED not in {p.name for p in narrow.pieces}
    assert CARRIED in narrow.seen_empty
    wide = _observe(emptied, emptied.result, (replace(at, sigma_mm=turn_spread_mm(BOOK)),))
    assert CARRIED not in {p.name for p in wide.pieces}


def _drawn(marker_id: int, side: int) -> np.ndarray:
    marker = cv2.aruco.getPredefinedDictionary(detect.DICTIONARY).generateImageMarker(marker_id, 140)
    return cv2.resize(marker, (side, side), interpolation=cv2.INTER_AREA)


def _square(cx: float, cy: float, side: float) -> np.ndarray:
    h = side / 2
    return np.array([[cx - h, cy - h], [cx + h, cy - h], [cx + h, cy + h], [cx - h, cy + h]], np.float64)


def test_read_stickers_crowding_a_wide_search_are_left_out_and_the_unread_one_is_tried():
    """Sixteen read stickers (other pieces' ids) all nearer the predicted place than the carried
    pawn's sticker: a search capped at its nearest squares tries only theirs unless the squares of
    read stickers are left out, as they are (a re-read never takes a read sticker)."""
    from vision import reread

    side, gray = 20, np.full((560, 560), 235, np.uint8)
    read = []
    for k, (i, j) in enumerate(np.ndindex(4, 4)):
        cx, cy = 205 + 50 * i, 205 + 50 * j
        gray[cy - side // 2:cy + side // 2, cx - side // 2:cx + side // 2] = _drawn(300 + k, side)
        read.append(_square(cx - 0.5, cy - 0.5, side))
    tx, ty = 280, 440  # 160 px below the grid's centre
    pawn_id = CATALOG.piece(CARRIED).stickers[0].marker_id
    gray[ty - side // 2:ty + side // 2, tx - side // 2:tx + side // 2] = _drawn(pawn_id, side)
    gray = cv2.GaussianBlur(gray, (0, 0), 0.7)
    predicted = _square(280, 280, side)
    piece = ExpectedPiece(CARRIED, 0.0, 0.0, 0.0, turn_spread_mm(BOOK) / 2)  # reaches ~190 px at 1.25 px/mm
    args = (gray, predicted, piece, (pawn_id,), detect.second_pass_ids(CATALOG, "kayak") or (), CATALOG, None,
            (CARRIED, "main", 15.0))
    got = reread._read_at(*args, np.array(read))
    assert got is not None and got.llr >= reread.LLR_MIN and got.detection.marker_id == pawn_id
    assert np.linalg.norm(got.detection.corners.mean(axis=0) - [tx - 0.5, ty - 0.5]) < 3
    blind = reread._read_at(*args, None)  # the read squares not known: the nearest are theirs
    assert blind is None or blind.llr < reread.LLR_MIN
