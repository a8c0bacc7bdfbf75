"""A recorded session played on the page is the replay: every frame ruled, in order, the rulings
of `refcam replay`; when the computer cannot keep up, the replay's clock slows and the page says so."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
import time

import pytest

from tests.live_helpers import scripted_observe, write_session
from tests.test_game_seam import counter, counter_script  # noqa: F401 (a fixture)
from tests.page_replay import REPO, SESSIONS, WHOLE_GAMES, busy_cores, page_rulings, session_prefix, timeline_of
from vision.sources import SessionSource
from vision.tracking import TrackerSettings
from webui.live import LiveEngine, LiveSettings
from webui.replays import ReplayClock


# ------------------------------------------------------------------------------ the replay's clock
def test_the_clock_waits_for_each_frame_at_the_recordings_pace():
    clock = ReplayClock(speed=1.0)
    assert clock.wait_s(0.0, now=100.0) == 0.0  # the first frame at once
    clock.ruled(0.0, now=100.3)  # its warm-up does not count: the clock starts after it
    assert clock.wait_s(0.25, now=100.3) == pytest.approx(0.25)
    assert clock.wait_s(0.25, now=100.6) == 0.0  # 0.05 s late: ruled now, the next frames catch up
    clock.ruled(0.25, now=100.6)
    assert clock.wait_s(0.5, now=100.6) == pytest.approx(0.2)


def test_a_frame_that_comes_late_is_ruled_and_the_clock_slips():
    clock = ReplayClock(speed=1.0)
    clock.ruled(0.0, now=0.0)
    now, t = 0.0, 0.0
    for _ in range(40):  # each frame of 0.25 s takes 0.4 s to rule
        t += 0.25
        now += clock.wait_s(t, now)
        now += 0.4
        clock.ruled(t, now)
        assert clock.wait_s(t + 0.25, now) == 0.0  # never a wait once behind: no time lost idling
    assert clock.rate == pytest.approx(0.25 / 0.4, abs=0.01) and clock.slips >= 39
    assert clock.note == "replay running at 0.6x: this computer is slower than the recording"


def test_a_computer_that_keeps_up_hears_nothing():
    clock = ReplayClock(speed=1.0)
    now = 0.0
    for k in range(40):
        now += clock.wait_s(0.25 * k, now) + 0.05
        clock.ruled(0.25 * k, now)
    assert clock.rate == pytest.approx(1.0, abs=0.05) and clock.note == "" and clock.slips == 0


# --------------------------------------------------------------- the page's engine, a slow observe
def _slow(observe, seconds):
    def slow_observe(image, camera, game):
        time.sleep(seconds)
        return observe(image, camera, game)
    return slow_observe


def _played(engine) -> tuple[list[tuple[float, str]], set[str]]:
    """(the rulings' times and summaries, what the page was told of the replay's pace)."""
    events = engine.events.subscribe()
    engine.start()
    assert engine.done.wait(60)
    engine.stop()
    rulings, notes = [], set()
    with contextlib.suppress(StopIteration):  # the engine stopped: the stream ends after its last event
        while (ev := events.get(timeout=0)) is not None:
            if ev["type"] == "ruling":
                rulings.append((ev["ruling"]["t"], ev["ruling"]["summary"]))
            notes.add(ev.get("replay_note") or "")
    return rulings, notes


def test_a_page_replay_slower_than_the_recording_rules_every_frame_and_says_so(tmp_path, counter):
    """30 frames at 10 fps, each taking 0.15 s to observe: a camera's pace would drop a third of
    them; the page's replay rules all 30, gives the rulings of the same frames ruled one by one,
    and says it runs at about 0.7x."""
    folder = write_session(tmp_path / "s", 30, game="kang")
    observe = scripted_observe(counter_script())
    settings = LiveSettings(game="counter", tracker=TrackerSettings(stable_s=0.5), stream=False)
    offline = LiveEngine(SessionSource(folder, realtime=False), observe, settings)
    expected, quiet = _played(offline)
    page = LiveEngine(SessionSource(folder, realtime=True), _slow(observe, 0.15), settings)
    rulings, notes = _played(page)
    assert rulings == expected and len(expected) >= 2
    assert page.frames_in == 30 and page.source.frames_skipped == 0
    said = [n for n in notes if re.fullmatch(r"replay running at 0\.[1-8]x: this computer is slower than the recording", n)]
    assert said, notes
    assert quiet == {""}  # as fast as possible: no pace to fall behind


def test_a_looping_page_replay_gives_each_pass_the_sessions_declarations(tmp_path, counter):
    """The page's replay hands the game what the players declared during the recording, at its
    time, on every pass: the rulings of each pass are those of `refcam replay`."""
    from webui.commands.replay import replay_session

    folder = write_session(tmp_path / "s", 30, game="kang")
    (folder / "declarations.jsonl").write_text(json.dumps({"kind": "count", "value": "3", "t": 1.95}) + "\n")
    observe = scripted_observe(counter_script())
    offline, _ = replay_session(folder, game="counter", observe=observe)
    source = SessionSource(folder, realtime=True, loop=True, speed=10.0)
    page = LiveEngine(source, observe, LiveSettings(game="counter", stream=False))
    events = page.events.subscribe()
    page.start()
    passes: list[list[tuple]] = [[]]
    deadline = time.monotonic() + 30
    while len(passes) < 3 and time.monotonic() < deadline:
        ev = events.get(timeout=0.5)
        if ev is not None and ev["type"] == "restart":
            passes.append([])
        elif ev is not None and ev["type"] == "ruling":
            passes[-1].append((ev["game_t"], ev["ruling"]["summary"]))
    page.stop()
    assert [(r["t"], r["summary"]) for r in offline][2] == (1.95, "players declare 3 pieces")
    assert passes[0] == passes[1] == [(r["t"], r["summary"]) for r in offline]


# ------------------------------------------------- the bundled whole games, under a competing load
# (the first 16 s of each, to keep the suite short; tests/page_replay.py plays all of each, 5 times,
# at the recording's own pace: docs/page-replay.md)
PLAYED_FRAMES = 64


@pytest.mark.slow
@pytest.mark.parametrize("name", WHOLE_GAMES)
def test_the_page_replays_a_whole_game_as_refcam_replay_does_under_load(name, tmp_path):
    """`refcam replay` runs beside the page's engine (both cores busy, with a spinning process);
    the page's replay is asked for 50x the recording's pace, which no computer keeps: the old
    page passed frames over (a false "4 kangaroos changed place" in 3 of 4 replays), this one
    slows its clock, rules every frame and gives the same rulings at the same times."""
    session = SESSIONS / name
    if not (session / "manifest.jsonl").is_file():
        pytest.skip(f"no bundled session at {session}")
    session = session_prefix(session, PLAYED_FRAMES, tmp_path / name)
    offline = subprocess.Popen([sys.executable, "-m", "webui.cli", "replay", str(session), "--json"], cwd=REPO,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        with busy_cores(1):
            rulings, measured = page_rulings(session, speed=50.0, timeout_s=600, watched=False)
        out, _ = offline.communicate(timeout=600)
    finally:
        offline.kill()
    assert offline.returncode == 0
    assert measured["frames"] == measured["frames_in_session"], measured
    assert measured["late_frames"] > 0, measured  # the clock slowed: frames came late, and none was dropped
    assert timeline_of(rulings) == timeline_of(json.loads(out))
