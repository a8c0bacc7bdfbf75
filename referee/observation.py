"""What vision hands to the referee: piece poses in the game frame, in mm.

Plain frozen values with a JSON form matching SPEC section 4 (``observe --json``).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any

from .catalog import json_ready
from .errors import InvalidInputError


@dataclass(frozen=True)
class PiecePose:
    """One piece seen on the table.

    x_mm, y_mm: the piece's reference point in the game frame; theta_deg: its +x
    direction (CCW from the game +x); z_mm: the sticker height used for the
    parallax correction; sigma_mm: standard uncertainty of the position (per
    axis, isotropic); sigma_theta_deg: standard uncertainty of theta.
    """

    name: str
    marker_ids: tuple[int, ...]
    x_mm: float
    y_mm: float
    theta_deg: float
    z_mm: float
    sigma_mm: float
    sigma_theta_deg: float = 0.0
    face: str | None = None  # which sticker slot(s) showed, e.g. "front", "A", "face-down"
    size_px: float = 0.0  # smallest visible sticker side in pixels

    def to_json(self) -> dict:
        d = asdict(self)
        d["marker_ids"] = list(self.marker_ids)
        return json_ready(d)

    @classmethod
    def from_json(cls, d: dict) -> "PiecePose":
        try:
            pose = cls(name=str(d["name"]), marker_ids=tuple(int(i) for i in d.get("marker_ids", ())),
                       x_mm=float(d["x_mm"]), y_mm=float(d["y_mm"]), theta_deg=float(d.get("theta_deg", 0.0)),
                       z_mm=float(d.get("z_mm", 0.0)), sigma_mm=float(d.get("sigma_mm", 0.0)),
                       sigma_theta_deg=float(d.get("sigma_theta_deg", 0.0)), face=d.get("face"),
                       size_px=float(d.get("size_px", 0.0)))
        except KeyError as exc:
            raise InvalidInputError(f"piece entry {json.dumps(d)[:80]} has no {exc.args[0]!r}") from None
        except (TypeError, ValueError, AttributeError) as exc:
            raise InvalidInputError(f"malformed piece entry {json.dumps(d)[:80]}: {exc}") from None
        # a NaN position would silently fall outside every zone; a negative sigma would narrow every band
        for key in ("x_mm", "y_mm", "theta_deg", "z_mm", "sigma_mm", "sigma_theta_deg"):
            value = getattr(pose, key)
            if not math.isfinite(value) or (key.startswith("sigma") and value < 0):
                raise InvalidInputError(f"piece {pose.name!r}: {key} {value} must be a finite number"
                                        + (" >= 0" if key.startswith("sigma") else ""))
        return pose


@dataclass(frozen=True)
class Observation:
    """Everything one image tells: pieces, the frame they are expressed in, and caveats."""

    pieces: tuple[PiecePose, ...]
    frame: dict = field(default_factory=dict)
    unknown_markers: tuple[int, ...] = ()
    warnings: tuple[str, ...] = ()
    game: str | None = None
    image_size: tuple[int, int] | None = None
    extra: dict = field(default_factory=dict, hash=False, compare=False)

    def piece(self, name: str) -> PiecePose | None:
        for p in self.pieces:
            if p.name == name:
                return p
        return None

    def names(self) -> list[str]:
        return [p.name for p in self.pieces]

    def to_json(self) -> dict:
        d = {
            "game": self.game,
            "image_size": list(self.image_size) if self.image_size else None,
            "frame": self.frame,
            "pieces": [p.to_json() for p in self.pieces],
            "unknown_markers": list(self.unknown_markers),
            "warnings": list(self.warnings),
        }
        d.update(self.extra)
        return json_ready(d)

    @classmethod
    def from_json(cls, d: dict) -> "Observation":
        if not isinstance(d, dict) or not isinstance(d.get("pieces"), list):
            raise InvalidInputError("observation document needs a 'pieces' list")
        for key, kind in (("warnings", list), ("unknown_markers", list), ("frame", dict)):
            if d.get(key) is not None and not isinstance(d[key], kind):
                raise InvalidInputError(f"observation {key!r} must be a JSON {'list' if kind is list else 'object'}, "
                                        f"got {json.dumps(d[key])[:40]}")
        known = {"game", "image_size", "frame", "pieces", "unknown_markers", "warnings"}
        size = d.get("image_size")
        return cls(pieces=tuple(PiecePose.from_json(p) for p in d["pieces"]), frame=d.get("frame") or {},
                   unknown_markers=tuple(int(i) for i in d.get("unknown_markers", ())),
                   warnings=tuple(str(w) for w in d.get("warnings", ())), game=d.get("game"),
                   image_size=tuple(size) if size else None,
                   extra={k: v for k, v in d.items() if k not in known})
