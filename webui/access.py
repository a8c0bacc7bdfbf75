"""Who may reach the live page and who may change it: Host names, Origins and the access token.

Watching (the page, its streams, /api/state) needs no token. Every change (a POST:
settings, "Settle it") must come from the page itself:

* the Host header must name this computer: a loopback name, or, when bound beyond
  loopback, one of its network addresses or its own host name. A web page on another
  site that re-points its DNS name at us (DNS rebinding) sends its own name and is refused;
* a browser's Origin must be this very page (scheme, host and port), so another site,
  or another server on this computer, cannot post a form to us (CSRF);
* whenever the page is reachable beyond loopback (or a token was given), the request
  must carry the access token in the ``X-Refcam-Token`` header. The page learns it from
  its own URL (``?token=...``), which `refcam serve` prints; nobody else can read it.

The token comes from ``--token`` or ``REFCAM_TOKEN``, else is made at start
(secrets.token_urlsafe). ``page_urls`` gives the addresses to open, token included: the
start-up line and the "At the table" QR code both use it.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import re
import secrets
import socket
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from referee.errors import InvalidInputError

TOKEN_HEADER = "X-Refcam-Token"
TOKEN_ENV = "REFCAM_TOKEN"
TOKEN_PARAM = "token"
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
ANY_ADDRESS = frozenset({"0.0.0.0", "::", ""})
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9_\-.~]{8,256}")


def is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_token(token: str, origin: str = "--token") -> str:
    """A token must survive a URL unescaped and be long enough not to be guessed."""
    if not _TOKEN_CHARS.fullmatch(token):
        raise InvalidInputError(f"{origin}: an access token is 8 to 256 characters of A-Z a-z 0-9 - _ . ~")
    return token


def resolve_token(given: str | None, environ=os.environ) -> str | None:
    """--token, else REFCAM_TOKEN, else None (made at start when the page is reachable beyond loopback)."""
    if given is not None:
        return check_token(given, "--token")
    from_env = environ.get(TOKEN_ENV)
    if from_env:
        return check_token(from_env, TOKEN_ENV)
    return None


def lan_addresses(bind_host: str) -> list[str]:
    """This computer's addresses that a page bound to bind_host answers on, loopback excluded."""
    if is_loopback(bind_host):
        return []
    if bind_host not in ANY_ADDRESS:
        return [bind_host.strip("[]")]
    found: list[str] = []
    family = socket.AF_INET6 if bind_host == "::" else socket.AF_INET
    try:  # the address the default route leaves by (a UDP "connect" sends nothing)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: never a real peer
            found.append(probe.getsockname()[0])
    except OSError:
        pass
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        infos = []
    for fam, *_rest, addr in infos:
        if fam == socket.AF_INET or (fam == socket.AF_INET6 and family == socket.AF_INET6):
            found.append(str(addr[0]).split("%")[0])
    return list(dict.fromkeys(a for a in found if not is_loopback(a) and a not in ANY_ADDRESS))


def split_host(host_header: str) -> str:
    """The host name of a Host header or URL netloc, lowercase, without port or brackets."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host[1:]
    if host.count(":") == 1:
        host = host.split(":", 1)[0]
    return host.rstrip(".")


@dataclass(frozen=True)
class AccessPolicy:
    bind_host: str
    token: str | None  # None: changes need no token (loopback only, none given)
    allowed_hosts: frozenset[str]

    @property
    def beyond_loopback(self) -> bool:
        return not is_loopback(self.bind_host)

    def host_allowed(self, host_header: str | None) -> bool:
        return bool(host_header) and split_host(host_header) in self.allowed_hosts

    def origin_allowed(self, origin: str | None, host_header: str | None) -> bool:
        """No Origin (a script, curl) is fine; a browser's must be this very page."""
        if origin is None:
            return True
        try:
            parts = urlsplit(origin.strip())
        except ValueError:
            return False
        return (parts.scheme in ("http", "https") and bool(host_header)
                and parts.netloc.lower() == (host_header or "").strip().lower())

    def token_ok(self, given: str | None) -> bool:
        if self.token is None:
            return True
        if not given:
            return False
        return hmac.compare_digest(given.encode("utf-8", "replace"), self.token.encode("utf-8"))

    def to_json(self) -> dict:
        return {"token_required": self.token is not None, "token_header": TOKEN_HEADER,
                "beyond_loopback": self.beyond_loopback}


def make_policy(bind_host: str = "127.0.0.1", token: str | None = None,
                extra_hosts: tuple[str, ...] | list[str] = ()) -> AccessPolicy:
    """The policy for a page bound to bind_host: beyond loopback a token is always required
    (made here when none was given)."""
    beyond = not is_loopback(bind_host)
    if beyond and not token:
        token = secrets.token_urlsafe(24)
    hosts = set(LOOPBACK_NAMES) | {split_host(h) for h in extra_hosts if h}
    if beyond:
        hosts |= {a.lower() for a in lan_addresses(bind_host)}
        name = socket.gethostname().lower()
        if name:
            hosts |= {name, f"{name}.local"}
        if bind_host not in ANY_ADDRESS:
            hosts.add(split_host(bind_host))
    return AccessPolicy(bind_host=bind_host, token=token, allowed_hosts=frozenset(hosts))


def page_url(host: str, port: int, token: str | None) -> str:
    """The page's address on one host, with the access token when there is one."""
    if ":" in host:
        host = f"[{host}]"
    query = f"?{TOKEN_PARAM}={quote(token, safe='')}" if token else ""
    return f"http://{host}:{port}/{query}"


def page_urls(policy: AccessPolicy, port: int) -> list[str]:
    """The addresses to open the page at, token included: this computer's first, then the
    network addresses other devices at the table use (empty beyond the first on loopback)."""
    bind = policy.bind_host
    if bind in ANY_ADDRESS:  # "::" takes IPv4 too on a dual-stack system
        local = "127.0.0.1"
    elif is_loopback(bind):
        local = bind.strip("[]")
    else:
        local = None  # bound to one network address only: loopback does not reach it
    urls = [page_url(local, port, policy.token)] if local else []
    urls += [page_url(a, port, policy.token) for a in lan_addresses(bind)]
    return urls
