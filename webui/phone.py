"""Phones at the table: the page's addresses on the local network, as text and QR codes.

`refcam serve --host 0.0.0.0` listens on every network; a phone on the same network
opens the page at this computer's LAN address. The address carries the access token
(``?token=...``) that changing settings or settling needs once the page is reachable
beyond this computer; watching needs none. The QR codes come from segno (pure Python).

Routes (``add_phone_routes``): GET /api/phone (the addresses; with the token only for a
request that already carries it) and GET /phone-qr.svg (the first address as a QR code).
"""

from __future__ import annotations

import hmac
import io
import ipaddress
import socket
import urllib.parse

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
ANY_HOSTS = ("0.0.0.0", "::", "")


def beyond_loopback(host: str) -> bool:
    """Whether a --host lets other computers reach the page."""
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host not in LOOPBACK_HOSTS


def lan_addresses() -> list[str]:
    """This computer's IPv4 addresses on its networks (not loopback), the default route's first."""
    found: list[str] = []
    try:  # the address the default route would use (no packet is sent by a UDP connect)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.254.254.254", 1))
            found.append(s.getsockname()[0])
    except OSError:
        pass
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
            found.append(info[4][0])
    except OSError:
        pass
    out = []
    for a in found:
        ip = ipaddress.ip_address(a)
        if not (ip.is_loopback or ip.is_unspecified or ip.is_link_local) and a not in out:
            out.append(a)
    return out


def page_urls(host: str, port: int, token: str | None = None) -> list[str]:
    """The addresses other devices open: every LAN address for 0.0.0.0 / ::, else the host given."""
    hosts = lan_addresses() if host in ANY_HOSTS else [host]
    query = "?" + urllib.parse.urlencode({"token": token}) if token else ""
    return [f"http://{f'[{h}]' if ':' in h else h}:{port}/{query}" for h in hosts]


def qr_svg(text: str) -> bytes:
    import segno

    buf = io.BytesIO()
    segno.make(text, error="m").save(buf, kind="svg", scale=6, border=2, xmldecl=False)
    return buf.getvalue()


def qr_terminal(text: str) -> str:
    """The QR code as text for a terminal (two rows of modules per line, so it stays square)."""
    import segno

    rows = [list(r) for r in segno.make(text, error="m").matrix_iter(scale=1, border=2)]
    if len(rows) % 2:
        rows.append([0] * len(rows[0]))
    glyph = {(0, 0): "█", (1, 0): "▄", (0, 1): "▀", (1, 1): " "}  # dark modules shown dark on a light field
    return "\n".join("".join(glyph[(top, bottom)] for top, bottom in zip(rows[i], rows[i + 1]))
                     for i in range(0, len(rows), 2))


def _has_token(request, token: str | None) -> bool:
    given = request.headers.get("X-Refcam-Token") or request.args.get("token") or ""
    return bool(token) and hmac.compare_digest(given.encode(), token.encode())


def add_phone_routes(app) -> None:
    """GET /api/phone and GET /phone-qr.svg, from BIND_HOST, BIND_PORT and ACCESS_TOKEN in app.config."""
    from flask import Response, abort, jsonify, request

    def urls() -> list[str]:
        host, port = app.config.get("BIND_HOST"), app.config.get("BIND_PORT")
        if not host or not port or not beyond_loopback(host):
            return []
        token = app.config.get("ACCESS_TOKEN")
        return page_urls(host, int(port), token if _has_token(request, token) else None)

    @app.get("/api/phone")
    def api_phone():
        found = urls()
        note = ("Scan with a phone on the same network. This address lets the phone change settings and settle."
                if found and "token=" in found[0] else
                "Scan with a phone on the same network to watch; changes need the address refcam printed.")
        return jsonify(urls=found, note=note if found else "")

    @app.get("/phone-qr.svg")
    def phone_qr():
        found = urls()
        if not found:
            abort(404)
        return Response(qr_svg(found[0]), mimetype="image/svg+xml", headers={"Cache-Control": "no-store"})
