"""The live page's server: waitress, hardened so that nobody on the LAN can stall the page.

Each limit answers one attack that stalled it before (issue 22), in the order a request meets them:

* connections: at most MAX_CONNECTIONS_PER_ADDRESS open from one client address (this computer's
  own, webui.http_guard.TRUSTED_ADDRESSES, excepted); one more is
  answered "503" at once and closed (230 connections trickling header lines used to take
  all 200 of waitress's connections, and /healthz timed out for 90 s);
* reading a request: its headers and body must arrive within REQUEST_READ_S of its first
  byte, and an idle connection closes after IDLE_S (waitress's channel_timeout); the check
  runs every CLEANUP_S;
* idle connections (connected, nothing asked): one that sends no byte for FIRST_BYTE_S after
  connecting is closed; and when the server comes within ROOM_FOR_NEW of its connection limit,
  idle connections are closed at once to make room, from the address holding the most first,
  oldest first (230 idle sockets, from loopback or 10 LAN addresses, used to hold every one of
  waitress's connections and leave /healthz unanswered for 15-18 s);
* writing: a client that stops reading a stream is dropped once nothing of its waiting
  output could be sent for STALLED_CLIENT_S (the kernel's send buffer is SEND_BUFFER_BYTES),
  or its thread has waited that long above OUTBUF_HIGH_WATERMARK, so its server thread and
  its stream slot come back (webui.http_guard.StreamSlots also caps streams per address);
* waitress's own answers (400, 413, 431, 501, ...) carry the page's security headers too.

``create_guarded_server(app, host=, port=, **adjustments)`` is waitress's ``create_server``
with these limits.
"""

from __future__ import annotations

import socket
import time

from waitress.adjustments import Adjustments
from waitress.channel import ClientDisconnected, HTTPChannel
from waitress.server import MultiSocketServer, TcpWSGIServer
from waitress.task import ErrorTask, ThreadedTaskDispatcher

from webui.http_guard import SECURITY_HEADERS, TRUSTED_ADDRESSES

MAX_CONNECTIONS_PER_ADDRESS = 24  # a browser opens about 6, plus 2 streams a tab
REQUEST_READ_S = 5.0  # a request's headers and body (the API takes 64 kB at most)
IDLE_S = 20.0  # a keep-alive connection with nothing to do
CLEANUP_S = 1.0  # how often the limits above are checked
FIRST_BYTE_S = 5.0  # a new connection that sends nothing for this long is closed
ROOM_FOR_NEW = 8  # connections kept free for newcomers by closing idle ones
IDLE_EVICT_S = 0.5  # an idle connection quiet this long may be closed to make room
STALLED_CLIENT_S = 10.0  # a stream client that reads nothing for this long is dropped
SEND_BUFFER_BYTES = 256 * 1024  # the kernel's send buffer per connection: ample for a LAN
OUTBUF_HIGH_WATERMARK = 1024 * 1024  # unsent bytes per connection before its thread waits (about 10 frames)
_REFUSAL = ("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\n"
            "Retry-After: 5\r\n" + "".join(f"{k}: {v}\r\n" for k, v in SECURITY_HEADERS.items())
            + "Content-Length: {n}\r\n\r\n{body}")
_REFUSAL_BODY = '{"error": "too many connections from this address; close some tabs or try again shortly"}'


class SecureErrorTask(ErrorTask):
    """waitress's own error answer (a malformed request, a body or headers too large), with the
    page's security headers."""

    def execute(self):
        self.response_headers.extend(SECURITY_HEADERS.items())
        super().execute()


class GuardedChannel(HTTPChannel):
    """One client connection: the time its current request started, and a bounded wait for a
    client that does not read."""

    error_task_class = SecureErrorTask
    request_started: float | None = None
    stalled = False

    def received(self, data):
        if self.request is None and data:
            self.request_started = time.monotonic()
        before = self.request
        result = super().received(data)
        if self.request is None:
            self.request_started = None
        elif self.request is not before:  # a pipelined request began in this same read
            self.request_started = time.monotonic()
        return result

    def reading_too_long(self, now: float) -> bool:
        request = self.request
        return (request is not None and not request.completed and self.request_started is not None
                and now - self.request_started > REQUEST_READ_S)

    def _flush_outbufs_below_high_watermark(self):
        """waitress waits here, without end, for a client that reads nothing: wait at most
        STALLED_CLIENT_S, then drop the client (its stream ends and gives its slot back)."""
        if self.total_outbufs_len <= self.adj.outbuf_high_watermark:
            return
        deadline = time.monotonic() + STALLED_CLIENT_S
        with self.outbuf_lock:
            while self.connected and self.total_outbufs_len > self.adj.outbuf_high_watermark:
                if time.monotonic() > deadline:
                    self.stalled = True
                    self.will_close = True
                    self.server.pull_trigger()
                    raise ClientDisconnected
                self._flush_exception(self._flush_some, do_close=False)
                self.server.pull_trigger()
                self.outbuf_lock.wait(0.5)


class GuardedServer(TcpWSGIServer):
    channel_class = GuardedChannel
    refused_connections = 0
    slow_requests_closed = 0
    stalled_clients_dropped = 0
    idle_closed = 0

    def readable(self):
        self._make_room()
        return super().readable()

    def _make_room(self) -> None:
        """Within ROOM_FOR_NEW of the connection limit, close idle connections (nothing asked, nothing
        to send), from the address holding the most connections first and the quietest first, so a
        newcomer is always accepted and one address's idle sockets cannot crowd out the rest."""
        channels = [ch for ch in list(self.active_channels.values()) if not ch.will_close]
        over = len(channels) - (self.adj.connection_limit - ROOM_FOR_NEW)
        if over <= 0:
            return
        now = time.time()
        held: dict[str, int] = {}
        for channel in channels:
            held[_host(channel.addr)] = held.get(_host(channel.addr), 0) + 1
        idle = [ch for ch in channels if _idle(ch, now, IDLE_EVICT_S)]
        idle.sort(key=lambda ch: (-held[_host(ch.addr)], ch.last_activity))
        for channel in idle[:over]:
            channel.will_close = True
            self.idle_closed += 1
        if idle:
            self.pull_trigger()

    def connections_from(self, host: str) -> int:
        return sum(1 for ch in list(self.active_channels.values()) if _host(ch.addr) == host)

    def handle_accept(self):
        try:
            accepted = self.accept()
            if accepted is None:
                return
            conn, addr = accepted
            self.set_socket_options(conn)
        except OSError:  # a client gone before we got to it
            return
        addr = self.fix_addr(addr)
        host = _host(addr)
        if host not in TRUSTED_ADDRESSES and self.connections_from(host) >= MAX_CONNECTIONS_PER_ADDRESS:
            self.refused_connections += 1
            _refuse(conn)
            return
        self.channel_class(self, conn, addr, self.adj, map=self._map)

    def set_socket_options(self, conn):
        super().set_socket_options(conn)
        # a bounded kernel buffer, so a client that reads nothing shows as one within seconds
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER_BYTES)

    def maintenance(self, now):
        super().maintenance(now)  # idle connections (channel_timeout)
        mono = time.monotonic()
        for channel in list(self.active_channels.values()):
            if not isinstance(channel, GuardedChannel):
                continue
            if _idle(channel, now, FIRST_BYTE_S) and channel.last_activity == channel.creation_time:
                self.idle_closed += 1  # connected and never sent a byte
                channel.will_close = True
            elif channel.reading_too_long(mono):
                self.slow_requests_closed += 1
                channel.will_close = True
            elif channel.total_outbufs_len and now - channel.last_activity > STALLED_CLIENT_S:
                # output waiting and nothing sent for that long: the client does not read
                self.stalled_clients_dropped += 1
                channel.stalled = True
                channel.will_close = True
        self.pull_trigger()


def _idle(channel, now: float, quiet_s: float) -> bool:
    """Nothing asked, nothing being answered or sent, and quiet for quiet_s (waitress's clock)."""
    return (channel.request is None and not channel.requests and not channel.total_outbufs_len
            and not channel.will_close and now - channel.last_activity >= quiet_s)


def _host(addr) -> str:
    return str(addr[0]) if isinstance(addr, tuple) and addr else str(addr)


def _refuse(conn: socket.socket) -> None:
    """Tell the client in one line why, without waiting on it, and close."""
    try:
        conn.setblocking(False)
        conn.send(_REFUSAL.format(n=len(_REFUSAL_BODY), body=_REFUSAL_BODY).encode("ascii"))
    except OSError:
        pass
    finally:
        conn.close()


def create_guarded_server(app, **kw):
    """waitress.create_server(app, **kw) with GuardedServer on every listening socket."""
    kw.setdefault("channel_timeout", IDLE_S)
    kw.setdefault("cleanup_interval", CLEANUP_S)
    kw.setdefault("outbuf_high_watermark", OUTBUF_HIGH_WATERMARK)
    adj = Adjustments(**kw)
    dispatcher = ThreadedTaskDispatcher()
    dispatcher.set_thread_count(adj.threads)
    socket_map: dict = {}
    servers = [GuardedServer(app, socket_map, True, None, dispatcher=dispatcher, adj=adj, sockinfo=info)
               for info in adj.listen]
    if len(servers) == 1:
        return servers[0]
    listening = [(s.effective_host, s.effective_port) for s in servers]
    server = MultiSocketServer(socket_map, adj, listening, dispatcher, servers[-1].log_info)
    server.effective_port = servers[0].effective_port
    server.task_dispatcher = dispatcher
    return server
