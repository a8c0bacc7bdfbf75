"""No refcam sticker is read on other systems' boards (vision/foreign.py), and none is lost for it.

The pictures are rendered (synth/boards.py, synth/variety.py): boards of other systems beside a
Kang table, and small boards alone under blur. Truth: every id the renderer painted; anything
else read is a phantom.
"""

from __future__ import annotations

import numpy as np
import pytest

from referee.catalog import default_catalog
from synth.render import render_scene
from synth.variety import foreign_scene, variety_scene
from tests.bench.robust import degrade, jpeg
from tests.bench.vision_scenes import BUILDERS
from vision import detect, foreign


@pytest.fixture(scope="module")
def kang_with_boards():
    """Tuning table kang #0: an ArUco 4x4 grid and an AprilTag 25h9 board beside the pieces (the
    unguarded second pass read a 4x4 marker there as tornado/card-4-07)."""
    scene, _ = variety_scene(BUILDERS["kang"], 2, 0, "tuning")
    assert {b["kind"] for b in scene["boards"]} == {"aruco-4x4-grid", "apriltag-25h9"}
    image, truth = render_scene(scene)
    return jpeg(image), truth


def _read(image) -> set[int]:
    return {d.marker_id for d in detect.detect_all(image, default_catalog()).detections}


def test_no_phantom_beside_the_pieces_and_every_sticker_kept(kang_with_boards):
    image, truth = kang_with_boards
    got = _read(image)
    painted = {s["id"] for s in truth["stickers"]}
    visible = {s["id"] for s in truth["stickers"] if s["visible"]}
    assert got <= painted, f"phantom ids {sorted(got - painted)}"
    assert got >= visible, f"lost {sorted(visible - got)}"


def test_the_picture_needs_the_guards(kang_with_boards, monkeypatch):
    """Without the guards the same picture gives a phantom: the test above exercises them. Two
    guards stop it, each alone: the grid of unread squares around it (vision/foreign.py) and
    the soft read's comparison with other grids' markers (vision/detect.py)."""
    from vision import detect

    image, truth = kang_with_boards
    painted = {s["id"] for s in truth["stickers"]}
    monkeypatch.setattr(foreign, "in_foreign_grid", lambda detected, *rest: np.zeros(len(detected), bool))
    assert not _read(image) - painted  # the other-grid comparison alone still stops it
    monkeypatch.setattr(detect, "_other_grid_templates", lambda level, n=7: np.zeros((0, n * n), np.float32))
    assert _read(image) - painted


@pytest.mark.parametrize("condition", ["clean", "defocus 1", "defocus 2", "motion 7px"])
def test_small_boards_alone_under_blur(condition):
    for i in range(2):
        scene = foreign_scene(np.random.default_rng([7, 1, i]), "held-out")  # ChArUco 4x4 among its kinds
        image, _ = render_scene(scene)
        got = _read(jpeg(degrade(image, condition, np.random.default_rng(i))))
        assert not got, f"phantom ids {sorted(got)} on {[b['kind'] for b in scene['boards']]}"


def test_a_marker_in_a_grid_of_foreign_squares_is_dropped_and_a_lone_one_kept():
    square = np.array([[0, 0], [20, 0], [20, 20], [0, 20]], dtype=np.float64)
    detected = np.array([square + 100])
    grid = np.array([square + (100 + dx, 100 + dy) for dx, dy in ((26, 0), (-26, 0), (0, 26))])
    inked = np.array([[30.0, 230.0]])
    assert foreign.in_foreign_grid(detected, grid, inked, np.repeat(inked, 3, axis=0))[0]
    # the same squares printed in a game's red (grey ~90) are not foreign markers
    red = np.array([[90.0, 230.0]] * 3)
    assert not foreign.in_foreign_grid(detected, grid, inked, red)[0]
    # stripes (twice as long as wide) are not markers either
    stripes = grid * np.array([1.0, 0.5]) + np.array([0.0, 50.0])
    assert not foreign.in_foreign_grid(detected, stripes, inked, np.repeat(inked, 3, axis=0))[0]
    # dark print with no light margin around it (a card's face) is not a marker
    unframed = np.array([[30.0, 40.0]] * 3)
    assert not foreign.in_foreign_grid(detected, grid, inked, unframed)[0]
    # one neighbour is not a grid
    assert not foreign.in_foreign_grid(detected, grid[:1], inked, inked)[0]


def test_one_foreign_square_reported_twice_is_one_neighbour():
    """The detector returns a square once per threshold window that finds it: the same square
    twice (a pixel apart) is one neighbour, so a marker beside one foreign square is kept; a
    second square of its own makes the grid (the boundary: FOREIGN_GRID_MIN_NEIGHBOURS = 2)."""
    square = np.array([[0, 0], [20, 0], [20, 20], [0, 20]], dtype=np.float64)
    detected = np.array([square + 100])
    inked = np.array([[30.0, 230.0]])
    twice = np.array([square + (126, 100), square + (126.8, 100.6)])
    assert foreign.foreign_grid_neighbours(detected, twice, inked, np.repeat(inked, 2, axis=0))[0] == 1
    assert not foreign.in_foreign_grid(detected, twice, inked, np.repeat(inked, 2, axis=0))[0]
    two = np.array([square + (126, 100), square + (74, 100)])
    assert foreign.foreign_grid_neighbours(detected, two, inked, np.repeat(inked, 2, axis=0))[0] == 2
    assert foreign.in_foreign_grid(detected, two, inked, np.repeat(inked, 2, axis=0))[0]
