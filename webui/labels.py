"""Readable text on a picture: labels sized for the picture, placed so none overlap.

A label is wanted at an anchor point (a piece, a zone's middle). The placer tries
spots around the anchor, nearest first, and takes the first one that stays inside the
picture and clear of every box already placed (labels and the legend); a label set
away from its anchor gets a thin leader line back to it. A label with no free spot is
left out rather than drawn over another. Every placed box is kept (``boxes``), so
tests can check the overlay's own claim that nothing overlaps.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from webui.layers import opaque, put_text, see_through

BLACK = (0, 0, 0)
FONT_PX_AT_SCALE_1 = 22.0  # cv2.FONT_HERSHEY_SIMPLEX cap height at fontScale 1 (roughly)
LABEL_HEIGHT_FRACTION = 0.026  # text this fraction of the picture's width: ~10 px on a phone-wide view
MIN_LABEL_PX = 13.0
# Where to try a label, as (dx, dy) in units of the text height from the anchor, nearest first.
_RINGS = (1.0, 2.2, 3.6, 5.2)
_DIRECTIONS = ((0.6, -0.6), (0.6, 0.6), (-0.6, -0.6), (-0.6, 0.6), (0.0, -1.0), (0.0, 1.0), (1.0, 0.0), (-1.0, 0.0))


# every spot tried, in order: (dx, dy) in text heights and the side the box hangs to
_OFFSETS = np.array([(dx * ring, dy * ring) for ring in _RINGS for dx, dy in _DIRECTIONS])
_SIGNS = np.sign(_OFFSETS[:, 0])
_NEAREST = [((float(dx), float(dy)), float(sign)) for (dx, dy), sign in zip(_OFFSETS[:len(_DIRECTIONS)], _SIGNS)]


@functools.lru_cache(maxsize=2048)
def _text_size(text: str, scale: float, thick: int) -> tuple[int, int, int]:
    import cv2

    (tw, th), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, thick)
    return tw, th, base


@dataclass(frozen=True)
class Box:
    """A placed label (or the legend) in pixels: left, top, right, bottom."""

    x0: float
    y0: float
    x1: float
    y1: float
    text: str = ""
    kind: str = "label"

    def overlaps(self, other: "Box", gap: float = 0.0) -> bool:
        return not (self.x1 + gap <= other.x0 or other.x1 + gap <= self.x0
                    or self.y1 + gap <= other.y0 or other.y1 + gap <= self.y0)

    def to_json(self) -> dict:
        return {"box": [round(v, 1) for v in (self.x0, self.y0, self.x1, self.y1)], "text": self.text,
                "kind": self.kind}


def text_scale(width: int, height: int) -> float:
    """cv2 fontScale for labels on a picture of this size (shown scaled to the page's width)."""
    px = max(MIN_LABEL_PX, LABEL_HEIGHT_FRACTION * min(width, height * 16 / 9))
    return px / FONT_PX_AT_SCALE_1


class LabelPlacer:
    """Places and draws labels on one picture; ``boxes`` lists what it placed."""

    def __init__(self, img: np.ndarray, scale: float | None = None):
        self.img = img
        h, w = img.shape[:2]
        self.w, self.h = w, h
        self.scale = scale if scale is not None else text_scale(w, h)
        self.thick = max(1, int(round(self.scale * 1.6)))
        self.pad = max(2, int(round(3 * self.scale)))
        self.boxes: list[Box] = []
        self.left_out: list[str] = []

    def size(self, text: str, scale: float | None = None) -> tuple[int, int, int]:
        return _text_size(text, scale or self.scale, self.thick)

    def reserve(self, box: Box) -> None:
        """Keep labels off this box (e.g. the legend)."""
        self.boxes.append(box)

    def _free(self, box: Box) -> bool:
        inside = box.x0 >= 0 and box.y0 >= 0 and box.x1 <= self.w and box.y1 <= self.h
        return inside and not any(box.overlaps(b, gap=1.0) for b in self.boxes)

    def _spot(self, text: str, anchor) -> tuple[Box, bool] | None:
        """The first free spot around the anchor, in _RINGS x _DIRECTIONS order: the nearest ring one
        by one (where most labels go), then the others all at once."""
        tw, th, base = self.size(text)
        bw, bh = tw + 2 * self.pad, th + base + 2 * self.pad
        ax, ay = float(anchor[0]), float(anchor[1])
        placed = [(o.x0, o.y0, o.x1, o.y1) for o in self.boxes]
        for (dx, dy), sign in _NEAREST:  # the arithmetic of the arrays below, in the same order
            cx, cy = ax + dx * bh + sign * bw / 2, ay + dy * bh
            x0, y0, x1, y1 = cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2
            if x0 >= 0 and y0 >= 0 and x1 <= self.w and y1 <= self.h and all(
                    x1 + 1.0 <= b0 or b2 + 1.0 <= x0 or y1 + 1.0 <= b1 or b3 + 1.0 <= y0 for b0, b1, b2, b3 in placed):
                return Box(x0, y0, x1, y1, text), False
        cx = ax + _OFFSETS[:, 0] * bh + _SIGNS * bw / 2
        cy = ay + _OFFSETS[:, 1] * bh
        x0, y0, x1, y1 = cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2
        free = (x0 >= 0) & (y0 >= 0) & (x1 <= self.w) & (y1 <= self.h)
        if placed and free.any():
            b = np.array(placed)  # Box.overlaps with a 1 px gap
            clear = ((x1[:, None] + 1.0 <= b[None, :, 0]) | (b[None, :, 2] + 1.0 <= x0[:, None])
                     | (y1[:, None] + 1.0 <= b[None, :, 1]) | (b[None, :, 3] + 1.0 <= y0[:, None]))
            free &= clear.all(axis=1)
        if not free.any():
            return None
        k = int(np.argmax(free))
        return Box(float(x0[k]), float(y0[k]), float(x1[k]), float(y1[k]), text), k >= len(_DIRECTIONS)

    def place(self, text: str, anchor, colour) -> Box | None:
        """Place one label near anchor (pixels) and draw it; None when there is no free spot."""
        import cv2

        if not np.all(np.isfinite(np.asarray(anchor, float))):
            return None
        found = self._spot(text, anchor)
        if found is None:
            self.left_out.append(text)
            return None
        box, leader = found
        if leader:
            near = (min(max(anchor[0], box.x0), box.x1), min(max(anchor[1], box.y0), box.y1))
            cv2.line(self.img, _pt(anchor), _pt(near), opaque(self.img, BLACK), self.thick + 2, cv2.LINE_AA)
            cv2.line(self.img, _pt(anchor), _pt(near), opaque(self.img, colour), max(1, self.thick // 2), cv2.LINE_AA)
        b, g, r = colour[:3]
        self._panel(box, light=0.299 * r + 0.587 * g + 0.114 * b < 110)  # dark ink on a light plate
        _, th, _ = self.size(text)
        put_text(self.img, text, (int(box.x0 + self.pad), int(box.y0 + self.pad + th)), self.scale, colour, self.thick)
        self.boxes.append(box)
        return box

    def _panel(self, box: Box, alpha: float = 0.62, light: bool = False) -> None:
        """A see-through plate under text (dark, or light for dark ink), so it reads on any background."""
        x0, y0, x1, y1 = (int(round(v)) for v in (box.x0, box.y0, box.x1, box.y1))
        x0, y0, x1, y1 = max(0, x0), max(0, y0), min(self.w, x1), min(self.h, y1)
        if x1 > x0 and y1 > y0:
            see_through(self.img[y0:y1, x0:x1], alpha, light)

    def legend(self, entries: list[tuple[str, tuple[int, int, int]]], corner: str = "bottom-left") -> Box | None:
        """A key for the lines and colours: a swatch and words per entry, in a corner."""
        import cv2

        if not entries:
            return None
        scale = self.scale * 0.75
        sizes = [self.size(words, scale) for words, _ in entries]
        row = max(th + base for _, th, base in sizes) + self.pad
        swatch = int(row * 1.2)
        bw = max(tw for tw, _, _ in sizes) + swatch + 3 * self.pad
        bh = row * len(entries) + self.pad
        m = self.pad * 2
        x0 = m if corner.endswith("left") else self.w - bw - m
        y0 = self.h - bh - m if corner.startswith("bottom") else m
        box = Box(x0, y0, x0 + bw, y0 + bh, "legend", kind="legend")
        self._panel(box, 0.7)
        for i, (words, colour) in enumerate(entries):
            y = int(y0 + self.pad + row * (i + 1) - self.pad - sizes[i][2])
            cv2.line(self.img, (int(x0 + self.pad), y - row // 3), (int(x0 + self.pad + swatch), y - row // 3),
                     opaque(self.img, colour), max(2, self.thick + 1), cv2.LINE_AA)
            put_text(self.img, words, (int(x0 + 2 * self.pad + swatch), y), scale, (255, 255, 255), max(1, self.thick - 1))
        self.boxes.append(box)
        return box


def legend_strip(w: int, h: int, entries: list[tuple[str, tuple[int, int, int]]], scale: float,
                 ) -> tuple[np.ndarray | None, Box | None]:
    """A strip to go under a (w x h) picture, holding the key of lines and colours, entries side by
    side and wrapped to the picture's width: beside the play area, never over it (a legend in a
    corner hid the Kayak Start tile and Kang's lower rows on a phone). Returns the strip (read-only:
    the same strip is handed out while the key and the picture's size stay) and the legend's box in
    the taller picture (None, None: no entries)."""
    return _legend_strip(w, h, tuple((words, tuple(colour)) for words, colour in entries), scale)


@functools.lru_cache(maxsize=8)
def _legend_strip(w: int, h: int, entries: tuple, scale: float) -> tuple[np.ndarray | None, Box | None]:
    import cv2

    if not entries:
        return None, None
    scale = scale * 0.75
    thick = max(1, int(round(scale * 1.6)))
    pad = max(2, int(round(4 * scale)))
    sizes = [_text_size(words, scale, thick) for words, _ in entries]
    row = max(th + base for _, th, base in sizes) + 2 * pad
    swatch = int(row * 0.9)
    places, x, y = [], pad, 0
    for (words, colour), (tw, th, base) in zip(entries, sizes):
        width = swatch + pad + tw + 3 * pad
        if x > pad and x + width > w:
            x, y = pad, y + row
        places.append((x, y, words, colour, base))
        x += width
    # the taller picture's height a multiple of 4: a page that shrinks it by 2 or 4 (1080p or 4K to
    # 960 px) then takes OpenCV's fast area path (1080p: 0.7 ms instead of 6 ms a frame)
    height = y + row + pad
    strip = np.full((height + (-(h + height)) % 4, w, 3), 24, np.uint8)
    for x, y, words, colour, base in places:
        mid = y + row // 2
        cv2.line(strip, (x, mid), (x + swatch, mid), colour, max(2, thick + 1), cv2.LINE_AA)
        cv2.putText(strip, words, (x + swatch + pad, y + row - pad - base), cv2.FONT_HERSHEY_SIMPLEX, scale,
                    (255, 255, 255), thick, cv2.LINE_AA)
    strip.flags.writeable = False
    return strip, Box(0, h, w, h + strip.shape[0], "legend", kind="legend")


def _pt(p) -> tuple[int, int]:
    return int(round(float(p[0]))), int(round(float(p[1])))


def overlapping(boxes: list[Box]) -> list[tuple[Box, Box]]:
    """Every pair of boxes that overlap (an empty list: all labels are readable)."""
    return [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:] if a.overlaps(b)]
