"""The nominal layout of a course file as an Observation (for the schematic view and tests).

The course file's ``layout`` places the start gate, finish line, curve markers and
curve cards in the start-gate frame; this turns it into piece poses as if seen.
"""

from __future__ import annotations

from referee.catalog import Catalog, default_catalog
from referee.observation import Observation, PiecePose

from .course_spec import CURVE_CARD_PREFIX, FINISH_LINE, MARKER_PREFIX, START_GATE, CourseSpec
from .errors import CourseFileError


def layout_poses(spec: CourseSpec, sigma_mm: float = 0.5, catalog: Catalog | None = None) -> list[PiecePose]:
    """Poses of the course pieces at their nominal places; curve cards get ids 1..2n in order."""
    catalog = catalog or default_catalog()
    lay = spec.layout
    try:
        out = []
        for name, key in ((START_GATE, "start-gate"), (FINISH_LINE, "finish-line")):
            x, y, th = (float(v) for v in lay[key])
            out.append(_pose(catalog, name, x, y, th, sigma_mm))
        card = 1
        for c in spec.curves:
            cv = lay["curves"][str(c.marker)]
            vx, vy = (float(v) for v in cv["vertex"])
            out.append(_pose(catalog, f"{MARKER_PREFIX}{c.marker}", vx, vy, 0.0, sigma_mm))
            face = "left-turn" if c.turn == "left" else "right-turn"
            for key in ("entry_deg", "exit_deg"):
                out.append(_pose(catalog, f"{CURVE_CARD_PREFIX}{card}", vx, vy, float(cv[key]), sigma_mm, face))
                card += 1
    except (KeyError, TypeError, ValueError) as exc:
        raise CourseFileError(f"course file {spec.source!r}: its layout cannot place the pieces ({exc!r})") from None
    return out


def _pose(catalog: Catalog, name: str, x: float, y: float, theta: float, sigma: float,
          face: str | None = None) -> PiecePose:
    spec = catalog.piece(name)
    ids = tuple(s.marker_id for s in spec.stickers if face is None or s.face == face)
    if face is None and spec.family == "tornado/curve-marker":
        ids = ids[:1]
    return PiecePose(name=name, marker_ids=ids, x_mm=x, y_mm=y, theta_deg=theta, z_mm=spec.stickers[0].top_z_mm,
                     sigma_mm=sigma, face=face)


def layout_observation(spec: CourseSpec, boats: dict | None = None, sigma_mm: float = 0.5,
                       extra: list[PiecePose] | None = None, catalog: Catalog | None = None) -> Observation:
    """An Observation of the nominal course plus boats {name: (x, y, theta_deg)}."""
    catalog = catalog or default_catalog()
    pieces = layout_poses(spec, sigma_mm, catalog)
    for name, (x, y, th) in (boats or {}).items():
        pieces.append(_pose(catalog, name, x, y, th, sigma_mm))
    pieces.extend(extra or [])
    return Observation(pieces=tuple(pieces), frame={"anchor": START_GATE}, game="tornado")
