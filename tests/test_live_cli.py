"""`refcam serve`, `record` and `replay` through the command line: rulings, bad input, faults."""

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from webui.cli import main

from tests.live_helpers import write_rendered_session, write_session

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples" / "sessions"


def refcam(*args, timeout=60):
    return subprocess.run([sys.executable, "-m", "webui.cli", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)


def assert_one_line_error(proc, *needles):
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert "Traceback" not in proc.stderr
    err = [l for l in lines if l.startswith("refcam: error:")]
    assert len(err) == 1, proc.stderr
    for n in needles:
        assert n in err[0], err[0]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    return write_rendered_session(tmp_path_factory.mktemp("live") / "tornado", still_after=6)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_replay_prints_the_timeline_of_rulings(rendered, capsys):
    assert main(["replay", str(rendered), "--json"]) == 0
    out, err = capsys.readouterr()
    timeline = json.loads(out)
    assert timeline, "a session with two stable states gives rulings"
    times = sorted({r["t"] for r in timeline})
    # stable states: a hold of 0.5 s (5 frames at 10 fps) from the first frame, and from the
    # slide's last frame at 1.4 s (where the piece reached its new place)
    assert times == [pytest.approx(0.4, abs=0.01), pytest.approx(1.8, abs=0.01)]
    assert all(r["game"] == "tornado" and r["frame"].endswith(".jpg") for r in timeline)
    assert "100%" in err  # progress as percentages when stderr is not a terminal
    assert main(["replay", str(rendered)]) == 0
    verdict, *lines = capsys.readouterr().out.strip().splitlines()
    assert verdict.startswith(f"Replayed: {len(timeline)} rulings") and len(lines) == len(timeline)


def test_replay_skips_missing_and_corrupt_frames_with_warnings(tmp_path, capsys):
    folder = write_rendered_session(tmp_path / "s", still_after=6)
    (folder / "frames" / "000002.jpg").unlink()
    data = (folder / "frames" / "000004.jpg").read_bytes()
    (folder / "frames" / "000004.jpg").write_bytes(data[: len(data) // 2])
    assert main(["replay", str(folder), "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)  # the replay went on
    assert "frames/000002.jpg is missing; skipped" in err
    assert "000004.jpg" in err and "truncated" in err


def test_replay_manifest_not_json_is_a_one_line_error(tmp_path):
    folder = write_session(tmp_path / "s", 3)
    (folder / "manifest.jsonl").write_text("{not json at all\n")
    assert_one_line_error(refcam("replay", str(folder)), "not JSON", "manifest.jsonl")


def test_replay_missing_folder(tmp_path):
    assert_one_line_error(refcam("replay", str(tmp_path / "absent")), "does not exist")


def test_serve_with_a_camera_that_does_not_exist_fails_before_serving():
    proc = refcam("serve", "--camera", "57", "--port", str(free_port()), timeout=30)
    assert_one_line_error(proc, "camera 57 does not exist")
    assert len(proc.stderr.strip().splitlines()) == 1  # no backend chatter either
    assert "open http" not in proc.stderr


def test_record_with_a_camera_that_does_not_exist(tmp_path):
    proc = refcam("record", "--camera", "57", "--out", str(tmp_path / "rec"), "--seconds", "1", timeout=30)
    assert_one_line_error(proc, "camera 57 does not exist")
    assert not (tmp_path / "rec").exists()


def serve_error(capsys, *args):
    """`refcam serve ARGS` in this process, answered before anything is served: (exit code, stderr).
    In-process, so the answer does not wait on a cold interpreter under load (the subprocess form
    once timed out at 60 s); a serve that got as far as listening would fail at once, not hang."""
    import webui.commands.serve as serve_command

    def no_server(*a, **k):
        raise AssertionError(f"refcam serve {' '.join(args)} started serving instead of refusing")

    original = serve_command.make_server
    serve_command.make_server = no_server
    try:
        code = main(["serve", *args])
    finally:
        serve_command.make_server = original
    return code, capsys.readouterr().err


def assert_serve_refuses(capsys, args, *needles):
    code, err = serve_error(capsys, *args)
    lines = [l for l in err.strip().splitlines() if l.startswith("refcam: error:")]
    assert code == 2 and "Traceback" not in err and len(lines) == 1, err
    for n in needles:
        assert n in lines[0], lines[0]


def test_serve_bad_settings_are_one_line_errors(tmp_path, capsys):
    folder = write_session(tmp_path / "s", 3)
    assert_serve_refuses(capsys, ["--replay", str(folder), "--weights", "boat-1=lots"], "boat-1=lots")
    assert_serve_refuses(capsys, ["--replay", str(folder), "--course", "moon-river"], "moon-river")
    assert_serve_refuses(capsys, ["--replay", str(tmp_path / "nope")], "does not exist")
    (tmp_path / "clip.mp4").write_text("not a video")
    assert_serve_refuses(capsys, ["--video", str(tmp_path / "clip.mp4")], "not a readable video")
    assert_serve_refuses(capsys, ["--replay", str(folder), "--port", "70000"], "70000")
    wrong = {"image_size": [1920, 1080], "camera_matrix": [[1000, 0, 960], [0, 1000, 540], [0, 0, 1]],
             "dist_coeffs": [0, 0, 0, 0, 0]}
    (tmp_path / "wrong.json").write_text(json.dumps(wrong))
    assert_serve_refuses(capsys, ["--replay", str(folder), "--camera-file", str(tmp_path / "wrong.json")],
                         "is for 1920x1080 images but the image is 64x48")
    assert main(["replay", str(folder), "--camera-file", str(tmp_path / "wrong.json")]) == 2
    assert "is for 1920x1080 images but the image is 64x48" in capsys.readouterr().err
    (tmp_path / "cam.json").write_text("[1, 2")
    assert_serve_refuses(capsys, ["--replay", str(folder), "--camera-file", str(tmp_path / "cam.json")], "not JSON")


def test_serve_refuses_what_replay_refuses(capsys):
    """Issue 21: another game's session, and a still picture as --video: one line, exit 2."""
    kang = SAMPLES / "kang"
    if not (kang / "manifest.jsonl").is_file():
        pytest.skip("the bundled Kang session is absent")
    assert main(["replay", str(kang), "--game", "tornado"]) == 2
    replay_says = capsys.readouterr().err
    assert_serve_refuses(capsys, ["--replay", str(kang), "--game", "tornado"], "these are Kang pieces", "--game kang")
    assert "these are Kang pieces" in replay_says
    for still in sorted((REPO / "samples" / "tornado").glob("*.jpg"))[:1]:
        assert_serve_refuses(capsys, ["--video", str(still)], "JPEG picture, not a video")


def start_serve(*args):
    proc = subprocess.Popen([sys.executable, "-m", "webui.cli", "serve", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=REPO)
    lines = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        if "open http" in line:
            break
    return proc, lines


def stop(proc):
    proc.terminate()
    try:
        return proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


def test_serve_port_in_use_is_a_one_line_error(tmp_path):
    folder = write_session(tmp_path / "s", 3)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        proc = refcam("serve", "--replay", str(folder), "--port", str(port), timeout=30)
    assert_one_line_error(proc, f"port {port}", "already in use")


def test_serve_on_all_interfaces_warns_and_stops_cleanly(tmp_path):
    from webui.phone import lan_addresses

    folder = write_session(tmp_path / "s", 3)
    port = free_port()
    proc, lines = start_serve("--replay", str(folder), "--host", "0.0.0.0", "--port", str(port), "--loop")
    try:
        text = "".join(lines)
        assert "warning" in text and "reachable by other computers" in text
        assert f"http://127.0.0.1:{port}/?token=" in text  # this computer's address, with the access token
        lan = [a for a in lan_addresses() if f"http://{a}:{port}/?token=" in text]
        assert lan or not lan_addresses(), text  # and the LAN's, for phones
        assert "█" in text  # its QR code in the terminal
    finally:
        code = stop(proc)
    assert code == 0
    assert "Traceback" not in proc.stderr.read()


def test_serve_records_while_serving(tmp_path):
    import urllib.request

    folder = write_session(tmp_path / "s", 20)
    out = tmp_path / "rec"
    port = free_port()
    proc, lines = start_serve("--replay", str(folder), "--port", str(port), "--record", str(out), "--fast")
    try:
        assert any("open http" in l for l in lines), lines
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            health = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5).read())
            if health["frames"] >= 20:
                break
            time.sleep(0.1)
    finally:
        stop(proc)
    from vision.session import read_session

    assert len(read_session(out).frames) == 20


@pytest.mark.slow
@pytest.mark.parametrize("game", ["tornado", "kayak", "kang"])
def test_replay_works_on_every_bundled_sample_session(game, capsys):
    folder = SAMPLES / game
    if not (folder / "manifest.jsonl").is_file():
        pytest.skip(f"no bundled sample session at {folder}")
    assert main(["replay", str(folder), "--json"]) == 0
    out, err = capsys.readouterr()
    timeline = json.loads(out)
    assert timeline, f"the {game} sample session gives rulings"
    assert all(r["game"] == game for r in timeline)
    assert "Traceback" not in err
    truth = [json.loads(line) for line in (folder / "truth.jsonl").read_text().splitlines() if line.strip()]
    events = [(row["t"], row["event"]) for row in truth if row.get("event") and row["event"].get("piece")]
    if game == "tornado":
        assert any(r["kind"] == "ranking" for r in timeline)
        return
    # every scripted move is ruled on within a second of the move ending: Kayak names the pawn,
    # Kang the move (tokens belong to nobody), and both find it legal
    for t, ev in events:
        short = ev["piece"].split("/", 1)[-1]
        near = [r for r in timeline if 0 <= r["t"] - t <= 1.0 and r["legal"] is True
                and (game == "kang" or short in r["summary"])]
        assert near, f"no legal ruling on {ev['piece']} ({ev['kind']}) after t={t}"


def test_replay_progress_is_a_bar_on_a_terminal_and_percentages_otherwise():
    import io

    from webui.commands.replay import Progress

    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty, plain = Tty(), io.StringIO()
    for stream in (tty, plain):
        p = Progress(40, stream)
        for i in range(1, 41):
            p.update(i)
        p.close()
    assert "\r" in tty.getvalue() and "[#########################] 100% (40/40 frames)" in tty.getvalue()
    assert plain.getvalue().splitlines() == [f"refcam: replay {p}%" for p in (2, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100)]
