"""The three LAN attacks of issue 22, against a page on this computer only (loopback), each
bounded in connections and seconds. The attacker speaks from another loopback address
(127.0.0.2 and up: Linux routes all of 127/8 to this computer), so the page tells it apart
from the referee's own computer, as it would tell a phone on the LAN apart.

* slow_headers: connections that send a request line, then a header line now and then;
* unread_streams: MJPEG streams opened and never read;
* flood: clients asking a costly route (the QR code) as fast as they can;
* idle_connections: connections that connect and send nothing, from several addresses.

``probe`` measures what a viewer sees meanwhile: /healthz latency and the referee's frames per
second (the frame counter of /healthz over time), both from 127.0.0.1.
"""

from __future__ import annotations

import http.client
import socket
import statistics
import threading
import time
from contextlib import contextmanager

ATTACKER = "127.0.0.2"
MAX_CONNECTIONS = 300  # every attack here stays below this many sockets
MAX_SECONDS = 60.0


def _connect(port: int, source: str, timeout: float = 3.0, rcvbuf: int | None = None) -> socket.socket | None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.settimeout(timeout)
    try:
        sock.bind((source, 0))
        sock.connect(("127.0.0.1", int(port)))
    except OSError:
        sock.close()
        return None
    return sock


@contextmanager
def slow_headers(port: int, connections: int = 230, every_s: float = 2.0, source: str = ATTACKER):
    """Connections that never finish their headers (a header line every every_s). Yields a dict of
    counts: opened, closed_by_server (seen so far)."""
    assert connections <= MAX_CONNECTIONS
    stats = {"opened": 0, "refused_at_once": 0, "closed_by_server": 0}
    socks = []
    for _ in range(connections):
        sock = _connect(port, source)
        if sock is None:
            continue
        try:
            sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode())
        except OSError:
            sock.close()
            continue
        socks.append(sock)
        stats["opened"] += 1
    time.sleep(0.3)
    for sock in list(socks):  # the server's one-line 503 to connections beyond its per-address cap
        try:
            sock.setblocking(False)
            if sock.recv(64).startswith(b"HTTP/1.1 503"):
                stats["refused_at_once"] += 1
                socks.remove(sock)
                sock.close()
        except (BlockingIOError, OSError):
            pass
        finally:
            if sock.fileno() != -1:
                sock.setblocking(True)
                sock.settimeout(3.0)
    stop = threading.Event()

    def trickle():
        n = 0
        while not stop.wait(every_s):
            for sock in list(socks):
                try:
                    sock.sendall(f"X-Slow-{n}: 1\r\n".encode())
                except OSError:
                    stats["closed_by_server"] += 1
                    socks.remove(sock)
                    sock.close()
            n += 1

    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    try:
        yield stats
    finally:
        stop.set()
        thread.join(timeout=every_s + 5)
        for sock in socks:
            sock.close()


def attacker_addresses(n: int) -> list[str]:
    """n loopback addresses standing in for n computers on the LAN: 127.0.0.2, 127.0.0.3, ..."""
    return [f"127.0.0.{2 + i}" for i in range(n)]


@contextmanager
def idle_connections(port: int, connections: int = 230, addresses: int = 10):
    """connections sockets spread over `addresses` attacker addresses that connect and send
    nothing. Yields a dict: opened, and closed_by_server (counted when the attack ends)."""
    assert connections <= MAX_CONNECTIONS
    sources = attacker_addresses(addresses)
    socks = [_connect(port, sources[i % len(sources)]) for i in range(connections)]
    socks = [s for s in socks if s is not None]
    stats = {"opened": len(socks), "closed_by_server": 0}
    try:
        yield stats
    finally:
        for sock in socks:
            try:
                sock.setblocking(False)
                if sock.recv(1) == b"":
                    stats["closed_by_server"] += 1
            except BlockingIOError:
                pass
            except OSError:
                stats["closed_by_server"] += 1
            sock.close()


@contextmanager
def unread_streams(port: int, streams: int = 40, source: str = ATTACKER, path: str = "/stream.mjpg"):
    """Streams asked for and never read (a tiny receive buffer, so the server's output backs up).
    Yields the status code each got (0: no answer)."""
    assert streams <= MAX_CONNECTIONS
    socks, statuses = [], []
    for _ in range(streams):
        sock = _connect(port, source, rcvbuf=4096)
        if sock is None:
            statuses.append(0)
            continue
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        try:
            head = sock.recv(64)
            statuses.append(int(head.split(b" ")[1]) if head.startswith(b"HTTP/") else 0)
        except (OSError, ValueError, IndexError):
            statuses.append(0)
        socks.append(sock)
    try:
        yield statuses
    finally:
        for sock in socks:
            sock.close()


@contextmanager
def flood(port: int, path: str = "/phone-qr.svg", clients: int = 16, source: str = ATTACKER,
          host: str | None = None, rate: float | None = None):
    """clients threads asking for path on keep-alive connections, back to back or at `rate`
    requests per second in all. Yields a dict of counts by status."""
    assert clients <= 64
    counts: dict[int, int] = {}
    stop = threading.Event()
    lock = threading.Lock()

    def client():
        conn = None
        period = clients / rate if rate else 0.0
        next_at = time.monotonic()
        while not stop.is_set():
            if period:
                next_at += period
                stop.wait(max(0.0, next_at - time.monotonic()))
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", int(port), timeout=5, source_address=(source, 0))
                conn.request("GET", path, headers={"Host": host or f"127.0.0.1:{port}"})
                resp = conn.getresponse()
                resp.read()
                status = resp.status
                if resp.will_close:
                    conn.close()
                    conn = None
            except (OSError, http.client.HTTPException):
                status = 0
                if conn is not None:
                    conn.close()
                conn = None
                stop.wait(0.05)
            with lock:
                counts[status] = counts.get(status, 0) + 1
        if conn is not None:
            conn.close()

    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    for t in threads:
        t.start()
    try:
        yield counts
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=10)


def healthz(port: int, timeout: float = 10.0) -> tuple[int, float, int | None]:
    """(status, seconds, frames counter) of one GET /healthz from 127.0.0.1 (status 0: no answer)."""
    import json

    t0 = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", int(port), timeout=timeout)
    try:
        conn.request("GET", "/healthz")
        resp = conn.getresponse()
        body = resp.read()
        frames = json.loads(body).get("frames") if resp.status == 200 else None
        return resp.status, time.monotonic() - t0, frames
    except (OSError, http.client.HTTPException, ValueError):
        return 0, time.monotonic() - t0, None
    finally:
        conn.close()


def probe(port: int, seconds: float, every_s: float = 0.25) -> dict:
    """What a viewer sees for `seconds`: /healthz latency (median, worst), failures, and the
    referee's frames per second over the window."""
    assert seconds <= MAX_SECONDS
    latencies, failures = [], 0
    first = last = None
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        status, dt, frames = healthz(port)
        latencies.append(dt)
        if status != 200 or frames is None:
            failures += 1
        else:
            now = time.monotonic()
            first = first or (now, frames)
            last = (now, frames)
        time.sleep(max(0.0, every_s - dt))
    fps = (last[1] - first[1]) / (last[0] - first[0]) if first and last and last[0] > first[0] else 0.0
    return {"healthz_median_s": statistics.median(latencies), "healthz_worst_s": max(latencies),
            "healthz_failures": failures, "fps": fps, "samples": len(latencies)}
