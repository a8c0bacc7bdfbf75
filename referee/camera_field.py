"""The camera's error as one field over the table, evaluated where a ruling needs it.

Every piece is read through one camera whose pose the plane fit knows only so well. Moving that
camera by one standard deviation along a principal direction of its uncertainty moves where every
table point is read: one displacement field per direction, smooth over the table, and the
directions independent. Two places read through the same camera are moved by the same field, so
what a comparison of them is uncertain by is the difference of the field's values, not the sum of
two independent errors (a turn or a shift of the whole camera moves a boat and the line it is
measured to alike, and cancels).

The vision side (vision.camera_field.camera_field) hands over the camera as a 3x4 projection of
game-frame mm to pixels, and the moved cameras; this module only evaluates them, on plain values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

Matrix34 = tuple[tuple[float, ...], ...]
# the camera's uncertain parameters: its turn (3), place (3) and focal length: one direction each
MAX_DIRECTIONS = 7


def _plane_homography(P: Matrix34, z: float) -> list[list[float]]:
    """The 3x3 map of the plane at height z (x, y, 1) to homogeneous pixels."""
    return [[row[0], row[1], z * row[2] + row[3]] for row in P]


def _apply(H, x: float, y: float) -> tuple[float, float, float]:
    return tuple(h[0] * x + h[1] * y + h[2] for h in H)


def _det3(m) -> float:
    (a, b, c), (d, e, f), (g, h, i) = m
    return a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)


def _solve3(H, v) -> tuple[float, float, float] | None:
    """H^-1 v by Cramer's rule; None when H is singular (a camera that sees the plane edge on)."""
    det = _det3(H)
    if abs(det) < 1e-300:
        return None
    return tuple(_det3([[v[r] if c == k else H[r][c] for c in range(3)] for r in range(3)]) / det for k in range(3))


@dataclass(frozen=True)
class CameraField:
    """Observation.frame['camera_field']: camera, the 3x4 projection game mm -> pixels; moved, the
    same camera one standard deviation along each principal direction of its uncertainty."""

    camera: Matrix34
    moved: tuple[Matrix34, ...]

    @classmethod
    def from_frame(cls, frame: dict) -> "CameraField | None":
        """The field an Observation's frame carries; None when it carries none, or a malformed one
        (an observation from an older refcam, or hand-written: the comparison then uses its bound)."""
        data = frame.get("camera_field") if isinstance(frame, dict) else None
        try:
            if len(data["moved"]) > MAX_DIRECTIONS:  # a document that is not refcam's: not worth reading
                return None
            camera = _matrix34(data["camera"])
            moved = tuple(_matrix34(m) for m in data["moved"])
        except (KeyError, TypeError, ValueError):
            return None
        return cls(camera, moved) if moved else None

    def shifts(self, x: float, y: float, z: float) -> tuple[tuple[float, float], ...]:
        """Where the point (x, y) at height z (mm) is read under each moved camera, less (x, y): one
        (dx, dy) per direction, each one standard deviation of it."""
        pixel = _apply(_plane_homography(self.camera, z), x, y)
        out = []
        for P in self.moved:
            read = _solve3(_plane_homography(P, z), pixel)
            if read is None or abs(read[2]) < 1e-300:
                out.append((0.0, 0.0))
                continue
            out.append((read[0] / read[2] - x, read[1] / read[2] - y))
        return tuple(out)


def _matrix34(rows) -> Matrix34:
    out = tuple(tuple(float(v) for v in row) for row in rows)
    if len(out) != 3 or any(len(r) != 4 or not all(map(math.isfinite, r)) for r in out):
        raise ValueError("a camera is a 3x4 matrix of finite numbers")
    return out
