"""Server memory over many "Settle it" calls (issue 15: it grew from 135 to 746 MB).

Replays the bundled Tornado Splash session through the real pipeline (fast), then presses
"Settle it" N times through the app (each makes a photo-finish PNG) and prints the process's
resident memory before and after; the baseline is the memory after the first 20 settles,
measured in the same run.

    python -m tests.bench.web_memory [--settles 1000]
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
    args = parser.parse_args(argv)
    from vision.sources import SessionSource
    from webui.app import create_app, default_observe
    from webui.live import LiveEngine, LiveSettings

    source = SessionSource(REPO / "samples" / "sessions" / "tornado", realtime=False)
    engine = LiveEngine(source, default_observe(), LiveSettings(game="tornado"))
    app = create_app({"ENGINE": engine})
    if not engine.done.wait(300) or engine.stable_obs is None:
        print("the bundled session gave no stable state", file=sys.stderr)
        return 1
    client = app.test_client()
    start = rss_mb()

    def settle() -> None:
        r = client.post("/api/settle", json={})
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
    engine.stop()
    print(f"settles: {args.settles} in {seconds:.1f} s ({1000 * seconds / args.settles:.0f} ms each)")
    print(f"server memory: {start:.0f} MB after the replay, {baseline:.0f} MB after 20 settles (baseline), "
          f"{after:.0f} MB after {args.settles} more: {after - baseline:+.1f} MB, ratio {after / baseline:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
