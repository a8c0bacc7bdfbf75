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

Bounded: each connection ends after `seconds` (default 60), and the server binds 127.0.0.1 only.
"""

from __future__ import annotations

import os
import struct
import time

from tests.mjpeg_server import LoopbackServer

BOUNDARY = b"lie"
MODES = ("headers", "garbage", "random-parts", "huge-jpeg", "trickle", "no-boundary", "good", "good-then-frozen",
         "huge-length")


def grey_jpeg(level: int = 90) -> bytes:
    import cv2
    import numpy as np

    ok, buf = cv2.imencode(".jpg", np.full((60, 80, 3), level, np.uint8))
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
        super().__init__(self.serve)

    def url(self, mode: str) -> str:
        return f"http://127.0.0.1:{self.port}/{mode}"

    def serve(self, h) -> None:
        mode = h.path.strip("/").split("?")[0]
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
        frame = grey_jpeg()
        while self._wait(0.1, end):
            w.write(part(frame))

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
