"""Frame sources behind one interface: a webcam, a recorded session folder, a video file.

Iterating a source yields ``(t, image)``: t in seconds from the start of the source,
image (H, W, 3) BGR uint8. ``source.info`` tells what it is; ``source.status`` is a
short line for the page ("camera lost: camera 0 ..."); warnings (skipped frames) go to
``source.on_warning`` as they happen and are kept in ``source.warnings``.

``source.state`` is one of STATES, with ``source.state_message`` saying why; every change
goes to ``source.on_state(state, message)`` and, as the status line, to ``on_status``:

* "running": frames are coming (or about to).
* "ended":   a replay or video reached its end (not looping); iteration stops.
* "lost":    the camera stopped delivering; the source retries with growing pauses
             (1, 2, 4, 8 s) and goes back to "running" when frames return.
* "error":   the source cannot go on (its session folder or video file vanished, or a
             whole pass read no frame); iteration raises SourceError with the same message,
             so a looping replay never spins on nothing.

* CameraSource: a grabber thread reads the camera continuously and keeps only the
  newest frame, so the consumer never works through a backlog of stale frames. A
  camera that stops delivering is reported and reopened every second until it
  returns or the source is closed.
* SessionSource: replays a session folder by its manifest timestamps (real time) or
  as fast as possible; a missing or undecodable frame is skipped with a warning. In
  real time a slow consumer gets the newest due frame (older ones are passed over),
  as it would from a camera.
* VideoSource: a video file, paced by its own timestamps or as fast as possible.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from referee.errors import InvalidInputError
from vision.session import Session, read_session


class SourceError(InvalidInputError):
    """A frame source that cannot be opened (no such camera, unreadable video)."""


@dataclass
class SourceInfo:
    kind: str  # "camera", "session" or "video"
    name: str  # what to show: "camera 0", the folder, the file
    fps: float | None = None  # nominal frame rate, if known
    game: str | None = None  # the session header's game, if any
    camera_file: Path | None = None  # a session's own camera.json
    frame_count: int | None = None
    frame_size: tuple[int, int] | None = None  # (w, h) of the first frame
    loop: bool = False
    extra: dict = field(default_factory=dict)


STATES = ("running", "ended", "lost", "error")


class FrameSource:
    info: SourceInfo

    def __init__(self) -> None:
        self.status = ""
        self.state = "running"
        self.state_message = ""
        self.on_state: Callable[[str, str], None] | None = None
        self.warnings: list[str] = []
        self.on_warning: Callable[[str], None] | None = None
        self.on_status: Callable[[str], None] | None = None
        self.on_restart: Callable[[], None] | None = None  # a looping source starts again
        self._closed = threading.Event()

    def __iter__(self) -> Iterator[tuple[float, np.ndarray]]:
        raise NotImplementedError

    def warn(self, message: str) -> None:
        self.warnings.append(message)
        if self.on_warning:
            self.on_warning(message)

    def set_status(self, message: str) -> None:
        if message != self.status:
            self.status = message
            if self.on_status:
                self.on_status(message)

    def set_state(self, state: str, message: str) -> None:
        """Enter one of STATES; the message becomes the status line too."""
        assert state in STATES, state
        changed = (state, message) != (self.state, self.state_message)
        self.state, self.state_message = state, message
        if changed and self.on_state:
            self.on_state(state, message)
        self.set_status(message)

    def fail(self, message: str) -> SourceError:
        """Enter "error" and return the SourceError to raise (one line, for the page and the CLI)."""
        self.set_state("error", message)
        return SourceError(message)

    def close(self) -> None:
        self._closed.set()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()


def _decode_file(path: Path) -> np.ndarray:
    """Read an image, refusing truncated files (vision.imageio) where available."""
    try:
        from vision.imageio import load_image
    except ImportError:  # pragma: no cover - vision.imageio ships with the package
        import cv2

        img = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if img is None:
            raise InvalidInputError(f"{path} is not a readable image")
        return img
    return load_image(path)


def _first_size(frames) -> tuple[int, int] | None:
    """(w, h) of the first readable frame (bad frames are reported when replayed)."""
    for entry in frames[:5]:
        try:
            img = _decode_file(entry.path)
        except InvalidInputError:
            continue
        return img.shape[1], img.shape[0]
    return None


class SessionSource(FrameSource):
    """Replay a session folder (vision.session format)."""

    def __init__(self, folder: str | Path, realtime: bool = True, loop: bool = False, speed: float = 1.0):
        super().__init__()
        self.session: Session = read_session(folder)
        if not self.session.frames:
            raise SourceError(f"session folder {folder} holds no frames")
        self.realtime = realtime
        self.loop = loop
        self.speed = speed
        frames = self.session.frames
        span = frames[-1].t - frames[0].t
        fps = (len(frames) - 1) / span if span > 0 else None
        self.info = SourceInfo(kind="session", name=str(folder), fps=self.session.header.get("fps", fps),
                               game=self.session.game, camera_file=self.session.camera_file,
                               frame_count=len(frames), loop=loop, frame_size=_first_size(frames))
        self.index = -1  # index of the frame last yielded
        self.frames_skipped = 0  # real-time replay: frames passed over because the consumer was behind
        self.started = False
        self.frame_name = ""

    def __iter__(self) -> Iterator[tuple[float, np.ndarray]]:
        for w in self.session.warnings:
            self.warn(w)
        frames = self.session.frames
        t_first = frames[0].t
        period = (frames[-1].t - t_first) + (1.0 / self.info.fps if self.info.fps else 0.1)
        lap = 0
        reported: set[int] = set()  # frames already warned about: one warning each, not one per lap
        while not self.closed:
            wall0 = time.monotonic()
            yielded, skipped_before = 0, self.frames_skipped
            for k, entry in enumerate(frames):
                if self.closed:
                    return
                t = entry.t - t_first
                if self.realtime:
                    delay = wall0 + t / self.speed - time.monotonic()
                    if delay > 0 and self._closed.wait(delay):
                        return
                    # A consumer slower than the recording sees the newest due frame, like a live camera.
                    if k + 1 < len(frames) and wall0 + (frames[k + 1].t - t_first) / self.speed <= time.monotonic():
                        self.frames_skipped += 1
                        continue
                try:
                    img = _decode_file(entry.path)
                except InvalidInputError as exc:
                    self._frame_failed(entry, exc, reported)
                    continue
                self.index = entry.index
                self.frame_name = entry.path.name
                first = not self.started
                self.started = True
                yielded += 1
                yield t + lap * period, img
                if first:
                    # The consumer's first frame includes its warm-up (imports, detector set-up):
                    # start the clock after it, so the replay does not begin by skipping frames.
                    wall0 = time.monotonic() - t / self.speed
            if yielded == 0 and self.frames_skipped == skipped_before:  # every frame failed: never spin
                raise self.fail(f"replay of {self.info.name} stopped: none of its {len(frames)} frames "
                                f"could be read")
            if not self.loop:
                self.set_state("ended", f"replay of {self.info.name} finished")
                return
            lap += 1
            if self.on_restart:
                self.on_restart()

    def _frame_failed(self, entry, exc: Exception, reported: set[int]) -> None:
        """A frame that cannot be read: a vanished session stops the replay with an error; a
        single bad or deleted frame is skipped with one warning."""
        folder = self.session.folder
        if not folder.is_dir() or not (folder / "manifest.jsonl").exists():
            raise self.fail(f"session folder {self.info.name} vanished during the replay (deleted or moved)")
        if entry.index not in reported:
            reported.add(entry.index)
            gone = not entry.path.exists() and self.started
            self.warn(f"frame {entry.path.name} vanished during the replay; skipped" if gone
                      else f"{exc}; frame skipped")


class VideoSource(FrameSource):
    """Frames of a video file (anything OpenCV's FFmpeg backend reads)."""

    def __init__(self, path: str | Path, realtime: bool = True, loop: bool = False):
        super().__init__()
        import cv2

        self.path = Path(path)
        if self.path.is_dir():
            raise SourceError(f"{self.path} is a folder, not a video file (a session folder goes to --replay)")
        from referee import safeload

        safeload.regular_file(self.path, "video file", SourceError)  # missing, a FIFO, a device, a loop
        # FFmpeg writes its own complaints about a bad file to stderr; the error below says it in one line
        # (OPENCV_FFMPEG_LOGLEVEL is read when a file is opened; a user's own setting wins)
        os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")
        cap = cv2.VideoCapture(str(self.path))
        ok, first = cap.read() if cap.isOpened() else (False, None)
        fps = cap.get(cv2.CAP_PROP_FPS) if ok else 0.0
        count = int(cap.get(cv2.CAP_PROP_FRAME_COUNT)) if ok else 0
        cap.release()
        if not ok:
            raise SourceError(f"{self.path} is not a readable video file")
        self.realtime = realtime
        self.loop = loop
        self.info = SourceInfo(kind="video", name=str(self.path), fps=fps if fps > 0 else None,
                               frame_count=count or None, loop=loop, frame_size=(first.shape[1], first.shape[0]))

    def __iter__(self) -> Iterator[tuple[float, np.ndarray]]:
        import cv2

        fps = self.info.fps or 30.0
        lap_offset = 0.0
        while not self.closed:
            if not self.path.is_file():
                raise self.fail(f"video file {self.path} vanished during the replay (deleted or moved)")
            cap = cv2.VideoCapture(str(self.path))
            wall0 = time.monotonic()
            n = 0
            t = 0.0
            try:
                while not self.closed:
                    ok, img = cap.read()
                    if not ok:
                        break
                    t = n / fps
                    n += 1
                    if self.realtime:
                        delay = wall0 + t - time.monotonic()
                        if delay > 0 and self._closed.wait(delay):
                            return
                    yield lap_offset + t, img
            finally:
                cap.release()
            if self.closed:
                return
            if n == 0:  # opened at start, now unreadable: never loop on nothing
                raise self.fail(f"video file {self.path} yields no frames any more")
            if not self.loop:
                self.set_state("ended", f"video {self.path} finished")
                return
            lap_offset += t + 1.0 / fps
            if self.on_restart:
                self.on_restart()


def _open_capture(index: int):
    """cv2.VideoCapture(index), without OpenCV's backend chatter when there is no such camera."""
    import cv2

    try:
        from cv2.utils import logging as cv_log
    except ImportError:  # pragma: no cover - builds without the logging bindings
        return cv2.VideoCapture(index)
    level = cv_log.getLogLevel()
    cv_log.setLogLevel(cv_log.LOG_LEVEL_ERROR)
    try:
        return cv2.VideoCapture(index)
    except (cv2.error, OverflowError):  # an index beyond a C int: no such camera
        return cv2.VideoCapture()
    finally:
        cv_log.setLogLevel(level)


def newest_frames(source) -> Iterator[tuple[float, np.ndarray]]:
    """Frames from a grabber thread, newest only: a slow consumer skips frames, never lags.

    The source has start(), closed, and _cond guarding _newest, which the thread sets."""
    source.start()
    while not source.closed:
        with source._cond:
            while source._newest is None and not source.closed:
                source._cond.wait(0.5)
            item, source._newest = source._newest, None
        if item is not None:
            yield item


class CameraSource(FrameSource):
    """A webcam; a grabber thread keeps only the newest frame.

    capture_factory(index) returns an object with isOpened(), read() -> (ok, image),
    release() (cv2.VideoCapture by default; tests pass a fake).
    """

    RETRY_S = 1.0  # first pause before reopening a lost camera; doubles up to MAX_RETRY_S
    MAX_RETRY_S = 8.0
    READ_FAILS_BEFORE_LOST = 5

    def __init__(self, index: int, capture_factory: Callable[[int], object] = _open_capture,
                 width: int | None = None, height: int | None = None):
        super().__init__()
        if index < 0:  # OpenCV's "any camera" (-1) crashes the process when there is none
            raise SourceError(f"--camera {index}: camera indices start at 0")
        self.index = index
        self._factory = capture_factory
        cap = capture_factory(index)
        ok = cap.isOpened()
        if ok:
            ok, first = cap.read()
        if not ok:
            cap.release()
            raise SourceError(f"camera {index} does not exist or cannot be opened")
        if width and height:
            self._set_size(cap, width, height)
        self._cap = cap
        if width and height:
            ok, first = cap.read()
        self.info = SourceInfo(kind="camera", name=f"camera {index}", fps=self._fps(cap),
                               frame_size=(first.shape[1], first.shape[0]) if ok and first is not None else None)
        self._cond = threading.Condition()
        self._newest: tuple[float, np.ndarray] | None = None
        self._seq = 0
        self._t0 = time.monotonic()
        self.frames_grabbed = 0
        self.frames_dropped = 0
        self._thread: threading.Thread | None = None

    @staticmethod
    def _fps(cap) -> float | None:
        try:
            import cv2

            fps = float(cap.get(cv2.CAP_PROP_FPS))
        except Exception:  # a fake capture without get()
            return None
        return fps if fps > 0 else None

    @staticmethod
    def _set_size(cap, width: int, height: int) -> None:
        import cv2

        cap.set(cv2.CAP_PROP_FRAME_WIDTH, width)
        cap.set(cv2.CAP_PROP_FRAME_HEIGHT, height)

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._grab_loop, name=f"grab-camera-{self.index}", daemon=True)
            self._thread.start()

    def _grab_loop(self) -> None:
        fails = 0
        cap = self._cap
        pause = self.RETRY_S
        self.set_state("running", f"camera {self.index} live")
        while not self.closed:
            if cap is None:
                if self._closed.wait(pause):
                    break
                cap = self._reopen()
                if cap is None:
                    pause = min(pause * 2, max(self.MAX_RETRY_S, self.RETRY_S))
                    self.set_state("lost", self._lost_message(pause))
                    continue
                fails, pause = 0, self.RETRY_S
                self.set_state("running", f"camera {self.index} back")
            try:
                ok, img = cap.read()
            except Exception:  # noqa: BLE001 - a driver that raises instead of returning False
                ok, img = False, None
            if not ok or img is None:
                fails += 1
                if fails >= self.READ_FAILS_BEFORE_LOST:
                    self._release(cap)
                    cap = None
                    self.warn(f"camera {self.index} lost; retrying every {self.RETRY_S:g} s, "
                              f"then less often (up to every {self.MAX_RETRY_S:g} s)")
                    self.set_state("lost", self._lost_message(pause))
                else:
                    time.sleep(0.01)
                continue
            fails = 0
            with self._cond:
                if self._newest is not None:
                    self.frames_dropped += 1  # the consumer did not take the previous one: replace it
                self._newest = (time.monotonic() - self._t0, img)
                self._seq += 1
                self.frames_grabbed += 1
                self._cond.notify_all()
        if cap is not None:
            self._release(cap)
        with self._cond:
            self._cond.notify_all()

    def _lost_message(self, pause: float) -> str:
        return f"camera lost: camera {self.index} stopped delivering frames; retrying in {pause:g} s"

    def _reopen(self):
        """A fresh capture of this camera, or None while it is still away."""
        try:
            cap = self._factory(self.index)
            if cap.isOpened():
                return cap
        except Exception:  # noqa: BLE001 - an unplugged device can make the backend raise
            return None
        self._release(cap)
        return None

    @staticmethod
    def _release(cap) -> None:
        try:
            cap.release()
        except Exception:  # noqa: BLE001 - releasing a vanished device must not stop the retries
            pass

    __iter__ = newest_frames

    def close(self) -> None:
        super().close()
        with self._cond:
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        elif self._cap is not None:
            self._cap.release()
