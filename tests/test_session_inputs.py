"""Recorded sessions that are not as recorded: frames missing, repeated or out of time order; a
session that starts mid-game; a camera bumped once; a piece carried out of view and back.

Each gets rulings or one clear line, never a traceback or a stuck game. The sessions are short
copies of the bundled ones (samples/sessions/*), edited in tmp_path; the expected moves come
from each session's truth.jsonl (what its script played), never from the code under test.
Replays use the quick detector that follows stickers between frames (a few seconds each).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.catalog import default_catalog
from tests.conftest import run_cli
from vision import detect
from vision.session import read_session
from webui.commands.replay import replay_session

SESSIONS = Path(__file__).resolve().parent.parent / "samples" / "sessions"


# --- building edited copies ---------------------------------------------------------------------
def truth(name: str) -> list[dict]:
    return [json.loads(line) for line in (SESSIONS / name / "truth.jsonl").read_text().splitlines()]


def frame_rel(i: int) -> str:
    return f"frames/{i:06d}.jpg"


def session_copy(dst: Path, name: str, lines: list[tuple], edit=None) -> Path:
    """A session folder at dst holding the bundled session `name`'s frames listed in `lines`
    ((frame number, t) in manifest order, repeats allowed; (frame number, t, new number): a copy
    of the frame under a number of its own); edit(number, image) may return a changed image
    (None: as recorded)."""
    src = SESSIONS / name
    (dst / "frames").mkdir(parents=True)
    for extra in ("camera.json", "course.json"):
        if (src / extra).exists():
            shutil.copy(src / extra, dst / extra)
    manifest = [(src / "manifest.jsonl").read_text().splitlines()[0]]
    for i, t, *alias in lines:
        number = alias[0] if alias else i
        rel = frame_rel(number)
        if not (dst / rel).exists():
            image = cv2.imread(str(src / frame_rel(i)))
            changed = edit(number, image) if edit is not None else None
            cv2.imwrite(str(dst / rel), image if changed is None else changed, [cv2.IMWRITE_JPEG_QUALITY, 95])
        manifest.append(json.dumps({"frame": rel, "t": t}))
    (dst / "manifest.jsonl").write_text("\n".join(manifest) + "\n")
    return dst


def at_4fps(frames) -> list[tuple[int, float]]:
    """Frames as recorded, t counted from the first one given (the bundled sessions are 4 fps)."""
    frames = list(frames)
    return [(i, (i - frames[0]) * 0.25) for i in frames]


def bumped(after: int, camera_file: Path, tilt_deg=(1.2, -1.6)):
    """edit(): from frame `after` on, the picture of a camera turned a little on its tripod (the
    image of the table moves by some 20-30 px and stays): H = K R K^-1."""
    doc = json.loads(camera_file.read_text())
    K = np.array(doc["camera_matrix"], dtype=float)
    rx, ry = (np.radians(a) for a in tilt_deg)
    R = cv2.Rodrigues(np.array([rx, ry, 0.0]))[0]
    H = K @ R @ np.linalg.inv(K)

    def edit(i, image):
        if i < after:
            return None
        h, w = image.shape[:2]
        return cv2.warpPerspective(image, H, (w, h), borderMode=cv2.BORDER_REPLICATE)

    shift = H @ np.array([640.0, 360.0, 1.0])
    return edit, float(np.hypot(*(shift[:2] / shift[2] - (640.0, 360.0))))


def out_of_view(name: str, piece: str, frames: set[int], truth_of=lambda number: number):
    """edit(): piece carried out of view in `frames`: its place painted with the table around it.
    truth_of: the recorded frame a frame number is a copy of."""
    rows = truth(name)
    catalog = default_catalog()

    def edit(i, image):
        if i not in frames:
            return None
        ids = next(p["marker_ids"] for p in rows[truth_of(i)]["pieces"] if p["name"] == piece)
        out = image.copy()
        found = [d for d in detect.detect_all(image, catalog, second_pass=False).detections if d.marker_id in ids]
        assert found, f"{piece} is not read in frame {i}: the test cannot take it out of view"
        for d in found:
            c = d.corners.reshape(-1, 2)
            m, r = c.mean(axis=0), 2.2 * np.abs(c - c.mean(axis=0)).max()
            x0, y0, x1, y1 = (int(v) for v in (m[0] - r, m[1] - r, m[0] + r, m[1] + r))
            ring = np.concatenate([image[y0 - 4:y0, x0:x1].reshape(-1, 3), image[y1:y1 + 4, x0:x1].reshape(-1, 3)])
            out[y0:y1, x0:x1] = np.median(ring, axis=0)
        return out

    return edit


# --- what the truth says and what was ruled ---------------------------------------------------
def kang_moves_played(frames) -> list[tuple[str, str]]:
    """(coach, notation) of the legal moves the script played within `frames`."""
    rows = truth("kang-game")
    events = [rows[i]["event"] for i in frames if rows[i]["event"]]
    return [(e["coach"], e["move"]) for e in events if e["kind"] == "move" and e["legal"]]


def replay(folder: Path) -> tuple[list[dict], list[str]]:
    warnings: list[str] = []
    timeline, _ = replay_session(folder, thorough=False, detect="follow", on_warning=warnings.append)
    return timeline, warnings


def assert_kang_moves(timeline: list[dict], played: list[tuple[str, str]]) -> None:
    """Every move ruled legal, each the one played (among those the board cannot tell apart)."""
    moves = [r for r in timeline if r["kind"] == "move"]
    assert [r["legal"] for r in moves] == [True] * len(played), [r["summary"] for r in timeline]
    for ruling, (coach, notation) in zip(moves, played):
        assert ruling["details"]["coach"] == coach and notation in ruling["details"]["moves"], (ruling, coach)


KANG_FRAMES = range(25)  # the start and three moves, each still for four frames


# --- 1. frames missing, repeated, out of time order ---------------------------------------------
def test_the_manifest_reader_replays_each_frame_once_in_time_order(tmp_path):
    lines = at_4fps(range(6))
    lines.insert(3, lines[2])  # frame 2 listed twice at its time
    lines[4], lines[5] = lines[5], lines[4]  # frame 4 listed after frame 5
    lines.append((1, 0.25))  # frame 1 listed again, last: a repeat and out of order
    lines.append((5, 0.25))  # frame 5 again, at another frame's time: a frame of its own
    folder = session_copy(tmp_path / "s", "kang-game", lines + [(6, 1.5)])
    (folder / frame_rel(6)).unlink()  # listed, never written
    session = read_session(folder)
    assert [(e.path.name, e.t) for e in session.frames] == [
        ("000000.jpg", 0.0), ("000001.jpg", 0.25), ("000005.jpg", 0.25), ("000002.jpg", 0.5),
        ("000003.jpg", 0.75), ("000004.jpg", 1.0), ("000005.jpg", 1.25)]
    assert [e.index for e in session.frames] == list(range(7))
    said = " | ".join(session.warnings)
    assert "2 manifest line(s) repeat a frame" in said
    assert "listed before an earlier time; replayed in time order" in said
    assert "share their time" in said and "frames/000006.jpg is missing" in said


def test_replay_rules_a_session_with_frames_missing_repeated_and_out_of_order(tmp_path):
    lines = at_4fps(KANG_FRAMES)
    lines.insert(9, lines[9])  # a still frame listed twice
    lines[16], lines[17] = lines[17], lines[16]  # two frames swapped in the manifest
    lines.insert(20, (20, lines[19][1]))  # frame 20 recorded at frame 19's time too
    folder = session_copy(tmp_path / "s", "kang-game", lines)
    for i in (2, 12, 22):  # one still frame of the start, a hand frame, a still frame of move 3
        (folder / frame_rel(i)).unlink()
    timeline, warnings = replay(folder)
    assert_kang_moves(timeline, kang_moves_played(KANG_FRAMES))
    assert timeline[0]["summary"].startswith("Legal: the start position")
    said = " | ".join(warnings)
    assert "000012.jpg is missing" in said and "repeat a frame" in said and "time order" in said


def test_a_clock_that_restarts_mid_session_keeps_the_frames_in_recorded_order(tmp_path):
    """Frames 13.. were recorded with the clock from zero again: replayed after frames 0..12,
    never interleaved with them (which would mix two moments of the game)."""
    lines = at_4fps(range(13)) + [(i, (i - 13) * 0.25) for i in range(13, 25)]
    folder = session_copy(tmp_path / "s", "kang-game", lines)
    assert [e.path.name for e in read_session(folder).frames] == [Path(frame_rel(i)).name for i in range(25)]
    timeline, warnings = replay(folder)
    assert_kang_moves(timeline, kang_moves_played(KANG_FRAMES))
    assert any("the clock goes back 3.00 s at frame 000013.jpg" in w for w in warnings), warnings


def test_game_replay_command_skips_bad_frames_and_frames_without_stickers(tmp_path, capsys):
    """`refcam kang replay`: a frame with no sticker in view (the lens covered) and a frame that
    is not an image are skipped with a warning; the game is ruled to the end (exit 0)."""
    dark = lambda i, image: np.zeros_like(image) if i in (5, 6) else None  # noqa: E731
    folder = session_copy(tmp_path / "s", "kang-game", at_4fps(range(18)), edit=dark)
    (folder / frame_rel(12)).write_bytes(b"not a picture")
    code, out, err = run_cli(capsys, ["kang", "replay", str(folder), "--json"])
    assert code == 0, err
    assert "000012.jpg" in err and "Traceback" not in err
    assert_kang_moves(json.loads(out)["rulings"], kang_moves_played(range(18)))


@pytest.mark.parametrize("command", [["replay"], ["kang", "replay"], ["kayak", "replay"],
                                     ["serve", "--port", "48517", "--replay"]], ids=" ".join)
def test_a_session_whose_every_frame_is_missing_is_one_line_and_exit_2(tmp_path, capsys, command):
    folder = session_copy(tmp_path / "s", "kang-game", at_4fps(range(3)))
    for i in range(3):
        (folder / frame_rel(i)).unlink()
    code, out, err = run_cli(capsys, command + [str(folder)])
    assert code == 2 and out == ""
    assert err.strip() == f"refcam: error: session folder {folder} holds no frames"


# --- 2. a session that starts mid-game ------------------------------------------------------------
@pytest.mark.parametrize("first", [7, 14], ids=["B-to-move", "A-to-move"])
def test_kang_session_starting_mid_game_rules_the_moves_that_follow(tmp_path, first):
    """From the table after A's first move (B moves next) or after B's (A next): kangaroos
    already moved, and nothing on the board says whose turn it is."""
    frames = range(first, first + 26)
    timeline, _ = replay(session_copy(tmp_path / "s", "kang-game", at_4fps(frames)))
    assert timeline[0]["kind"] == "state" and "not the start" in timeline[0]["summary"]
    assert_kang_moves(timeline, kang_moves_played(frames[1:]))


def test_kayak_session_starting_mid_river_rules_the_turns_that_follow(tmp_path):
    frames = range(30, 60)  # after three turns: the kayaks are down the river
    rows = truth("kayak-rules")
    timeline, _ = replay(session_copy(tmp_path / "s", "kayak-rules", at_4fps(frames)))
    first = timeline[0]
    assert first["kind"] == "state" and first["details"]["position"] == rows[30]["event"]["after"]
    assert "taken up" in first["summary"]
    turns = [r for r in timeline if r["kind"] == "move"]
    played = [rows[i]["event"] for i in frames if rows[i]["event"]][1:]
    assert [r["legal"] for r in turns] == [e["legal"] for e in played]
    assert [r["details"]["after"] for r in turns] == [e["after"] for e in played]


def test_tornado_session_starting_mid_race_rules_the_turns_that_follow(tmp_path):
    frames = range(30, 60)  # round 1 played: cards laid, boats off the start gate
    rows = truth("tornado-race")
    timeline, _ = replay(session_copy(tmp_path / "s", "tornado-race", at_4fps(frames)))
    assert "taken up" in timeline[0]["summary"].lower(), timeline[0]
    turns = [r for r in timeline if r["kind"] == "move"]
    assert_tornado_turns(turns, [rows[i]["event"] for i in frames[1:] if rows[i]["event"]])


# --- 3. the camera bumped once --------------------------------------------------------------------
@pytest.mark.parametrize("after", [9, 12], ids=["while-still", "under-a-hand"])
def test_a_bumped_camera_is_no_move(tmp_path, after):
    edit, shift_px = bumped(after, SESSIONS / "kang-game" / "camera.json")
    assert 20 <= shift_px <= 40
    timeline, _ = replay(session_copy(tmp_path / "s", "kang-game", at_4fps(KANG_FRAMES), edit=edit))
    assert_kang_moves(timeline, kang_moves_played(KANG_FRAMES))
    assert [r["kind"] for r in timeline] == ["state", "move", "move", "move"]


def replay_bumped(tmp_path: Path, name: str, frames: range, after: int) -> tuple[list[dict], list[dict]]:
    """(move rulings, the script's turn events) of `name`'s frames with the camera bumped at `after`."""
    edit, _ = bumped(after, SESSIONS / name / "camera.json")
    timeline, _ = replay(session_copy(tmp_path / "s", name, at_4fps(frames), edit=edit))
    rows = truth(name)
    return [r for r in timeline if r["kind"] == "move"], [rows[i]["event"] for i in frames if rows[i]["event"]]


def assert_tornado_turns(turns: list[dict], events: list[dict]) -> None:
    """Each turn ruled for the boat that played it, with the verdict the script expects."""
    expected = [e["expect"][0] for e in events]
    assert [(r["details"].get("boat"), r["legal"]) for r in turns] == [(e["boat"], e["legal"]) for e in expected]


def test_a_bumped_camera_over_the_kayak_river_is_no_turn(tmp_path):
    turns, played = replay_bumped(tmp_path, "kayak-rules", range(28), after=13)
    assert [(r["legal"], r["details"]["after"]) for r in turns] == [(True, e["after"]) for e in played]


def test_a_bumped_camera_over_the_tornado_course_is_no_turn(tmp_path):
    assert_tornado_turns(*replay_bumped(tmp_path, "tornado-race", range(30), after=15))


# --- 4. a piece carried out of view and back ----------------------------------------------------
def test_a_piece_out_of_view_and_put_back_changes_nothing(tmp_path):
    """kang/small-B1... whichever kangaroo stays put: out of view for a second of still table."""
    rows = truth("kang-game")
    still = [p["name"] for p in rows[0]["pieces"] if p["name"] != "kang/board"
             and all(any(q["name"] == p["name"] and (q["x_mm"], q["y_mm"]) == (p["x_mm"], p["y_mm"])
                         for q in rows[i]["pieces"]) for i in KANG_FRAMES)]
    edit = out_of_view("kang-game", still[0], {15, 16, 17, 18})
    timeline, _ = replay(session_copy(tmp_path / "s", "kang-game", at_4fps(KANG_FRAMES), edit=edit))
    assert_kang_moves(timeline, kang_moves_played(KANG_FRAMES))


def test_a_piece_out_of_view_around_its_own_move_is_ruled(tmp_path):
    """The kangaroo B moves is out of view before its move and after it (under the hand in
    between): the move is ruled where it was put down."""
    edit = out_of_view("kang-game", "kang/medium-3", {9, 10, 14, 15})
    timeline, _ = replay(session_copy(tmp_path / "s", "kang-game", at_4fps(KANG_FRAMES), edit=edit))
    assert_kang_moves(timeline, kang_moves_played(KANG_FRAMES))


def test_a_piece_out_of_view_longer_than_a_hand_is_said_and_the_game_goes_on(tmp_path):
    """The table after move 1 held still for 4.5 s (frame 10's picture again every 0.25 s, as
    numbers 1001..1017), the kangaroo A just moved out of view for 3 s of it (longer than the
    tracker waits for a hand to lift), then back where it was: a piece not read is not gone, so
    nothing is ruled on it (at most a "cannot tell" naming it), never an illegal move, and the
    moves after it are ruled."""
    piece = "kang/large-1"  # on d3 after move 1, where it stays until frame 24
    held = [(10, 2.5 + 0.25 * k, 1000 + k) for k in range(1, 18)]
    later = [(i, 7.0 + (i - 11) * 0.25) for i in range(11, 25)]
    edit = out_of_view("kang-game", piece, set(range(1001, 1013)), truth_of=lambda n: 10 if n > 1000 else n)
    timeline, _ = replay(session_copy(tmp_path / "s", "kang-game", at_4fps(range(11)) + held + later, edit=edit))
    assert not [r for r in timeline if r["legal"] is False or r["kind"] == "pending"], timeline
    unsure = [r for r in timeline if r["summary"].lower().startswith("cannot tell")]
    assert all(piece in r["summary"] for r in unsure), unsure
    assert_kang_moves(timeline, kang_moves_played(KANG_FRAMES))
