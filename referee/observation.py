"""What vision hands to the referee: piece poses in the game frame, in mm.

Plain frozen values with a JSON form matching SPEC section 4 (``observe --json``).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, replace

from . import safeload
from .catalog import json_ready
from .errors import InvalidInputError

MAX_OBSERVED_VALUE = 1e7  # mm, degrees and pixels: a table is a few metres

# How vision words a warning for a piece the game needs that it did not read: vision writes it, a
# game reads it back (the reason says what limits the read, and is no hand in view).
NOT_READ = "needed piece {} not read: "


def not_read_piece(warning: str) -> str | None:
    """The piece a not-read warning (NOT_READ) names, or None for any other warning."""
    head, _, tail = NOT_READ.partition("{}")
    if not warning.startswith(head) or tail not in warning:
        return None
    return warning[len(head):warning.index(tail, len(head))]


def why_not_read(warnings, name: str) -> str:
    """What vision's not-read warning for ``name`` says kept it from being read, or ''."""
    head = NOT_READ.format(name)
    return next((w[len(head):] for w in warnings if w.startswith(head)), "")


def reasons_not_read(warnings, names) -> tuple[tuple[str, str], ...]:
    """(name, why_not_read) of each of these pieces vision's warnings say why it was not read."""
    warnings = tuple(warnings)
    return tuple((n, why) for n in names if (why := why_not_read(warnings, n)))


@dataclass(frozen=True)
class PiecePose:
    """One piece seen on the table.

    x_mm, y_mm: the piece's reference point in the game frame; theta_deg: its +x
    direction (CCW from the game +x); z_mm: the sticker height used for the
    parallax correction; sigma_mm: standard uncertainty of the position (per
    axis, isotropic); sigma_theta_deg: standard uncertainty of theta.

    Both sigmas hold two terms in quadrature: the measurement's (what the picture allows)
    and the stickers' placement (SPEC section 2: stuck by hand, the catalog's tolerance or
    a measured copy's): placement_sigma_mm across the piece's heading,
    placement_sigma_along_mm along it, placement_sigma_deg of the heading. sigma_mm carries
    the larger of the two placement terms, so it holds in every direction; a caller that
    knows its direction can use the placement term along it (placement_toward_mm).

    sigma_frame_mm / sigma_frame_theta_deg: the part of the measurement's term that is the
    reported frame's own uncertainty (where the anchor piece says the origin and axes are).
    Every piece of the picture moves with the frame as one rigid body, so that part cancels
    in every comparison between pieces of one picture (a boat against a boundary line, a
    token against its board); it counts only against the frame itself (another picture, a
    truth in the game frame). within_frame() is the pose without it.

    sigma_camera_mm: the part of the measurement's term, beyond the frame's, that the camera's
    own pose gives the piece and that moves with it (a piece fitted on its own: all of it; one the
    plane fit places: what a hand-stuck copy's placement adds, 0 with exact stickers). The camera's error is one smooth field over the table, so two pieces
    near each other carry nearly the same share of it: Observation.frame['camera_field'] holds that
    field (referee.camera_field: evaluated where a ruling compares two places, and the line between
    them), and Observation.frame['camera_field_gradient'] bounds how much it differs between two
    places, per mm between them, for an observation without it (0 here: none claimed).
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
    placement_sigma_mm: float = 0.0
    placement_sigma_along_mm: float = 0.0
    placement_sigma_deg: float = 0.0
    sigma_frame_mm: float = 0.0
    sigma_frame_theta_deg: float = 0.0
    sigma_camera_mm: float = 0.0
    # the part of placement_sigma_along_mm that every boat measured in one line-up shares (the start
    # gate's own stickers): it cancels between two such boats as far as their measures move alike
    placement_shared_mm: float = 0.0
    # where the pose came from when not from one frame: "fused(8)" is a piece read only in the
    # average of 8 registered frames of a still table (vision/fusion.py); None: seen in a frame
    source: str | None = None

    @property
    def measure_sigma_mm(self) -> float:
        """The measurement's own term of sigma_mm (without the stickers' placement)."""
        bound = max(self.placement_sigma_mm, self.placement_sigma_along_mm)
        return math.sqrt(max(0.0, self.sigma_mm ** 2 - bound ** 2))

    @property
    def measure_sigma_theta_deg(self) -> float:
        return math.sqrt(max(0.0, self.sigma_theta_deg ** 2 - self.placement_sigma_deg ** 2))

    def within_frame(self) -> "PiecePose":
        """The pose as every other piece of the same picture sees it: without the frame's shared
        term (which moves them all together)."""
        if not (self.sigma_frame_mm or self.sigma_frame_theta_deg):
            return self
        return replace(self, sigma_mm=math.sqrt(max(0.0, self.sigma_mm ** 2 - self.sigma_frame_mm ** 2)),
                       sigma_theta_deg=math.sqrt(max(0.0, self.sigma_theta_deg ** 2 - self.sigma_frame_theta_deg ** 2)),
                       sigma_frame_mm=0.0, sigma_frame_theta_deg=0.0)

    def placement_toward_mm(self, direction_deg: float) -> float:
        """The placement term along one direction of the game frame."""
        a = math.radians(direction_deg - self.theta_deg)
        return math.hypot(self.placement_sigma_along_mm * math.cos(a), self.placement_sigma_mm * math.sin(a))

    def sigma_toward_mm(self, direction_deg: float) -> float:
        """Position sigma along one direction: the measurement's and the placement's along it."""
        return math.hypot(self.measure_sigma_mm, self.placement_toward_mm(direction_deg))

    def to_json(self) -> dict:
        d = asdict(self)
        d["marker_ids"] = list(self.marker_ids)
        if self.source is None:  # one frame's piece: the document stays as it always was
            del d["source"]
        if not self.placement_shared_mm:
            del d["placement_shared_mm"]
        # which term limits a call: the picture's (measure) or how the stickers were stuck (placement)
        d["sigma_measure_mm"] = self.measure_sigma_mm
        d["sigma_measure_theta_deg"] = self.measure_sigma_theta_deg
        return json_ready(d)

    @classmethod
    def from_json(cls, d: dict) -> "PiecePose":
        try:
            pose = cls(name=str(d["name"]), marker_ids=tuple(int(i) for i in d.get("marker_ids", ())),
                       x_mm=float(d["x_mm"]), y_mm=float(d["y_mm"]), theta_deg=float(d.get("theta_deg", 0.0)),
                       z_mm=float(d.get("z_mm", 0.0)), sigma_mm=float(d.get("sigma_mm", 0.0)),
                       sigma_theta_deg=float(d.get("sigma_theta_deg", 0.0)), face=d.get("face"),
                       size_px=float(d.get("size_px", 0.0)), source=d.get("source"),
                       placement_sigma_mm=float(d.get("placement_sigma_mm", 0.0)),
                       placement_sigma_along_mm=float(d.get("placement_sigma_along_mm",
                                                            d.get("placement_sigma_mm", 0.0))),
                       placement_sigma_deg=float(d.get("placement_sigma_deg", 0.0)),
                       sigma_frame_mm=float(d.get("sigma_frame_mm", 0.0)),
                       sigma_frame_theta_deg=float(d.get("sigma_frame_theta_deg", 0.0)),
                       sigma_camera_mm=float(d.get("sigma_camera_mm", 0.0)),
                       placement_shared_mm=float(d.get("placement_shared_mm", 0.0)))
        except KeyError as exc:
            raise InvalidInputError(f"piece entry {json.dumps(d)[:80]} has no {exc.args[0]!r}") from None
        except (TypeError, ValueError, AttributeError) as exc:
            raise InvalidInputError(f"malformed piece entry {json.dumps(d)[:80]}: {exc}") from None
        # a NaN position would silently fall outside every zone; a negative sigma would narrow every band
        for key in ("x_mm", "y_mm", "theta_deg", "z_mm", "sigma_mm", "sigma_theta_deg", "size_px",
                    "placement_sigma_mm", "placement_sigma_along_mm", "placement_sigma_deg", "sigma_frame_mm",
                    "sigma_frame_theta_deg", "sigma_camera_mm", "placement_shared_mm"):
            value = getattr(pose, key)
            is_sigma = "sigma" in key
            if not math.isfinite(value) or (is_sigma and value < 0):
                raise InvalidInputError(f"piece {pose.name!r}: {key} {value} must be a finite number"
                                        + (" >= 0" if is_sigma else ""))
            if abs(value) > MAX_OBSERVED_VALUE:  # y_mm 1e308 used to overflow in the geometry
                raise InvalidInputError(f"piece {pose.name!r}: {key} {value:g} is beyond "
                                        f"+-{MAX_OBSERVED_VALUE:g} (a table is a few metres)")
        if "\x00" in pose.name or any(v is not None and not isinstance(v, str) for v in (pose.face, pose.source)):
            raise InvalidInputError(f"piece {pose.name!r}: name, face and source must be text without NUL characters")
        if pose.source is not None and ("\x00" in pose.source or len(pose.source) > 64):
            raise InvalidInputError(f"piece {pose.name!r}: source must be a short text without NUL characters")
        return pose


@dataclass(frozen=True)
class ImageFromGame:
    """How game-frame points (mm) land in the image (pixels): the one mapping vision
    computes for an observation, used by the overlay and the explanation pictures.

    homography: 9 numbers, row-major 3x3, game-frame (x, y, 1) on the table plane -> image
    pixel (lens distortion folded in as well as a homography can). camera: optionally the
    full projection, (K row-major 9, R row-major 9, t 3, dist k1 k2 p1 p2 k3), used for
    points at a height z_mm and to follow lens distortion exactly.
    """

    homography: tuple[float, ...]
    camera: tuple[float, ...] | None = None

    def project(self, points, z_mm: float = 0.0) -> list[tuple[float, float]]:
        """Image pixels (u, v) of game-frame points (x, y) at height z_mm."""
        if self.camera is not None:
            return [_project_camera(self.camera, float(x), float(y), z_mm) for x, y in points]
        h = self.homography
        out = []
        for x, y in points:
            w = h[6] * x + h[7] * y + h[8]
            w = w if abs(w) > 1e-12 else 1e-12
            out.append(((h[0] * x + h[1] * y + h[2]) / w, (h[3] * x + h[4] * y + h[5]) / w))
        return out

    def to_json(self) -> dict:
        # 10 significant digits: a homography's perspective terms are ~1e-5, distortion terms small too
        d = {"homography": [float(f"{v:.10g}") for v in self.homography]}
        if self.camera is not None:
            d["camera"] = [float(f"{v:.10g}") for v in self.camera]
        return d

    @classmethod
    def from_json(cls, d) -> "ImageFromGame | None":
        if not isinstance(d, dict):
            return None
        try:
            hom = tuple(float(v) for v in d["homography"])
            cam = d.get("camera")
            camera = tuple(float(v) for v in cam) if cam is not None else None
        except (KeyError, TypeError, ValueError):
            raise InvalidInputError("observation 'image_from_game' needs a 'homography' of 9 numbers") from None
        if (len(hom) != 9 or (camera is not None and len(camera) != 26)
                or not all(math.isfinite(v) and abs(v) < MAX_OBSERVED_VALUE * 1e6 for v in hom + (camera or ()))):
            raise InvalidInputError("observation 'image_from_game' needs a 'homography' of 9 finite numbers")
        return cls(hom, camera)


# Lens polynomials (k1..k3) are fitted inside the picture; far beyond it (about 63 degrees off the
# axis, r^2 = 4, or wherever the radial map stops increasing) they fold back, so a far point (an
# extended line's end) would land inside the image.
MAX_DISTORTED_R2 = 4.0


def _project_camera(cam: tuple[float, ...], x: float, y: float, z: float) -> tuple[float, float]:
    """Pinhole + radial-tangential projection (OpenCV's model) of one game-frame point."""
    K, R, t, (k1, k2, p1, p2, k3) = cam[0:9], cam[9:18], cam[18:21], cam[21:26]
    X = R[0] * x + R[1] * y + R[2] * z + t[0]
    Y = R[3] * x + R[4] * y + R[5] * z + t[1]
    Z = R[6] * x + R[7] * y + R[8] * z + t[2]
    Z = Z if abs(Z) > 1e-9 else 1e-9
    a, b = X / Z, Y / Z
    r2 = a * a + b * b
    if r2 > MAX_DISTORTED_R2 or 1 + 3 * k1 * r2 + 5 * k2 * r2 * r2 + 7 * k3 * r2 ** 3 <= 0:
        # past where the lens polynomial turns back on itself: the pinhole point, which lies
        # farther out still, instead of one folded back into the picture
        return K[0] * a + K[1] * b + K[2], K[4] * b + K[5]
    radial = 1 + k1 * r2 + k2 * r2 * r2 + k3 * r2 ** 3
    ad = a * radial + 2 * p1 * a * b + p2 * (r2 + 2 * a * a)
    bd = b * radial + p1 * (r2 + 2 * b * b) + 2 * p2 * a * b
    return K[0] * ad + K[1] * bd + K[2], K[4] * bd + K[5]


@dataclass(frozen=True)
class Observation:
    """Everything one image tells: pieces, the frame they are expressed in, and caveats."""

    pieces: tuple[PiecePose, ...]
    frame: dict = field(default_factory=dict)
    unknown_markers: tuple[int, ...] = ()
    warnings: tuple[str, ...] = ()
    game: str | None = None
    image_size: tuple[int, int] | None = None
    image_from_game: ImageFromGame | None = field(default=None, compare=False)
    extra: dict = field(default_factory=dict, hash=False, compare=False)
    # pieces the game expected whose place vision looked at and saw empty (in view, not under a
    # hand, no sticker there): only these are gone. A piece merely missing from ``pieces`` was
    # not read, and the referee keeps its last reading.
    seen_empty: tuple[str, ...] = ()

    def piece(self, name: str) -> PiecePose | None:
        for p in self.pieces:
            if p.name == name:
                return p
        return None

    def names(self) -> list[str]:
        return [p.name for p in self.pieces]

    def within_frame(self) -> "Observation":
        """The pieces as they stand to one another (PiecePose.within_frame): for rulings that compare
        pieces of this one picture, never for comparing it with another picture."""
        return replace(self, pieces=tuple(p.within_frame() for p in self.pieces))

    def to_json(self) -> dict:
        d = {
            "game": self.game,
            "image_size": list(self.image_size) if self.image_size else None,
            "frame": self.frame,
            "pieces": [p.to_json() for p in self.pieces],
            "unknown_markers": list(self.unknown_markers),
            "warnings": list(self.warnings),
        }
        if self.seen_empty:
            d["seen_empty"] = list(self.seen_empty)
        d.update(self.extra)
        d = json_ready(d)
        if self.image_from_game is not None:  # after json_ready: 3 decimals are too few for its terms
            d["image_from_game"] = self.image_from_game.to_json()
        return d

    @classmethod
    def from_json(cls, d: dict) -> "Observation":
        if not isinstance(d, dict) or not isinstance(d.get("pieces"), list):
            raise InvalidInputError("observation document needs a 'pieces' list")
        for key, kind in (("warnings", list), ("unknown_markers", list), ("frame", dict)):
            if d.get(key) is not None and not isinstance(d[key], kind):
                raise InvalidInputError(f"observation {key!r} must be a JSON {'list' if kind is list else 'object'}, "
                                        f"got {json.dumps(d[key])[:40]}")
        known = {"game", "image_size", "frame", "pieces", "unknown_markers", "warnings", "image_from_game",
                 "seen_empty"}
        size = d.get("image_size")
        if size is not None:
            size = tuple(safeload.integer(v, "observation 'image_size'", lo=1, hi=100_000)
                         for v in safeload.numbers(size, 2, "observation 'image_size'"))
        markers = tuple(safeload.integer(i, "observation 'unknown_markers' entry", lo=0, hi=1_000_000)
                        for i in d.get("unknown_markers") or ())
        game = safeload.optional(d, "game", safeload.text, "observation 'game'", max_len=64)
        empty = d.get("seen_empty") or []
        if not isinstance(empty, list) or len(empty) > 10_000:
            raise InvalidInputError("observation 'seen_empty' must be a list of piece names")
        seen_empty = tuple(safeload.text(n, "observation 'seen_empty' entry", max_len=64) for n in empty)
        return cls(pieces=tuple(PiecePose.from_json(p) for p in d["pieces"]), frame=d.get("frame") or {},
                   unknown_markers=markers,
                   warnings=tuple(str(w) for w in d.get("warnings") or ()), game=game,
                   image_size=size,
                   image_from_game=ImageFromGame.from_json(d.get("image_from_game")), seen_empty=seen_empty,
                   extra={k: v for k, v in d.items() if k not in known})
