"""`make bench-lan`: the LAN attacks of issues 22 and 35 (idle sockets) against `refcam serve` replaying the
bundled Kang session in real time (4 frames/s, as the issue measured), on loopback only.

The server runs in its own process; its phone routes answer as on a page reachable from the
LAN (a made-up TEST-NET address in the QR code; nothing leaves this computer), so the QR code
is as costly as on a real table. The attacker speaks from 127.0.0.2 (tests/lan_attacks.py),
the viewer measuring /healthz and the referee's frames per second from 127.0.0.1.

Each attack runs ATTACK_S seconds between two plain windows of the same length; its frame rate
is printed with its ratio to the mean of those two (the baseline, measured in the same run).
Pass: /healthz worst < 1 s and the ratio >= 0.90, for each attack.
"""

from __future__ import annotations

import argparse
import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests import lan_attacks

REPO = Path(__file__).resolve().parents[2]
SESSION = REPO / "samples" / "sessions" / "kang"
TOKEN = "bench-token-0123456789"
PRETEND_LAN = ("import sys, webui.phone as p; p.beyond_loopback = lambda host: True; "
               "p.page_urls = lambda host, port, token=None: [f'http://192.0.2.10:{port}/?token={token or \"\"}']; "
               "from webui.cli import main; sys.exit(main(sys.argv[1:]))")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", PRETEND_LAN, "serve", "--replay", str(SESSION), "--loop",
                             "--host", "127.0.0.1", "--port", str(port), "--token", TOKEN],
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if lan_attacks.healthz(port, timeout=1)[0] == 200:
            return proc
        if proc.poll() is not None:
            raise SystemExit(f"refcam serve exited with {proc.returncode}")
        time.sleep(0.3)
    proc.kill()
    raise SystemExit("refcam serve did not answer in 60 s")


def stop_server(proc: subprocess.Popen) -> None:
    """Ctrl-C, as a user stops `refcam serve` (it closes its streams and sockets in order); killed
    if it has not ended 15 s later."""
    proc.send_signal(signal.SIGINT)
    deadline = time.monotonic() + 15
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    if proc.poll() is None:
        proc.kill()


def attacks(port: int):
    return [("230 connections trickling header lines (one every 10 s)",
             lambda: lan_attacks.slow_headers(port, connections=230, every_s=10.0)),
            ("230 idle connections from 10 addresses (nothing sent)",
             lambda: lan_attacks.idle_connections(port, connections=230, addresses=10)),
            ("40 MJPEG streams never read", lambda: lan_attacks.unread_streams(port, streams=40)),
            ("QR code flood, 16 clients, 267 requests/s",
             lambda: lan_attacks.flood(port, "/phone-qr.svg", clients=16, rate=267.0))]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=12.0, help="length of each window (default 12)")
    args = ap.parse_args(argv)
    port = free_port()
    proc = start_server(port)
    failed = 0
    try:
        time.sleep(3.0)  # past the first frames
        before = lan_attacks.probe(port, args.seconds)
        print(f"{'window':58s} {'fps':>5s} {'ratio':>6s} {'healthz median':>15s} {'worst':>7s} {'failed':>6s}  attack saw")
        print(f"{'baseline':58s} {before['fps']:5.2f} {'':6s} {before['healthz_median_s'] * 1000:12.1f} ms "
              f"{before['healthz_worst_s']:6.3f}s {before['healthz_failures']:6d}")
        for name, attack in attacks(port):
            with attack() as seen:
                time.sleep(1.0)
                during = lan_attacks.probe(port, args.seconds)
            after = lan_attacks.probe(port, args.seconds)
            base = (before["fps"] + after["fps"]) / 2
            ratio = during["fps"] / base if base else 0.0
            ok = during["healthz_worst_s"] < 1.0 and ratio >= 0.90 and not during["healthz_failures"]
            failed += not ok
            shown = json.dumps(seen if isinstance(seen, dict) else {str(k): seen.count(k) for k in sorted(set(seen))})
            print(f"{name:58s} {during['fps']:5.2f} {ratio:6.2f} {during['healthz_median_s'] * 1000:12.1f} ms "
                  f"{during['healthz_worst_s']:6.3f}s {during['healthz_failures']:6d}  {shown}  "
                  f"{'ok' if ok else 'FAILED'}")
            print(f"{'baseline':58s} {after['fps']:5.2f} {'':6s} {after['healthz_median_s'] * 1000:12.1f} ms "
                  f"{after['healthz_worst_s']:6.3f}s {after['healthz_failures']:6d}")
            before = after
    finally:
        stop_server(proc)
    print(f"bench-lan: {len(attacks(port)) - failed} of {len(attacks(port))} attacks failed to stall the page (pass: /healthz < 1 s, fps >= 90 %)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
