"""The explanation picture keeps its text panel readable without blank filler: beside a
tall picture, below a wide short one (an enlarged crop of a few boats)."""

import numpy as np

from referee.game import Explanation, Shape
from webui.photofinish import render_explanation


def _explanation(focus, n_lines: int) -> Explanation:
    shapes = (Shape("line", ((focus[0], focus[1]), (focus[2], focus[3])), role="finish", legend="finish line"),
              Shape("circle", (((focus[0] + focus[2]) / 2, (focus[1] + focus[3]) / 2),), role="piece", radius_mm=20))
    return Explanation(title="boat-2 and boat-5: too close to call", shapes=shapes,
                       lines=tuple(f"line {k}: measured 0.{k} mm, sigma 0.3 mm" for k in range(n_lines)), focus=focus)


def _blank_rows(picture: np.ndarray) -> int:
    """Rows that are entirely black: the filler a panel taller than the picture used to leave."""
    return int(np.sum(np.all(picture.reshape(picture.shape[0], -1) == 0, axis=1)))


def test_a_wide_short_picture_gets_its_panel_below():
    picture, note = render_explanation(_explanation((0.0, 0.0, 1000.0, 80.0), n_lines=12))
    assert note is not None  # no photo: the schematic stands in, and says so
    # the schematic is 1400 px wide and 112 px tall; twelve lines of text cannot fit beside it
    assert picture.shape[1] == 1400, picture.shape
    assert picture.shape[0] > 112 + 12 * 20
    assert _blank_rows(picture) == 0


def test_a_tall_picture_keeps_its_panel_beside():
    picture, _ = render_explanation(_explanation((0.0, 0.0, 600.0, 600.0), n_lines=3))
    assert picture.shape[0] == 1400 and picture.shape[1] > 1400  # the panel to the right
    assert _blank_rows(picture) == 0
