"""Scene builder: legal setups for all three games, a camera that sees them, determinism."""

from __future__ import annotations

import json
import math

import cv2
import numpy as np
import pytest

from referee.catalog import default_catalog
from synth.scenes import (Track, build_scene, course_names, kang_pieces, kayak_joint_open_lanes, kayak_pieces,
                           load_course, piece_polygon, relevant_points, tile_layout_as_lying, tornado_pieces)

CAT = default_catalog()
SEEDS = range(12)


def _camera_sees(scene: dict, points: np.ndarray) -> bool:
    from synth.render import camera_pose, validate_scene

    cam = validate_scene(scene)["camera"]
    R, t = camera_pose(cam)
    K, dist = np.array(cam["camera_matrix"]), np.array(cam["dist_coeffs"])
    px, _ = cv2.projectPoints(points.reshape(-1, 1, 3), cv2.Rodrigues(R)[0], t, K, dist)
    px = px.reshape(-1, 2)
    w, h = cam["image_size"]
    return bool(np.all(px >= 0) and np.all(px[:, 0] <= w - 1) and np.all(px[:, 1] <= h - 1))


@pytest.mark.parametrize("game", ["kang", "kayak", "tornado"])
def test_same_seed_same_scene_and_seeds_differ(game):
    a = json.dumps(build_scene(game, 5))
    assert a == json.dumps(build_scene(game, 5))
    assert a != json.dumps(build_scene(game, 6))


@pytest.mark.parametrize("game", ["kang", "kayak", "tornado"])
def test_camera_is_webcam_like_and_sees_the_relevant_area(game):
    for seed in range(6):
        tilt = 8.0 * seed
        scene = build_scene(game, 100 + seed, "4k" if seed % 2 else "1080p", tilt_deg=tilt)
        pose = scene["camera"]["pose"]
        assert 599.0 <= pose["position_mm"][2] <= 1200.5
        assert scene["tags"]["tilt_deg"] == pytest.approx(tilt, abs=0.01)
        fx = scene["camera"]["camera_matrix"][0][0] * 1920 / scene["camera"]["image_size"][0]
        assert 995 <= fx <= 1505
        relevant = [p for p in scene["pieces"] if p["name"] in scene["tags"]["relevant"]]
        assert _camera_sees(scene, relevant_points(CAT, relevant))


def test_kang_tokens_never_overlap_and_sit_on_squares_or_in_start_zones():
    grid = CAT.game("kang")["grid"]
    a = grid["square_mm"]
    half = CAT.game("kang")["board_half_extent_mm"]
    for seed in SEEDS:
        pieces = kang_pieces(np.random.default_rng(seed), CAT)
        assert pieces[0] == {"name": "kang/board", "x_mm": 0.0, "y_mm": 0.0, "theta_deg": 0.0}
        tokens = [p for p in pieces if p["name"].startswith("kang/") and p["name"] != "kang/board"]
        polys = [piece_polygon(CAT, p) for p in tokens]
        for i in range(len(polys)):
            for j in range(i + 1, len(polys)):
                assert polys[i].intersection(polys[j]).area == 0, (seed, tokens[i]["name"], tokens[j]["name"])
        squares = set()
        for p in tokens:
            r = CAT.piece(p["name"]).footprint["diameter_mm"] / 2
            if "alfalfa" in p["name"]:
                assert abs(p["x_mm"]) - r >= half  # beside the board
                continue
            if abs(p["y_mm"]) < half:  # on the board: centred on a square of the grid
                f = (p["x_mm"] / a) + grid["files"] / 2 - 0.5
                row = (p["y_mm"] / a) + grid["rows"] / 2 - 0.5
                assert abs(f - round(f)) * a <= 3.01 and abs(row - round(row)) * a <= 3.01
                assert 0 <= round(f) < grid["files"] and 0 <= round(row) < grid["rows"]
                squares.add((round(f), round(row)))
                assert p.get("resting_on") == "kang/board"
            else:  # a start zone lies wholly beyond the board edge
                assert abs(p["y_mm"]) - r > half
        assert len(squares) == len([p for p in tokens if abs(p["y_mm"]) < half and "alfalfa" not in p["name"]])


def _kayak_space_of(river, tiles, x, y):
    rows, lanes, a = 4, 5, CAT.game("kayak")["tile"]["space_mm"]
    for i, t in enumerate(tiles):
        lx, ly = x - t["x_mm"], y - t["y_mm"]
        if abs(lx) < rows * a / 2 and abs(ly) < lanes * a / 2:
            return i, int(math.floor(lx / a + rows / 2)), int(math.floor(ly / a + lanes / 2))
    raise AssertionError(f"pawn at ({x}, {y}) is off the river")


def test_kayak_rivers_are_legal_and_pawns_stand_on_open_spaces():
    for seed in SEEDS:
        pieces, river, where = kayak_pieces(np.random.default_rng(seed), CAT)
        tiles = [p for p in pieces if p["name"].startswith("kayak/tile-")]
        assert tiles[0]["name"] == "kayak/tile-0" and (tiles[0]["x_mm"], tiles[0]["y_mm"], tiles[0]["theta_deg"]) == (0, 0, 0)
        assert 3 <= len(tiles) <= 6
        for up, down in zip(river[:-1], river[1:]):
            assert kayak_joint_open_lanes(CAT, up, down), (seed, up, down)
        for k, t in enumerate(tiles):  # end to end along +x, whole-lane shifts
            assert t["x_mm"] == pytest.approx(160.0 * k) and t["y_mm"] % 40 == pytest.approx(0.0)
            assert t["theta_deg"] in (0.0, 180.0)
        spots = set()
        for p in pieces:
            if not p["name"].startswith("kayak/pawn-"):
                continue
            i, r, lane = _kayak_space_of(river, tiles, p["x_mm"], p["y_mm"])
            assert (i, r, lane) == tuple(where[p["name"]])
            layout = tile_layout_as_lying(CAT, river[i])
            assert layout[r][lane] != "R", (seed, p["name"])
            if layout[r][lane] == "D":  # only the downstream half of a double space
                assert r == 3 or layout[r + 1][lane] != "D" or (r > 0 and layout[r - 1][lane] == "D")
            spots.add((i, r, lane))
        assert len(spots) == len(where)


def test_joint_check_rejects_rivers_with_no_shared_lane():
    from synth.scenes import RiverTile

    # tile-3 side A's last row is open everywhere; shifting the next tile 5 lanes leaves no overlap
    assert kayak_joint_open_lanes(CAT, RiverTile(3, "A", 0, 0), RiverTile(4, "A", 0, 5)) == []
    assert kayak_joint_open_lanes(CAT, RiverTile(3, "A", 0, 0), RiverTile(4, "A", 0, 0)) == [0, 2, 4]


@pytest.mark.parametrize("course", ["tornado-circuit", "splashway", "roundabout-river", "raindrop-road"])
def test_tornado_boats_are_on_the_track_and_curve_cards_meet_their_marker(course):
    assert course in course_names()
    track = Track(load_course(course))
    cards_seen = 0
    for seed in range(6):
        pieces, info = tornado_pieces(np.random.default_rng(seed), course, CAT, close_call=seed % 2 == 1)
        by_name = {p["name"]: p for p in pieces}
        assert by_name["tornado/start-gate"] == {"name": "tornado/start-gate", "x_mm": 0.0, "y_mm": 0.0, "theta_deg": 0.0}
        boats = [p for p in pieces if p["name"].startswith("tornado/boat-")]
        assert 2 <= len(boats) <= 4
        for b in boats:
            _, off = track.locate(b["x_mm"], b["y_mm"])
            assert off <= track.width / 2 - 20, (seed, b["name"], off)
        polys = [piece_polygon(CAT, b) for b in boats]
        assert all(polys[i].intersection(polys[j]).area == 0 for i in range(len(polys)) for j in range(i + 1, len(polys)))
        for item in load_course(course)["sequence"]:
            if item["kind"] == "curve":
                marker = by_name[f"tornado/curve-marker-{item['marker']}"]
                cards = [p for p in pieces if p["name"].startswith("tornado/curve-card-")
                         and math.hypot(p["x_mm"] - marker["x_mm"], p["y_mm"] - marker["y_mm"]) < 1e-9]
                assert len(cards) == 2 and all(c["face"] == f"{item['turn']}-turn" for c in cards)
        if seed % 2 == 1:
            a, b = info["close_call"]["boats"]
            assert info["close_call"]["gap_mm"] <= 6.0
            assert abs(info["boats"][a] - info["boats"][b]) <= 6.01
        cards = [piece_polygon(CAT, p) for p in pieces if p["name"].startswith("tornado/card-")]
        under = [c for c in cards if any(c.contains(piece_polygon(CAT, b).centroid) for b in boats)]
        for c in cards:
            # a racing card lies under a boat, or right behind (touching) one that does
            assert c in under or any(c.distance(u) < 1e-6 for u in under)
        assert all(cards[i].intersection(cards[j]).area < 1e-6 for i in range(len(cards)) for j in range(i + 1, len(cards)))
        cards_seen += len(cards) - len(under)
    if course == "tornado-circuit":
        assert cards_seen > 0  # some scenes have a card behind the boat's card


def test_close_call_scenes_render_both_boats_visible():
    from synth.render import render_scene

    scene = build_scene("tornado", 3, (960, 540), tilt_deg=10.0, course="splashway", close_call=True)
    scene["effects"]["supersample"] = 1
    _, truth = render_scene(scene)
    a, b = scene["tags"]["close_call"]["boats"]
    boats = {s["piece"]: s for s in truth["stickers"] if s["piece"] in (a, b)}
    assert set(boats) == {a, b}
    assert all(st["in_image"] for st in boats.values())
