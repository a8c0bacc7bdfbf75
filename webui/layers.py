"""Drawings kept apart from the picture under them, so a drawing that stays the same is put on each
new frame in two OpenCV calls instead of being drawn again.

Every drawing step the overlay takes (anti-aliased lines and text, blended fills, see-through
label plates) sets a pixel to x (1 - a) + c a for the x under it, and so do several in turn. The
drawing is made once, on a black canvas with a fourth channel that every step paints in opaque
white (``opaque``): the colours end as the sum of the c a (``ink``), the fourth channel as 255
less 255 (1 - a) over all steps (``keep``: what is left of the picture). On a picture x the drawing
is then x keep / 255 + ink: within a grey level or two of drawing it there (each step rounds to
whole levels), and exactly x where nothing is drawn and exactly the drawing where it covers the
picture.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass
from typing import Any, Callable

import cv2
import numpy as np


@dataclass
class Layer:
    """A drawing apart from its picture, over the box where anything is drawn."""

    ink: np.ndarray  # (y1 - y0, x1 - x0, 3) uint8
    keep: np.ndarray  # the same shape: 255 where the picture shows through untouched
    box: tuple[int, int, int, int]  # y0, y1, x0, x1

    @classmethod
    def drawn(cls, w: int, h: int, draw: Callable[[np.ndarray], Any]) -> tuple["Layer", Any]:
        """draw(canvas) run once on a black (h, w) canvas of four channels, painting with opaque() and
        see_through(): the layer, and what draw returned."""
        canvas = np.zeros((h, w, 4), np.uint8)
        result = draw(canvas)
        # the box of every pixel drawn on, found over the canvas's (H, 4 W) channels
        x, y, bw, bh = cv2.boundingRect(canvas.reshape(h, 4 * w))
        y0, y1, x0, x1 = box = (y, y + bh, x // 4, -(-(x + bw) // 4))
        if not bh:  # nothing drawn
            return cls(np.zeros((0, 0, 3), np.uint8), np.zeros((0, 0, 3), np.uint8), box), result
        drawn = canvas[y0:y1, x0:x1]
        keep = cv2.cvtColor(cv2.bitwise_not(cv2.extractChannel(drawn, 3)), cv2.COLOR_GRAY2BGR)
        return cls(cv2.cvtColor(drawn, cv2.COLOR_BGRA2BGR), keep, box), result

    def onto(self, image: np.ndarray, out: np.ndarray) -> None:
        """out (the picture's size; it may be image itself) = image with the drawing on it."""
        h, w = image.shape[:2]
        y0, y1, x0, x1 = self.box
        if out is not image:
            for ya, yb, xa, xb in ((0, y0, 0, w), (y1, h, 0, w), (y0, y1, 0, x0), (y0, y1, x1, w)):  # around the box
                out[ya:yb, xa:xb] = image[ya:yb, xa:xb]
        if y1 > y0:
            under = out[y0:y1, x0:x1]
            cv2.multiply(image[y0:y1, x0:x1], self.keep, dst=under, scale=1 / 255.0)
            cv2.add(under, self.ink, dst=under)


def opaque(canvas: np.ndarray, colour) -> tuple:
    """The colour to draw with on canvas: a picture takes it as it is; a layer's canvas (four
    channels) takes it with its fourth channel opaque, so that channel gathers how much is drawn."""
    return tuple(colour[:3]) if canvas.shape[2] == 3 else (*colour[:3], 255)


def put_text(canvas: np.ndarray, text: str, org: tuple[int, int], scale: float, colour, thick: int) -> None:
    """cv2.putText (Hershey simplex, anti-aliased) onto a picture or a layer's canvas. On four channels
    OpenCV sets the fourth to the text's own coverage instead of blending it, so there the text is
    drawn with that channel cleared around it and its coverage is then added to what was there."""
    font = cv2.FONT_HERSHEY_SIMPLEX
    if canvas.shape[2] == 3:
        cv2.putText(canvas, text, org, font, scale, colour, thick, cv2.LINE_AA)
        return
    (tw, th), base = cv2.getTextSize(text, font, scale, thick)
    h, w = canvas.shape[:2]
    m = thick + 2
    y0, y1 = max(0, org[1] - th - m), min(h, org[1] + base + m)
    x0, x1 = max(0, org[0] - m), min(w, org[0] + tw + m)
    if y1 <= y0 or x1 <= x0:
        return
    cover = canvas[y0:y1, x0:x1, 3].copy()
    canvas[y0:y1, x0:x1, 3] = 0
    cv2.putText(canvas, text, org, font, scale, opaque(canvas, colour), thick, cv2.LINE_AA)
    text_cover = canvas[y0:y1, x0:x1, 3]
    # what the picture keeps: kept before times what the text leaves
    kept = cv2.multiply(cv2.bitwise_not(cover), cv2.bitwise_not(text_cover), scale=1 / 255.0)
    canvas[y0:y1, x0:x1, 3] = cv2.bitwise_not(kept)


@functools.lru_cache(maxsize=16)
def _see_through_lut(alpha: float, light: bool, channels: int) -> np.ndarray:
    colours = (np.arange(256, dtype=np.float32) * (1 - alpha) + (255 * alpha if light else 0)).astype(np.uint8)
    cover = (np.arange(256, dtype=np.float32) * (1 - alpha) + 255 * alpha).astype(np.uint8)
    if channels == 3:  # one table for every channel: OpenCV's fast path
        return colours
    return np.stack([colours] * 3 + [cover] * (channels - 3), axis=1).reshape(256, 1, channels)


def see_through(roi: np.ndarray, alpha: float, light: bool = False) -> None:
    """roi (a view into a picture or a layer's canvas) under a plate this opaque, black or white
    (light): x (1 - alpha) (+ 255 alpha), to float32 and cut to whole levels; on a layer's canvas
    the fourth channel gathers the plate's opacity (as a white plate)."""
    if roi.size:
        cv2.LUT(roi, _see_through_lut(alpha, light, roi.shape[2]), dst=roi)


SEEN_ONCE = object()


class LayerCache:
    """The last few drawings by what they depend on (a hashable key). A key seen once is only marked:
    a table in motion draws each frame once, as it would without layers; seen again, its layer is
    made (drawing twice) and kept, the newest ``layers`` of them (each holds two pictures' worth of
    the box it covers). Shared by the threads that draw."""

    def __init__(self, layers: int, marks: int = 16):
        self._layers: dict = {}
        self._marks: dict = {}
        self._sizes = (layers, marks)
        self._lock = threading.Lock()

    def get(self, key):
        """The kept value, SEEN_ONCE, or None."""
        with self._lock:
            if key in self._layers:
                self._layers[key] = self._layers.pop(key)  # the newest used
                return self._layers[key]
            return self._marks.get(key)

    def put(self, key, value) -> None:
        with self._lock:
            items, size = (self._marks, self._sizes[1]) if value is SEEN_ONCE else (self._layers, self._sizes[0])
            self._marks.pop(key, None)
            items.pop(key, None)
            while len(items) >= size:
                items.pop(next(iter(items)))
            items[key] = value
