"""The camera file (SPEC section 4) and the pinhole + radial-tangential model.

JSON: {"image_size": [w, h], "camera_matrix": 3x3 rows, "dist_coeffs": [k1, k2, p1, p2, k3],
"model": "pinhole-radtan", "rms_px": float}; extra keys are kept.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from referee.errors import InvalidInputError

MODEL = "pinhole-radtan"


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
        if not isinstance(d, dict):
            raise CameraFileError(f"{source}: expected a JSON object")
        try:
            size = d["image_size"]
            K = d["camera_matrix"]
            dist = d["dist_coeffs"]
        except KeyError as exc:
            raise CameraFileError(f"{source}: missing key {exc.args[0]!r}") from None
        if (not isinstance(size, list) or len(size) != 2
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < math.inf
                           and v == int(v) for v in size)):
            raise CameraFileError(f"{source}: image_size must be [w, h] in pixels, got {json.dumps(size)}")
        try:
            Km = np.array(K, dtype=np.float64)
            dm = np.array(dist, dtype=np.float64).ravel()
        except (TypeError, ValueError):
            raise CameraFileError(f"{source}: camera_matrix and dist_coeffs must be numbers") from None
        if Km.shape != (3, 3):
            raise CameraFileError(f"{source}: camera_matrix must be 3x3, got shape {Km.shape}")
        if dm.shape not in ((4,), (5,), (8,)):
            raise CameraFileError(f"{source}: dist_coeffs must have 5 values (k1, k2, p1, p2, k3), got {dm.size}")
        if not np.all(np.isfinite(Km)) or not np.all(np.isfinite(dm)):
            raise CameraFileError(f"{source}: camera values must be finite")
        if Km[0, 0] <= 0 or Km[1, 1] <= 0 or abs(Km[2, 2] - 1) > 1e-9 or Km[2, 0] or Km[2, 1]:
            raise CameraFileError(f"{source}: camera_matrix is not a pinhole matrix [[fx,0,cx],[0,fy,cy],[0,0,1]]")
        model = d.get("model", MODEL)
        if model != MODEL:
            raise CameraFileError(f"{source}: unsupported model {model!r} (refcam reads {MODEL!r})")
        if dm.size == 4:
            dm = np.append(dm, 0.0)
        extra = {k: v for k, v in d.items() if k not in ("image_size", "camera_matrix", "dist_coeffs", "model", "rms_px")}
        return cls(image_size=(int(size[0]), int(size[1])), camera_matrix=tuple(tuple(r) for r in Km.tolist()),
                   dist_coeffs=tuple(dm.tolist()), rms_px=float(d.get("rms_px", 0.0) or 0.0), model=model, extra=extra)

    @classmethod
    def load(cls, path: str | Path) -> "CameraModel":
        path = Path(path)
        try:
            text = path.read_text()
        except OSError as exc:
            raise CameraFileError(f"cannot read camera file {path}: {exc.strerror or exc}") from None
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise CameraFileError(f"camera file {path} is not JSON") from None
        source = f"camera file {path}"
        return replace(cls.from_json(data, source=source), source=source)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=2) + "\n")

    def check_image_size(self, width: int, height: int, source: str | None = None) -> "CameraModel":
        """Refuse a camera file made for another resolution: a webcam's modes may crop, so no rescaling."""
        source = source or self.source
        if tuple(self.image_size) != (width, height):
            w0, h0 = self.image_size
            raise CameraFileError(f"{source} is for {w0}x{h0} images but the image is {width}x{height}")
        return self
