"""Stable-state tracking: turn a stream of noisy Observations into the few states worth ruling on.

Hands move pieces, cover them and make markers flicker. The referee must only see
the table at rest, so the tracker

* confirms a piece only after ``min_hits`` consecutive sightings (a marker that
  flashes up for a frame or two never becomes a piece), like a multi-object
  tracker's min-hits, or once it has been seen still in every frame of a hold (below):
  a piece put down is part of the table as soon as the table could be ruled on;
* keeps a confirmed piece through short drop-outs (``grace_frames``: flicker, no
  effect on stability) and longer ones (occlusion: the piece is remembered at its
  last pose and the table is "in play" while it is hidden); only a piece unseen for
  ``forget_s`` seconds has left the table (the tracker's max-age);
* calls the table stable when every confirmed piece stayed within half its tolerance
  of its pose at the start of the calm period, and was seen there over a hold of
  ``stable_s`` seconds. Tolerance per piece: ``floor_mm + k_sigma * sigma_mm``
  (position), ``floor_deg + k_sigma * sigma_theta_deg``.

The hold is a property of the frames, never of how fast they are processed: from the calm
period's first frame to the piece's latest sighting, plus the time one frame stands for (the
interval since the frame before, at most half of ``stable_s``, so one frame alone is never a
hold). At 4 fps and 0.5 s, a position still for 2 frames (0.25 s apart) is a hold; at 10 fps,
5 frames. The calm period starts where the change was first seen: a piece put down starts it at
its first sighting, not when its confirmation ends. A frame where a piece is not seen (flicker,
or a hand over it) extends no piece's hold, so a state is never handed out on the strength of
frames where a hand may be moving a piece.

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
    still_since_t: float = 0.0  # first sighting of the current unbroken run at about its anchor
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
        self._last_t: float | None = None
        self.frame_s = 0.0  # the time the newest frame stands for (hold_s)

    def reset(self) -> None:
        self.tracks.clear()
        self.calm_since = None
        self.last_stable = None
        self._emitted_this_calm = False
        self._last_t = None
        self.frame_s = 0.0

    def _disturb(self, since: float, now: float) -> None:
        """Something changed, first seen at time `since`: the calm period starts again there. A
        change seen now starts every piece's anchor and average afresh; a piece confirmed now,
        still since `since`, changes no piece's pose since then (each keeps its samples)."""
        self.calm_since = since
        self._emitted_this_calm = False
        if since < now:
            return
        for tr in self.tracks.values():
            tr.anchor = tr.pose
            tr.reset_average()

    def hold_s(self, since: float, seen_t: float) -> float:
        """How long a position seen from the frame at `since` to the one at `seen_t` was held:
        their interval plus the time the newest frame stands for."""
        return seen_t - since + self.frame_s

    def update(self, obs: Observation, t: float) -> TrackerUpdate:
        s = self.settings
        dt = 0.0 if self._last_t is None else max(0.0, t - self._last_t)
        self.frame_s = min(dt, s.stable_s / 2.0)
        self._last_t = t
        seen = {p.name: p for p in obs.pieces}
        reason, since = self._sightings(seen, t)
        left, hidden = self._dropouts(seen, t)
        reason = left or reason
        if left:
            since = t
        if since is not None or self.calm_since is None:
            start = t if since is None or self.calm_since is None else max(since, self.calm_since)
            self._disturb(start, t)
        if hidden:
            # Occluded: remembered at its last pose, but nothing is ruled while a hand covers the table.
            self.calm_since = None
            self._emitted_this_calm = False
            reason = reason or f"{', '.join(sorted(hidden))} hidden"
        else:
            for tr in self.tracks.values():
                if tr.misses == 0:  # seen now: a confirmed piece, or one being confirmed while it stays still
                    tr.add_sample(tr.pose)

        confirmed = {n: tr for n, tr in self.tracks.items() if tr.confirmed}
        calm_for = 0.0 if self.calm_since is None else t - self.calm_since
        new_stable = None
        status = IN_PLAY
        if self._held(confirmed.values()):
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

    def _held(self, confirmed) -> bool:
        """Every confirmed piece was seen, unmoved, over a hold of stable_s in this calm period;
        and no piece is being confirmed now (a piece just put down: rule only once it is known
        whether it is real, so no state is handed out without it)."""
        if self.calm_since is None:
            return False
        if any(not tr.confirmed and tr.misses == 0 for tr in self.tracks.values()):
            return False
        need = self.settings.stable_s - 1e-9
        return all(tr.last_seen_t >= self.calm_since and self.hold_s(self.calm_since, tr.last_seen_t) >= need
                   for tr in confirmed)

    def _sightings(self, seen: dict[str, PiecePose], t: float) -> tuple[str, float | None]:
        """Update the tracks of the pieces in view; confirm new pieces. Returns why the table is
        disturbed ("X appeared", "X moved", or "") and since when (None: undisturbed): a move
        now, a piece confirmed now since its first still sighting."""
        s = self.settings
        reason, since = "", None
        for name, pose in seen.items():
            tr = self.tracks.get(name)
            if tr is None:
                tr = self.tracks[name] = _Track(pose=pose, anchor=pose, last_seen_t=t, still_since_t=t)
                if s.min_hits <= 1:
                    tr.confirmed = True
                    reason, since = f"{name} appeared", t
                continue
            if tr.misses and not tr.confirmed:
                tr.hits = 0  # a tentative piece must be seen in a row
                tr.anchor, tr.still_since_t = pose, t
                tr.reset_average()
            tr.hits += 1
            tr.misses = 0
            tr.missing_since_t = None
            tr.pose = pose
            tr.last_seen_t = t
            if not tr.confirmed:
                if pose_moved(tr.anchor, pose, s, scale=s.calm_motion_scale):
                    tr.anchor, tr.still_since_t = pose, t  # still being put down
                    tr.reset_average()
                held = tr.hits >= 2 and self.hold_s(tr.still_since_t, t) >= s.stable_s - 1e-9
                if tr.hits >= s.min_hits or held:
                    tr.confirmed = True
                    reason = f"{name} appeared"
                    since = tr.still_since_t if since is None else max(since, tr.still_since_t)
            elif pose_moved(tr.anchor, pose, s, scale=s.calm_motion_scale):
                reason, since = f"{name} moved", t
        return reason, since

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
