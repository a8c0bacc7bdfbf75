"""The live engine: source -> observe -> stable-state tracker -> game step -> events.

One thread pulls frames from the source, observes each, feeds the tracker and hands
every new stable state to the game (referee/game.py: ``step(state, observation, t)``);
the engine keeps the game, its parsed settings and the newest state, and knows no game. What it learns goes out through two
broadcasters with one queue per client:

* ``frames``: annotated JPEGs for the MJPEG stream; each client keeps only the newest
  frame (a slow client skips frames, it never falls behind);
* ``events``: dicts for server-sent events (rulings, status, state, warnings); each
  client has a bounded queue that drops its oldest entry when full, and a client that
  connects late first gets the rulings log so far.

Every event carries ``entry_ms``: the wall-clock time (ms) at which the frame that
caused it entered the engine, so the page can measure frame-to-ruling latency.
"""

from __future__ import annotations

import collections
import itertools
import queue
import re
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import numpy as np

from referee.errors import RefcamError
from referee.game import Declaration, Game, Shape, parse_settings
from referee.observation import ImageFromGame, Observation
from referee.registry import game_ids, get_game, games
from referee.rulings import Ruling, cannot_tell
from vision.fusion import DEFAULT_FRAMES, DEFAULT_MAX_BYTES
from vision.pipeline import NoStickersError
from vision.sources import FrameSource
from vision.tracking import IN_PLAY, StableStateTracker, TrackerSettings, TrackerUpdate
from webui.replays import RECORDED_KINDS, ReplayClock

ObserveFn = Callable[[np.ndarray, Any, str], Observation]

_CLOSED = object()


class Subscription:
    """One client's queue. get() returns the next item, None on timeout, or raises StopIteration when closed."""

    def __init__(self, maxsize: int):
        self._q: queue.Queue = queue.Queue(maxsize=maxsize)
        self.dropped = 0
        self.delivered = 0

    def put(self, item) -> None:
        while True:
            try:
                self._q.put_nowait(item)
                return
            except queue.Full:
                try:
                    self._q.get_nowait()  # drop the oldest for a slow client
                    self.dropped += 1
                except queue.Empty:
                    pass

    def get(self, timeout: float | None = None):
        try:
            item = self._q.get(timeout=timeout)
        except queue.Empty:
            return None
        if item is _CLOSED:
            raise StopIteration
        self.delivered += 1
        return item


class Broadcaster:
    """Publish to every subscribed client; each has its own bounded queue."""

    def __init__(self, maxsize: int):
        self.maxsize = maxsize
        self._subs: set[Subscription] = set()
        self._lock = threading.Lock()
        self.closed = False

    def subscribe(self, backlog: list | None = None) -> Subscription:
        sub = Subscription(self.maxsize)
        with self._lock:
            for item in backlog or ():
                sub.put(item)
            if self.closed:
                sub.put(_CLOSED)
            self._subs.add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            self._subs.discard(sub)

    def publish(self, item) -> None:
        with self._lock:
            subs = list(self._subs)
        for sub in subs:
            sub.put(item)

    @property
    def clients(self) -> int:
        with self._lock:
            return len(self._subs)

    def close(self) -> None:
        with self._lock:
            self.closed = True
            subs = list(self._subs)
        for sub in subs:
            sub.put(_CLOSED)


@dataclass
class LiveSettings:
    game: str | None = None  # a registered game id; None: the first game of the registry
    options: dict[str, str] = field(default_factory=dict)  # the game's options as the user typed them
    camera: Any = None  # calibration.camera.CameraModel or None
    tracker: TrackerSettings = field(default_factory=TrackerSettings)
    stream_max_width: int = 960
    jpeg_quality: int = 80
    stream: bool = True  # draw and encode the annotated frames (off for offline replay)
    # draw the overlay on the frame already shrunk to the page's size, not on the camera's frame
    # (tests/bench/speed.py: at 1080p it halves the drawing and encoding time)
    draw_at_page_size: bool = True
    # draw and encode the page's frames on a second thread while the next frame is observed
    # (cv2 drawing and JPEG encoding release the GIL; `refcam serve` turns it on). Off: process()
    # publishes its frame before it returns, as the tests expect.
    pipelined: bool = False
    log_size: int = 500
    archive_keep: int = 20  # earlier games' rulings logs kept in memory (all are written when recording)
    # each new stable state is read again in the fusion of the calm period's last frames (at most
    # this many, and at most fuse_max_bytes of them; vision/fusion.py); below 2: no fusion
    fuse_frames: int = DEFAULT_FRAMES
    fuse_max_bytes: int = DEFAULT_MAX_BYTES


class LiveEngine:
    def __init__(self, source: FrameSource, observe: ObserveFn, settings: LiveSettings | None = None,
                 recorder=None):
        self.source = source
        self.observe = observe
        self.live = settings or LiveSettings()
        self.live.game = self.live.game or game_ids()[0]
        self.game: Game = get_game(self.live.game)
        self.settings: dict[str, Any] = parse_settings(self.game, self.live.options)  # the game's parsed options
        self.state = self.game.new_state(self.settings)
        self.recorder = recorder  # vision.session.SessionWriter or None
        self.frames = Broadcaster(maxsize=1)
        self.events = Broadcaster(maxsize=1000)
        self.tracker = StableStateTracker(self.live.tracker)
        self._lock = threading.RLock()
        self._seq = itertools.count(1)
        self.log: collections.deque = collections.deque(maxlen=self.live.log_size)
        # earlier games' logs (settings changed, replay looped); the oldest go first past archive_keep
        self.archives: collections.deque = collections.deque(maxlen=self.live.archive_keep)
        self._archive_ids = itertools.count(1)
        self.status = IN_PLAY
        self.source_status = ""
        self.latest_jpeg: bytes | None = None
        self._picture_kept = None  # (what was drawn, the motion cells of its picture): _same_picture
        self.latest_update: TrackerUpdate | None = None
        self.latest_labels: list = []  # webui.labels.Box of the newest drawn frame (none overlap)
        self._now_t: float | None = None
        self.game_t0: float | None = None  # source time of the first frame of this game: game time starts here
        self.stable_obs: Observation | None = None
        self.stable_image: np.ndarray | None = None
        self.stable_t: float | None = None
        self._calm_frames: collections.deque = collections.deque()  # (t, image, stickers, motion cells) of the calm period
        self._calm_fused: tuple | None = None  # (calm_since, (observation, picture) or None): its fusion
        self.fusion_s: list[float] = []  # seconds each calm period's fusion took
        self.frames_in = 0
        self.fps = 0.0
        self.done = threading.Event()  # the source ran out
        self.error: str | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._warned: set[str] = set()
        self._restart_pending = False
        self._mapping = None  # the newest image_from_game, kept while a hand hides the stickers
        self._drawer: FrameDrawer | None = FrameDrawer(self._draw_frame, self._drawing_failed) \
            if self.live.pipelined else None
        # A recording played in real time is paced here, never by passing frames over: every frame
        # is ruled, and when this computer cannot keep up the replay's clock slows (ReplayClock).
        self.clock: ReplayClock | None = None
        if source.info.kind in RECORDED_KINDS and getattr(source, "realtime", False):
            self.clock = ReplayClock(speed=float(getattr(source, "speed", 1.0) or 1.0))
            source.realtime = False
        self._replay_note = ""
        self._offending: tuple[str, ...] = ()  # the pieces the newest illegal rulings name, outlined on the video
        self._shapes_kept: tuple | None = None  # (game, state, observation, its shapes, (offending, poses, outlines))
        self._boxes_kept: tuple | None = None  # (label boxes as drawn, scale, in the camera frame's pixels)
        source.on_warning = self._source_warning
        source.on_status = self._source_status
        source.on_state = self._source_state  # running / ended / lost / error, with a message
        source.on_restart = self._source_restart

    # ----- configuration -------------------------------------------------------------
    def configure(self, game: str | None = None, options: dict[str, str] | None = None) -> bool:
        """Switch game or its settings: a fresh state and tracker (raises RefcamError on bad input).

        options: the game's option texts to change; a new game keeps only the texts it declares.
        Returns False, changing nothing, when the game and its parsed settings stay the same
        (a second click on "Apply" must not wipe a game in progress)."""
        with self._lock:
            new_game = get_game(game) if game else self.game
            texts = dict(self.live.options)
            texts.update(options or {})
            texts = {k: v for k, v in texts.items() if any(o.name == k for o in new_game.options)}
            settings = parse_settings(new_game, texts)
            if new_game.id == self.game.id and settings == self.settings:
                return False
            self._new_game(new_game, settings, texts, "settings changed")
        self._publish({"type": "config", "config": self.config_json()})
        self._publish({"type": "state", "state": self.state_json()})
        return True

    def restart(self, reason: str) -> None:
        """The same game and settings from the start (a looping replay begins again)."""
        with self._lock:
            self._new_game(self.game, self.settings, dict(self.live.options), reason)
        self._publish({"type": "state", "state": self.state_json()})

    def _new_game(self, game: Game, settings: dict[str, Any], texts: dict[str, str], reason: str) -> None:
        """A fresh state and tracker; the rulings log so far is archived, never dropped (under _lock)."""
        self._archive_log(reason)
        self.game, self.settings, self.state = game, settings, game.new_state(settings)
        self.live = replace(self.live, game=game.id, options=texts)
        self.tracker.reset()
        self._calm_frames.clear()
        self._calm_fused = None
        self.stable_obs, self.stable_image, self.stable_t = None, None, None
        self.game_t0 = None
        self._offending = ()

    def _archive_log(self, reason: str) -> dict | None:
        """Move the rulings log into the archive (and the recording folder, if recording)."""
        if not self.log:
            return None
        entry = {"n": next(self._archive_ids), "reason": reason, "archived_ms": time.time() * 1000.0,
                 "game": self.game.id, "options": dict(self.live.options), "log": list(self.log)}
        self.archives.append(entry)
        self.log.clear()
        self._write_archive(entry)
        self._publish({"type": "archived", "n": entry["n"], "reason": reason, "entries": len(entry["log"])})
        return entry

    def _write_archive(self, entry: dict) -> None:
        folder = getattr(self.recorder, "folder", None)
        if folder is None:
            return
        import json

        try:
            (folder / f"rulings-{entry['n']:03d}.json").write_text(json.dumps(entry, indent=1) + "\n",
                                                                  encoding="utf-8")
        except OSError as exc:
            self._warn_once(f"could not keep the rulings log in the recording: {exc.strerror or exc}", None)

    def archive_summaries(self) -> list[dict]:
        with self._lock:
            return [{k: v for k, v in a.items() if k != "log"} | {"entries": len(a["log"])} for a in self.archives]

    def archived_log(self, n: int) -> dict | None:
        with self._lock:
            return next((a for a in self.archives if a["n"] == n), None)

    def config_json(self) -> dict:
        return {"game": self.game.id, "game_title": self.game.title,
                "games": [{"id": g.id, "title": g.title, "options": [o.to_json() for o in g.options]} for g in games()],
                "options": [o.to_json(self.settings.get(o.name)) for o in self.game.options],
                "source": self.page_text(self.source.info.name), "source_kind": self.source.info.kind,
                "camera_file": bool(self.live.camera), "settle": True}

    def state_json(self) -> dict:
        """The game's view for the page, with what the players may declare now."""
        with self._lock:
            try:
                out = self.game.view(self.state).to_json()
                out["declarables"] = [d.to_json() for d in self.game.declarables(self.state)]
                return out
            except Exception as exc:  # a game bug must not take the page down
                return {"error": f"{type(exc).__name__}: {exc}"}

    # ----- what the players declare -----------------------------------------------------
    def declare(self, declaration: Declaration, t: float | None = None) -> list[Ruling]:
        """Hand the players' declaration to the game at source time t (default: the newest
        frame's); its rulings go into the log like any ruling and the recording keeps it.
        Raises RefcamError (one line) when the game does not take it now."""
        with self._lock:
            t = (self._now_t if self._now_t is not None else 0.0) if t is None else t
            step = self.game.declare(self.state, declaration, t)
            self.state = step.state
            rulings = list(step.rulings)
            if self.recorder is not None and hasattr(self.recorder, "add_declaration"):
                try:
                    self.recorder.add_declaration(replace(declaration, t=t).to_json())
                except OSError as exc:
                    self._warn_once(f"could not keep a declaration in the recording: {exc.strerror or exc}", None)
        for r in rulings:
            self._publish(self.ruling_event(r), keep=True)
        self._publish({"type": "state", "state": self.state_json(), "t": t})
        return rulings

    # ----- events --------------------------------------------------------------------
    def ruling_event(self, ruling: Ruling) -> dict:
        """A ruling for the page, with the game time and whether nothing was judged."""
        return {"type": "ruling", "ruling": ruling.to_json(), "game_t": self.game_time(ruling.t),
                "cannot_tell": cannot_tell(ruling)}

    def _publish(self, event: dict, entry_ms: float | None = None, keep: bool = False) -> dict:
        event = dict(event)
        event["seq"] = next(self._seq)
        event["entry_ms"] = entry_ms
        event["sent_ms"] = time.time() * 1000.0
        if keep:
            self.log.append(event)
        self.events.publish(event)
        return event

    def backlog(self) -> list[dict]:
        """What a newly connected client needs: config, state, status, then the rulings log."""
        with self._lock:
            head = [{"type": "config", "config": self.config_json()},
                    {"type": "state", "state": self.state_json()},
                    self.status_event()]
            return [dict(e, seq=0, entry_ms=None) for e in head] + list(self.log)

    def shown_status(self) -> str:
        """The one status the page shows: error, source ended, camera lost, stable or in play."""
        state = self.source_state()
        if state == "error":
            return "error"
        if self.done.is_set():  # the source said "ended" and the engine has finished its last frame
            return "source ended"
        if state == "lost" or "lost" in self.source_status:
            return "camera lost"
        return "stable" if self.status == "stable" else "in play"

    def status_event(self) -> dict:
        u = self.latest_update
        return {"type": "status", "status": self.status, "shown": self.shown_status(),
                "source_status": self.page_text(self.source_status),
                "source_state": self.source_state(), "source_message": self.page_text(self.source_message()),
                "hidden": list(u.hidden) if u else [], "reason": u.reason if u else "",
                "fps": round(self.fps, 1), "frames": self.frames_in, "done": self.done.is_set(),
                "error": self.page_text(self.error) if self.error else None,
                "replay_rate": None if self.clock is None or self.clock.rate is None else round(self.clock.rate, 2),
                "replay_note": self._replay_note}

    def page_text(self, text: str) -> str:
        """text as the page shows it: a replayed folder or video by its own name, never the absolute
        path to it (which names the user and the computer's folders to every viewer)."""
        if not text:
            return text
        for long, name in self._path_names():
            text = text.replace(long, name)
        return text

    def _path_names(self) -> tuple[tuple[str, str], ...]:
        """(how the source's path may be written, its own name), longest first; none for a camera."""
        import os

        info = self.source.info
        if info.kind not in ("session", "video"):
            return ()
        if getattr(self, "_path_names_of", (None,))[0] != info.name:  # worked out once per source
            name = os.path.basename(os.path.normpath(info.name)) or info.name
            longs = sorted({os.path.abspath(info.name), os.path.realpath(info.name), info.name}, key=len, reverse=True)
            self._path_names_of = (info.name, tuple((long, name) for long in longs if long != name))
        return self._path_names_of[1]

    def source_state(self) -> str:
        """running / ended / lost / error (vision.sources): an engine that stopped on a fault is "error"."""
        if self.error:
            return "error"
        state = getattr(self.source, "state", None) or "running"
        return "ended" if state == "running" and self.done.is_set() else state

    def source_message(self) -> str:
        if self.error:
            return self.error
        return getattr(self.source, "state_message", "") or self.source_status

    def game_time(self, t: float | None) -> float | None:
        """Seconds since this game (or this pass of a replay) started, for the page's mm:ss."""
        if t is None or self.game_t0 is None:
            return None
        return round(max(0.0, t - self.game_t0), 2)

    def _warn(self, message: str, entry_ms: float | None = None) -> None:
        self._publish({"type": "warning", "message": self.page_text(message), "game_t": self.game_time(self._now_t)}, entry_ms,
                      keep=True)

    def _source_warning(self, message: str) -> None:
        self._warn(message)

    def _source_status(self, message: str) -> None:
        if message != self.source_status:  # _source_state may have told it already
            self.source_status = message
            self._publish(self.status_event())

    def _source_state(self, state: str, message: str) -> None:
        self.source_status = message
        self._publish(self.status_event())

    def _source_restart(self) -> None:
        self._restart_pending = True

    # ----- the loop ------------------------------------------------------------------
    def start(self) -> "LiveEngine":
        if self._thread is None:
            self._thread = threading.Thread(target=self.run, name="live-engine", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self.source.close()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5.0)
        if self._drawer is not None:
            self._drawer.close()
        self.frames.close()
        self.events.close()
        if self.recorder is not None:
            self.recorder.close()

    def run(self) -> None:
        """Process the source until it ends or stop() is called."""
        fps = {"t0": time.monotonic(), "n": 0}

        def count_frame() -> None:
            fps["n"] += 1
            now = time.monotonic()
            if now - fps["t0"] >= 1.0:
                self.fps = fps["n"] / (now - fps["t0"])
                fps["t0"], fps["n"] = now, 0
                self._publish(self.status_event())

        try:
            self.play(after_frame=count_frame)
        except RefcamError as exc:
            self.error = str(exc)
            self._warn(f"source stopped: {exc}")
        except Exception as exc:  # say what stopped the engine on the page, not as a traceback
            self.error = f"{type(exc).__name__}: {exc}"
            self._warn(f"the live engine stopped: {self.error}")
        finally:
            self.drain()  # the last frames drawn before the page hears the source ended
            self.done.set()
            self._publish(self.status_event())

    def play(self, after_frame: Callable[[], None] | None = None) -> None:
        """Rule every frame the source gives, in order, until it ends or stop() is called: the one
        loop of a camera on the page, a replay on the page and `refcam replay`. A recorded
        session's declarations are handed to the game at their own times, on every pass of a
        looping replay. With a clock (a replay on the page in real time), each frame waits for its
        time; one that comes late is still ruled, and the clock slips (ReplayClock).
        Source errors (RefcamError) go to the caller."""
        recorded = recorded_declarations(self.source)
        due: list[Declaration] = []
        first_t: float | None = None  # the first frame's time: a later pass's declarations shift with it
        for t, image in self.source:
            if self._stop.is_set():
                break
            if first_t is None or self._restart_pending:  # a pass of the recording begins
                for d in due:  # said after the last frame of the pass before
                    self._declare_recorded(d)
                first_t = t if first_t is None else first_t
                due = [replace(d, t=d.t + t - first_t) for d in recorded]
            if self.clock is not None and self._stop.wait(self.clock.wait_s(t, time.monotonic())):
                break
            while due and due[0].t < t:  # said after the frames before this one were seen
                self._declare_recorded(due.pop(0))
            self.process(t, image)
            if self.clock is not None:
                self.clock.ruled(t, time.monotonic())
                self._tell_replay_pace()
            if after_frame is not None:
                after_frame()
        if not self._stop.is_set():
            for d in due:  # said after the last frame
                self._declare_recorded(d)

    def _declare_recorded(self, declaration: Declaration) -> None:
        """A recorded declaration replayed at its own time; one the game refuses is a warning."""
        try:
            self.declare(declaration, declaration.t)
        except RefcamError as exc:
            self._warn(f"declaration {declaration} not taken: {exc}")

    def _tell_replay_pace(self) -> None:
        """The page hears when the replay starts or stops running slower than the recording."""
        note = self.clock.note
        if note != self._replay_note:
            self._replay_note = note
            self._publish(self.status_event())

    def process(self, t: float, image: np.ndarray, entry_ms: float | None = None) -> list[Ruling]:
        """One frame through observe, tracker and referee; returns the rulings it caused."""
        entry_ms = time.time() * 1000.0 if entry_ms is None else entry_ms
        self.frames_in += 1
        if self._restart_pending:
            self._restart_pending = False
            self.restart("the replay started again")
            self._publish({"type": "restart", "message": "the replay starts again: a new game"}, entry_ms)
        if self.game_t0 is None:
            self.game_t0 = t
        self._now_t = t
        if self.recorder is not None:
            self._record(image, t)
        with self._lock:
            game, camera = self.game.id, self.live.camera
        try:
            obs = self._observe_expecting(image, camera, game)
        except RefcamError as exc:
            # e.g. a hand over every sticker: an empty table for the tracker, which remembers the pieces
            if not isinstance(exc, NoStickersError):
                self._warn_once(f"cannot observe this frame: {exc}", entry_ms)
            obs = Observation(pieces=(), game=game)
        except Exception as exc:  # a vision bug on one frame must not stop the page
            self._warn_once(f"vision failed on a frame ({type(exc).__name__}: {exc}); frame skipped", entry_ms)
            obs = Observation(pieces=(), game=game)
        for w in obs.warnings:
            self._warn_once(w, entry_ms)
        rulings: list[Ruling] = []
        with self._lock:
            update = self.tracker.update(obs, t)
            self.latest_update = update
            status_changed = update.status != self.status
            self.status = update.status
            self._keep_calm_frame(t, image, obs, entry_ms)
            if update.new_stable is not None:
                stable, picture = self._fused_stable(update.new_stable, image)
                self.stable_obs, self.stable_image, self.stable_t = stable, picture, t
                try:
                    step = self.game.step(self.state, stable, t)
                    self.state, rulings = step.state, list(step.rulings)
                    self._offending = offending_pieces(rulings) if rulings else self._offending
                except RefcamError as exc:
                    self._warn(f"the referee could not rule: {exc}", entry_ms)
                except Exception as exc:  # a referee bug: say so, keep refereeing the next states
                    self._warn(f"the referee failed on this state ({type(exc).__name__}: {exc})", entry_ms)
        if status_changed or update.new_stable is not None:
            self._publish(self.status_event(), entry_ms)
        for r in rulings:
            self._publish(self.ruling_event(r), entry_ms, keep=True)
        if update.new_stable is not None:
            self._publish({"type": "state", "state": self.state_json(), "t": t}, entry_ms)
        if self.live.stream and (self.frames.clients or self.latest_jpeg is None):
            try:
                self._publish_frame(image, obs, update, entry_ms)
            except Exception as exc:  # a drawing bug must not stop the refereeing
                self._drawing_failed(exc, entry_ms)
        return rulings

    def _observe_expecting(self, image: np.ndarray, camera, game: str) -> Observation:
        """self.observe, handed the pieces the game needs now and where (expected_pieces_of) when it
        takes them (pipeline_observe and tracking_observe do: they re-read those not read)."""
        if not getattr(self.observe, "takes_expected", False):
            return self.observe(image, camera, game)
        from referee.game import expected_pieces_of

        with self._lock:
            expected = expected_pieces_of(self.game, self.state)
        return self.observe(image, camera, game, expected=expected)

    def _keep_calm_frame(self, t: float, image: np.ndarray, obs: Observation, entry_ms: float | None) -> None:
        """Keep the frames of the table's current calm period (the tracker's), the newest
        fuse_frames of them within fuse_max_bytes, each with the stickers its observe found (an
        observe that keeps no stickers, a test's stand-in, turns fusion off); and fuse them once
        per calm period, as soon as they are all there or on the frame that completes the table's
        hold (the tracker's hold_s), before its state is ruled (and only when it is worth it:
        vision.fusion.worth_fusing). Only frames whose pictures agree are fused: a frame that differs
        from the newest by more than the motion check's grey levels in any cell (a hand still
        withdrawing over a table the tracker already finds calm) is let go, or its average would
        hold a ghost of the hand."""
        from vision.detect import to_gray
        from vision.fusion import stickers_from_observation
        from vision.roi import motion_cells, same_cells

        stickers = stickers_from_observation(obs)
        calm_since = self.tracker.calm_since
        keep = min(self.live.fuse_frames, self.live.fuse_max_bytes // max(image.nbytes, 1))
        if calm_since is None or stickers is None or keep < 2:
            self._calm_frames.clear()
            self._calm_fused = None
            return
        cells = motion_cells(to_gray(image))
        agree = [f for f in self._calm_frames if f[0] >= calm_since and same_cells(cells, f[3])]
        if len(agree) < len(self._calm_frames):
            self._calm_frames = collections.deque(agree)
        self._calm_frames.append((t, image, stickers, cells))
        while len(self._calm_frames) > keep:
            self._calm_frames.popleft()
        if self._calm_fused is not None and self._calm_fused[0] != calm_since:
            self._calm_fused = None  # fused in an earlier calm period
        due = len(self._calm_frames) >= keep or \
            self.tracker.hold_s(calm_since, t) >= self.tracker.settings.stable_s - 1e-9
        if self._calm_fused is None and len(self._calm_frames) >= 2 and due:
            self._calm_fused = (calm_since, self._fuse_calm_frames(entry_ms))

    def _fuse_calm_frames(self, entry_ms: float | None) -> tuple[Observation, np.ndarray] | None:
        """(observation, picture) of the kept calm frames fused on the newest (vision/fusion.py),
        or None when it reads nothing."""
        from vision import fusion

        frames = [fusion.Frame(img, st, f"frame at {ft:.2f} s") for ft, img, st, _ in reversed(self._calm_frames)]
        if not fusion.worth_fusing(frames):  # quiet frames that all read the same stickers
            return None
        t0 = time.perf_counter()
        try:
            # checked: a frame is kept only with the stickers its observe read, after the stream's guard
            fused_obs, fused = fusion.observe_fused(frames, self.live.camera, self.game.id, strict=False,
                                                    min_reads=fusion.LIVE_MIN_READS, checked=True)
            return fused_obs, fused.image
        except RefcamError:
            return None
        except Exception as exc:  # a vision bug in the fusion must not stop the ruling
            self._warn_once(f"could not fuse the still frames ({type(exc).__name__}: {exc})", entry_ms)
            return None
        finally:
            self.fusion_s.append(time.perf_counter() - t0)

    def _fused_stable(self, stable: Observation, image: np.ndarray) -> tuple[Observation, np.ndarray]:
        """The new stable state with what the fusion of its calm period read and the tracker's
        state lacks (vision.fusion.with_fused_pieces), and the fused picture to draw it on; the
        tracker's state and the frame as they are when there was nothing to fuse or it read nothing."""
        from vision.fusion import with_fused_pieces

        if self._calm_fused is None or self._calm_fused[1] is None:
            return stable, image
        fused_obs, picture = self._calm_fused[1]
        return with_fused_pieces(stable, fused_obs), picture

    def _drawing_failed(self, exc: Exception, entry_ms: float | None) -> None:
        self._warn_once(f"could not draw the live view ({type(exc).__name__}: {exc})", entry_ms)

    def drain(self, timeout: float = 5.0) -> bool:
        """Wait until every frame handed to the drawing thread is published (pipelined mode)."""
        return self._drawer.drain(timeout) if self._drawer is not None else True

    def _warn_once(self, message: str, entry_ms: float | None) -> None:
        key = re.sub(r"[-+]?\d[\d.]*", "#", message)  # the same warning with other numbers is not news
        if key not in self._warned:
            self._warned.add(key)
            self._warn(message, entry_ms)

    def _record(self, image: np.ndarray, t: float) -> None:
        import cv2

        ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 95])
        if ok:
            try:
                self.recorder.add_encoded(buf.tobytes(), t)
            except OSError as exc:
                self._warn_once(f"recording stopped: {exc.strerror or exc}: {exc.filename or self.recorder.folder}",
                                None)
                self.recorder = None

    def _publish_frame(self, image: np.ndarray, obs: Observation, update: TrackerUpdate,
                       entry_ms: float | None = None) -> None:
        """Draw and publish the frame: now, or on the drawing thread in pipelined mode."""
        if obs.image_from_game is not None:
            self._mapping = obs.image_from_game
        elif obs.pieces:
            self._mapping = None
        with self._lock:
            shapes = self._shapes(obs, update.pieces)
        job = (image, obs, update, self._mapping, shapes)
        if self._same_picture(image, job):
            job = None  # the last picture published again
        if self._drawer is not None:
            self._drawer.submit(job, entry_ms)
        else:
            self._draw_frame(job)

    def _same_picture(self, image: np.ndarray, job) -> bool:
        """Would this frame's picture be the last one again? Yes when what is drawn on it is the same
        (the very same observation, the same pieces, status, mapping and shapes) and the camera's
        picture differs from the last one drawn by no more than the motion check's grey levels in any
        cell (vision/roi.py: a still table's frames differ by noise only; a hand, a piece or a change
        of light shows at once, and a slow drift adds up against the picture last drawn)."""
        from vision.detect import to_gray
        from vision.roi import motion_cells, same_cells

        cells = motion_cells(to_gray(image))
        _, obs, update, mapping, shapes = job
        drawn = (obs, update.pieces, update.hidden, update.status, mapping, shapes)
        last = self._picture_kept
        same = last is not None and self.latest_jpeg is not None and last[0][0] is obs and last[0][1:] == drawn[1:] \
            and same_cells(cells, last[1])
        if not same:
            self._picture_kept = (drawn, cells)
        return same

    def _shapes(self, obs: Observation, poses) -> tuple[Shape, ...]:
        """The game's shapes for this state and observation, and the offending pieces' outlines: kept
        while the game, the state and the observation are the very same (frozen values; a table at
        rest hands on one observation frame after frame) and the outlines' pieces are where they were
        (under _lock)."""
        kept = self._shapes_kept
        if kept is None or kept[0] is not self.game or kept[1] is not self.state or kept[2] is not obs:
            kept = self._shapes_kept = (self.game, self.state, obs, tuple(self.game.shapes(self.state, obs)), None)
        outlines = kept[4]
        if outlines is None or outlines[0] != self._offending or (self._offending and outlines[1] != poses):
            outlines = (self._offending, poses, offending_outlines(self._offending, poses))
            self._shapes_kept = kept[:4] + (outlines,)
        return kept[3] + outlines[2]

    def _page_boxes(self, boxes: list, k: float) -> list:
        """The label boxes in the camera frame's pixels (drawn k times smaller): the last list again
        when the overlay handed on the very same boxes (a layer put on again)."""
        kept = self._boxes_kept
        if kept is not None and kept[1] == k and len(kept[0]) == len(boxes) and all(a is b for a, b in zip(kept[0], boxes)):
            return kept[2]
        out = [replace(b, x0=b.x0 * k, y0=b.y0 * k, x1=b.x1 * k, y1=b.y1 * k) for b in boxes]
        self._boxes_kept = (list(boxes), k, out)
        return out

    def _draw_frame(self, job) -> None:
        """The overlay drawn (at the page's size), encoded as JPEG and published to the stream; job None:
        the last picture published again (_same_picture)."""
        import cv2

        from webui.overlay import render_overlay

        if job is None:
            if self.latest_jpeg is not None:
                self.frames.publish(self.latest_jpeg)
            return
        image, obs, update, mapping, shapes = job
        h, w = image.shape[:2]
        f = min(1.0, self.live.stream_max_width / w)
        size = (self.live.stream_max_width, int(round(h * f)))
        if f < 1.0 and self.live.draw_at_page_size and mapping is not None:
            image = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
            mapping = scaled_mapping(mapping, f)
        drawn = render_overlay(image, obs, update.pieces, update.hidden, update.status, mapping, shapes)
        annotated = drawn.image
        self.latest_labels = self._page_boxes(drawn.boxes, w / annotated.shape[1])  # wherever they were drawn
        if annotated.shape[1] > self.live.stream_max_width:  # its own height: the legend's strip is under it
            ah, aw = annotated.shape[:2]
            annotated = cv2.resize(annotated, (self.live.stream_max_width, int(round(ah * self.live.stream_max_width / aw))),
                                   interpolation=cv2.INTER_AREA)
        ok, buf = cv2.imencode(".jpg", annotated, [cv2.IMWRITE_JPEG_QUALITY, self.live.jpeg_quality])
        if ok:
            self.latest_jpeg = buf.tobytes()
            self.frames.publish(self.latest_jpeg)

    # ----- settle it -------------------------------------------------------------------
    def settle(self) -> dict:
        """Freeze the newest stable state: the game's explanation picture (PNG bytes) and its measures.

        A game without an explanation gets the live overlay of that state, with its view as the measures."""
        with self._lock:
            obs, image, t = self.stable_obs, self.stable_image, self.stable_t
            game, state = self.game, self.state  # a frozen state: drawn while the engine goes on ruling
        if obs is None or image is None:
            raise RefcamError("no stable state yet: wait until the table is still")
        explanation = game.explain(state, obs)
        if explanation is not None:
            from webui.photofinish import render_explanation

            picture, note = render_explanation(explanation, image, obs)
            measures = dict(explanation.measures)
            if note:
                measures["note"] = note
            return {"png": png_bytes(picture), "measures": measures, "lines": list(explanation.lines), "t": t,
                    "title": explanation.title}
        from webui.overlay import draw_overlay

        picture = draw_overlay(image, obs, obs.pieces, (), "stable", obs.image_from_game, game.shapes(state, obs))
        return {"png": png_bytes(picture), "measures": game.view(state).to_json(), "lines": [], "t": t,
                "title": f"{game.title}: the table as refcam saw it"}


class FrameDrawer:
    """The second stage of the pipelined engine: one thread drawing and encoding the frames the
    engine hands it, in order. One frame waits at most: the engine blocks on a second one until
    the thread takes the first (every frame is drawn, and memory stays bounded)."""

    def __init__(self, draw: Callable[[Any], None], failed: Callable[[Exception, float | None], None]):
        self._draw, self._failed = draw, failed
        self._jobs: queue.Queue = queue.Queue(maxsize=1)
        self.cpu_s = 0.0  # CPU seconds this thread spent drawing (tests/bench/speed.py)
        self._thread = threading.Thread(target=self._run, name="live-drawer", daemon=True)
        self._thread.start()

    def submit(self, job, entry_ms: float | None) -> None:
        self._jobs.put((job, entry_ms))

    def _run(self) -> None:
        while True:
            item = self._jobs.get()
            try:
                if item is None:
                    return
                job, entry_ms = item
                c0 = time.thread_time()
                try:
                    self._draw(job)
                except Exception as exc:  # a drawing bug must not stop the refereeing
                    self._failed(exc, entry_ms)
                self.cpu_s += time.thread_time() - c0
            finally:
                self._jobs.task_done()

    def drain(self, timeout: float) -> bool:
        """Wait (at most timeout seconds) until every submitted frame is drawn."""
        deadline = time.monotonic() + timeout
        while self._jobs.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.001)
        return not self._jobs.unfinished_tasks

    def close(self) -> None:
        if self._thread.is_alive():
            try:
                self._jobs.put(None, timeout=2.0)
            except queue.Full:
                return  # a drawing stuck: the daemon thread goes with the process
            self._thread.join(timeout=5.0)


# How far outside a piece's footprint its outline as an offending piece is drawn (mm): clear of
# the piece's own outline.
OFFENDING_MARGIN_MM = 4.0


def offending_pieces(rulings: list[Ruling]) -> tuple[str, ...]:
    """The pieces the illegal rulings among these name (details["pieces"]), in order, once each."""
    names: dict[str, None] = {}
    for r in rulings:
        pieces = r.details.get("pieces") if r.legal is False or r.kind == "violation" else None
        if isinstance(pieces, (list, tuple)):
            names.update((str(p), None) for p in pieces)
    return tuple(names)


def offending_outlines(names: tuple[str, ...], poses) -> tuple[Shape, ...]:
    """An outline just outside each named piece's footprint, where it is now (game-frame mm), in
    the "illegal" role; none for a piece with no pose or not in the catalog."""
    if not names:
        return ()
    from shapely.geometry import Polygon

    from referee.catalog import default_catalog, footprint_polygon
    from webui.overlay import piece_to_game

    catalog = default_catalog()
    out = []
    for pose in poses:
        if pose.name not in names or not catalog.has_piece(pose.name):
            continue
        local = footprint_polygon(catalog.piece(pose.name).footprint, 16)
        ring = Polygon(piece_to_game(pose, local)).buffer(OFFENDING_MARGIN_MM, quad_segs=4).exterior.coords
        out.append(Shape("polygon", tuple((float(x), float(y)) for x, y in ring), role="illegal",
                         legend="ruled illegal"))
    return tuple(out)


def recorded_declarations(source: FrameSource) -> list[Declaration]:
    """What the players declared while a session was recorded (none for a camera or a video),
    in session time from its first frame, oldest first."""
    session = getattr(source, "session", None)
    if session is None or source.info.kind != "session":
        return []
    return sorted((Declaration.from_json(d) for d in session.declarations()), key=lambda d: d.t)


def pipeline_observe(image: np.ndarray, camera, game: str | None, thorough: bool = True,
                     empty_ok: bool = True, detector=None, expected=(), memory=None) -> Observation:
    """vision.pipeline.observe, keeping the sticker detections, with the image-from-game mapping.

    thorough=False skips the detector's second look at small rejected candidates (a
    little faster, at the cost of the smallest stickers; `--quick` on the command line).
    detector: a vision.roi.RoiDetector that follows the stickers of a stream of frames
    (tracking_observe); None detects on the whole frame.
    expected: the pieces the game needs and where (referee.game.expected_pieces_of): each one not
    read is read again at its place (vision/reread.py). memory: a vision.reread.StreamMemory
    (tracking_observe): pieces read once stay candidates, still frames add up, motion is known.
    No sticker in view (a hand over the table) is an empty observation, not an error,
    unless empty_ok is False (a single picture on the command line).
    """
    from referee.catalog import default_catalog
    from vision import detect, pipeline

    catalog = default_catalog()
    gray = detect.to_gray(image)  # once, for the detector and the motion mask
    found = detector.detect(gray) if detector is not None else detect.detect_all(gray, catalog, second_pass=thorough)
    key = (id(camera), game, empty_ok, image.shape[:2])
    # a detector that can hand back the reading of a frame whose stickers all held (vision/roi.py)
    recall, remember = getattr(detector, "recall", None), getattr(detector, "remember", None)
    kept = recall(found, key) if recall is not None else None
    wanted = memory.expected(expected) if memory is not None else tuple(expected)
    if kept is not None and {e.name for e in wanted} <= set(kept.names()):
        # every sticker where it was last frame (vision/roi.py hold_px) and every piece wanted read
        # there: the same reading. A piece still unread is looked for again, its evidence adding up.
        return kept
    dets = [{"id": d.marker_id, "corners": d.corners.tolist()} for d in found.detections]
    h, w = image.shape[:2]
    motion = memory.motion(gray) if memory is not None else None
    try:
        obs = pipeline.observe(image, camera, game, catalog=catalog, detections=found, expected=wanted,
                               evidence=memory.evidence if memory is not None else None, motion=motion)
    except pipeline.NoStickersError:
        if not empty_ok:
            raise
        obs = Observation(pieces=(), game=game, image_size=(w, h), extra={"detections": dets})
    else:
        if memory is not None:
            memory.update(obs)
        obs = replace(obs, extra={**obs.extra, "detections": dets})
    if remember is not None:
        remember(found, key, obs)
    return obs


pipeline_observe.takes_expected = True  # LiveEngine hands it expected_pieces_of(game, state)

DETECT_MODES = ("follow", "regions", "whole")


def tracking_observe(thorough: bool = True, mode: str = "follow") -> ObserveFn:
    """The observe for a stream of frames (live page, replay). mode: how frames are searched
    while nothing moves (vision/roi.py): "follow" the stickers of the last frame (cheapest),
    detect in the "regions" around them (the same corners as whole frames), or "whole": every
    frame whole; follow and whole hold the stickers that stay put (vision/roi.py hold_px), so a
    table at rest is observed once. Each keeps a vision.reread.StreamMemory: a piece read once
    is re-read at its last place (sigma growing) until its place is seen empty, and each
    place's evidence adds up over the still frames (PiecePose.source "reread(Nx)")."""
    from functools import partial

    from referee.catalog import default_catalog
    from vision.reread import StreamMemory
    from vision.roi import RoiDetector, RoiSettings

    memory = StreamMemory()
    detector = RoiDetector(default_catalog(), second_pass=thorough, settings=RoiSettings(mode=mode))
    observe = partial(pipeline_observe, thorough=thorough, detector=detector, memory=memory)
    observe.takes_expected = True
    return observe


def scaled_mapping(mapping: ImageFromGame, f: float) -> ImageFromGame:
    """The image-from-game mapping of the picture resized f times (cv2.resize: pixel centres
    map as x' = (x + 0.5) f - 0.5)."""
    S = np.array([[f, 0.0, 0.5 * f - 0.5], [0.0, f, 0.5 * f - 0.5], [0.0, 0.0, 1.0]])
    H = S @ np.array(mapping.homography).reshape(3, 3)
    camera = mapping.camera
    if camera is not None:
        K = S @ np.array(camera[:9]).reshape(3, 3)
        camera = tuple(float(v) for v in K.ravel()) + tuple(camera[9:])
    return ImageFromGame(tuple(float(v) for v in (H / H[2, 2]).ravel()), camera)


def png_bytes(image: np.ndarray) -> bytes:
    import cv2

    ok, buf = cv2.imencode(".png", image)
    if not ok:  # pragma: no cover - encoding a valid array does not fail
        raise RefcamError("could not encode the picture as PNG")
    return buf.tobytes()


def jpeg_part(jpeg: bytes) -> bytes:
    """One part of a multipart/x-mixed-replace MJPEG stream."""
    return (b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: " + str(len(jpeg)).encode()
            + b"\r\n\r\n" + jpeg + b"\r\n")


def sse_message(event: dict) -> bytes:
    import json

    data = json.dumps(event, separators=(",", ":"))
    return f"id: {event.get('seq', 0)}\nevent: {event['type']}\ndata: {data}\n\n".encode()
