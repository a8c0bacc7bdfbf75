"""The live page's HTTP guard: what every request must show and what every response carries.

* every request: a Host this computer answers to (webui.access), else 403;
* every change (any method but GET/HEAD/OPTIONS): this page's own Origin (403), the
  access token when one is set (403), ``application/json`` (415), at most
  MAX_BODY_BYTES (413); its body is read by referee.safeload within depth, size and
  number limits, and a bad one is a 400 with one line, never a 500;
* every response: a Content-Security-Policy allowing only this page's own files (no
  inline script, no framing), nosniff, X-Frame-Options DENY, no Referer (the page's URL
  holds the token);
* every error is JSON ``{"error": "one line"}``;
* streams (MJPEG, events) hold a server worker each while open: StreamSlots caps them,
  in all and per client address (a fair share: one address cannot take every slot), and one
  over a cap gets 503 with Retry-After, so the page and the API always find a free worker;
* costly routes (COSTLY_ROUTES: the QR code, "Settle it", the state, the page) are rate-limited
  per client address (429 with Retry-After), so a flood from one address cannot starve the
  referee of CPU; every other change route (POST) shares one bucket an address (POST_RATE);
* a tenth of the stream slots is kept for addresses that hold no stream yet, so a new viewer
  gets in while a few addresses hold every other slot.
The server below Flask (webui.lan_guard) caps connections per address and times out slow
requests and clients that do not read.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from flask import Flask, Response, current_app, jsonify, request
from werkzeug.exceptions import HTTPException, ServiceUnavailable

from referee.errors import InvalidInputError
from webui.access import TOKEN_HEADER, AccessPolicy

# the computer refcam runs on is trusted (its own tabs and scripts); the per-address limits are for the LAN
TRUSTED_ADDRESSES = frozenset({"127.0.0.1", "::1", "::ffff:127.0.0.1"})
MAX_STREAMS_PER_ADDRESS = 8  # four tabs, an MJPEG and an event stream each
# route -> (requests per second, burst) per client address; the page itself asks a few times a minute
COSTLY_ROUTES = {"/phone-qr.svg": (2.0, 4), "/api/phone": (2.0, 4), "/api/settle": (1.0, 4), "/api/state": (10.0, 20),
                 "/": (5.0, 10), "/api/config": (5.0, 10)}
MAX_BODY_BYTES = 64 * 1024  # the largest settings form is well under 1 kB
MAX_BODY_DEPTH = 8  # settings are one object of texts (a script may nest one level)
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
STREAM_RETRY_S = 5
STREAM_SLOTS_RESERVED_SHARE = 10  # a tenth of the stream slots wait for addresses that hold none
POST_RATE = (5.0, 10)  # every change route not in COSTLY_ROUTES: requests per second and burst per address
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
}
_log = logging.getLogger("refcam.web")


class BodyError(InvalidInputError):
    """A change request whose JSON body cannot be used (answered 400)."""


class Refused(HTTPException):
    """A request the guard turns away, with its status and one line saying why."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


class TooManyRequests(Refused):
    def __init__(self, retry_after_s: float):
        self.retry_after = max(1, int(retry_after_s + 0.999))
        super().__init__(429, f"too many requests for this page from your address; try again in "
                              f"{self.retry_after} s")

    def get_headers(self, environ=None, scope=None):
        return super().get_headers(environ, scope) + [("Retry-After", str(self.retry_after))]


class RateLimiter:
    """A token bucket per (client address, route) for the routes in `limits` (requests per
    second, burst). wait_s() is 0 when the request may go on, else the seconds until it may."""

    MAX_BUCKETS = 4096  # addresses x routes remembered; the oldest are forgotten first

    def __init__(self, limits: dict[str, tuple[float, int]] | None):
        self.limits = dict(limits or {})
        self._buckets: dict[tuple[str, str], tuple[float, float]] = {}
        self._lock = threading.Lock()
        self.refused = 0

    def wait_s(self, address: str, route: str) -> float:
        limit = self.limits.get(route)
        if limit is None or address in TRUSTED_ADDRESSES:
            return 0.0
        rate, burst = limit
        now = time.monotonic()
        with self._lock:
            tokens, then = self._buckets.pop((address, route), (float(burst), now))
            tokens = min(float(burst), tokens + (now - then) * rate)
            if len(self._buckets) >= self.MAX_BUCKETS:
                self._buckets.pop(next(iter(self._buckets)))
            if tokens >= 1.0:
                self._buckets[(address, route)] = (tokens - 1.0, now)
                return 0.0
            self._buckets[(address, route)] = (tokens, now)
            self.refused += 1
            return (1.0 - tokens) / rate


def install_guard(app: Flask, policy: AccessPolicy) -> None:
    app.extensions["refcam_access"] = policy
    app.extensions["refcam_rate"] = RateLimiter({"(every change)": POST_RATE,
                                                 **app.config.get("RATE_LIMITS", COSTLY_ROUTES)})
    app.config.setdefault("MAX_CONTENT_LENGTH", MAX_BODY_BYTES)
    app.config.setdefault("MAX_FORM_MEMORY_SIZE", MAX_BODY_BYTES)
    app.config.setdefault("MAX_FORM_PARTS", 64)
    app.before_request(check_request)
    app.after_request(add_security_headers)
    app.register_error_handler(HTTPException, http_error)
    app.register_error_handler(BodyError, lambda exc: (jsonify(error=one_line(str(exc))), 400))
    app.register_error_handler(Exception, internal_error)


def one_line(text: str, limit: int = 300) -> str:
    """One plain line of at most `limit` characters: whitespace runs folded, other control
    characters written out (a piece name may hold a terminal escape)."""
    from referee.safeload import printable

    text = printable(" ".join(str(text).split()))
    return text if len(text) <= limit else text[:limit - 1] + "…"


def check_request() -> None:
    """Refuse a request before any route sees it (raises Refused)."""
    policy: AccessPolicy = current_app.extensions["refcam_access"]
    host = request.headers.get("Host")
    if not policy.host_allowed(host):  # the names it does answer to are this computer's business
        raise Refused(403, f"this page does not answer to the host name {one_line(host or '(none)', 80)!r}; "
                           f"open the address `refcam serve` printed")
    if request.method in SAFE_METHODS:
        _rate_limit()
        return
    if not policy.origin_allowed(request.headers.get("Origin"), host) \
            or request.headers.get("Sec-Fetch-Site") == "cross-site":
        raise Refused(403, "changes are taken only from the refcam page itself, not from another site")
    if not policy.token_ok(request.headers.get(TOKEN_HEADER)):
        raise Refused(403, f"a change needs the access token (header {TOKEN_HEADER}): open the page "
                           f"at the address `refcam serve` printed")
    if request.mimetype != "application/json":
        raise Refused(415, f"changes are sent as application/json, not {request.mimetype or 'no content type'}")
    limit = int(current_app.config["MAX_CONTENT_LENGTH"] or MAX_BODY_BYTES)
    if request.content_length is not None and request.content_length > limit:
        raise Refused(413, f"the request body is {request.content_length} bytes; the page takes at most {limit}")
    _rate_limit()  # last: a refused change costs nothing and takes no turn


def _rate_limit() -> None:
    route = request.path
    if request.method not in SAFE_METHODS and route not in current_app.extensions["refcam_rate"].limits:
        route = "(every change)"  # every POST route shares one bucket an address unless it has its own
    wait = current_app.extensions["refcam_rate"].wait_s(request.remote_addr or "", route)
    if wait:
        raise TooManyRequests(wait)


def read_json_body(default: Any = None) -> Any:
    """The request's JSON body through referee.safeload (an empty body is `default`)."""
    from referee.safeload import parse_json

    raw = request.get_data(cache=True)  # bounded by MAX_CONTENT_LENGTH (413 past it, even when chunked)
    if not raw.strip():
        return default
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BodyError("the request body is not UTF-8 text") from None
    return parse_json(text, "request body", error=BodyError, max_bytes=MAX_BODY_BYTES, max_depth=MAX_BODY_DEPTH)


def add_security_headers(response: Response) -> Response:
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def http_error(exc: HTTPException):
    """Any HTTP error as JSON with one line; its own headers (Retry-After, Allow) kept."""
    message = exc.description or exc.name
    if not isinstance(exc, Refused):
        message = {404: f"not found: {request.path}", 405: f"{request.method} is not allowed on {request.path}",
                   413: f"the request body is larger than the {current_app.config['MAX_CONTENT_LENGTH']} "
                        f"bytes the page takes"}.get(exc.code or 0, message)
    response = jsonify(error=one_line(message))
    response.status_code = exc.code or 500
    for name, value in exc.get_headers():
        if name.lower() not in ("content-type", "content-length"):
            response.headers[name] = value
    return response


def internal_error(exc: Exception):
    """A bug: logged with its traceback, answered in one line (the fuzz suite keeps these at 0)."""
    if isinstance(exc, HTTPException):  # pragma: no cover - handled by http_error
        return http_error(exc)
    _log.error("refcam: internal error on %s %s", request.method, request.path, exc_info=exc)
    return jsonify(error=f"internal error ({type(exc).__name__}); the page goes on"), 500


class StreamSlots:
    """A cap on open streams, in all and per client address: take() or 503 with Retry-After;
    release() when the stream closes."""

    def __init__(self, limit: int, per_address: int = MAX_STREAMS_PER_ADDRESS):
        self.limit = limit
        self.per_address = per_address
        # slots only an address holding no stream yet may take: a new viewer always gets in,
        # even when a few addresses have every other slot (40 unread streams from 10 addresses)
        self.reserved = max(1, limit // STREAM_SLOTS_RESERVED_SHARE) if limit > 1 else 0
        self.open = 0
        self.refused = 0
        self._by_address: dict[str, int] = {}
        self._lock = threading.Lock()

    def take(self, address: str = "") -> None:
        with self._lock:
            mine = self._by_address.get(address, 0)
            trusted = address in TRUSTED_ADDRESSES
            full = self.open >= self.limit or (mine and not trusted and self.open >= self.limit - self.reserved)
            if full or (mine >= self.per_address and not trusted):
                self.refused += 1
                why = (f"{self.open} live streams are open, the most this page serves" if full
                       else f"{self.per_address} live streams are open from your address, its share")
                raise ServiceUnavailable(f"{why}; close a tab or try again shortly", retry_after=STREAM_RETRY_S)
            self.open += 1
            self._by_address[address] = mine + 1

    def release(self, address: str = "") -> None:
        with self._lock:
            self.open = max(0, self.open - 1)
            left = self._by_address.get(address, 0) - 1
            if left > 0:
                self._by_address[address] = left
            else:
                self._by_address.pop(address, None)

    def respond(self, make_response) -> Response:
        """make_response() as a stream holding one slot until the server closes it."""
        address = request.remote_addr or ""
        self.take(address)
        try:
            response = make_response()
        except BaseException:
            self.release(address)
            raise
        response.call_on_close(lambda: self.release(address))
        return response
