"""Phantom guard: a sticker read inside a grid of other systems' markers is not a sticker.

ChArUco boards, AprilTag and ArUco grids are rows of dark squares of one size, a third to one
side apart. Blurred, a 4x4 or 6x6 marker can read as a refcam code (a real endoscope photo of a
small 4x4 ChArUco board gave `tornado/card-3-01`; synthetic boards under blur gave 1-3 phantom
pieces a table, all from the second pass's soft read: tests/bench/robust_heldout.py). A refcam
sticker never sits in such a grid: stickers of one piece are at least 3 sides apart (catalog),
each has its white quiet zone, and stickers of neighbouring pieces are decoded refcam stickers,
not foreign squares. So a detection with FOREIGN_GRID_MIN_NEIGHBOURS or more dark squares of
about its size close around it that are NOT refcam stickers (candidates the detector could not
read, or ids the catalog does not list) is dropped.
"""

from __future__ import annotations

import numpy as np

FOREIGN_GRID_RADIUS_SIDES = 2.2  # ChArUco's diagonal neighbours: 1.9 marker sides; grids: 1.3
FOREIGN_GRID_SIZE_RATIO = 1.4  # a neighbour this much smaller is not of its grid
# ... or this much larger: a ChArUco board's chess squares are 1.25-2x its markers' side (OpenCV's
# default 0.75; blurred, the detector's outline of a black square reads up to ~1.5x)
FOREIGN_GRID_LARGER = 1.7
FOREIGN_GRID_MIN_NEIGHBOURS = 2
SAME_PLACE_SIDES = 0.6  # a candidate this close to a detection is that detection (or its quiet zone)
FOREIGN_GRID_ASPECT = 1.3  # a neighbour's side ratio within this factor of the detection's
FOREIGN_GRID_DARKER = 0.25  # its border ring at most this share of the detection's contrast lighter
# and its own margin at least this share of the detection's contrast above its border: a marker
# has a white margin; a printed dark area (a purple Tornado card around a small blurred boat
# sticker, both grey ~100: default bench seed 29, defocus 1 px) has none
FOREIGN_GRID_CONTRAST = 0.5


def _centres_sides(quads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    q = np.asarray(quads, dtype=np.float64).reshape(-1, 4, 2)
    return q.mean(axis=1), np.linalg.norm(q - q[:, [1, 2, 3, 0]], axis=2).mean(axis=1)


def _aspect(quads: np.ndarray) -> np.ndarray:
    q = np.asarray(quads, dtype=np.float64).reshape(-1, 4, 2)
    sides = np.linalg.norm(q - q[:, [1, 2, 3, 0]], axis=2)
    ratio = (sides[:, 0] + sides[:, 2]) / np.maximum(sides[:, 1] + sides[:, 3], 1e-9)
    return np.maximum(ratio, 1.0 / np.maximum(ratio, 1e-9))  # corner order (which side is first) aside


def foreign_grid_neighbours(detected: np.ndarray, unread: np.ndarray, detected_levels: np.ndarray,
                            unread_levels: np.ndarray) -> np.ndarray:
    """(n,) for each detected quad (n, 4, 2): how many distinct unread quads (m, 4, 2: candidates
    the detector could not decode, or markers of ids the catalog does not list) like it lie within
    FOREIGN_GRID_RADIUS_SIDES of it, not counting any that coincide with a detection. levels:
    (k, 2) grey of each quad's border ring and of the ring just outside it (its quiet zone)."""
    n = len(detected)
    if not n or not len(unread):
        return np.zeros(n, dtype=int)
    cd, sd = _centres_sides(detected)
    cu, su = _centres_sides(unread)
    keep = may_neighbour(detected, unread)
    keep[keep] = _distinct(cu[keep], su[keep])
    if not keep.any():
        return np.zeros(n, dtype=int)
    cu, su, au = cu[keep], su[keep], _aspect(unread)[keep]
    dark_u, light_u = np.asarray(unread_levels)[keep, 0], np.asarray(unread_levels)[keep, 1]
    dark_d, light_d = np.asarray(detected_levels)[:, 0], np.asarray(detected_levels)[:, 1]
    contrast_d = np.maximum(light_d - dark_d, 0.0)
    dist = np.linalg.norm(cd[:, None, :] - cu[None, :, :], axis=2)  # (n, m)
    ratio = su[None, :] / np.maximum(sd[:, None], 1e-9)
    shape = np.abs(np.log(au[None, :] / _aspect(detected)[:, None])) <= np.log(FOREIGN_GRID_ASPECT)
    with np.errstate(invalid="ignore"):
        inked = (dark_u[None, :] <= (dark_d + FOREIGN_GRID_DARKER * contrast_d)[:, None]) \
            & ((light_u - dark_u)[None, :] >= FOREIGN_GRID_CONTRAST * contrast_d[:, None])
    near = (dist <= FOREIGN_GRID_RADIUS_SIDES * sd[:, None]) & (ratio <= FOREIGN_GRID_LARGER) \
        & (ratio >= 1.0 / FOREIGN_GRID_SIZE_RATIO) & shape & inked
    return near.sum(axis=1)


def may_neighbour(detected: np.ndarray, unread: np.ndarray) -> np.ndarray:
    """(m,) bool: which unread quads can count as a neighbour of some detected quad (each on its own:
    near a detection, but not at its place). The others need no levels measured (a noisy frame
    has thousands of candidates)."""
    if not len(detected) or not len(unread):
        return np.zeros(len(unread), dtype=bool)
    cd, sd = _centres_sides(detected)
    cu, _ = _centres_sides(unread)
    d_all = np.linalg.norm(cu[:, None, :] - cd[None, :, :], axis=2)
    # an unread candidate at a detection's place is its outline or quiet zone, not a neighbour
    keep = ~(d_all < SAME_PLACE_SIDES * sd[None, :]).any(axis=1)
    return keep & (d_all <= FOREIGN_GRID_RADIUS_SIDES * sd[None, :]).any(axis=1)


def _distinct(centres: np.ndarray, sides: np.ndarray) -> np.ndarray:
    """(m,) bool, one candidate per place: the detector returns a square several times (threshold
    windows). Largest first, a candidate is kept unless a kept one lies within half the smaller
    side of it. The clashes are found for all pairs at once; only candidates that clash with a
    larger one (a few per place) are decided in order."""
    m = len(centres)
    order = np.argsort(-sides)
    c, s = centres[order], sides[order]
    dist = np.sqrt(((c[:, None, :] - c[None, :, :]) ** 2).sum(axis=2))
    clash = np.tril(dist < 0.5 * np.minimum(s[:, None], s[None, :]), k=-1)  # with an earlier (larger) one
    kept = np.ones(m, dtype=bool)
    for i in np.flatnonzero(clash.any(axis=1)):
        kept[i] = not (clash[i, :i] & kept[:i]).any()
    out = np.zeros(m, dtype=bool)
    out[order[kept]] = True
    return out


def in_foreign_grid(detected: np.ndarray, unread: np.ndarray, detected_levels: np.ndarray,
                    unread_levels: np.ndarray) -> np.ndarray:
    """(n,) bool: which detected quads sit in a grid of foreign markers (module docstring)."""
    return foreign_grid_neighbours(detected, unread, detected_levels, unread_levels) >= FOREIGN_GRID_MIN_NEIGHBOURS
