"""How a recording is replayed, on the live page and by `refcam replay`: its clock, and how its
frames are searched.

A replay on the page shows the session at its own pace, but it must rule every frame: its rulings
are those of `refcam replay` of the same folder, whatever the computer. So a frame is never passed
over. Each frame waits until its time comes; a frame that comes late is ruled late, and the
replay's clock slips instead: the session's time then runs slower than the wall's, and the page
says by how much (``note``). A live camera is another matter: it cannot wait, and drops frames.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field

# How frames are searched while nothing moves (webui.live.tracking_observe), by source kind
# (vision.sources.SourceInfo.kind): a camera follows the stickers (the cheapest: the page keeps up);
# a recording is searched as `refcam replay` searches it, so that the page's replay and the
# command's give the same rulings.
DEFAULT_DETECT = {"camera": "follow", "session": "regions", "video": "regions"}
RECORDED_KINDS = ("session", "video")  # the sources that are replayed


def default_detect(source_kind: str) -> str:
    return DEFAULT_DETECT.get(source_kind, "follow")


# Late by more than this, the clock slips (the lost time is never made up by hurrying); within it,
# the next frames catch up (a thread woken a few ms late is no reason to slow the replay).
MAX_LAG_S = 0.1
# The pace is measured over the last few seconds of wall time; a dip of one slow frame is no news.
WINDOW_S = 4.0
# Below this share of the pace asked for, the page says the replay runs slower.
SLOW_SHARE = 0.9


@dataclass
class ReplayClock:
    """speed: session seconds per wall second asked for (1: the recording's own pace)."""

    speed: float = 1.0
    max_lag_s: float = MAX_LAG_S
    window_s: float = WINDOW_S
    slips: int = 0  # frames that came later than max_lag_s: each time the clock slowed
    _origin: tuple[float, float] | None = None  # (wall, session time) that are due together
    _marks: collections.deque = field(default_factory=collections.deque)  # (wall, session time) ruled

    def wait_s(self, t: float, now: float) -> float:
        """Seconds to wait before the frame of session time t is due (0: now). A frame later than
        max_lag_s makes the clock slip: t becomes due now, and the frames after it follow from it."""
        if self._origin is None:
            return 0.0
        wall0, t0 = self._origin
        due = wall0 + (t - t0) / self.speed
        if now - due > self.max_lag_s or t < t0:  # behind (or the session's time went back)
            self.slips += t >= t0
            self._origin = (now, t)
            return 0.0
        return max(0.0, due - now)

    def ruled(self, t: float, now: float) -> None:
        """The frame of session time t has been ruled at wall time now."""
        if self._origin is None:
            # The first frame's time includes the warm-up (imports, the detector's set-up): the
            # clock starts after it, so the replay does not begin behind.
            self._origin = (now, t)
        self._marks.append((now, t))
        while len(self._marks) > 2 and now - self._marks[1][0] >= self.window_s:
            self._marks.popleft()

    @property
    def rate(self) -> float | None:
        """Session seconds per wall second over the last window_s (None until half of it has passed)."""
        if len(self._marks) < 2:
            return None
        (w0, t0), (w1, t1) = self._marks[0], self._marks[-1]
        if w1 - w0 < self.window_s / 2:
            return None
        return max(0.0, t1 - t0) / (w1 - w0)

    @property
    def note(self) -> str:
        """What the page says when the replay runs slower than asked, else ""."""
        rate = self.rate
        if rate is None or rate >= SLOW_SHARE * self.speed:
            return ""
        return f"replay running at {rate:.1f}x: this computer is slower than the recording"
