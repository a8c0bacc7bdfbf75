"""A recorded session played through the live page's engine, against `refcam replay` of it.

The page's engine is built exactly as `refcam serve --replay DIR` builds it (its arguments parsed
by the CLI's own parser, webui.commands.serve.build_engine_config, webui.app.create_app), with a
client watching the video stream; its rulings (summary and time, in order) must be those of
webui.commands.replay.replay_session on the same folder.

``busy_cores(n)`` runs n processes that only spin, the competing CPU load of a loaded laptop.

As a script, the check of docs/page-replay.md: every bundled whole-game session, RUNS times each
at the recording's own pace under a competing load on every core:

    .venv/bin/python -m tests.page_replay [--runs 5] [--speed 1] [--load 2] [SESSION ...]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SESSIONS = REPO / "samples" / "sessions"
WHOLE_GAMES = ("kang-game", "kayak-rules", "tornado-race")


@contextlib.contextmanager
def busy_cores(n: int):
    """n processes spinning on the CPU for as long as the block runs (ended by their own pids)."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield procs
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


def session_prefix(session: Path, frames: int, dest: Path) -> Path:
    """A copy of the session's first `frames` frames (with its camera and game files) in dest."""
    import shutil

    lines = (session / "manifest.jsonl").read_text(encoding="utf-8").splitlines()
    (dest / "frames").mkdir(parents=True)
    (dest / "manifest.jsonl").write_text("\n".join(lines[:frames + 1]) + "\n", encoding="utf-8")
    for line in lines[1:frames + 1]:
        name = line.split('"frame": "', 1)[1].split('"', 1)[0]
        shutil.copyfile(session / name, dest / name)
    for own in session.glob("*.json"):
        shutil.copyfile(own, dest / own.name)
    return dest


def timeline_of(rulings: list[dict]) -> list[tuple[float, str]]:
    """What the two replays must agree on: each ruling's time and summary, in order."""
    return [(round(float(r["t"]), 3), r["summary"]) for r in rulings]


def offline_rulings(session: Path) -> list[dict]:
    """`refcam replay SESSION` (its defaults), as JSON rulings."""
    from webui.commands.replay import replay_session

    timeline, _ = replay_session(session)
    return timeline


def page_engine(session: Path, speed: float = 1.0, extra: tuple[str, ...] = ()):
    """The engine `refcam serve --replay SESSION` runs (not started), its source paced at speed
    times the recording's own pace."""
    from webui.app import create_app
    from webui.cli import build_parser
    from webui.commands.serve import build_engine_config

    args = build_parser().parse_args(["serve", "--replay", str(session), *extra])
    config = build_engine_config(args, stderr=open(os.devnull, "w"))
    config["SOURCE"].speed = speed
    return create_app(config).extensions["refcam_engine"]


def page_rulings(session: Path, speed: float = 1.0, timeout_s: float = 900.0,
                 watched: bool = True) -> tuple[list[dict], dict]:
    """Play the session once through the page's engine, a client watching its video unless not
    `watched` (then the engine draws no frames). Returns (the rulings in the order the page got
    them, what the run measured: wall seconds, frames ruled, the slowest replay rate the page was
    told, its notes)."""
    engine = page_engine(session, speed)
    events = engine.events.subscribe()
    video = engine.frames.subscribe() if watched else None
    watching = threading.Event()

    def watch() -> None:  # a page showing the video: it takes every frame it is sent
        with contextlib.suppress(StopIteration):
            while not watching.is_set():
                video.get(timeout=0.5)

    if watched:
        threading.Thread(target=watch, daemon=True).start()
    rulings: list[dict] = []
    seen = {"rates": [], "notes": set()}
    t0 = time.monotonic()
    engine.start()
    try:
        while time.monotonic() - t0 < timeout_s:
            try:
                ev = events.get(timeout=1.0)
            except StopIteration:
                break
            if ev is None:
                continue
            if ev["type"] == "ruling":
                rulings.append(ev["ruling"])
            elif ev["type"] == "status":
                if ev.get("replay_rate") is not None:
                    seen["rates"].append(ev["replay_rate"])
                if ev.get("replay_note"):
                    seen["notes"].add(ev["replay_note"])
                if ev.get("done"):
                    break
    finally:
        wall = time.monotonic() - t0
        watching.set()
        engine.stop()
    measured = {"wall_s": round(wall, 1), "frames": engine.frames_in,
                "frames_in_session": engine.source.info.frame_count,
                "slowest_rate": min(seen["rates"]) if seen["rates"] else None, "notes": sorted(seen["notes"]),
                "late_frames": engine.clock.slips if engine.clock is not None else None}
    return rulings, measured


def first_difference(a: list[tuple[float, str]], b: list[tuple[float, str]]) -> str:
    """Where two timelines part, in one line ("" when they are the same)."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"ruling {i + 1}: offline {x} / page {y}"
    if len(a) != len(b):
        return f"offline has {len(a)} rulings, the page {len(b)}"
    return ""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("sessions", nargs="*", default=list(WHOLE_GAMES))
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--speed", type=float, default=1.0, help="the replay's pace, times the recording's")
    p.add_argument("--load", type=int, default=os.cpu_count() or 2, help="spinning processes (default: one a core)")
    args = p.parse_args(argv)
    failures = 0
    print(f"{os.cpu_count()} cores, competing load: {args.load} spinning processes, pace {args.speed}x")
    for name in args.sessions:
        session = SESSIONS / name if not Path(name).is_dir() else Path(name)
        t = time.monotonic()
        offline = timeline_of(offline_rulings(session))
        print(f"{session.name}: refcam replay gives {len(offline)} rulings ({time.monotonic() - t:.1f} s, no load)")
        with busy_cores(args.load):
            for run in range(1, args.runs + 1):
                rulings, m = page_rulings(session, args.speed)
                diff = first_difference(offline, timeline_of(rulings))
                failures += bool(diff)
                rate = f"{m['slowest_rate']:.2f}x" if m["slowest_rate"] is not None else "-"
                print(f"  run {run}: {'SAME' if not diff else 'DIFFERENT'}  {m['frames']}/{m['frames_in_session']} frames "
                      f"ruled, {m['wall_s']} s, slowest pace {rate}" + (f"  {diff}" if diff else ""), flush=True)
                for note in m["notes"]:
                    print(f"         page said: {note}")
    print(f"{failures} run(s) differ from refcam replay")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
