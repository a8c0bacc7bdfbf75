"""Phones at the table: the page's addresses on the local network, as text and QR codes.

`refcam serve --host 0.0.0.0` listens on every network; a phone on the same network
opens the page at this computer's LAN address. The address carries the access token
(``?token=...``) that changing settings or settling needs once the page is reachable
beyond this computer; watching needs none. The QR codes come from segno (pure Python).

Routes (``add_phone_routes``): GET /api/phone (the addresses; with the token only for a
request that already carries it) and GET /phone-qr.svg (the first address as a QR code).
"""

from __future__ import annotations

import functools
import hmac
import io

from webui import access


def beyond_loopback(host: str) -> bool:
    """Whether a --host lets other computers reach the page."""
    return not access.is_loopback(host)


def lan_addresses() -> list[str]:
    """This computer's addresses on its networks (not loopback), the default route's first."""
    return access.lan_addresses("0.0.0.0")


def page_urls(host: str, port: int, token: str | None = None) -> list[str]:
    """The addresses other devices open: every LAN address for 0.0.0.0 / ::, else the host given."""
    return [access.page_url(a, port, token) for a in access.lan_addresses(host)]


@functools.lru_cache(maxsize=8)
def qr_svg(text: str) -> bytes:
    """The QR code of text as SVG; made once per address and start (a flood of /phone-qr.svg
    used to cut the referee from 4.0 to 0.86 frames/s)."""
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

    @functools.lru_cache(maxsize=4)
    def addresses(host: str, port: int, token: str | None) -> tuple[str, ...]:
        """Looked up once per start: each look-up asks the resolver and the routing table."""
        return tuple(page_urls(host, port, token))

    def urls() -> list[str]:
        host, port = app.config.get("BIND_HOST"), app.config.get("BIND_PORT")
        if not host or not port or not beyond_loopback(host):
            return []
        token = app.config.get("ACCESS_TOKEN")
        return list(addresses(host, int(port), token if _has_token(request, token) else None))

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
