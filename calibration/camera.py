"""The camera file (SPEC section 4) and the pinhole + radial-tangential model.

JSON: {"image_size": [w, h], "camera_matrix": 3x3 rows, "dist_coeffs": [k1, k2, p1, p2, k3],
"model": "pinhole-radtan", "rms_px": float}; extra keys are kept.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from referee import safeload
from referee.errors import InvalidInputError

MODEL = "pinhole-radtan"
MAX_IMAGE_SIDE_PX = 100_000
MAX_FOCAL_SIDES = 100  # fx up to 100x the image side: a 0.6 deg field of view, far beyond any webcam lens
MIN_FOCAL_SIDES = 0.01  # fx at least 1/100 of the image side: a 178 deg field of view (fy 5e-324 broke the pose)
MAX_DIST_COEFF = 1e4  # rational/radtan fits of wide lenses reach a few hundred
MAX_RMS_PX = 1e4


class CameraFileError(InvalidInputError):
    """The camera file is unreadable, malformed, or does not fit the image."""


@dataclass(frozen=True)
class CameraModel:
    image_size: tuple[int, int]  # (w, h) in pixels
    camera_matrix: tuple[tuple[float, float, float], ...]  # 3x3 rows
    dist_coeffs: tuple[float, ...]  # k1, k2, p1, p2, k3
    rms_px: float = 0.0
    model: str = MODEL
    extra: dict = field(default_factory=dict, hash=False, compare=False)
    source: str = field(default="camera file", compare=False, repr=False)  # names the file in messages

    @property
    def K(self) -> np.ndarray:
        """(3, 3) float64 camera matrix."""
        return np.array(self.camera_matrix, dtype=np.float64)

    @property
    def dist(self) -> np.ndarray:
        """(5,) float64 distortion coefficients."""
        return np.array(self.dist_coeffs, dtype=np.float64)

    @classmethod
    def from_intrinsics(cls, image_size, fx, fy, cx, cy, dist=(0, 0, 0, 0, 0), rms_px=0.0) -> "CameraModel":
        return cls(image_size=(int(image_size[0]), int(image_size[1])),
                   camera_matrix=((float(fx), 0.0, float(cx)), (0.0, float(fy), float(cy)), (0.0, 0.0, 1.0)),
                   dist_coeffs=tuple(float(d) for d in dist), rms_px=float(rms_px))

    def to_json(self) -> dict:
        d = dict(self.extra)
        d.update({"image_size": list(self.image_size), "camera_matrix": [list(r) for r in self.camera_matrix],
                  "dist_coeffs": list(self.dist_coeffs), "model": self.model, "rms_px": self.rms_px})
        return d

    @classmethod
    def from_json(cls, d: object, source: str = "camera file") -> "CameraModel":
        """Validate a camera document: shapes, finite numbers, and ranges a real camera can have
        (cx 9.6e302 or rms_px [1] used to end in a traceback deep in the table pose)."""
        d = safeload.mapping(d, source, CameraFileError)
        for key in ("image_size", "camera_matrix", "dist_coeffs"):
            if key not in d:
                raise CameraFileError(f"{source}: missing key {key!r}")
        size = d["image_size"]
        if (not isinstance(size, list) or len(size) != 2
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v <= MAX_IMAGE_SIDE_PX
                           and v == int(v) for v in size)):
            raise CameraFileError(f"{source}: image_size must be [w, h] in pixels "
                                  f"(1 to {MAX_IMAGE_SIDE_PX}), got {safeload.show(size)}")
        w, h = int(size[0]), int(size[1])
        K = d["camera_matrix"]
        if not isinstance(K, list) or len(K) != 3 or not all(isinstance(r, list) and len(r) == 3 for r in K):
            raise CameraFileError(f"{source}: camera_matrix must be 3x3, got {safeload.show(K)}")
        Km = [safeload.numbers(r, 3, f"{source}: camera_matrix row {i}", CameraFileError) for i, r in enumerate(K)]
        dist = d["dist_coeffs"]
        if not isinstance(dist, list) or len(dist) not in (4, 5, 8):
            count = len(dist) if isinstance(dist, list) else safeload.show(dist)
            raise CameraFileError(f"{source}: dist_coeffs must have 5 values (k1, k2, p1, p2, k3), got {count}")
        dm = safeload.numbers(dist, len(dist), f"{source}: dist_coeffs", CameraFileError,
                              lo=-MAX_DIST_COEFF, hi=MAX_DIST_COEFF)
        if Km[0][0] <= 0 or Km[1][1] <= 0 or abs(Km[2][2] - 1) > 1e-9 or Km[2][0] or Km[2][1]:
            raise CameraFileError(f"{source}: camera_matrix is not a pinhole matrix [[fx,0,cx],[0,fy,cy],[0,0,1]]")
        limit = MAX_FOCAL_SIDES * max(w, h)
        shortest = MIN_FOCAL_SIDES * max(w, h)
        safeload.number(Km[0][0], f"{source}: fx", CameraFileError, lo=shortest, hi=limit)
        safeload.number(Km[1][1], f"{source}: fy", CameraFileError, lo=shortest, hi=limit)
        safeload.number(Km[0][1], f"{source}: skew", CameraFileError, lo=-limit, hi=limit)
        safeload.number(Km[0][2], f"{source}: cx", CameraFileError, lo=-w, hi=2 * w)
        safeload.number(Km[1][2], f"{source}: cy", CameraFileError, lo=-h, hi=2 * h)
        model = d.get("model", MODEL)
        if model != MODEL:
            raise CameraFileError(f"{source}: unsupported model {safeload.show(model)} (refcam reads {MODEL!r})")
        rms = safeload.optional(d, "rms_px", safeload.number, f"{source}: rms_px", CameraFileError,
                                lo=0, hi=MAX_RMS_PX, default=0.0)
        if len(dm) == 4:
            dm.append(0.0)
        extra = {k: v for k, v in d.items() if k not in ("image_size", "camera_matrix", "dist_coeffs", "model", "rms_px")}
        return cls(image_size=(w, h), camera_matrix=tuple(tuple(float(v) for v in r) for r in Km),
                   dist_coeffs=tuple(float(v) for v in dm), rms_px=rms, model=model, extra=extra)

    @classmethod
    def load(cls, path: str | Path) -> "CameraModel":
        path = Path(path)
        data = safeload.load_json(path, "camera file", CameraFileError)
        source = f"camera file {path}"
        return replace(cls.from_json(data, source=source), source=source)

    def save(self, path: str | Path) -> None:
        safeload.write_text(path, json.dumps(self.to_json(), indent=2) + "\n", "camera file", CameraFileError)

    def check_image_size(self, width: int, height: int, source: str | None = None) -> "CameraModel":
        """Refuse a camera file made for another resolution: a webcam's modes may crop, so no rescaling."""
        source = source or self.source
        if tuple(self.image_size) != (width, height):
            w0, h0 = self.image_size
            raise CameraFileError(f"{source} is for {w0}x{h0} images but the image is {width}x{height}")
        return self
