"""Frames per second the live page serves to 1 and to 5 tabs at once.

Runs `refcam serve --replay <sample session> --loop` on 127.0.0.1, in real time and then
with --fast (the engine as fast as it can), and reads its MJPEG stream with 1, then 5
concurrent clients for a fixed time each,
counting whole JPEG parts. Prints each figure and its ratio to the source's own frame
rate (the baseline: the manifest's fps) and to the rate the engine processed frames in
the same interval (/healthz). Each tab also reads /events, as the page does; every event
carries the time its frame entered the engine, so the frame-to-ruling latency (p50, p95,
max over rulings as each tab received them; and over every event caused by a frame) is
printed for 5 tabs. Loopback only; every loop is bounded in time.

    .venv/bin/python -m tests.bench.live [--game kang] [--seconds 10]
"""

from __future__ import annotations

import argparse
import http.client
import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def health(port: int) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("GET", "/healthz")
    data = json.loads(conn.getresponse().read())
    conn.close()
    return data


def read_stream(port: int, seconds: float, counts: list, i: int) -> None:
    """Count whole MJPEG parts received in `seconds` (after the first one)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/stream.mjpg")
    resp = conn.getresponse()
    buf = b""
    n = 0
    start = None
    deadline = time.monotonic() + seconds + 15  # hard bound even if frames never come
    while time.monotonic() < deadline:
        chunk = resp.read1(65536)
        if not chunk:
            break
        buf += chunk
        while True:
            head = buf.find(b"Content-Length: ")
            if head < 0:
                break
            end = buf.find(b"\r\n\r\n", head)
            if end < 0:
                break
            length = int(buf[head + 16:end])
            if len(buf) < end + 4 + length:
                break
            buf = buf[end + 4 + length:]
            if start is None:
                start = time.monotonic()
            else:
                n += 1
        if start is not None and time.monotonic() - start >= seconds:
            break
    counts[i] = n / (time.monotonic() - start) if start else 0.0
    conn.close()


def read_events(port: int, seconds: float, latencies: list) -> None:
    """Collect (event type, ms from the frame entering the engine to this client) for `seconds`,
    for frames that entered after the client connected (not the rulings log it gets first)."""
    connected_ms = time.time() * 1000.0
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/events")
    resp = conn.getresponse()
    buf = b""
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            chunk = resp.read1(65536)
            if not chunk:
                break
            now_ms = time.time() * 1000.0
            buf += chunk
            while b"\n\n" in buf:
                message, buf = buf.split(b"\n\n", 1)
                for line in message.split(b"\n"):
                    if line.startswith(b"data: "):
                        event = json.loads(line[6:])
                        if event.get("entry_ms") and float(event["entry_ms"]) >= connected_ms:
                            latencies.append((str(event.get("type")), now_ms - float(event["entry_ms"])))
                            if event.get("sent_ms"):  # split: in the engine, then on the way to the tab
                                latencies.append(("engine " + str(event.get("type")),
                                                  float(event["sent_ms"]) - float(event["entry_ms"])))
                                latencies.append(("delivery " + str(event.get("type")),
                                                  now_ms - float(event["sent_ms"])))
    except (OSError, http.client.HTTPException, ValueError):
        pass
    conn.close()


def percentile(values: list[float], q: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, int(round(q / 100.0 * (len(v) - 1))))] if v else float("nan")


def measure(port: int, tabs: int, seconds: float) -> tuple[list[float], float, list]:
    counts = [0.0] * tabs
    latencies: list = []
    h0, t0 = health(port)["frames"], time.monotonic()
    threads = [threading.Thread(target=read_stream, args=(port, seconds, counts, i)) for i in range(tabs)]
    threads += [threading.Thread(target=read_events, args=(port, seconds, latencies)) for _ in range(tabs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 30)
    engine_fps = (health(port)["frames"] - h0) / (time.monotonic() - t0)
    return counts, engine_fps, latencies


def run_server(session: Path, source_fps: float | None, seconds: float, fast: bool) -> None:
    port = free_port()
    cmd = [sys.executable, "-m", "webui.cli", "serve", "--replay", str(session), "--loop", "--port", str(port)]
    proc = subprocess.Popen(cmd + (["--fast"] if fast else []), cwd=REPO, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and "open http" not in (proc.stderr.readline() or "open http"):
            pass
        time.sleep(5.0)  # let the engine warm up (imports, first frames)
        results = {}
        for tabs in (1, 5):
            per_tab, engine_fps, latencies = measure(port, tabs, seconds)
            mean = sum(per_tab) / len(per_tab)
            results[tabs] = mean
            ratio_src = f"{mean / source_fps:.2f}" if source_fps else "n/a"
            print(f"{tabs} tab(s): {mean:.2f} fps per tab (min {min(per_tab):.2f}, max {max(per_tab):.2f}); "
                  f"engine processed {engine_fps:.2f} fps; source {source_fps} fps; "
                  f"ratio to source {ratio_src}; ratio to engine {mean / engine_fps if engine_fps else 0:.2f}")
            rulings = [ms for kind, ms in latencies if kind == "ruling"]
            every = [ms for kind, ms in latencies if not kind.startswith(("engine ", "delivery "))]
            print(f"{tabs} tab(s): frame-to-ruling p50 {percentile(rulings, 50):.0f} ms p95 {percentile(rulings, 95):.0f} ms "
                  f"max {max(rulings, default=float('nan')):.0f} ms over {len(rulings)} rulings received; every event "
                  f"from a frame: p95 {percentile(every, 95):.0f} ms over {len(every)}")
            kinds = sorted({kind for kind, _ in latencies if " " not in kind})
            p95 = {k: percentile([ms for kind, ms in latencies if kind == k], 95) for k, _ in latencies}
            print(f"{tabs} tab(s): p95 by event, frame to tab | in the engine (frame in to event sent) | delivery: "
                  + ", ".join(f"{k} {p95[k]:.0f} | {p95['engine ' + k]:.0f} | {p95['delivery ' + k]:.0f} ms"
                              for k in kinds if "engine " + k in p95))
        if results[1]:
            print(f"5 tabs vs 1 tab: {results[5] / results[1]:.2f} of the per-tab frame rate")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", default="kang", choices=("kang", "kayak", "tornado"))
    ap.add_argument("--seconds", type=float, default=10.0)
    args = ap.parse_args(argv)
    session = REPO / "samples" / "sessions" / args.game
    if not (session / "manifest.jsonl").is_file():
        print(f"no sample session at {session}", file=sys.stderr)
        return 2
    header = json.loads((session / "manifest.jsonl").read_text().splitlines()[0])
    source_fps = float(header.get("fps") or 0) or None
    for fast in (False, True):
        mode = "as fast as possible (--fast)" if fast else "real time"
        print(f"-- {args.game} sample session replayed in {mode}")
        run_server(session, source_fps, args.seconds, fast)
    return 0


if __name__ == "__main__":
    sys.exit(main())
