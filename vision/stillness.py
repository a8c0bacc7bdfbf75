"""Has a sticker moved since it was measured? Its pixels tell, for far less than measuring it again.

A stream of frames of a table at rest shows each sticker frame after frame on the same pixels,
up to the sensor's noise and the JPEG's. Measuring it again (the edge fit of vision/edges.py,
~0.1 ms a sticker) gives the same corners within the noise; vision/roi.py then holds them
(hold_px) and hands the earlier measurement on. Here the earlier measurement is handed on
before it is made again, when the sticker's pixels say it cannot have moved:

* when a Detection is first given out, the grey pixels of the box around its corners (a margin
  of MARGIN_PX, where its edges blur out) are kept, with their gradient energy E (the sum of the
  squared intensity gradient);
* a sticker moved by d px (shifted, turned or tilted: d is its pixels' largest displacement)
  changes its box by about d^2 E in summed squared grey levels, from its edges; noise and JPEG add
  to that sum and never take from it (they are independent of the move, and their cross term with
  it is a few per cent of it at this size);
* so a box whose pixels now differ from the kept ones by at most MAX_SHIFT_PX^2 E has not moved
  by more than about MAX_SHIFT_PX (0.1 px, well inside hold_px 0.25): its earlier Detection is
  given out again. A noisier camera, a shadow, a finger at its edge or a slow drift fail the test
  (a drift adds up against the kept pixels) and the sticker is measured again, as before.

Measured on the speed bench's sessions (1080p, 1.2 grey levels of noise, JPEG q80): still
stickers' boxes differ by 0.1 to 0.5 of the bound, stickers that moved 0.17 px or more by 7 or
more times it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

MAX_SHIFT_PX = 0.1  # the largest move of a sticker whose pixels pass as unchanged (px)
MARGIN_PX = 3  # box margin around the corners: the edges' blur (sigma up to ~1.5 px) lies inside


@dataclass(frozen=True)
class _Kept:
    detection: object  # the vision.detect.Detection given out
    box: tuple[int, int, int, int]  # y0, y1, x0, x1 in the frame
    pixels: np.ndarray  # (y1 - y0, x1 - x0) int32 grey when it was given out
    bound: float  # MAX_SHIFT_PX^2 times their gradient energy


class StillStickers:
    """The pixels of each sticker as they were when its Detection was given out, by marker id."""

    def __init__(self, max_shift_px: float = MAX_SHIFT_PX):
        self.max_shift_px = max_shift_px
        self._kept: dict[int, _Kept] = {}
        self.reused = 0  # detections handed on unchanged (counted, as RoiDetector counts its passes)

    def remember(self, gray: np.ndarray, detections) -> None:
        """Keep the pixels of every detection given out for the first time (a held one keeps the pixels
        of the frame it was made on: a slow drift adds up against them)."""
        for d in detections:
            kept = self._kept.get(d.marker_id)
            if kept is not None and kept.detection is d:
                continue
            box = _box(d.corners, gray.shape)
            if box is None:
                self._kept.pop(d.marker_id, None)
                continue
            y0, y1, x0, x1 = box
            pixels = gray[y0:y1, x0:x1].astype(np.int32)
            gy, gx = np.gradient(pixels.astype(np.float32))
            energy = float((gx * gx).sum() + (gy * gy).sum())
            self._kept[d.marker_id] = _Kept(d, box, pixels, self.max_shift_px ** 2 * energy)

    def unchanged(self, gray: np.ndarray, marker_id: int, near: np.ndarray | None = None, near_px: float = 1.5):
        """The Detection given out for this sticker when its pixels are as they were then (else None);
        near: corners where this frame's detector saw it, which must lie within near_px of it."""
        kept = self._kept.get(marker_id)
        if kept is None:
            return None
        if near is not None and np.abs(np.asarray(near, np.float64) - kept.detection.corners).max() > near_px:
            return None
        y0, y1, x0, x1 = kept.box
        if gray.shape[0] < y1 or gray.shape[1] < x1:
            return None
        diff = gray[y0:y1, x0:x1].astype(np.int32) - kept.pixels
        if float((diff * diff).sum()) > kept.bound:
            return None
        self.reused += 1
        return kept.detection

    def reuse_for(self, gray: np.ndarray, offset: tuple[int, int] = (0, 0)):
        """detect.detect_all's reuse= for this frame, or for a crop of it whose top left corner is at
        offset (x, y): the unchanged Detection (or None) of each read, in the crop's pixels."""
        shift = np.array(offset, dtype=np.float64)

        def reuse(ids, corners):
            found = [self.unchanged(gray, int(i), c + shift) for i, c in zip(ids, corners)]
            return found if not shift.any() else [None if d is None else replace(d, corners=d.corners - shift)
                                                  for d in found]
        return reuse


def _box(corners: np.ndarray, shape) -> tuple[int, int, int, int] | None:
    """The box around the corners with the margin, clipped to the frame; None when it is empty."""
    h, w = shape[:2]
    lo = np.floor(np.asarray(corners).min(axis=0)).astype(int) - MARGIN_PX
    hi = np.ceil(np.asarray(corners).max(axis=0)).astype(int) + MARGIN_PX + 1
    x0, y0 = max(int(lo[0]), 0), max(int(lo[1]), 0)
    x1, y1 = min(int(hi[0]), w), min(int(hi[1]), h)
    return (y0, y1, x0, x1) if y1 - y0 >= 3 and x1 - x0 >= 3 else None
