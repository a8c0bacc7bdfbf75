"""Issue 15, item 7 on the page: a source that vanishes or a camera that is lost shows in the
status event (source_state running/ended/lost/error with its message), and the engine stops
or backs off instead of spinning."""

from __future__ import annotations

import shutil
import time

import pytest

from vision.sources import SessionSource
from webui.live import LiveEngine, LiveSettings

from tests.live_helpers import move_script, scripted_observe, unpluggable_camera_engine, wait_for, write_session

if not hasattr(SessionSource, "set_state"):  # vision.sources' states come with the loaders branch (issue 15)
    pytest.skip("the frame sources here have no running/ended/lost/error states yet", allow_module_level=True)



def test_a_deleted_replay_folder_is_an_error_in_the_status_and_nothing_spins(tmp_path):
    """Used to spin at 100 % of a core forever with --fast --loop, the page saying all was well."""
    folder = write_session(tmp_path / "s", 30, game="kang")
    engine = LiveEngine(SessionSource(folder, realtime=False, loop=True), scripted_observe(move_script("kang")),
                        LiveSettings(game="kang", stream=False))
    sub = engine.events.subscribe()
    engine.start()
    wait_for(sub, lambda e: e["type"] == "ruling")
    shutil.rmtree(folder)
    ev = wait_for(sub, lambda e: e["type"] == "status" and e["source_state"] == "error")
    # "session folder ... vanished", or, when it went between two frames, "none of its 30 frames could be read"
    # the page names the folder by its own name, never by its absolute path (issue 22)
    assert f" {folder.name} " in ev["source_message"] and str(folder) not in ev["source_message"]
    assert engine.done.wait(5) and f" {folder.name} " in engine.status_event()["error"]
    cpu0, wall0 = time.process_time(), time.monotonic()
    time.sleep(1.0)
    busy = (time.process_time() - cpu0) / (time.monotonic() - wall0)
    assert busy < 0.2, f"{busy:.0%} of a core after the source vanished"
    assert engine.status_event()["source_state"] == "error"
    engine.stop()


def test_a_replay_that_ends_says_ended(tmp_path):
    folder = write_session(tmp_path / "s", 5, game="kang")
    engine = LiveEngine(SessionSource(folder, realtime=False), scripted_observe(move_script("kang")),
                        LiveSettings(game="kang", stream=False))
    engine.start()
    assert engine.done.wait(10)
    status = engine.status_event()
    assert status["source_state"] == "ended" and status["error"] is None
    engine.stop()


def test_a_lost_camera_shows_camera_lost_and_comes_back(monkeypatch):
    engine, world, sub = unpluggable_camera_engine(monkeypatch)
    engine.start()
    wait_for(sub, lambda e: e["type"] == "ruling")
    world["plugged"] = False
    lost = wait_for(sub, lambda e: e["type"] == "status" and e["source_state"] == "lost")
    assert "camera lost" in lost["source_message"] and lost["error"] is None
    world["plugged"] = True
    back = wait_for(sub, lambda e: e["type"] == "status" and e["source_state"] == "running")
    assert "back" in back["source_message"]
    engine.stop()
