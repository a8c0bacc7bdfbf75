"""Printed targets of other systems, to lay on a rendered table or show alone: ChArUco boards
(4x4 and 6x6 dictionaries), grids of AprilTags and of 4x4 or original-ArUco markers, and a
chessboard. None of their markers is a refcam sticker: the phantom checks in
tests/bench/robust.py and tests/test_phantom_guard.py count what refcam reads on them.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

# kind -> (dictionary name or None for the chessboard, squares across, squares down, ChArUco?)
BOARD_KINDS = {
    "charuco-4x4": ("DICT_4X4_250", 5, 4, True),
    "charuco-4x4-small": ("DICT_4X4_50", 4, 3, True),
    "charuco-6x6": ("DICT_6X6_250", 6, 4, True),
    "apriltag-36h11": ("DICT_APRILTAG_36h11", 4, 3, False),
    "apriltag-25h9": ("DICT_APRILTAG_25h9", 4, 3, False),
    "aruco-4x4-grid": ("DICT_4X4_1000", 5, 4, False),
    "aruco-original-grid": ("DICT_ARUCO_ORIGINAL", 4, 3, False),
    "chessboard": (None, 8, 6, False),
}
PAPER_GREY = 238
INK_GREY = 26


@lru_cache(maxsize=64)
def board_image(kind: str, seed: int, width_px: int) -> np.ndarray:
    """(h, w, 3) BGR picture of a board of `kind` about width_px wide, its marker ids drawn
    from `seed` (a white margin of half a square around it)."""
    import cv2

    dict_name, nx, ny, charuco = BOARD_KINDS[kind]
    square = max(8, width_px // (nx + 1))
    w, h = square * (nx + 1), square * (ny + 1)
    if dict_name is None:
        cells = (np.indices((ny, nx)).sum(axis=0) % 2 == 0).astype(np.uint8)
        grey = np.kron(1 - cells, np.ones((square, square), np.uint8)) * 255
        grey = cv2.copyMakeBorder(grey, square // 2, square // 2, square // 2, square // 2, cv2.BORDER_CONSTANT,
                                  value=255)
    else:
        dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, dict_name))
        rng = np.random.default_rng(seed)
        n_markers = (nx * ny + 1) // 2 if charuco else nx * ny
        ids = rng.choice(dictionary.bytesList.shape[0], size=n_markers, replace=False).astype(np.int32)
        if charuco:
            board = cv2.aruco.CharucoBoard((nx, ny), 1.0, 0.75, dictionary, ids)
        else:
            board = cv2.aruco.GridBoard((nx, ny), 1.0, 0.3, dictionary, ids)
        # drawn at 100 px a square (OpenCV's generateImage fails on some small sizes), then shrunk
        big = board.generateImage((100 * (nx + 1), 100 * (ny + 1)), marginSize=50)
        grey = cv2.resize(big, (w, h), interpolation=cv2.INTER_AREA)
    level = INK_GREY + (PAPER_GREY - INK_GREY) * (grey.astype(np.float32) / 255.0)
    return np.ascontiguousarray(np.repeat(level.round().astype(np.uint8)[:, :, None], 3, axis=2))
