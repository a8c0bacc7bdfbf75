"""webui/layers.py: a drawing kept apart from its picture and put on another, against drawing it there."""

import cv2
import numpy as np

from webui import overlay
from webui.layers import Layer, opaque, put_text, see_through
from webui.live import pipeline_observe

from tests.live_helpers import tornado_scene


def _draw(canvas):
    """Every kind of step the overlay takes: anti-aliased lines and text, a blended fill, a plate."""
    cv2.line(canvas, (10, 10), (150, 90), opaque(canvas, (40, 200, 60)), 3, cv2.LINE_AA)
    put_text(canvas, "boat-2", (30, 150), 0.9, (255, 255, 255), 2)
    box = canvas[100:180, 120:200]
    layer = box.copy()
    cv2.fillPoly(layer, [np.array([[0, 0], [79, 10], [40, 79]], np.int32)], opaque(canvas, (0, 140, 255)))
    cv2.addWeighted(layer, 0.25, box, 0.75, 0, box)
    see_through(canvas[20:50, 160:230], 0.62)
    see_through(canvas[60:90, 160:230], 0.62, light=True)


def test_a_layer_is_drawing_on_the_picture_within_a_few_grey_levels():
    rng = np.random.default_rng(3)
    picture = rng.integers(0, 256, (200, 240, 3), dtype=np.uint8)
    drawn = picture.copy()
    _draw(drawn)
    layer, _ = Layer.drawn(240, 200, _draw)
    out = np.empty_like(picture)
    layer.onto(picture, out)
    diff = np.abs(out.astype(int) - drawn.astype(int))
    assert diff.max() <= 3  # each step rounds to whole grey levels
    untouched = (drawn == picture).all(axis=2) & (diff.max(axis=2) == 0)
    y0, y1, x0, x1 = layer.box
    outside = np.ones(picture.shape[:2], bool)
    outside[y0:y1, x0:x1] = False
    assert (out[outside] == picture[outside]).all()  # nothing drawn there: the picture exactly
    assert untouched.mean() > 0.5


def test_a_view_drawn_again_comes_from_its_layer_with_the_same_labels():
    from synth.render import render_scene

    image, _ = render_scene(tornado_scene(150.0))
    obs = pipeline_observe(image, None, "tornado")
    overlay._LAYERS = overlay.LayerCache(layers=3)
    args = (obs, obs.pieces, ("tornado/boat-3",), "stable", obs.image_from_game)
    first = overlay.render_overlay(image, *args)  # drawn
    second = overlay.render_overlay(image, *args)  # the layer made and put on
    assert isinstance(overlay._LAYERS.get(overlay._view_key(image.shape[1], image.shape[0], obs.pieces,
                                                            ("tornado/boat-3",), obs.image_from_game, ())),
                      overlay.ViewLayer)
    noisy = np.clip(image.astype(int) + 2, 0, 255).astype(np.uint8)  # another frame of the same view
    third = overlay.render_overlay(noisy, *args)
    assert first.boxes == second.boxes == third.boxes and first.left_out == second.left_out
    assert first.image.shape == second.image.shape
    assert np.abs(first.image.astype(int) - second.image.astype(int)).max() <= 8
    moved = overlay.render_overlay(image, obs, obs.pieces, (), "stable", obs.image_from_game)  # another view
    assert moved.boxes != first.boxes or not np.array_equal(moved.image, first.image)
