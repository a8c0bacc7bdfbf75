"""Drawings kept apart from the picture under them, so a drawing that stays the same is put on each
new frame in two OpenCV calls instead of being drawn again.

Every drawing step the overlay takes (anti-aliased lines and text, blended fills, see-through
label plates) sets a pixel to x (1 - a) + c a for the x under it, and so do several in turn. A
drawing made once on black (``ink``: the sum of the c a) and once on white gives 255 (1 - a) as
the difference (``keep``). On a picture x the drawing is then x keep / 255 + ink: within a grey
level or two of drawing it there (each step rounds to whole levels), and exactly x where nothing
is drawn and exactly the drawing where it covers the picture.
"""

from __future__ import annotations

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
        """draw(canvas) run on a black and on a white (h, w) canvas: the layer, and what draw returned
        on black."""
        black, white = np.zeros((h, w, 3), np.uint8), np.full((h, w, 3), 255, np.uint8)
        result = draw(black)
        draw(white)
        keep = cv2.subtract(white, black)
        # the box of every pixel drawn on, found over the picture's (H, 3 W) channels
        x, y, bw, bh = cv2.boundingRect(cv2.bitwise_not(keep).reshape(h, 3 * w))
        y0, y1, x0, x1 = box = (y, y + bh, x // 3, -(-(x + bw) // 3))
        return cls(black[y0:y1, x0:x1].copy(), keep[y0:y1, x0:x1].copy(), box), result

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
