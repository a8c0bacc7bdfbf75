"""Stable-state tracking: turn a stream of noisy Observations into the few states worth ruling on.

Hands move pieces, cover them and make markers flicker. The referee must only see
the table at rest, so the tracker

* confirms a piece only after ``min_hits`` consecutive sightings (a marker that
  flashes up for a frame or two never becomes a piece), like a multi-object
  tracker's min-hits;
* keeps a confirmed piece through short drop-outs (``grace_frames``: flicker, no
  effect on stability) and longer ones (occlusion: the piece is remembered at its
  last pose and the table is "in play" while it is hidden); only a piece unseen for
  ``forget_s`` seconds has left the table (the tracker's max-age);
* calls the table stable when every confirmed piece stayed within half its tolerance
  of its pose at the start of the calm period for ``stable_s`` seconds. Tolerance per
  piece: ``floor_mm + k_sigma * sigma_mm`` (position), ``floor_deg + k_sigma * sigma_theta_deg``.

Each stable state that differs from the last one (a piece came, went or moved beyond
tolerance) is handed out once, as an Observation of the averaged poses. Pure Python on
Observations; no images.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from referee.observation import Observation, PiecePose

IN_PLAY = "in play"
STABLE = "stable"


@dataclass(frozen=True)
class TrackerSettings:
    """Every threshold of the tracker. "Moved" is decided here only (pose_moved): a piece moved
    when it is farther than floor_mm + k_sigma * sigma_mm (or turned more than floor_deg +
    k_sigma * sigma_theta_deg) from a reference pose; within a calm period that tolerance is
    scaled by calm_motion_scale."""

    stable_s: float = 0.5  # calm time before a state counts as stable
    min_hits: int = 3  # consecutive sightings before a new piece exists
    grace_frames: int = 2  # missed frames that are only flicker
    forget_s: float = 1.5  # unseen this long (while otherwise calm) = the piece left
    floor_mm: float = 3.0
    floor_deg: float = 5.0
    k_sigma: float = 3.0
    # Within a calm period a piece may wander only half the tolerance from where the period
    # began, so a slow slide (a nudged boat) is motion, not a string of "stable" states.
    calm_motion_scale: float = 0.5


@dataclass
class _Track:
    pose: PiecePose  # latest sighting
    anchor: PiecePose  # pose at the start of the current calm period
    hits: int = 1
    misses: int = 0
    confirmed: bool = False
    last_seen_t: float = 0.0
    missing_since_t: float | None = None
    # sums of the calm period, for the averaged stable pose
    n: int = 0
    sx: float = 0.0
    sy: float = 0.0
    sc: float = 0.0
    ss: float = 0.0

    def reset_average(self) -> None:
        self.n, self.sx, self.sy, self.sc, self.ss = 0, 0.0, 0.0, 0.0, 0.0

    def add_sample(self, p: PiecePose) -> None:
        self.n += 1
        self.sx += p.x_mm
        self.sy += p.y_mm
        self.sc += math.cos(math.radians(p.theta_deg))
        self.ss += math.sin(math.radians(p.theta_deg))

    def averaged(self) -> PiecePose:
        if self.n == 0:
            return self.pose
        theta = math.degrees(math.atan2(self.ss, self.sc))
        return replace(self.pose, x_mm=self.sx / self.n, y_mm=self.sy / self.n, theta_deg=theta)


@dataclass(frozen=True)
class TrackerUpdate:
    """What one frame changed.

    status: "stable" or "in play"; stable_for_s: calm time so far;
    new_stable: the new stable state to rule on (None if nothing new);
    hidden: confirmed pieces currently not seen (remembered at their last pose);
    pieces: the confirmed pieces as last seen (or remembered).
    """

    t: float
    status: str
    stable_for_s: float
    new_stable: Observation | None
    hidden: tuple[str, ...]
    pieces: tuple[PiecePose, ...]
    reason: str = ""


def angle_diff_deg(a: float, b: float) -> float:
    """Smallest absolute difference of two angles, degrees in [0, 180]."""
    d = (a - b + 180.0) % 360.0 - 180.0
    return abs(d)


def pose_moved(a: PiecePose, b: PiecePose, settings: TrackerSettings, scale: float = 1.0) -> bool:
    """True when b differs from a by more than scale times the measurement tolerance."""
    sigma = max(a.sigma_mm, b.sigma_mm)
    tol_mm = settings.floor_mm + settings.k_sigma * sigma
    if math.hypot(a.x_mm - b.x_mm, a.y_mm - b.y_mm) > scale * tol_mm:
        return True
    sigma_t = max(a.sigma_theta_deg, b.sigma_theta_deg)
    tol_deg = settings.floor_deg + settings.k_sigma * sigma_t
    return angle_diff_deg(a.theta_deg, b.theta_deg) > scale * tol_deg


def states_differ(a: Observation | None, b: Observation, settings: TrackerSettings) -> bool:
    if a is None:
        return True
    if set(a.names()) != set(b.names()):
        return True
    return any(pose_moved(a.piece(p.name), p, settings) for p in b.pieces)


class StableStateTracker:
    """Feed it every frame's Observation with its time; it says when the table is at rest."""

    def __init__(self, settings: TrackerSettings | None = None):
        self.settings = settings or TrackerSettings()
        self.tracks: dict[str, _Track] = {}
        self.calm_since: float | None = None
        self.last_stable: Observation | None = None
        self._emitted_this_calm = False

    def reset(self) -> None:
        self.tracks.clear()
        self.calm_since = None
        self.last_stable = None
        self._emitted_this_calm = False

    def _disturb(self, t: float) -> None:
        """Something changed: the calm period starts again now."""
        self.calm_since = t
        self._emitted_this_calm = False
        for tr in self.tracks.values():
            tr.anchor = tr.pose
            tr.reset_average()

    def update(self, obs: Observation, t: float) -> TrackerUpdate:
        s = self.settings
        seen = {p.name: p for p in obs.pieces}
        reason = self._sightings(seen, t)
        left, hidden = self._dropouts(seen, t)
        disturbed = bool(reason or left)
        reason = left or reason
        if disturbed or self.calm_since is None:
            self._disturb(t)
        if hidden:
            # Occluded: remembered at its last pose, but nothing is ruled while a hand covers the table.
            self.calm_since = None
            self._emitted_this_calm = False
            reason = reason or f"{', '.join(sorted(hidden))} hidden"
        else:
            for tr in self.tracks.values():
                if tr.confirmed and tr.misses == 0:
                    tr.add_sample(tr.pose)

        confirmed = {n: tr for n, tr in self.tracks.items() if tr.confirmed}
        calm_for = 0.0 if self.calm_since is None else t - self.calm_since
        new_stable = None
        status = IN_PLAY
        # A piece still being confirmed (seen, not yet min_hits times) may be one just put down:
        # rule only once it is known whether it is real, so no state is handed out without it.
        pending = any(not tr.confirmed and tr.misses == 0 for tr in self.tracks.values())
        if self.calm_since is not None and calm_for >= s.stable_s - 1e-9 and not pending:
            status = STABLE
            if not self._emitted_this_calm:
                self._emitted_this_calm = True
                pieces = tuple(sorted((tr.averaged() for tr in confirmed.values()), key=lambda p: p.name))
                candidate = replace(obs, pieces=pieces)
                if states_differ(self.last_stable, candidate, s):
                    self.last_stable = candidate
                    new_stable = candidate
        pieces = tuple(sorted((tr.pose for tr in confirmed.values()), key=lambda p: p.name))
        return TrackerUpdate(t=t, status=status, stable_for_s=calm_for, new_stable=new_stable,
                             hidden=tuple(sorted(hidden)), pieces=pieces, reason=reason)

    def _sightings(self, seen: dict[str, PiecePose], t: float) -> str:
        """Update the tracks of the pieces in view; confirm new pieces after min_hits.
        Returns why the table is disturbed ("X appeared", "X moved"), or ""."""
        s = self.settings
        reason = ""
        for name, pose in seen.items():
            tr = self.tracks.get(name)
            if tr is None:
                tr = self.tracks[name] = _Track(pose=pose, anchor=pose, last_seen_t=t)
                if s.min_hits <= 1:
                    tr.confirmed = True
                    reason = f"{name} appeared"
                continue
            if tr.misses and not tr.confirmed:
                tr.hits = 0  # a tentative piece must be seen in a row
            tr.hits += 1
            tr.misses = 0
            tr.missing_since_t = None
            tr.pose = pose
            tr.last_seen_t = t
            if not tr.confirmed and tr.hits >= s.min_hits:
                tr.confirmed = True
                tr.anchor = pose
                reason = f"{name} appeared"
            elif tr.confirmed and pose_moved(tr.anchor, pose, s, scale=s.calm_motion_scale):
                reason = f"{name} moved"
        return reason

    def _dropouts(self, seen: dict[str, PiecePose], t: float) -> tuple[str, list[str]]:
        """Pieces out of view: flicker, occlusion, or the piece left.
        Returns ("X left" or "", the confirmed pieces hidden for now)."""
        s = self.settings
        left = ""
        hidden: list[str] = []
        for name in list(self.tracks):
            if name in seen:
                continue
            tr = self.tracks[name]
            tr.misses += 1
            if tr.missing_since_t is None:
                tr.missing_since_t = t
            if not tr.confirmed:
                if tr.misses > s.grace_frames:
                    del self.tracks[name]  # a flash, never a piece
                continue
            if tr.misses <= s.grace_frames:
                continue  # flicker: remembered, no effect on stability
            if t - tr.missing_since_t >= s.forget_s:
                del self.tracks[name]
                left = f"{name} left"
                continue
            hidden.append(name)
        return left, hidden
