"""Server memory over many "Settle it" calls (issue 15: it grew from 135 to 746 MB).

Replays the bundled Tornado Splash session through the real pipeline (fast), then presses
"Settle it" N times through the app (each makes a photo-finish PNG) and prints the process's
resident memory before and after; the baseline is the memory after the first 20 settles,
measured in the same run.

Then sends N random requests (the route fuzz suite's methods, paths, content types, hostile
bodies, Host/Origin/token headers; seeded) and prints the memory before and after, and the
answers by status (no 5xx expected).

    python -m tests.bench.web_memory [--settles 1000] [--requests 10000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settles", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=10000)
    args = parser.parse_args(argv)
    from vision.sources import SessionSource
    from webui.app import create_app, default_observe
    from webui.live import LiveEngine, LiveSettings

    source = SessionSource(REPO / "samples" / "sessions" / "tornado", realtime=False)
    engine = LiveEngine(source, default_observe(), LiveSettings(game="tornado"))
    from tests.test_fuzz_routes import LAN, TOKEN
    from webui.access import TOKEN_HEADER

    app = create_app({"ENGINE": engine, "BIND_HOST": LAN, "TOKEN": TOKEN})
    if not engine.done.wait(300) or engine.stable_obs is None:
        print("the bundled session gave no stable state", file=sys.stderr)
        return 1
    client = app.test_client()
    start = rss_mb()

    def settle() -> None:
        r = client.post("/api/settle", json={}, headers={TOKEN_HEADER: TOKEN})
        assert r.status_code == 200, r.get_json()
        client.get(r.get_json()["png"]).close()

    for _ in range(20):
        settle()
    baseline = rss_mb()
    t0 = time.monotonic()
    for _ in range(args.settles):
        settle()
    seconds = time.monotonic() - t0
    after = rss_mb()
    statuses, before_requests, after_requests = random_requests(app, args.requests)
    engine.stop()
    print(f"random requests: {args.requests}, answers by status {dict(sorted(statuses.items()))}")
    print(f"server memory over the random requests: {before_requests:.0f} MB -> {after_requests:.0f} MB "
          f"({after_requests - before_requests:+.1f} MB, ratio {after_requests / before_requests:.3f})")
    print(f"settles: {args.settles} in {seconds:.1f} s ({1000 * seconds / max(1, args.settles):.0f} ms each)")
    print(f"server memory: {start:.0f} MB after the replay, {baseline:.0f} MB after 20 settles (baseline), "
          f"{after:.0f} MB after {args.settles} more: {after - baseline:+.1f} MB, ratio {after / baseline:.3f}")
    return 0


def random_requests(app, n: int, seed: int = 15):
    """n seeded random requests through the app; (answers by status, RSS before, RSS after)."""
    import random
    from collections import Counter

    from tests import test_fuzz_routes as fz

    rng = random.Random(seed)
    client = app.test_client()
    app.config["MAX_STREAMS"] = 10**6
    statuses: Counter = Counter()
    before = rss_mb()
    for _ in range(n):
        proper = rng.random() < 0.5
        body = rng.choice(fz.HOSTILE_BODIES) if rng.random() < 0.5 else rng.randbytes(rng.randrange(200))
        request = {"method": "POST" if proper else rng.choice(fz.METHODS),
                   "path": rng.choice(["/api/config", "/api/settle"] if proper else fz.PATHS),
                   "content_type": "application/json" if proper else rng.choice(fz.CONTENT_TYPES), "body": body,
                   "host": rng.choice(fz.HOSTS[:4] if proper else fz.HOSTS),
                   "origin": None if proper else rng.choice(fz.ORIGINS),
                   "token": fz.TOKEN if proper else rng.choice(fz.TOKENS)}
        if request["path"].startswith(("/events", "/stream")):
            request["path"] = "/stream.mjpg?frames=1"
        try:
            response = fz.send(client, request)
        except (UnicodeError, ValueError):
            statuses["unsendable"] += 1
            continue
        statuses[response.status_code] += 1
        response.close()
    return statuses, before, rss_mb()


if __name__ == "__main__":
    sys.exit(main())
