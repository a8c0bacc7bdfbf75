"""The live view's overlay: game-frame geometry projected onto a rendered table."""

import numpy as np
import pytest

from referee.observation import Observation
from webui.live import pipeline_observe
from webui.overlay import draw_overlay

from tests.live_helpers import pose, tornado_scene


@pytest.fixture(scope="module")
def rendered():
    from synth.render import render_scene

    image, truth = render_scene(tornado_scene(150.0))
    return image, pipeline_observe(image, None, "tornado")


def test_homography_from_the_detected_stickers_puts_pieces_on_their_stickers(rendered):
    image, obs = rendered
    mapping = obs.image_from_game
    assert mapping is not None  # vision fills it
    for d in obs.extra["detections"]:
        if d["id"] in (200, 201, 202):  # boat stickers sit on the boat's reference point
            name = f"tornado/boat-{d['id'] - 199}"
            p = obs.piece(name)
            centre = np.mean(np.array(d["corners"]), axis=0)
            assert np.linalg.norm(np.array(mapping.project([(p.x_mm, p.y_mm)])[0]) - centre) < 3.0  # px (boats are 5 mm up)


def test_overlay_draws_outlines_and_names_without_touching_the_input(rendered):
    image, obs = rendered
    before = image.copy()
    out = draw_overlay(image, obs, obs.pieces, ("tornado/boat-3",), "stable", obs.image_from_game)
    h = image.shape[0]
    assert out.shape[1:] == image.shape[1:] and out.shape[0] > h and out.dtype == np.uint8  # the legend's strip under it
    assert np.array_equal(image, before)
    changed = np.any(out[:h] != image, axis=2)
    assert changed.mean() > 0.005
    # the outline of boat-1 passes near its projected footprint corner
    p = obs.piece("tornado/boat-1")
    u, v = np.round(obs.image_from_game.project([(p.x_mm + 17.0, p.y_mm)])[0]).astype(int)
    assert changed[v - 3:v + 4, u - 3:u + 4].any()


def test_without_a_mapping_only_the_detections_are_drawn():
    img = np.full((120, 160, 3), 90, np.uint8)
    obs = Observation(pieces=(pose("kang/small-1", 0, 0),), extra={"detections": [
        {"id": 20, "corners": [[40, 40], [80, 40], [80, 80], [40, 80]]}]})
    assert obs.image_from_game is None
    out = draw_overlay(img, obs, obs.pieces, (), "in play", None)
    assert np.any(out[38:43, 38:83] != 90)  # the sticker's outline
    assert np.all(out[:30, :] == 90)  # no status badge: the page shows the one status


def test_labels_are_sized_for_the_picture_and_never_overlap(rendered):
    from webui.labels import overlapping
    from webui.overlay import render_overlay

    image, obs = rendered
    drawn = render_overlay(image, obs, obs.pieces, (), "stable", obs.image_from_game)
    names = [b.text for b in drawn.boxes if b.kind == "label"]
    assert "boat-1" in names and not any("/" in n for n in names)  # short names
    assert not overlapping(drawn.boxes)
    heights = [b.y1 - b.y0 for b in drawn.boxes if b.kind == "label"]
    assert min(heights) >= 0.02 * image.shape[1]  # about 10 px when the view is shown phone-wide
    (key,) = [b for b in drawn.boxes if b.kind == "legend"]
    assert key.y0 >= image.shape[0] and key.y1 <= drawn.image.shape[0]  # beside the play area, never over it


def test_a_crowded_picture_leaves_labels_out_rather_than_overlapping_them():
    from webui.labels import LabelPlacer, overlapping

    img = np.zeros((200, 300, 3), np.uint8)
    placer = LabelPlacer(img)
    for i in range(60):
        placer.place(f"piece-{i}", (150, 100), (255, 255, 255))
    assert placer.boxes and placer.left_out
    assert not overlapping(placer.boxes)
    assert all(0 <= b.x0 and b.x1 <= 300 and 0 <= b.y0 and b.y1 <= 200 for b in placer.boxes)
