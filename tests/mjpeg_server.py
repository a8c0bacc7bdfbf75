"""A local MJPEG server for the tests (loopback only): serves given JPEG frames as
multipart/x-mixed-replace, and can drop a connection mid-part or refuse one, as a phone on
flaky Wi-Fi does."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import cv2
import numpy as np

BOUNDARY = "refcamframe"


def grey_jpeg(level: int, size: tuple[int, int] = (160, 120)) -> bytes:
    """A small JPEG of one grey level, so a test can tell frames apart by their mean."""
    img = np.full((size[1], size[0], 3), level, np.uint8)
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 95])
    assert ok
    return buf.tobytes()


def loopback_server(handle, protocol: str = "HTTP/1.0") -> tuple[ThreadingHTTPServer, threading.Thread]:
    """An HTTP server on 127.0.0.1 (a free port) whose every GET is handle(handler), a thread per
    connection; the returned thread serves it once started."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = protocol

        def log_message(self, *args):  # keep the test output clean
            pass

        def do_GET(self):
            handle(self)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    return httpd, threading.Thread(target=httpd.serve_forever, daemon=True)


class LoopbackServer:
    """loopback_server as a context manager: serving inside `with`, shut down after; `stopping`
    is set first, so a handler's endless loop can end."""

    def __init__(self, handle):
        self.stopping = threading.Event()
        self.httpd, self._thread = loopback_server(handle)
        self.port = self.httpd.server_address[1]

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()


class MjpegServer(LoopbackServer):
    """plan: one entry per connection, in order (the last repeats):
    ("serve", n) n frames then a torn part and the connection dropped; n=None: until stopped;
    ("refuse", code) an HTTP error status. frames: JPEG bytes served in a cycle."""

    def __init__(self, frames: list[bytes], plan=(("serve", None),), content_length: bool = True,
                 fps: float = 30.0, content_type: str | None = None):
        self.frames = frames
        self.plan = list(plan)
        self.content_length = content_length
        self.period = 1.0 / fps
        self.content_type = content_type or f"multipart/x-mixed-replace; boundary=--{BOUNDARY}"
        self.connections = 0
        super().__init__(self._handle)
        self.url = f"http://127.0.0.1:{self.port}/video"

    def _handle(self, handler) -> None:
        step = self.plan[min(self.connections, len(self.plan) - 1)]
        self.connections += 1
        if handler.path != "/video":
            handler.send_error(404)
            return
        if step[0] == "refuse":
            handler.send_error(step[1])
            return
        handler.send_response(200)
        handler.send_header("Content-Type", self.content_type)
        handler.end_headers()
        handler.wfile.write(b"a preamble line servers sometimes send\r\n")
        count, limit = 0, step[1]
        try:
            while not self.stopping.is_set() and (limit is None or count < limit):
                self._write_part(handler.wfile, self.frames[count % len(self.frames)])
                count += 1
                time.sleep(self.period)
            if limit is not None:  # drop mid-part: headers and half a JPEG, then the line goes dead
                jpeg = self.frames[0]
                handler.wfile.write(f"--{BOUNDARY}\r\nContent-Type: image/jpeg\r\nContent-Length: {len(jpeg)}\r\n\r\n"
                                    .encode() + jpeg[: len(jpeg) // 2])
                handler.wfile.flush()
            handler.close_connection = True
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _write_part(self, wfile, jpeg: bytes) -> None:
        head = f"--{BOUNDARY}\r\nContent-Type: image/jpeg\r\n"
        if self.content_length:
            head += f"Content-Length: {len(jpeg)}\r\n"
        wfile.write(head.encode() + b"\r\n" + jpeg + b"\r\n")
        wfile.flush()


