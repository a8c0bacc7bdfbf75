"""A camera that lies, for tests, `make fuzz` and the LAN bench: a loopback-only HTTP server
whose path picks the lie. Every mode answers ``multipart/x-mixed-replace`` like an MJPEG camera.

  /headers      one good frame, then a part whose header lines never end
  /garbage      random bytes with no boundary line, forever
  /random-parts well-formed parts whose bodies are random bytes (nothing decodes)
  /huge-jpeg    parts holding a JPEG whose header claims 20000x20000 pixels
  /trickle      one byte every 2 s
  /no-boundary  a response that never sends a boundary line (text, slowly)
  /good         small grey JPEG frames at 10 fps
  /good-then-frozen  a few good frames, then the connection stays open and silent
  /huge-length  a part whose Content-Length claims 10 GB
  /frozen       the same JPEG, bit for bit, at 10 fps forever (a camera whose picture froze)
HTTP-layer lies (raw bytes, no valid response head):
  /not-http     a status line that is not HTTP
  /many-headers 150 response headers (http.client stops at 100)
  /long-header  one header line of 100 kB
  /endless-headers  header lines, one every 0.05 s, never a blank line
  /huge-chunk   chunked transfer whose first chunk size is FFFFFFFFFFFFFFFF
  /long-status-line  a status line of 100 kB
Answers a camera gives when something else is wrong:
  /http-500  /unauthorized (401)  /redirect-loop (302 to itself)  /html (text/html, not MJPEG)
  /close-at-once (MJPEG headers, then the connection ends)  /slow-start (no answer for 8 s)
  /empty-parts (parts of zero bytes)  /wrong-boundary (parts under another boundary)
  /reset-mid-frame (half a frame, then a reset)  /negative-length (Content-Length: -5)
  /many-scan-frames (JPEGs of 5,000 scans)  /slow-frames (a good frame every 4 s)
  /tiny-frames (1x1 JPEGs)  /png-frames (good PNG frames)  /chunked-good (good frames, chunked)
  /gzip-garbage (Content-Encoding: gzip over junk)
Reconnection and credentials:
  /flaky        connection 1: five good frames, then it ends; connection 2: not HTTP; later: good
  /redirect?to=URL  302 to URL (another origin in the tests); `authorizations` records what each
                path was sent in its Authorization header

Bounded: each connection ends after `seconds` (default 60), and the server binds 127.0.0.1 only.
"""

from __future__ import annotations

import os
import struct
import time
import urllib.parse

from tests.mjpeg_server import LoopbackServer

BOUNDARY = b"lie"
MODES = ("headers", "garbage", "random-parts", "huge-jpeg", "trickle", "no-boundary", "good", "good-then-frozen",
         "huge-length", "frozen", "flaky", "redirect", "close-at-once", "empty-parts", "wrong-boundary",
         "reset-mid-frame", "negative-length", "many-scan-frames", "slow-frames", "tiny-frames", "png-frames")
STATUS_MODES = {"http-500": 500, "unauthorized": 401}
OTHER_MODES = ("redirect-loop", "html", "slow-start", "chunked-good", "gzip-garbage")
RAW_MODES = ("not-http", "many-headers", "long-header", "endless-headers", "huge-chunk", "long-status-line")
ALL_MODES = MODES + RAW_MODES + tuple(STATUS_MODES) + OTHER_MODES  # 34 behaviours
_MJPEG_HEAD = b"HTTP/1.0 200 OK\r\nContent-Type: multipart/x-mixed-replace; boundary=lie\r\n"


def grey_jpeg(level: int = 90, noise_seed: int | None = None) -> bytes:
    """A small grey JPEG; with noise_seed, with a camera's sensor noise (frames that differ)."""
    import cv2
    import numpy as np

    picture = np.full((60, 80, 3), level, np.int16)
    if noise_seed is not None:
        picture += np.random.default_rng(noise_seed).integers(-3, 4, picture.shape, dtype=np.int16)
    ok, buf = cv2.imencode(".jpg", picture.clip(0, 255).astype(np.uint8))
    assert ok
    return buf.tobytes()


def huge_jpeg_header(width: int = 20000, height: int = 20000) -> bytes:
    """A JPEG's start (SOI, a baseline SOF0 claiming width x height, 3 components), then junk."""
    sof = struct.pack(">BHHB", 8, height, width, 3) + b"\x01\x11\x00\x02\x11\x00\x03\x11\x00"
    return b"\xff\xd8" + b"\xff\xc0" + struct.pack(">H", len(sof) + 2) + sof + os.urandom(2000)


def part(body: bytes, length: int | None = None) -> bytes:
    n = len(body) if length is None else length
    return b"--" + BOUNDARY + b"\r\nContent-Type: image/jpeg\r\nContent-Length: " + str(n).encode() + b"\r\n\r\n" \
        + body + b"\r\n"


class FaultServer(LoopbackServer):
    def __init__(self, seconds: float = 60.0):
        self.seconds = seconds
        self.connections: dict[str, int] = {}  # mode -> connections so far
        self.authorizations: list[tuple[str, str | None]] = []  # (mode, Authorization header) per request
        super().__init__(self.serve)

    def url(self, mode: str) -> str:
        return f"http://127.0.0.1:{self.port}/{mode}"

    def serve(self, h) -> None:
        mode = h.path.strip("/").split("?")[0]
        self.connections[mode] = self.connections.get(mode, 0) + 1
        self.authorizations.append((mode, h.headers.get("Authorization")))
        if mode in RAW_MODES or (mode == "flaky" and self.connections[mode] == 2):
            self._raw(h.wfile, "not-http" if mode == "flaky" else mode)
            return
        if mode in STATUS_MODES:
            h.send_error(STATUS_MODES[mode])
            return
        if mode in OTHER_MODES:
            self._other(h, mode)
            return
        if mode == "redirect":
            target = urllib.parse.parse_qs(urllib.parse.urlsplit(h.path).query).get("to", [""])[0]
            h.send_response(302)
            h.send_header("Location", target)
            h.end_headers()
            return
        if mode not in MODES:
            h.send_error(404)
            return
        h.send_response(200)
        h.send_header("Content-Type", "multipart/x-mixed-replace; boundary=" + BOUNDARY.decode())
        h.end_headers()
        end = time.monotonic() + self.seconds
        try:
            getattr(self, "_" + mode.replace("-", "_"))(h.wfile, end)
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass

    def _other(self, h, mode: str) -> None:
        """Answers that are HTTP, but not a camera's MJPEG as refcam reads it."""
        try:
            if mode == "redirect-loop":
                h.send_response(302)
                h.send_header("Location", "/redirect-loop")
                h.end_headers()
            elif mode == "html":
                h.send_response(200)
                h.send_header("Content-Type", "text/html")
                h.end_headers()
                h.wfile.write(b"<html>camera login</html>")
            elif mode == "slow-start":
                self.stopping.wait(8.0)
                h.wfile.write(_MJPEG_HEAD + b"\r\n" + part(grey_jpeg()))
            elif mode == "gzip-garbage":
                h.send_response(200)
                h.send_header("Content-Type", "multipart/x-mixed-replace; boundary=lie")
                h.send_header("Content-Encoding", "gzip")
                h.end_headers()
                h.wfile.write(os.urandom(20_000))
            elif mode == "chunked-good":
                h.wfile.write(_MJPEG_HEAD.replace(b"HTTP/1.0", b"HTTP/1.1") + b"Transfer-Encoding: chunked\r\n\r\n")
                end = time.monotonic() + self.seconds
                n = 0
                while self._wait(0.1, end):
                    body = part(grey_jpeg(noise_seed=n % 8))
                    h.wfile.write(b"%X\r\n" % len(body) + body + b"\r\n")
                    n += 1
        except OSError:
            pass

    def _close_at_once(self, w, end) -> None:
        w.flush()

    def _empty_parts(self, w, end) -> None:
        while self._wait(0.05, end):
            w.write(part(b""))

    def _wrong_boundary(self, w, end) -> None:
        frame = grey_jpeg()
        while self._wait(0.1, end):
            w.write(part(frame).replace(b"--" + BOUNDARY, b"--other"))

    def _reset_mid_frame(self, w, end) -> None:
        frame = grey_jpeg()
        w.write(part(frame)[: len(frame) // 2])
        w.flush()
        raise ConnectionResetError  # the handler closes the socket mid-part

    def _negative_length(self, w, end) -> None:
        while self._wait(0.1, end):
            w.write(b"--" + BOUNDARY + b"\r\nContent-Length: -5\r\n\r\n" + grey_jpeg() + b"\r\n")

    def _many_scan_frames(self, w, end) -> None:
        data = grey_jpeg()
        import cv2
        import numpy as np

        ok, buf = cv2.imencode(".jpg", np.full((60, 80, 3), 90, np.uint8), [cv2.IMWRITE_JPEG_PROGRESSIVE, 1])
        data = buf.tobytes()
        last = data.rfind(b"\xff\xda")
        frame = data[:-2] + data[last:-2] * 5000 + b"\xff\xd9"
        while self._wait(0.2, end):
            w.write(part(frame))

    def _slow_frames(self, w, end) -> None:
        n = 0
        while True:
            w.write(part(grey_jpeg(noise_seed=n)))
            w.flush()
            n += 1
            if not self._wait(4.0, end):
                return

    def _tiny_frames(self, w, end) -> None:
        import cv2
        import numpy as np

        frame = cv2.imencode(".jpg", np.zeros((1, 1, 3), np.uint8))[1].tobytes()
        while self._wait(0.1, end):
            w.write(part(frame))

    def _png_frames(self, w, end) -> None:
        import cv2
        import numpy as np

        rng = np.random.default_rng(3)
        frames = [cv2.imencode(".png", rng.integers(0, 256, (60, 80, 3), dtype=np.uint8))[1].tobytes()
                  for _ in range(4)]
        n = 0
        while self._wait(0.1, end):
            w.write(part(frames[n % 4]))
            n += 1

    def _raw(self, w, mode: str) -> None:
        """An answer whose HTTP head itself lies (no valid response for http.client)."""
        try:
            if mode == "not-http":
                w.write(b"SPAM 200 whatever\r\n\r\n" + part(grey_jpeg()))
            elif mode == "many-headers":
                w.write(_MJPEG_HEAD + b"".join(b"X-Lie-%d: %d\r\n" % (i, i) for i in range(150)) + b"\r\n")
            elif mode == "long-header":
                w.write(_MJPEG_HEAD + b"X-Long: " + b"x" * 100_000 + b"\r\n\r\n")
            elif mode == "endless-headers":
                w.write(_MJPEG_HEAD)
                n, end = 0, time.monotonic() + self.seconds
                while self._wait(0.05, end):
                    w.write(b"X-More-%d: %d\r\n" % (n % 90, n))  # fewer than 100 names, never a blank line
                    w.flush()
                    n += 1
            elif mode == "long-status-line":
                w.write(b"HTTP/1.0 200 " + b"O" * 100_000 + b"\r\n\r\n")
            elif mode == "huge-chunk":
                w.write(_MJPEG_HEAD.replace(b"HTTP/1.0", b"HTTP/1.1") + b"Transfer-Encoding: chunked\r\n\r\n"
                        + b"FFFFFFFFFFFFFFFF\r\n" + part(grey_jpeg()) * 3)
            w.flush()
        except OSError:
            pass

    def _frozen(self, w, end) -> None:
        frame = grey_jpeg()
        while self._wait(0.1, end):
            w.write(part(frame))

    def _flaky(self, w, end) -> None:
        if self.connections["flaky"] == 1:
            for i in range(5):
                w.write(part(grey_jpeg(noise_seed=i)))
                w.flush()
                time.sleep(0.1)
            return
        self._good(w, end)

    def _wait(self, seconds: float, end: float) -> bool:
        """Sleep; False once the connection's time is up or the server stops."""
        return not self.stopping.wait(seconds) and time.monotonic() < end

    def _headers(self, w, end) -> None:
        w.write(part(grey_jpeg()))
        w.write(b"--" + BOUNDARY + b"\r\n")
        n = 0
        while self._wait(0.0005 if n % 100 else 0.01, end):
            w.write(b"X-Header-%d: %s\r\n" % (n, b"h" * 200))
            n += 1

    def _garbage(self, w, end) -> None:
        while self._wait(0.01, end):
            w.write(os.urandom(4096).replace(b"\n", b" "))

    def _random_parts(self, w, end) -> None:
        while self._wait(0.05, end):
            w.write(part(os.urandom(3000)))

    def _huge_jpeg(self, w, end) -> None:
        while self._wait(0.1, end):
            w.write(part(huge_jpeg_header()))

    def _trickle(self, w, end) -> None:
        w.write(b"--" + BOUNDARY + b"\r\nContent-Type: image/jpeg\r\n\r\n")
        while self._wait(2.0, end):
            w.write(b"\xff")
            w.flush()

    def _no_boundary(self, w, end) -> None:
        while self._wait(0.2, end):
            w.write(b"this is not a boundary line\r\n")
            w.flush()

    def _good(self, w, end) -> None:
        frames = [grey_jpeg(noise_seed=i) for i in range(8)]  # a live camera's noise: never the same twice
        n = 0
        while self._wait(0.1, end):
            w.write(part(frames[n % len(frames)]))
            n += 1

    def _good_then_frozen(self, w, end) -> None:
        frame = grey_jpeg()
        for _ in range(5):
            w.write(part(frame))
            w.flush()
            time.sleep(0.1)
        while self._wait(0.5, end):
            pass

    def _huge_length(self, w, end) -> None:
        w.write(part(grey_jpeg()))
        while self._wait(0.05, end):
            w.write(b"--" + BOUNDARY + b"\r\nContent-Length: 10000000000\r\n\r\n" + os.urandom(4096))
