"""A phone or an IP camera as refcam's camera: an MJPEG-over-HTTP or RTSP stream URL.

Phone camera apps and IP cameras serve MJPEG over HTTP: one endless response of type
``multipart/x-mixed-replace; boundary=B`` whose parts are JPEG pictures. ``MjpegCapture``
reads it with the standard library alone (parts delimited by Content-Length where the
server sends one, else by the boundary line) and decodes each JPEG. RTSP goes through
OpenCV's FFmpeg backend, where the build has one.

``StreamSource`` is a FrameSource like the webcam's: a grabber thread keeps only the newest
frame. A dropped stream is never a crash: it is reported as "camera lost" (on_warning and
on_status) and reconnected with a growing pause (0.5 s, 1 s, 2 s, up to 5 s) until it comes
back or the source is closed.

``parse_camera`` is the one reading of a ``--camera`` value (an index or a URL) that
serve, record and calibrate share; ``open_camera_source`` opens either kind, and
``open_source`` the one source a command names (camera, recorded session or video).
"""

from __future__ import annotations

import base64
import http.client
import os
import re
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from referee import safeload
from vision.sources import (CameraSource, FrameSource, SessionSource, SourceError, SourceInfo, VideoSource,
                           newest_frames)

STREAM_SCHEMES = ("http", "https", "rtsp", "rtsps")
CONNECT_TIMEOUT_S = 5.0  # also the longest silence before a stream counts as lost
MAX_PART_BYTES = 16 * 1024 * 1024  # a JPEG bigger than this is not a camera frame
MAX_HEADER_LINE = 8192
MAX_PART_HEADERS = 32  # a camera sends 2 to 5 header lines a part; endless ones are a stream that lies
FROZEN_S = 10.0  # the same picture (bit for bit, or without a camera's sensor noise) this long: frozen
FROZEN_MEAN_DIFF = 0.05  # grey levels; a real sensor's noise alone moves frames by about 1
MAX_FRAME_PIXELS = 16_000_000  # a JPEG header claiming more is not decoded (vision.imageio.MAX_IMAGE_PIXELS)
NO_PICTURE_S = 3.0  # no decodable frame for this long: the camera is lost (at start-up: an error)
NO_PICTURE_MESSAGE = f"camera lost: no picture for {NO_PICTURE_S:g} s"


_UNSAFE_URL_CHARS = re.compile(r"[\x00-\x20\x7f]")


class StreamError(SourceError):
    """A stream URL that cannot be opened or is not a camera stream."""


def scrubbed(message: str, url: str) -> str:
    """message with the URL's secrets (user, password, query, the whole URL) replaced by ***:
    an exception from http.client or OpenCV may quote the URL it was given."""
    try:
        parts = urllib.parse.urlsplit(url)
        secrets = [url if url != public_url(url) else "", parts.query, parts.password or "",
                   urllib.parse.unquote(parts.password or ""), urllib.parse.unquote(parts.query)]
    except ValueError:
        secrets = [url if url != public_url(url) else ""]
    for secret in sorted((x for x in secrets if len(x) >= 3), key=len, reverse=True):
        message = message.replace(secret, "***").replace(repr(secret)[1:-1], "***")
    return message


def parse_camera(value: int | str) -> int | str:
    """A --camera value: a webcam index (0 = the first camera) or a stream URL
    (http(s):// MJPEG, rtsp://). Returns the int index or the URL; refuses anything else in one line,
    which never shows the URL's user, password or query (public_url)."""
    if isinstance(value, int):
        index = value
    else:
        text = str(value).strip()
        shown = public_url(text) if "://" in text else _shown_plain(text)
        try:
            parts = urllib.parse.urlsplit(text)
            parts.port  # noqa: B018 - raises ValueError for a port that is not a number
        except ValueError as exc:  # "http://[::1" is an unclosed IPv6 address
            raise StreamError(f"--camera {shown}: not a URL refcam can read ({exc})") from None
        scheme = parts.scheme.lower()
        if scheme in STREAM_SCHEMES:
            if not parts.hostname:
                raise StreamError(f"--camera {shown}: the URL names no host (e.g. http://192.168.1.20:8080/video)")
            if _UNSAFE_URL_CHARS.search(text):  # http.client refuses them later, quoting the whole URL
                raise StreamError(f"--camera {shown}: the URL holds a space or a control character "
                                  f"(write a space as %20)")
            return text
        if "://" in text:
            raise StreamError(f"--camera {shown}: unsupported stream type {scheme!r} (use http://, "
                              f"https:// for MJPEG or rtsp://)")
        try:
            index = int(text)
        except ValueError:
            raise StreamError(f"--camera {shown} is neither a camera index (0, 1, ...) nor a stream URL "
                              f"(http://PHONE:8080/video)") from None
    if index < 0:
        raise StreamError(f"--camera {index}: camera indices start at 0")
    return index


def _shown_plain(text: str) -> str:
    """A --camera value that is not a URL, as shown: without what could be a user and password
    (before an @) or a query (after a ? or a #), in case it was a URL missing its scheme."""
    head = text.split("?", 1)[0].split("#", 1)[0].rsplit("@", 1)[-1]
    return safeload.show(head + ("..." if head != text else ""))


def public_url(url: str) -> str:
    """The URL as shown anywhere (messages, the page, the recording's header): scheme, host,
    port and path only. User info, the query string (cameras take ?user=..&pwd=.. there) and
    the fragment never leave this process."""
    try:
        parts = urllib.parse.urlsplit(str(url))
        host = parts.hostname or ""
        port = parts.port
    except ValueError:  # a port that is not a number, an unclosed [: show no more than the scheme
        return f"{safeload.show(str(url).split(':', 1)[0][:10])[1:-1]}://(unreadable address)"
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{port}" if port else host
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _request_url(url: str) -> str:
    """The URL to fetch: everything but the user info (sent as a header instead)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))


def _request(url: str) -> urllib.request.Request:
    """A GET for the URL; user:password@ in the URL becomes HTTP basic authentication."""
    parts = urllib.parse.urlsplit(url)
    req = urllib.request.Request(_request_url(url), headers={"User-Agent": "refcam"})
    if parts.username is not None:
        token = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
        req.add_header("Authorization", "Basic " + base64.b64encode(token.encode()).decode("ascii"))
    return req


def _origin(url: str) -> tuple:
    parts = urllib.parse.urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    return parts.scheme.lower(), (parts.hostname or "").lower(), port


class _SameOriginAuthRedirects(urllib.request.HTTPRedirectHandler):
    """Follows a camera's redirect, but sends its password only to the origin it was given for:
    urllib's own handler copied `Authorization` to whatever host the Location named."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and _origin(new.full_url) != _origin(req.full_url):
            for name in list(new.headers):
                if name.lower() == "authorization":
                    del new.headers[name]
        return new


_OPENER = urllib.request.build_opener(_SameOriginAuthRedirects)


def _boundary(content_type: str) -> bytes | None:
    """The multipart boundary of an MJPEG response, without leading dashes (servers differ)."""
    kind, _, params = content_type.partition(";")
    if kind.strip().lower() != "multipart/x-mixed-replace":
        return None
    for param in params.split(";"):
        key, _, value = param.strip().partition("=")
        if key.strip().lower() == "boundary" and value.strip():
            return value.strip().strip('"').lstrip("-").encode("latin-1")
    return None


def _is_boundary(line: bytes, boundary: bytes) -> bool:
    text = line.strip()
    return text.startswith(b"--") and text.lstrip(b"-").rstrip(b"-") == boundary.rstrip(b"-")


def read_parts(stream, boundary: bytes) -> Iterator[bytes]:
    """The bodies of a multipart/x-mixed-replace stream, in order, until it ends.

    stream: a buffered binary file (readline, read). A part with Content-Length is read to
    that length; without one, up to the next boundary line (the CRLF before it is the delimiter's).
    A stream that lies ends here, never in unbounded memory: more than MAX_PART_HEADERS header
    lines, or more than MAX_PART_BYTES without a boundary, ends the stream (the caller reconnects)."""
    line = _skip_to_boundary(stream, stream.readline(MAX_HEADER_LINE), boundary)  # a preamble
    while line:
        headers = _part_headers(stream)
        if headers is None:
            return
        length = headers.get("content-length", "").strip()
        if length.isdigit() and len(length) < 10 and int(length) <= MAX_PART_BYTES:
            body = stream.read(int(length))
            if len(body) < int(length):
                return  # cut off mid-part
            line = _skip_to_boundary(stream, stream.readline(MAX_HEADER_LINE), boundary)
        else:
            chunks, size = [], 0
            line = stream.readline(MAX_HEADER_LINE)
            while line and not _is_boundary(line, boundary):
                chunks.append(line)
                size += len(line)
                if size > MAX_PART_BYTES:
                    return
                line = stream.readline(MAX_HEADER_LINE)
            if not line:
                return  # cut off: the part may be incomplete
            body = b"".join(chunks)
            body = body[:-2] if body.endswith(b"\r\n") else body.rstrip(b"\n")
        yield body


def _skip_to_boundary(stream, line: bytes, boundary: bytes) -> bytes:
    """Read on to the next boundary line (returned), at most MAX_PART_BYTES; b"" when there is none."""
    skipped = 0
    while line and not _is_boundary(line, boundary):
        skipped += len(line)
        if skipped > MAX_PART_BYTES:
            return b""
        line = stream.readline(MAX_HEADER_LINE)
    return line


def _part_headers(stream) -> dict | None:
    """A part's header lines up to the blank line, at most MAX_PART_HEADERS; None: the stream ended or lied."""
    headers: dict[str, str] = {}
    for _ in range(MAX_PART_HEADERS + 1):
        line = stream.readline(MAX_HEADER_LINE)
        if not line:
            return None
        if not line.strip():
            return headers
        key, _, value = line.decode("latin-1").partition(":")
        headers[key.strip().lower()[:64]] = value.strip()[:256]
    return None


def decode_frame(body: bytes):
    """A part's JPEG (or PNG) as a BGR image, or None: not a picture, a header claiming more
    than MAX_FRAME_PIXELS (a 20000x20000 claim would take 1.2 GB to decode), or a JPEG of more
    scans than vision.imageio decodes."""
    import cv2

    from vision.imageio import MAX_JPEG_SCANS, MAX_SIDE_PIXELS, decoded_size, jpeg_scans

    size = decoded_size(body)
    if size is None or size[0] * size[1] > MAX_FRAME_PIXELS or 0 in size[:2] or max(size[:2]) > MAX_SIDE_PIXELS:
        return None
    if jpeg_scans(body) > MAX_JPEG_SCANS:  # a frame that would take seconds to decode: dropped
        return None
    return cv2.imdecode(np.frombuffer(body, np.uint8), cv2.IMREAD_COLOR)


def _http_failure(exc: BaseException) -> str:
    """Why opening a stream failed, in words: the OS's reason, or what the camera's answer broke."""
    reason = getattr(exc, "reason", None) or exc
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror
    if isinstance(reason, http.client.HTTPException):
        detail = " ".join(str(reason).split())[:120]
        return f"the camera's answer is not HTTP a browser would read ({type(reason).__name__}: {detail or '-'})"
    return " ".join(str(reason).split())[:200] or type(reason).__name__


class MjpegCapture:
    """An MJPEG-over-HTTP stream read like a cv2.VideoCapture: isOpened(), read(), release().

    Opening raises StreamError with the reason (refused, timed out, not MJPEG, HTTP 404)."""

    def __init__(self, url: str, timeout_s: float = CONNECT_TIMEOUT_S):
        self.url = url
        self.undecodable = 0
        self.lost: str | None = None  # why read() gave up, when it was the NO_PICTURE_S timer
        try:
            self._response = _OPENER.open(_request(url), timeout=timeout_s)
        except urllib.error.HTTPError as exc:
            raise StreamError(scrubbed(f"stream {public_url(url)}: HTTP {exc.code} {exc.reason}", url)) from None
        except Exception as exc:  # noqa: BLE001 - refused, timed out, and every lie of the HTTP layer
            raise StreamError(scrubbed(f"cannot open stream {public_url(url)}: {_http_failure(exc)}", url)) from None
        content_type = self._response.headers.get("Content-Type", "")
        boundary = _boundary(content_type)
        if boundary is None:
            self._response.close()
            raise StreamError(f"stream {public_url(url)} is not MJPEG (Content-Type {content_type or 'missing'!r}; "
                              f"a phone app's video URL usually ends in /video or /mjpeg)")
        self._parts = read_parts(self._response, boundary)
        self._open = True

    def isOpened(self) -> bool:  # noqa: N802 - the cv2.VideoCapture spelling
        return self._open

    def read(self) -> tuple[bool, np.ndarray | None]:
        """The next decodable frame; (False, None) once the stream has ended or broken, or when
        no frame decoded for NO_PICTURE_S (a trickle, garbage, endless lies: `lost` says so).
        A timer breaks a read stuck in the socket, whoever the reader is (calibrate too)."""
        timer = threading.Timer(NO_PICTURE_S, self._no_picture)
        timer.daemon = True
        timer.start()
        try:
            return self._read_decodable()
        finally:
            timer.cancel()

    def _no_picture(self) -> None:
        self.lost = NO_PICTURE_MESSAGE
        self.interrupt()

    def _read_decodable(self) -> tuple[bool, np.ndarray | None]:
        while self._open:
            try:
                body = next(self._parts)
            except Exception:  # noqa: BLE001 - ended, reset, or a lie of the HTTP layer (a chunk of 2**64 bytes)
                self.release()
                break
            image = decode_frame(body)
            if image is not None:
                return True, image
            self.undecodable += 1  # a torn or foreign part: skip it, as a camera drops a frame
        return False, None

    def release(self) -> None:
        self._open = False
        try:
            self._response.close()
        except OSError:
            pass

    def interrupt(self) -> None:
        """Wake a read() blocked on the socket in another thread (closing the source)."""
        sock = getattr(getattr(getattr(self._response, "fp", None), "raw", None), "_sock", None)
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _open_rtsp(url: str):
    """cv2.VideoCapture on the FFmpeg backend, with open and read timeouts."""
    import cv2

    os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")
    params = [cv2.CAP_PROP_OPEN_TIMEOUT_MSEC, int(CONNECT_TIMEOUT_S * 1000),
              cv2.CAP_PROP_READ_TIMEOUT_MSEC, int(CONNECT_TIMEOUT_S * 1000)]
    level = cv2.utils.logging.getLogLevel()
    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)  # the error below says it in one line
    try:
        cap = cv2.VideoCapture(url, cv2.CAP_FFMPEG, params)
    finally:
        cv2.utils.logging.setLogLevel(level)
    if not cap.isOpened():
        cap.release()
        raise StreamError(f"cannot open stream {public_url(url)} (OpenCV's FFmpeg backend could not connect "
                          f"or is missing from this build)")
    return cap


def open_stream_capture(url: str):
    """A cv2.VideoCapture-like reader for a stream URL; raises StreamError when it cannot connect."""
    if urllib.parse.urlsplit(url).scheme.lower() in ("rtsp", "rtsps"):
        return _open_rtsp(url)
    return MjpegCapture(url)


def _open_with_deadline(url: str, factory: Callable[[str], object]):
    """(capture, first frame) within the start-up limits, else StreamError in one line: a camera
    that cannot be reached in CONNECT_TIMEOUT_S, or one that connects and then sends no decodable
    picture for NO_PICTURE_S (endless headers, garbage, one byte every two seconds), which used to
    make `serve` and `record` hang with no output. The work runs on a helper thread, so a read
    stuck in a socket never holds the command."""
    found: dict = {}
    done = threading.Event()

    def attempt() -> None:
        try:
            found["cap"] = cap = factory(url)
            found["connected"] = time.monotonic()
            found["read"] = cap.read()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller below
            found["error"] = exc
        finally:
            done.set()

    threading.Thread(target=attempt, name="open-stream", daemon=True).start()
    t0 = time.monotonic()
    while not done.wait(0.05):
        now = time.monotonic()
        connected = found.get("connected")
        if (connected is not None and now - connected > NO_PICTURE_S) or (connected is None and
                                                                          now - t0 > CONNECT_TIMEOUT_S):
            break
    mute = (f"{NO_PICTURE_MESSAGE} from stream {public_url(url)} (it connected, then sent nothing refcam "
            f"could decode)")
    if not done.is_set():
        cap = found.get("cap")
        if cap is not None:
            getattr(cap, "interrupt", lambda: None)()
            raise StreamError(mute)
        raise StreamError(f"cannot open stream {public_url(url)}: no answer in {CONNECT_TIMEOUT_S:g} s")
    if "error" in found:
        error = found["error"]
        if isinstance(error, SourceError):
            raise error
        raise StreamError(scrubbed(f"cannot open stream {public_url(url)}: {_http_failure(error)}", url))
    ok, first = found["read"]
    if not ok or first is None:
        found["cap"].release()
        if getattr(found["cap"], "lost", None):  # the capture's own no-picture timer ended the read
            raise StreamError(mute)
        raise StreamError(f"stream {public_url(url)} sent no picture")
    return found["cap"], first


class StreamSource(FrameSource):
    """A network camera (MJPEG over HTTP, or RTSP). The first connection must succeed and show a
    picture within NO_PICTURE_S (a wrong URL or a mute camera is a one-line error); later drops
    are retried with backoff. A watchdog thread calls the camera lost when no frame decodes for
    NO_PICTURE_S, whatever the stream keeps sending, and breaks the stuck read to reconnect."""

    BACKOFF_S = (0.5, 1.0, 2.0, 5.0)  # pause before reconnect attempt 1, 2, 3, 4 and later

    def __init__(self, url: str, capture_factory: Callable[[str], object] = open_stream_capture,
                 clock: Callable[[], float] = time.monotonic):
        super().__init__()
        self.url = url
        self._factory = capture_factory
        self._clock = clock  # the watchdog's and the frozen check's time (tests pass their own)
        cap, first = _open_with_deadline(url, capture_factory)
        self._cap = cap
        name = f"stream {public_url(url)}"
        self.info = SourceInfo(kind="stream", name=name, frame_size=(first.shape[1], first.shape[0]))
        self._cond = threading.Condition()
        self._t0 = clock()
        self._newest: tuple[float, np.ndarray] | None = (0.0, first)
        self._picture_due = clock() + NO_PICTURE_S  # the watchdog's deadline for the next frame
        self._previous: np.ndarray | None = first[::8, ::8].astype(np.int16)  # a sample of the last frame
        self._same_since = clock()  # when the picture last changed
        self.frozen = False
        self.frames_grabbed = 1
        self.frames_dropped = 0
        self.reconnects = 0
        self.pictureless = 0  # times the watchdog found no picture for NO_PICTURE_S
        self.last_error = ""  # why the last reconnect failed
        self._lost_reason: str | None = None  # why the camera was called lost, for the status while away
        self._thread: threading.Thread | None = None
        self._watchdog: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._picture_due = self._clock() + NO_PICTURE_S
            self._thread = threading.Thread(target=self._grab_loop, name="grab-stream", daemon=True)
            self._thread.start()
            self._watchdog = threading.Thread(target=self._watch, name="watch-stream", daemon=True)
            self._watchdog.start()

    def _watch(self) -> None:
        """Call the camera lost when no frame has decoded by the deadline, and break the read."""
        while not self._closed.wait(0.2):
            self.watch_once()

    def watch_once(self) -> None:
        """One look of the watchdog: past the deadline for a picture, the camera is lost."""
        if self._clock() <= self._picture_due:
            return
        self.pictureless += 1
        self._picture_due = float("inf")  # the grab loop sets a new deadline when it reconnects
        self._lost_reason = f"{NO_PICTURE_MESSAGE} from {self.info.name}"
        self.warn(f"{self._lost_reason}; reconnecting")
        self.set_state("lost", f"{self._lost_reason}; reconnecting")
        getattr(self._cap, "interrupt", lambda: None)()

    def _reconnect(self):
        """Try again with growing pauses until connected (returns the capture) or closed (None), for as
        long as the source is open. Each attempt has the start-up's deadlines, and whatever it meets
        (a lie of the HTTP layer, a camera that connects and sends nothing) is one more failed attempt:
        one bad answer used to end the reader thread while the page said "retrying" forever."""
        attempt = 0
        self._picture_due = float("inf")  # no deadline while away: the state already says lost
        while not self.closed:
            pause = self.BACKOFF_S[min(attempt, len(self.BACKOFF_S) - 1)]
            why = self._lost_reason or f"camera lost: {self.info.name}"  # e.g. "camera lost: no picture for 3 s"
            self.set_state("lost", f"{why}; retrying in {pause:g} s")
            if self._closed.wait(pause):
                return None
            attempt += 1
            try:
                cap, first = _open_with_deadline(self.url, self._factory)
            except Exception as exc:  # noqa: BLE001 - StreamError, or a factory's own bug: try again
                self.last_error = scrubbed(str(exc), self.url)
                continue
            self._cap = cap
            self.reconnects += 1
            self._note_frame(first)
            return cap
        return None

    def _grab_loop(self) -> None:
        cap = self._cap
        self.set_state("running", f"{self.info.name} live")
        while not self.closed and cap is not None:
            try:
                ok, img = cap.read()
            except Exception:  # noqa: BLE001 - whatever a capture raises, the camera is lost, not the thread
                ok, img = False, None
            if not ok or img is None:
                cap.release()
                if self.closed:
                    break
                if self.state != "lost":
                    why = getattr(cap, "lost", None)  # the capture's own no-picture timer fired
                    self._lost_reason = f"{why} from {self.info.name}" if why else None
                    self.warn(f"{self._lost_reason or f'camera lost: {self.info.name} stopped sending'}; reconnecting")
                cap = self._reconnect()
                self._lost_reason = None
                continue
            self._note_frame(img)
        if cap is not None:
            cap.release()
        with self._cond:
            self._cond.notify_all()

    def _note_frame(self, img: np.ndarray) -> None:
        """A decoded frame: the watchdog's next deadline, the frozen check, and the newest frame."""
        now = self._clock()
        self._picture_due = now + NO_PICTURE_S
        sample = img[::8, ::8].astype(np.int16)
        previous, self._previous = self._previous, sample
        if previous is None or previous.shape != sample.shape \
                or float(np.abs(sample - previous).mean()) > FROZEN_MEAN_DIFF:
            self._same_since = now
        if now - self._same_since >= FROZEN_S:
            if not self.frozen:
                self.frozen = True
                message = (f"camera frozen: {self.info.name} has sent the same picture for {FROZEN_S:g} s "
                           f"(no sensor noise at all); it is not live")
                self.warn(message)
                self.set_state("lost", message)
        elif self.state != "running" or self.frozen:
            self.frozen = False
            self.set_state("running", f"camera back: {self.info.name}")
        with self._cond:
            if self._newest is not None:
                self.frames_dropped += 1  # the consumer did not take the previous one: replace it
            self._newest = (self._clock() - self._t0, img)
            self.frames_grabbed += 1
            self._cond.notify_all()

    __iter__ = newest_frames

    def close(self) -> None:
        super().close()
        with self._cond:
            self._cond.notify_all()
        if hasattr(self._cap, "interrupt"):
            self._cap.interrupt()
        if self._thread is not None:
            self._thread.join(timeout=CONNECT_TIMEOUT_S + 1.0)
        elif self._cap is not None:
            self._cap.release()


def open_camera_source(camera: int | str) -> FrameSource:
    """The source a --camera value names: a webcam by index, or a network stream by URL."""
    spec = parse_camera(camera)
    if isinstance(spec, str):
        return StreamSource(spec)
    return CameraSource(spec)


def open_source(camera: int | str | None = None, replay: str | Path | None = None, video: str | Path | None = None,
                fast: bool = False, loop: bool = False) -> FrameSource:
    """The one source the command line names (exactly one of camera / replay / video)."""
    given = [x is not None for x in (camera, replay, video)]
    if sum(given) != 1:
        raise SourceError("choose exactly one source: --camera N|URL, --replay DIR or --video FILE")
    if camera is not None:
        return open_camera_source(camera)  # a webcam index or a phone's / IP camera's stream URL
    if replay is not None:
        return SessionSource(replay, realtime=not fast, loop=loop)
    return VideoSource(video, realtime=not fast, loop=loop)
