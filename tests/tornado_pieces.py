"""Observation-like values for the Tornado rule tests: piece poses as vision reports them
(game frame, mm, with sigma), racing cards of a given kind, boundary lines."""

from __future__ import annotations

import math

from referee.catalog import default_catalog
from referee.observation import Observation, PiecePose
from referee.tornado import geometry as g
from referee.tornado.cards import Card, card_from_pose
from referee.tornado.course import BoundaryLine

SIGMA = 0.4  # mm, a typical sticker pose uncertainty on the bundled stills
SIGMA_DEG = 0.3


def card_name(deck: int, kind: str, nth: int = 0) -> str:
    names = sorted(p.name for p in default_catalog().pieces(family="tornado/racing-card")
                   if int(p.attrs["deck"]) == deck and p.attrs["kind"] == kind)
    return names[nth]


def pose(name: str, x: float, y: float, theta: float = 0.0, sigma: float = SIGMA, face: str | None = None,
         sigma_deg: float = SIGMA_DEG) -> PiecePose:
    return PiecePose(name=name, marker_ids=(), x_mm=float(x), y_mm=float(y), theta_deg=float(theta), z_mm=0.3,
                     sigma_mm=sigma, sigma_theta_deg=sigma_deg, face=face)


def card(deck: int, kind: str, x: float, y: float, theta: float = 0.0, nth: int = 0, sigma: float = SIGMA) -> Card:
    return card_from_pose(pose(card_name(deck, kind, nth), x, y, theta, sigma))


def after(prev: Card, kind: str, deck: int | None = None, nth: int = 1, shift: float = 0.0, gap: float = 0.0,
          turn: float = 0.0, at_x: float | None = None) -> Card:
    """A card laid after ``prev``: from its front edge (or the point ``at_x`` on its centre
    line), turned by ``turn``, slid sideways by ``shift`` and away by ``gap``."""
    start_x = prev.length / 2 if at_x is None else at_x
    start = prev.local_to_world((start_x, 0.0))
    heading = prev.theta + turn
    length = prev.length
    centre = g.to_world(start, heading, (length / 2 + gap, shift))
    return card(deck if deck is not None else prev.deck, kind, centre[0], centre[1], heading, nth)


def line_across(x: float, name: str = "line", sigma: float = 0.3, half_length: float = 150.0) -> BoundaryLine:
    """A gate-like boundary line square to +x at x, travel toward +x."""
    return BoundaryLine(name=name, kind="gate", origin=(x, 0.0), along=(0.0, 1.0), forward=(1.0, 0.0),
                        half_length=half_length, sigma0=sigma, s2=half_length, sigma2=sigma)


def observation(*pieces: PiecePose) -> Observation:
    return Observation(pieces=tuple(pieces), frame={"anchor": "tornado/start-gate"}, game="tornado")


def rotated(p: g.Point, deg: float) -> g.Point:
    return g.rotate(p, deg)


__all__ = ["card", "after", "pose", "line_across", "observation", "card_name", "math", "rotated"]
