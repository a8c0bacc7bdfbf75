"""The explanation picture ("Settle it", `refcam rank --annotate`), for any game.

A game's Explanation (referee/game.py) is shapes in game-frame mm plus lines of text.
They are drawn on the photo through the observation's image_from_game mapping, or,
without a photo or a mapping, on a top-down schematic of the explanation's focus box;
the text and the colour legend go in a panel beside the picture (below it when the
picture is wide and short).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from referee import safeload
from referee.errors import InvalidInputError
from referee.game import Explanation
from referee.observation import ImageFromGame, Observation
from webui.labels import LabelPlacer
from webui.overlay import PixelMap, _text, draw_shape_lines, legend, place_shape_labels, short_names

SCHEMATIC_WIDTH = 1400
TABLE_GREEN = (70, 110, 60)
PANEL_GREY = 32


def _schematic(explanation: Explanation) -> tuple[np.ndarray, ImageFromGame]:
    """A green table seen from above, framing the focus box (y up)."""
    x0, y0, x1, y1 = explanation.focus or _bounds(explanation)
    s = SCHEMATIC_WIDTH / max(x1 - x0, 1e-6)
    height = int(np.ceil((y1 - y0) * s))
    H = (s, 0.0, -x0 * s, 0.0, -s, y1 * s, 0.0, 0.0, 1.0)
    return np.full((height, SCHEMATIC_WIDTH, 3), TABLE_GREEN, np.uint8), ImageFromGame(H)


def _bounds(explanation: Explanation) -> tuple[float, float, float, float]:
    pts = [p for s in explanation.shapes for p in s.points] or [(-500.0, -500.0), (500.0, 500.0)]
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    return (min(xs) - 100, min(ys) - 100, max(xs) + 100, max(ys) + 100)


def _panel(explanation: Explanation, height: int, unit: float, width: int | None = None) -> np.ndarray:
    rows = [(short_names(explanation.title), (255, 255, 255), 1.1)]
    rows += [(short_names(t), (220, 220, 220), 0.7) for t in explanation.lines]
    rows += [("- " + words, colour, 0.6) for words, colour in legend(explanation.shapes)]
    line_h, fs, th = int(42 * unit), 0.8 * unit, max(1, int(round(2 * unit)))
    panel = np.full((max(height, line_h * (len(rows) + 2)), width or int(640 * unit), 3), PANEL_GREY, np.uint8)
    y = line_h
    for text, colour, scale in rows:
        _text(panel, text, (int(16 * unit), y), fs * scale, colour, th)
        y += int(line_h * max(scale, 0.8))
    return panel


def _crop_window(canvas: np.ndarray, explanation: Explanation, view: PixelMap) -> tuple[int, int, int, int]:
    """The part of the picture around the focus box, (u0, v0, u1, v1) in pixels: all of it when
    the box is not in view; a small box is widened about its centre to a quarter of the
    picture each way (the boats in question, with enough of the course around them to read)."""
    h, w = canvas.shape[:2]
    if explanation.focus is None:
        return 0, 0, w, h
    x0, y0, x1, y1 = explanation.focus
    px = view.project([(x0, y0), (x1, y0), (x1, y1), (x0, y1)])
    if not np.all(np.isfinite(px)):
        return 0, 0, w, h
    lo, hi = np.maximum(px.min(axis=0), 0.0), np.minimum(px.max(axis=0), [w, h])
    if np.any(hi <= lo):  # the box lies outside the picture
        return 0, 0, w, h
    size = np.maximum(hi - lo, [w / 4, h / 4])
    centre = np.clip((lo + hi) / 2, size / 2, [w - size[0] / 2, h - size[1] / 2])
    u0, v0 = (int(v) for v in np.floor(centre - size / 2))
    u1, v1 = (int(v) for v in np.ceil(centre + size / 2))
    return max(0, u0), max(0, v0), min(w, u1), min(h, v1)


class _Cropped:
    """A PixelMap seen through a crop: the same projection, shifted to the crop's corner and
    enlarged with it."""

    def __init__(self, view: PixelMap, u0: int, v0: int, scale: float = 1.0):
        self.view, self.offset, self.scale = view, np.array([u0, v0], dtype=float), scale

    def project(self, points, z_mm: float = 0.0) -> np.ndarray:
        return (self.view.project(points, z_mm) - self.offset) * self.scale


def _enlarged(crop: np.ndarray, full_width: int) -> tuple[np.ndarray, float]:
    """A crop of the boats in question enlarged back towards the picture's width (at most 3x),
    so that it reads beside the panel on a phone; and the factor."""
    import cv2

    scale = min(3.0, full_width / max(1, crop.shape[1]))
    if scale <= 1.05:
        return crop.copy(), 1.0
    size = (int(round(crop.shape[1] * scale)), int(round(crop.shape[0] * scale)))
    return cv2.resize(crop, size, interpolation=cv2.INTER_CUBIC), scale


def render_explanation(explanation: Explanation, image: np.ndarray | None = None,
                       observation: Observation | None = None) -> tuple[np.ndarray, str | None]:
    """The picture (H, W, 3) BGR, and a note when the schematic stood in for the photo."""
    note = None
    mapping = observation.image_from_game if observation is not None else None
    if image is not None and mapping is not None:
        canvas = image.copy()
    else:
        note = ("drawn on a top-down schematic: too few stickers to map the game onto the photo" if image is not None
                else "drawn on a top-down schematic (no photo given)")
        canvas, mapping = _schematic(explanation)
    h, w = canvas.shape[:2]
    unit = max(w, h) / 1400.0  # text and line sizes follow the picture size
    view = PixelMap(mapping, (w, h), unit)
    draw_shape_lines(canvas, explanation.shapes, view, max(1, int(round(2 * unit))))
    u0, v0, u1, v1 = _crop_window(canvas, explanation, view)
    canvas, scale = _enlarged(canvas[v0:v1, u0:u1], w)
    # labels after the crop: sized for the picture as shown, and none cut off at its edges
    place_shape_labels(LabelPlacer(canvas), explanation.shapes, _Cropped(view, u0, v0, scale))
    out = _with_panel(canvas, explanation, unit)
    if note:
        _text(out, note, (int(10 * unit), out.shape[0] - int(14 * unit)), 0.45 * unit, (255, 255, 255),
              max(1, int(round(unit))))
    return out, note


def _with_panel(canvas: np.ndarray, explanation: Explanation, unit: float) -> np.ndarray:
    """The picture with its text panel: beside it, or below it when the picture is wide and
    short (an enlarged crop of a few boats), so no band of blank filler is left under it."""
    h, w = canvas.shape[:2]
    panel = _panel(explanation, h, unit)
    if panel.shape[0] <= h:
        return np.hstack([canvas, panel])
    if w >= panel.shape[1]:
        return np.vstack([canvas, _panel(explanation, 0, unit, width=w)])
    filler = np.full((panel.shape[0] - h, w, 3), PANEL_GREY, np.uint8)  # a narrow picture: the panel's own grey
    return np.hstack([np.vstack([canvas, filler]), panel])


def write_explanation(explanation: Explanation, out_path: str | Path, image: np.ndarray | None = None,
                      observation: Observation | None = None) -> str | None:
    """Render and write the picture (PNG/JPEG by suffix); returns the schematic note, if any."""
    import cv2

    out_path = Path(out_path)
    if out_path.suffix.lower() not in (".png", ".jpg", ".jpeg"):
        raise InvalidInputError(f"--annotate {str(out_path)!r}: use a .png or .jpg file name")
    picture, note = render_explanation(explanation, image, observation)
    ok, buf = cv2.imencode(out_path.suffix.lower(), picture)
    if not ok:
        raise InvalidInputError(f"cannot encode the picture for {str(out_path)!r}")
    safeload.write_bytes(out_path, buf.tobytes(), "--annotate")  # whole or not at all; a full disk names the file
    return note
