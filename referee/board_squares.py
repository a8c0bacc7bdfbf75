"""Square names on a game's square grid, from the catalog's "grid" entry (SPEC section 2).

Files are letters from the left, rows numbers from the near side: a1 .. f6 on Kang's
6x6 board. Used by the state-only game to say where a piece stands; a game's own rules
engine names its squares itself.
"""

from __future__ import annotations

import math
import string

from .catalog import default_catalog


def square_name(game: str, x_mm: float, y_mm: float) -> str | None:
    """The grid square under a game-frame point, where it is off the grid, or None when
    the game has no grid in the catalog."""
    entry = default_catalog().game(game)
    grid = entry.get("grid")
    if grid is None:
        return None
    a = float(grid["square_mm"])
    files, rows = int(grid["files"]), int(grid["rows"])
    half = float(entry.get("board_half_extent_mm", files * a / 2))
    f = math.floor(x_mm / a + files / 2)
    r = math.floor(y_mm / a + rows / 2)
    if 0 <= f < files and 0 <= r < rows:
        return f"{string.ascii_lowercase[f]}{r + 1}"
    if y_mm < -half:
        return "start zone A"
    if y_mm > half:
        return "start zone B"
    return "off the grid"
