"""Guards before OpenCV calls that fail or go quadratic on an ordinary busy picture.

* remap: OpenCV's remap asserts that its map has fewer than SHRT_MAX (32767) rows and columns. Vision
samples markers with one-row maps (every point of every candidate side by side), so a busy
picture, a 2000x3000 checkerboard or a print of 3,600 markers, asked for more than 32767
samples at once and ended in a cv2.error. Here any map is folded into rows of ROW_SAMPLES
(padded), sampled in one call, and unfolded: the same values, at any count.
* check_square_shapes: ArUco's detector compares its square candidates pairwise, so its time
grows with the square of their number (a 2000x3000 checkerboard, 7,000 squares: 16 s; 3,600
markers: 4 s). A picture with more than MAX_SQUARE_SHAPES of them is refused in one line before
the detector sees it; a table with every sticker of a game shows well under 200.
"""

from __future__ import annotations

import cv2
import numpy as np

from referee.errors import InvalidInputError

ROW_SAMPLES = 16384  # well under SHRT_MAX
MAX_SQUARE_SHAPES = 2500  # the detector takes about 1 s at this count on one core
_MIN_PERIMETER_RATE = 0.02  # as the detector's minMarkerPerimeterRate


class TooBusyError(InvalidInputError):
    """A picture with more square shapes than the marker detector can compare in reasonable time."""


def remap(src: np.ndarray, map_x: np.ndarray, map_y: np.ndarray, interpolation: int, **kwargs) -> np.ndarray:
    """cv2.remap(src, map_x, map_y, interpolation, **kwargs) for maps of any shape and size;
    the result has the maps' shape (plus src's channels)."""
    if map_x.shape[0] < ROW_SAMPLES and (map_x.ndim < 2 or map_x.shape[1] < ROW_SAMPLES):
        return cv2.remap(src, map_x, map_y, interpolation, **kwargs)
    shape = map_x.shape
    n = int(np.prod(shape))
    rows = -(-n // ROW_SAMPLES)

    def folded(m: np.ndarray) -> np.ndarray:
        flat = np.zeros(rows * ROW_SAMPLES, np.float32)
        flat[:n] = m.reshape(-1)
        return flat.reshape(rows, ROW_SAMPLES)

    out = cv2.remap(src, folded(map_x), folded(map_y), interpolation, **kwargs)
    return out.reshape(rows * ROW_SAMPLES, *out.shape[2:])[:n].reshape(*shape, *out.shape[2:])


def square_shapes(gray: np.ndarray) -> int:
    """How many four-cornered outlines the picture holds (about 3 ms at 1080p): an estimate of the
    candidates ArUco's detector would compare, from one adaptive threshold of the same kind."""
    return _four_cornered(_outlines(gray), _MIN_PERIMETER_RATE * max(gray.shape[:2]))


def _outlines(gray: np.ndarray) -> tuple:
    """Every outline of one adaptive threshold of the picture (the detector's kind)."""
    binary = cv2.adaptiveThreshold(gray, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV, 13, 7)
    return cv2.findContours(binary, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)[0]


def _four_cornered(contours, min_perimeter: float) -> int:
    """How many of the contours are four-cornered outlines at least min_perimeter long."""
    count = 0
    for contour in contours:
        if len(contour) < 4:
            continue
        perimeter = cv2.arcLength(contour, True)
        if perimeter >= min_perimeter and len(cv2.approxPolyDP(contour, 0.03 * perimeter, True)) == 4:
            count += 1
    return count


def check_square_shapes(gray: np.ndarray) -> int:
    """Raise TooBusyError (one line) when the picture is too busy with squares to read in time; else
    the number of outlines it holds (of any shape: an upper bound on its square shapes)."""
    outlines = _outlines(gray)
    if len(outlines) <= MAX_SQUARE_SHAPES:
        return len(outlines)  # no more outlines of any shape than that (a table's few hundred): none need a look
    count = _four_cornered(outlines, _MIN_PERIMETER_RATE * max(gray.shape[:2]))
    if count > MAX_SQUARE_SHAPES:
        h, w = gray.shape[:2]
        raise TooBusyError(f"the {w}x{h} picture holds {count} square shapes (a chessboard or a sheet of "
                           f"markers in view?); refcam reads at most {MAX_SQUARE_SHAPES} at once and "
                           f"cannot tell what is on this table")
    return len(outlines)
