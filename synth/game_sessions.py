"""A played whole game (synth/game_playouts.py) rendered as recorded sessions, with its truth.

At 4 fps and one fixed camera per game: the start table still for START_FRAMES frames; then
for each turn 1 or 2 frames of a hand over the moving piece (at the piece's old place with the
old table, then at its new place with the new table; one frame: only the second), then the new
table still for ``hold`` frames; the last table stays still for END_FRAMES frames (players look
at the result). How many hand frames each turn has is drawn from the game's seed, so the holds
of one game differ only in how long each table is still.

Copies: "clean" (the renderer's picture, one render per table or hand frame, the same picture
for every frame it is shown) and "webcam" (that picture through synth/webcam.py's whole chain,
with its own sensor noise each frame, one webcam drawn per game).

Every session folder gets manifest.jsonl + frames/ (vision/session.py), camera.json (the true
camera), truth.jsonl (one line a frame: t, stable, the pieces, each with the side in px of its
largest sticker that shows, the occluders, and on the first still frame of each turn the turn's
truth) and the game's extra files (Tornado: course.json).
"""

from __future__ import annotations

import json
import random
import shutil
from dataclasses import dataclass
from pathlib import Path

from synth.game_playouts import PlayedGame
from synth.render import encode_jpeg, render_scene

FPS = 4.0
START_FRAMES = 8  # the players set up and look: the start table is seen still before the first turn
END_FRAMES = 8
HOLDS = (4, 2, 1)
COPIES = ("clean", "webcam")
CLEAN_JPEG = 80
WEBCAM_STORE_JPEG = 95  # the webcam's own MJPEG is in the picture already; stored nearly lossless


@dataclass(frozen=True)
class Shown:
    """What one frame shows: the table after ``position`` turns (0: the start), with a hand
    over the piece of turn ``hand_of`` at step ``step`` (0: its old place, 1: its new place)."""

    position: int
    hand_of: int | None = None
    step: int = 0


def hand_frames(game: PlayedGame, turn: int) -> int:
    """1 or 2 hand frames before turn ``turn`` (1-based) is still, the same for every hold."""
    return 1 + int(random.Random(game.seed * 1000 + turn).random() < 0.5)


def frame_plan(game: PlayedGame, hold: int) -> list[Shown]:
    """Every frame of the session at this hold, in order."""
    plan = [Shown(0)] * START_FRAMES
    for k in range(1, len(game.turns) + 1):
        steps = (0, 1) if hand_frames(game, k) == 2 else (1,)
        plan += [Shown(k if step else k - 1, k, step) for step in steps]
        plan += [Shown(k)] * (END_FRAMES if k == len(game.turns) else hold)
    return plan


def shown_scene(game: PlayedGame, shown: Shown) -> dict:
    """The scene of one frame: the table after the turns, with the hand if any."""
    scene = json.loads(json.dumps(game.base))
    table = game.turns[shown.position - 1].pieces if shown.position else game.start_pieces
    scene["pieces"] = [dict(p) for p in table]
    scene["occluders"] = [] if shown.hand_of is None else [_hand(game, shown)]
    key = (shown.position, shown.hand_of or 0, shown.step)
    scene["effects"]["seed"] = 50_000 + 7919 * key[0] + 31 * key[1] + key[2]
    return scene


def _hand(game: PlayedGame, shown: Shown) -> dict:
    """A hand over the moved piece, its arm toward where the player sits."""
    import math

    turn = game.turns[shown.hand_of - 1]
    x, y = turn.hand_path[shown.step]
    ax, ay = turn.arm_from
    rng = random.Random(game.seed * 7 + shown.hand_of * 2 + shown.step)
    heading = math.degrees(math.atan2(y - ay, x - ax))
    return {"kind": "hand", "x_mm": float(x), "y_mm": float(y), "theta_deg": heading + rng.uniform(-10, 10),
            "z_mm": rng.uniform(80, 140), "scale": 1.0, "arm_length_mm": 900.0}


def _turn_event(game: PlayedGame, k: int, hand_t: float) -> dict:
    turn = game.turns[k - 1]
    return {"kind": turn.kind, "turn": k, "player": turn.player, "move": turn.move, "legal": turn.legal,
            "position": turn.position, "score": turn.score, "winner": turn.winner, "hand_t": hand_t}


def truth_lines(game: PlayedGame, plan: list[Shown], piece_truth: dict) -> list[dict]:
    """truth.jsonl of a session: one line a frame (piece_truth: the rendered pieces of each table)."""
    lines, hand_t = [], None
    for n, shown in enumerate(plan):
        t = round(n / FPS, 4)
        still = shown.hand_of is None
        first = n == 0 or plan[n - 1] != shown
        if not still and hand_t is None:
            hand_t = t
        event = None
        if still and first and shown.position > 0:
            event, hand_t = _turn_event(game, shown.position, hand_t), None
        elif n == 0:
            event = {"kind": "start", "position": game.start_position}
        lines.append({"frame": f"frames/{n:06d}.jpg", "t": t, "stable": still, "position": shown.position,
                      "event": event, "occluders": 0 if still else 1,
                      "pieces": piece_truth.get(shown.position, [])})
    return lines


def write_sessions(game: PlayedGame, out: Path, holds=HOLDS, copies=COPIES, progress=None) -> dict:
    """Render one played game as a session per (copy, hold) under ``out``; {(copy, hold): folder}.

    Each distinct frame (a still table, a hand) is rendered once and written into every session
    that shows it, in the same order in all of them."""
    from synth.webcam import webcam_chain
    from vision.session import SessionWriter

    plans = {h: frame_plan(game, h) for h in holds}
    folders = {(c, h): out / f"{game.game}-{game.seed}-{c}-h{h}" for c in copies for h in holds}
    writers = {}
    for key, folder in folders.items():
        if folder.exists():
            shutil.rmtree(folder)
        writers[key] = SessionWriter(folder, game=game.game, fps=FPS, source="rendered by synth/game_sessions.py",
                                     note=f"{game.game} seed {game.seed}, {key[0]}, still {key[1]} frames a turn")
    order = list(dict.fromkeys(plans[holds[0]]))
    piece_truth, camera = {}, None
    try:
        for i, shown in enumerate(order):
            image, truth = render_scene(shown_scene(game, shown))
            camera = truth["camera"]
            if shown.hand_of is None:
                piece_truth[shown.position] = with_sticker_px(truth["pieces"], truth["stickers"])
            clean = encode_jpeg(image, CLEAN_JPEG).tobytes()
            for (copy, hold), writer in writers.items():
                for _ in range(sum(1 for s in plans[hold] if s == shown)):
                    data = clean
                    if copy == "webcam":
                        frame, _ = webcam_chain(image, seed=game.seed, frame_seed=100_000 * hold + writer.count)
                        data = encode_jpeg(frame, WEBCAM_STORE_JPEG).tobytes()
                    writer.add_encoded(data, writer.count / FPS)
            if progress:
                progress(i + 1, len(order))
    finally:
        for writer in writers.values():
            writer.close()
    for (copy, hold), folder in folders.items():
        _write_beside(game, folder, camera, truth_lines(game, plans[hold], piece_truth))
    return folders


def with_sticker_px(pieces: list[dict], stickers: list[dict]) -> list[dict]:
    """The rendered pieces, each with ``sticker_px``: the side in px of its largest sticker that
    shows (in the image, uncovered), or None when none shows (the renderer's truth)."""
    shows: dict[str, float] = {}
    for st in stickers:
        if st.get("piece") and st.get("visible"):
            shows[st["piece"]] = max(shows.get(st["piece"], 0.0), float(st["side_px"]))
    return [dict(p, sticker_px=round(shows[p["name"]], 1) if p["name"] in shows else None) for p in pieces]


def _write_beside(game: PlayedGame, folder: Path, camera: dict, lines: list[dict]) -> None:
    cam = {k: camera[k] for k in ("image_size", "camera_matrix", "dist_coeffs", "model", "rms_px")}
    cam["note"] = "true intrinsics of the rendered session"
    (folder / "camera.json").write_text(json.dumps(cam, indent=1) + "\n")
    (folder / "truth.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    for name, text in game.files.items():
        (folder / name).write_text(text + "\n")


def read_truth(folder: Path) -> list[dict]:
    """The turn events of a session's truth.jsonl, in order (the start first)."""
    out = []
    for line in (Path(folder) / "truth.jsonl").read_text().splitlines():
        doc = json.loads(line)
        if doc.get("event"):
            out.append(dict(doc["event"], t=doc["t"]))
    return out
