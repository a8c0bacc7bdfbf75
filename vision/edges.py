"""Edge-line corner refinement for many stickers at once (detect's corner fit, batched).

The fit itself is described in refine_edges. Run one sticker at a time it cost ~1.2 ms, most
of it numpy's per-call overhead on arrays of a few hundred values (a median, an SVD per
edge, a remap per sticker). Here every sticker of a frame goes through the same calls: the
profiles of all of them are sampled in one cv2.remap, and levels, crossings, blur, line
fits (closed-form 2x2 eigenvector instead of an SVD) and corner intersections are computed
for all edges together. Stickers of similar size share a group, padded to the group's
largest profile grid; padding is masked out, so each sticker's figures are those of the
one-sticker fit (within ~1e-12 px: only the line fit's arithmetic differs).
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from .image_guard import remap

SECOND_ROUND_PX = 0.6  # a first correction larger than this: fit again from the corrected corners (below it,
# the second round moves corners by under 0.008 px: measured on the speed bench's sessions)
MAX_PROFILES = 48  # profiles across each edge at most (1.5 a px below that)
_GROUP_POINTS = 300_000  # profile samples per remap call at most (bounds the memory of a batch)


def refine_corners(gray: np.ndarray, corners: np.ndarray, per_edge: bool = False) -> tuple[np.ndarray, ...]:
    """Edge-line refinement of (m, 4, 2) corner sets TL, TR, BR, BL: ((m, 4, 2) corners, (m,) rms px
    of the edge points about their lines, (m,) blur sigma px), and with per_edge the (m, 4) blur
    sigma px across each edge in the round that gave the corners. A second round runs for the
    stickers whose first correction exceeds SECOND_ROUND_PX, since the edge samples follow
    the guessed edges. A sticker whose edges cannot be measured keeps its corners, rms 0."""
    c0 = np.asarray(corners, dtype=np.float64).reshape(-1, 4, 2)
    c, rms, blur, blur_edges = refine_edges(gray, c0, per_edge=True)
    again = np.flatnonzero((rms > 0) & (np.abs(c - c0).max(axis=(1, 2)) > SECOND_ROUND_PX))
    if len(again):
        c2, rms2, blur2, edges2 = refine_edges(gray, c[again], per_edge=True)
        better = rms2 > 0
        sel = again[better]
        c[sel], rms[sel], blur[sel], blur_edges[sel] = c2[better], rms2[better], blur2[better], edges2[better]
    return (c, rms, blur, blur_edges) if per_edge else (c, rms, blur)


def refine_edges(gray: np.ndarray, corners: np.ndarray, per_edge: bool = False) -> tuple[np.ndarray, ...]:
    """One round of edge-line refinement of (m, 4, 2) corner sets: (corners, rms px, blur sigma px),
    and with per_edge the (m, 4) blur sigma px across each edge (0: not measured).

    Along each edge (between the corners, normal pointing out of the square), intensity
    profiles are sampled across the edge within 3/4 of a cell (the black border is one
    cell wide); each profile's crossing of the level half-way between its black and its
    white gives an edge point. Points near the corners, where blur rounds the square, are
    dropped; a line is fitted to each edge and adjacent lines are intersected.
    """
    c = np.asarray(corners, dtype=np.float64).reshape(-1, 4, 2)
    out, rms, blur = c.copy(), np.zeros(len(c)), np.zeros(len(c))
    blur_edges = np.zeros((len(c), 4))
    if not len(c):
        return (out, rms, blur, blur_edges) if per_edge else (out, rms, blur)
    gray_f = gray if gray.dtype == np.float32 else gray.astype(np.float32)
    edge_vec = c[:, [1, 2, 3, 0]] - c  # edge k runs from corner k to k+1
    lengths = np.linalg.norm(edge_vec, axis=2)
    side = lengths.mean(axis=1)
    usable = np.flatnonzero((side >= 6) & (lengths.min(axis=1) >= 1e-6))
    half_w = np.clip(0.75 * (side / 7.0), 1.5, 6.0)
    n_along = np.clip(side * 1.5, 8, MAX_PROFILES).astype(int)
    n_across = np.ceil(half_w * 4).astype(int) * 2 + 1
    for group in _groups(usable, n_along, n_across):
        got = _fit_group(gray_f, c[group], edge_vec[group], lengths[group], side[group], half_w[group],
                         n_along[group], n_across[group])
        fitted = got[2]
        sel = group[fitted]
        out[sel], rms[sel], blur[sel] = got[0][fitted], got[1][fitted], got[3][fitted]
        blur_edges[sel] = got[4][fitted]
    return (out, rms, blur, blur_edges) if per_edge else (out, rms, blur)


def _groups(usable: np.ndarray, n_along: np.ndarray, n_across: np.ndarray) -> list[np.ndarray]:
    """The usable stickers in groups of similar profile grids (padding at most ~half the work),
    each under _GROUP_POINTS samples."""
    order = usable[np.lexsort((n_along[usable], n_across[usable]))].tolist()
    na, nx = n_along.tolist(), n_across.tolist()
    groups, current, work, top_a, top_x = [], [], 0, 0, 0
    for i in order:
        a, x = max(top_a, na[i]), max(top_x, nx[i])
        padded = (len(current) + 1) * 4 * a * x
        if current and (padded > _GROUP_POINTS or padded > 1.5 * (work + 4 * na[i] * nx[i]) + 4096):
            groups.append(np.array(current))
            current, work, a, x = [], 0, na[i], nx[i]
        current.append(i)
        work += 4 * na[i] * nx[i]
        top_a, top_x = a, x
    if current:
        groups.append(np.array(current))
    return groups


def _padded_linspace(start: np.ndarray, stop: np.ndarray, num: np.ndarray, width: int, first: np.ndarray
                     ) -> np.ndarray:
    """(g, width): row i holds np.linspace(start[i], stop[i], num[i]) (to the bit) in columns
    first[i] .. first[i] + num[i] - 1, and copies of its first and last value on either side."""
    k = np.clip(np.arange(width)[None, :] - first[:, None], 0, (num - 1)[:, None])
    y = k * ((stop - start) / (num - 1))[:, None] + start[:, None]
    return np.where(k == (num - 1)[:, None], stop[:, None], y)


def _fit_group(gray_f, c, edge_vec, lengths, side, half_w, n_along, n_across):
    """refine_edges for one group of stickers: (corners, rms, fitted, blur, blur per edge), all (g, ...).

    The profiles of a group share one grid, centred on the edge. A profile shorter than the
    grid repeats its end samples in the padding, which changes no minimum, maximum or
    crossing, so the padding needs no mask across; along the edge it is masked. The samples
    are held across-the-edge first, (NX, g * 4 * NA): every reduction across a profile is then
    an element-wise one between long rows (the same values as profile by profile, far fewer
    passes over short rows)."""
    g = len(c)
    NA, NX = int(n_along.max()), int(n_across.max())
    centre = NX // 2
    first_x = centre - n_across // 2  # column `centre` is the profile's offset 0
    offsets = _padded_linspace(-half_w, half_w, n_across, NX, first_x)  # (g, NX)
    rows = np.arange(g)
    step = offsets[rows, first_x + 1] - offsets[rows, first_x]
    t = _padded_linspace(np.full(g, 0.05), np.full(g, 0.95), n_along, NA, np.zeros(g, int))  # (g, NA)
    in_edge = np.arange(NA)[None, :] < n_along[:, None]  # (g, NA)
    d = edge_vec / lengths[:, :, None]
    nrm = np.stack([-d[..., 1], d[..., 0]], axis=2)
    mids = c + edge_vec / 2
    flip = np.einsum("gij,gij->gi", nrm, mids - c.mean(axis=1, keepdims=True)) < 0
    nrm[flip] *= -1  # outward
    base = c[:, :, None, :] + t[:, None, :, None] * edge_vec[:, :, None, :]  # (g, 4, NA, 2)
    maps = []
    offsets_t = np.ascontiguousarray(offsets.T)[:, :, None, None]  # (NX, g, 1, 1)
    for axis in (0, 1):  # sample points computed in float64 (as one sticker at a time did), stored float32
        m = np.empty((NX, g, 4, NA), np.float32)
        np.add(base[None, ..., axis], offsets_t * nrm[None, :, :, None, axis], out=m, casting="same_kind")
        maps.append(m.reshape(NX, -1))
    prof = remap(gray_f, maps[0], maps[1], interpolation=cv2.INTER_LINEAR,
                 borderMode=cv2.BORDER_REPLICATE)  # (NX, R), R = g * 4 * NA profiles
    black = prof[:centre].min(axis=0).astype(np.float64).reshape(g, 4, NA)
    white = prof[centre + 1:].max(axis=0).astype(np.float64).reshape(g, 4, NA)
    # one level per edge: under blur the bits behind the black border lift its darkest sample
    # where they are white; a per-profile level would then bend the edge with the bit pattern
    level = masked_median((black + white) / 2.0, in_edge[:, None, :])  # (g, 4)
    lv = np.repeat(_float32_at_or_above(level).ravel(), NA)  # compared in float32, as exactly as in float64
    above = prof >= lv
    cross = above[1:] & ~above[:-1]  # (NX - 1, R): rises through the level between two samples
    mid = np.abs((offsets[:, :-1] + offsets[:, 1:]) / 2)  # (g, NX - 1)
    by_nearness = np.argsort(mid, axis=1, kind="stable")  # columns, the nearest the edge first
    rank = np.argsort(by_nearness, axis=1).astype(np.uint8)  # NX <= 49
    owner = np.repeat(rows, 4 * NA)  # the sticker of each profile
    nearest = np.where(cross, rank.T[:, owner], np.uint8(255)).min(axis=0)  # the crossing nearest the edge
    found = (nearest < 255).reshape(g, 4, NA)
    j = np.where(nearest < 255, by_nearness[owner, np.minimum(nearest, NX - 2)], 0)
    ok = found & ((white - black) > 15) & in_edge[:, None, :]
    r = np.arange(prof.shape[1])
    p0 = prof[j, r].astype(np.float64).reshape(g, 4, NA)
    p1 = prof[j + 1, r].astype(np.float64).reshape(g, 4, NA)
    off_j = offsets[owner, j].reshape(g, 4, NA)
    stp = step[:, None, None]
    pos = off_j + (level[:, :, None] - p0) / np.maximum(p1 - p0, 1e-9) * stp
    # float32 differences: exact for pictures of whole grey levels (bilinear weights are 1/1024ths)
    slope = (prof[1:] - prof[:-1]).max(axis=0).astype(np.float64).reshape(g, 4, NA) / stp
    blur_each = (white - black) / np.maximum(slope, 1e-6) / math.sqrt(2 * math.pi)
    alive = (ok.sum(axis=2) >= np.maximum(4, n_along // 3)[:, None]).all(axis=1)
    blur = np.where(alive, masked_median(blur_each.reshape(g, -1), ok.reshape(g, -1)), 0.0)
    # motion blur is not round: it spreads the edges across its path and leaves the others sharp
    blur_edges = np.where(alive[:, None], np.nan_to_num(masked_median(blur_each, ok)), 0.0)
    # blur rounds the square's corners and pulls the crossing inward near them: keep the
    # edge points further than ~2.5 blur sigmas from either corner
    from_corner = np.minimum(t, 1 - t)[:, None, :] * lengths[:, :, None]
    keep_from = np.minimum(np.maximum(0.1 * lengths, 2.5 * blur[:, None] + 0.5), 0.3 * lengths)
    ok &= from_corner >= keep_from[:, :, None]
    edge_pts = base + pos[..., None] * nrm[:, :, None, :]
    return (*_lines_to_corners(c, edge_pts, ok, alive, side, blur), blur_edges)


def _lines_to_corners(c, edge_pts, ok, alive, side, blur):
    """Fit a line to each edge's points (a robust refit without outliers), intersect adjacent
    edges: (corners, rms, fitted, blur), all per sticker."""
    alive = alive & (ok.sum(axis=2) >= 4).all(axis=1)
    mean, normal, res = _fit_lines(edge_pts, ok)
    absres = np.abs(res)
    spread = masked_median(absres, ok)
    keep = ok & (absres < np.maximum(3 * spread * 1.4826, 0.3)[..., None])
    n_keep, n_ok = keep.sum(axis=2), ok.sum(axis=2)
    refit = (n_keep >= 4) & (n_keep < n_ok)
    used = np.where(refit[..., None], keep, ok)
    if refit.any():
        mean2, normal2, res2 = _fit_lines(edge_pts, used)
        mean = np.where(refit[..., None], mean2, mean)
        normal = np.where(refit[..., None], normal2, normal)
        res = np.where(refit[..., None], res2, res)
    # corner k is where edge k-1 (into it) meets edge k (out of it)
    n1, p1 = normal[:, [3, 0, 1, 2]], mean[:, [3, 0, 1, 2]]  # np.roll(.., 1, axis=1)
    n2, p2 = normal, mean
    det = n1[..., 0] * n2[..., 1] - n1[..., 1] * n2[..., 0]
    b1, b2 = (n1 * p1).sum(axis=2), (n2 * p2).sum(axis=2)
    safe = np.where(np.abs(det) < 1e-9, 1.0, det)
    corners = np.stack([(b1 * n2[..., 1] - b2 * n1[..., 1]) / safe, (n1[..., 0] * b2 - n2[..., 0] * b1) / safe], axis=2)
    near = np.linalg.norm(corners - c, axis=2) <= np.maximum(2.0, 0.25 * side)[:, None]
    alive &= (np.abs(det) >= 1e-9).all(axis=1) & near.all(axis=1)
    n_used = used.sum(axis=(1, 2))
    rms = np.sqrt(np.where(used, res * res, 0.0).sum(axis=(1, 2)) / np.maximum(n_used, 1))
    corners = np.where(alive[:, None, None], corners, c)
    return corners, np.where(alive, rms, 0.0), alive, np.where(alive, blur, 0.0)


def _fit_lines(pts: np.ndarray, mask: np.ndarray):
    """Least-squares lines through the masked points of each edge: (mean (.., 2), unit normal (.., 2),
    signed residuals of every point (.., N)). pts (.., N, 2), mask (.., N)."""
    w = mask[..., None]
    count = np.maximum(mask.sum(axis=-1), 1)[..., None]
    mean = np.where(w, pts, 0.0).sum(axis=-2) / count
    dx = np.where(mask, pts[..., 0] - mean[..., None, 0], 0.0)
    dy = np.where(mask, pts[..., 1] - mean[..., None, 1], 0.0)
    sxx, syy, sxy = (dx * dx).sum(axis=-1), (dy * dy).sum(axis=-1), (dx * dy).sum(axis=-1)
    theta = 0.5 * np.arctan2(2 * sxy, sxx - syy)  # direction of the largest spread: along the edge
    normal = np.stack([-np.sin(theta), np.cos(theta)], axis=-1)
    res = (pts[..., 0] - mean[..., None, 0]) * normal[..., None, 0] + (pts[..., 1] - mean[..., None, 1]) * normal[..., None, 1]
    return mean, normal, res


def _float32_at_or_above(x: np.ndarray) -> np.ndarray:
    """The smallest float32 >= each float64: for a float32 p, p < x and p >= x hold exactly when they
    hold against it."""
    f = x.astype(np.float32)
    return np.where(f.astype(np.float64) < x, np.nextafter(f, np.float32(np.inf)), f)


def masked_median(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """np.median over the last axis of the masked values (NaN where nothing is masked in)."""
    v = np.sort(np.where(mask, values, np.inf), axis=-1)
    k = np.broadcast_to(mask, values.shape).sum(axis=-1)
    lo = np.take_along_axis(v, np.maximum((k - 1) // 2, 0)[..., None], -1)[..., 0]
    hi = np.take_along_axis(v, np.maximum(k // 2, 0)[..., None], -1)[..., 0]
    hi = np.where(k % 2 == 1, lo, hi)
    return np.where(k > 0, (lo + hi) / 2, np.nan)
