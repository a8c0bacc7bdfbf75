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
  and one over the cap gets 503 with Retry-After, so the page and the API always find a
  free worker.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from flask import Flask, Response, current_app, jsonify, request
from werkzeug.exceptions import HTTPException, ServiceUnavailable

from referee.errors import InvalidInputError
from webui.access import TOKEN_HEADER, AccessPolicy

MAX_BODY_BYTES = 64 * 1024  # the largest settings form is well under 1 kB
MAX_BODY_DEPTH = 8  # settings are one object of texts (a script may nest one level)
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
STREAM_RETRY_S = 5
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


def install_guard(app: Flask, policy: AccessPolicy) -> None:
    app.extensions["refcam_access"] = policy
    app.config.setdefault("MAX_CONTENT_LENGTH", MAX_BODY_BYTES)
    app.config.setdefault("MAX_FORM_MEMORY_SIZE", MAX_BODY_BYTES)
    app.config.setdefault("MAX_FORM_PARTS", 64)
    app.before_request(check_request)
    app.after_request(add_security_headers)
    app.register_error_handler(HTTPException, http_error)
    app.register_error_handler(BodyError, lambda exc: (jsonify(error=one_line(str(exc))), 400))
    app.register_error_handler(Exception, internal_error)


def one_line(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def check_request() -> None:
    """Refuse a request before any route sees it (raises Refused)."""
    policy: AccessPolicy = current_app.extensions["refcam_access"]
    host = request.headers.get("Host")
    if not policy.host_allowed(host):
        raise Refused(403, f"this page answers to {', '.join(sorted(policy.allowed_hosts))} only, "
                           f"not the host name {one_line(host or '(none)', 80)!r}")
    if request.method in SAFE_METHODS:
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
    """A cap on open streams: take() or 503 with Retry-After; release() when the stream closes."""

    def __init__(self, limit: int):
        self.limit = limit
        self.open = 0
        self.refused = 0
        self._lock = threading.Lock()

    def take(self) -> None:
        with self._lock:
            if self.open >= self.limit:
                self.refused += 1
                exc = ServiceUnavailable(f"{self.limit} live streams are open, the most this page serves; "
                                         f"close a tab or try again shortly", retry_after=STREAM_RETRY_S)
                raise exc
            self.open += 1

    def release(self) -> None:
        with self._lock:
            self.open = max(0, self.open - 1)

    def respond(self, make_response) -> Response:
        """make_response() as a stream holding one slot until the server closes it."""
        self.take()
        try:
            response = make_response()
        except BaseException:
            self.release()
            raise
        response.call_on_close(self.release)
        return response
