"""Regenerate the bundled samples from fixed seeds (deterministic).

    .venv/bin/python samples/generate.py [--only stills|sessions] [--games kang,kayak,tornado]

Writes, beside this file:
  <game>/NNN.jpg, NNN.truth.json, NNN.scene.json   rendered stills (1080p and 4K, tilt 0-40 degrees)
  sessions/<game>/                                 one short recorded game per game (vision/session.py format)
  index.json                                       what each sample shows
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from referee.catalog import default_catalog  # noqa: E402
from synth.render import encode_jpeg, render_scene, validate_scene  # noqa: E402
from synth.scenes import (RESOLUTIONS, build_scene, course_layout_pieces, course_names,  # noqa: E402
                           fit_camera, kang_square_centre, kang_zone_slots, kayak_geometry, kayak_joint_open_lanes,
                           kayak_river,
                           kayak_space_world, kayak_tile_pieces, load_course, racing_card_names, random_effects,
                           relevant_points, table_for, tile_layout_as_lying)
from vision.session import SessionWriter  # noqa: E402

from samples.tornado_race import (dump_stable_observations, race_session, slim_truth, write_finish_stills,  # noqa: E402
                                  write_race_course)

GAMES = ("kang", "kayak", "tornado")
STILLS_PER_GAME = 15
STILL_JPEG = {"1080p": 88, "4k": 82}
SESSION_JPEG = 80
SESSION_FPS = 4.0
STABLE_FRAMES = 8  # 1.75 s at 4 fps
MOVE_FRAMES = 4  # a hand comes in, moves the piece, leaves
GAME_SEED = {"kang": 1000, "kayak": 2000, "tornado": 3000}


def _dump(obj) -> str:
    return json.dumps(obj, indent=1) + "\n"


# --- stills ----------------------------------------------------------------------------------
def camera_file_of(camera: dict, note: str) -> dict:
    """The camera file (SPEC section 4) holding a render's true intrinsics, for --camera-file."""
    cam = {k: camera[k] for k in ("image_size", "camera_matrix", "dist_coeffs", "model", "rms_px")}
    cam["note"] = note
    return cam


def still_plan(game: str) -> list[dict]:
    """Resolution, tilt, occluders, course and close calls of each still: fixed, spread out."""
    courses = course_names()
    plan = []
    for i in range(STILLS_PER_GAME):
        item = {"index": i, "seed": GAME_SEED[game] + i, "resolution": "4k" if i % 3 == 2 else "1080p",
                "tilt_deg": round(40.0 * i / (STILLS_PER_GAME - 1), 2), "occluded": i % 4 == 3}
        if game == "tornado":
            item["course"] = courses[i % len(courses)]
            item["close_call"] = i % 2 == 1
        plan.append(item)
    return plan


def write_still(folder: Path, stem: str, scene: dict) -> dict:
    """Render a scene and write the still beside its truth, scene and camera file; the truth."""
    image, truth = render_scene(scene)
    (folder / f"{stem}.jpg").write_bytes(encode_jpeg(image, scene["effects"]["jpeg_quality"]).tobytes())
    (folder / f"{stem}.truth.json").write_text(_dump(truth))
    (folder / f"{stem}.scene.json").write_text(_dump(scene))
    (folder / f"{stem}.camera.json").write_text(
        _dump(camera_file_of(truth["camera"], "true intrinsics of the rendered still")))
    return truth


def generate_stills(games, index: list) -> None:
    for game in games:
        folder = HERE / game
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        for item in still_plan(game):
            scene = build_scene(game, item["seed"], item["resolution"], tilt_deg=item["tilt_deg"],
                                course=item.get("course"), close_call=item.get("close_call", False),
                                occluded=item["occluded"], jpeg_quality=STILL_JPEG[item["resolution"]])
            stem = f"{item['index']:03d}"
            truth = write_still(folder, stem, scene)
            vis = [s for s in truth["stickers"] if s["visible"]]
            entry = {"image": f"{game}/{stem}.jpg", "truth": f"{game}/{stem}.truth.json",
                     "scene": f"{game}/{stem}.scene.json", "game": game, "resolution": item["resolution"],
                     "image_size": truth["image_size"], "tilt_deg": truth["camera"]["tilt_deg"],
                     "camera_height_mm": round(truth["camera"]["position_mm"][2], 1),
                     "occluded": bool(scene["occluders"]), "course": scene.get("course"),
                     "close_call": scene["tags"].get("close_call"),
                     "stickers": len(truth["stickers"]), "stickers_visible": len(vis),
                     "min_visible_side_px": round(min((s["side_px"] for s in vis), default=0.0), 2)}
            index.append(entry)
            print(f"{entry['image']}: {entry['resolution']} tilt {entry['tilt_deg']:.1f} "
                  f"{entry['stickers_visible']}/{entry['stickers']} visible, min {entry['min_visible_side_px']} px",
                  flush=True)


# --- Kang stills with tokens straddling squares ----------------------------------------------
STRADDLE_STILLS = 3
STRADDLE_SEED = 1500


def straddle_scene(index: int) -> dict:
    """A bundled-style Kang still where two kangaroos stand across a square border (one on a
    line between two squares, one near a corner of four), each moved from its own square onto
    the border of two empty squares, 0-2 mm off the line."""
    catalog = default_catalog()
    rng = np.random.default_rng(STRADDLE_SEED + index)
    scene = build_scene("kang", STRADDLE_SEED + index, "1080p", tilt_deg=10.0 * index, occluded=False,
                        jpeg_quality=STILL_JPEG["1080p"])
    a = float(catalog.game("kang")["grid"]["square_mm"])
    on_board = [p for p in scene["pieces"] if p.get("resting_on") == "kang/board"]
    taken = {(round(p["x_mm"] / a + 2.5), round(p["y_mm"] / a + 2.5)) for p in on_board}
    moved = 0
    for p in on_board[:4]:
        taken.discard((round(p["x_mm"] / a + 2.5), round(p["y_mm"] / a + 2.5)))
        spots = [(f, r) for f in range(5) for r in range(5)
                 if not {(f, r), (f + 1, r), (f, r + 1), (f + 1, r + 1)} & taken]
        if not spots:
            taken.add((round(p["x_mm"] / a + 2.5), round(p["y_mm"] / a + 2.5)))
            continue
        f, r = spots[int(rng.integers(len(spots)))]
        corner = moved % 2 == 1
        x = (f - 2.0) * a + float(rng.uniform(-2, 2))
        y = (r - 2.5 if not corner else r - 2.0) * a + float(rng.uniform(-2, 2))
        p.update(x_mm=x, y_mm=y)
        taken |= {(f, r), (f + 1, r), (f, r + 1), (f + 1, r + 1)}
        moved += 1
        if moved == 2:
            break
    scene["tags"]["straddlers"] = moved
    return scene


def generate_straddle_stills(index: list) -> None:
    folder = HERE / "kang-straddle"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for i in range(STRADDLE_STILLS):
        scene = straddle_scene(i)
        stem = f"{i:03d}"
        truth = write_still(folder, stem, scene)
        vis = [s for s in truth["stickers"] if s["visible"]]
        index.append({"image": f"kang-straddle/{stem}.jpg", "truth": f"kang-straddle/{stem}.truth.json",
                      "scene": f"kang-straddle/{stem}.scene.json", "game": "kang", "resolution": "1080p",
                      "image_size": truth["image_size"], "tilt_deg": truth["camera"]["tilt_deg"],
                      "camera_height_mm": round(truth["camera"]["position_mm"][2], 1), "occluded": False,
                      "course": None, "close_call": None, "straddlers": scene["tags"]["straddlers"],
                      "stickers": len(truth["stickers"]), "stickers_visible": len(vis),
                      "min_visible_side_px": round(min((s["side_px"] for s in vis), default=0.0), 2)})
        print(f"kang-straddle/{stem}.jpg: {scene['tags']['straddlers']} straddlers", flush=True)


# --- sessions --------------------------------------------------------------------------------
class SessionScript:
    """Stable positions separated by moves; renders frames with a hand during each move."""

    def __init__(self, game: str, base_scene: dict, hand_from: tuple[float, float],
                 stable_frames: int = STABLE_FRAMES, move_frames: int = MOVE_FRAMES, jpeg: int = SESSION_JPEG,
                 per_move_hands: bool = False):
        self.stable_frames, self.move_frames, self.jpeg = stable_frames, move_frames, jpeg
        self.per_move_hands = per_move_hands  # False: every hand comes from the last hand_from (older sessions)
        self.hands: list[tuple[float, float]] = []
        self.game = game
        self.base = base_scene
        self.hand_from = hand_from
        self.positions: list[list[dict]] = []
        self.events: list[dict | None] = [None]
        self.moved: list[tuple[tuple[float, float], tuple[float, float]]] = []
        self.resting: list[list[dict]] = []  # occluders that stay through a stable position

    def add_position(self, pieces: list[dict], event: dict | None = None,
                     move_from=None, move_to=None, resting: list[dict] | None = None) -> None:
        self.positions.append([dict(p) for p in pieces])
        self.resting.append(list(resting or []))
        if self.positions[:-1]:
            self.events.append(event)
            self.moved.append((move_from, move_to))
            self.hands.append(self.hand_from)

    def frames(self):
        """Yield (scene, stable, event, position index)."""
        rng = np.random.default_rng(7)
        for k, pieces in enumerate(self.positions):
            if k > 0:
                (fx, fy), (tx, ty) = self.moved[k - 1]
                hx, hy = self.hands[k - 1] if self.per_move_hands else self.hand_from
                prev = self.positions[k - 1]
                steps = [((hx + fx) / 2, (hy + fy) / 2, prev), (fx, fy, prev), (tx, ty, pieces),
                         ((hx + tx) / 2, (hy + ty) / 2, pieces)]
                for x, y, shown in steps[:self.move_frames]:
                    heading = math.degrees(math.atan2(hy - y, hx - x)) + 180.0
                    hand = {"kind": "hand", "x_mm": x, "y_mm": y, "theta_deg": heading + float(rng.uniform(-10, 10)),
                            "z_mm": float(rng.uniform(90, 140)), "scale": 1.0, "arm_length_mm": 900.0}
                    yield self._scene(shown, [hand]), False, None, k - 1
            for j in range(self.stable_frames + (4 if self.resting[k] else 0)):
                yield self._scene(pieces, self.resting[k]), True, (self.events[k] if j == 0 else None), k

    def _scene(self, pieces, occluders):
        scene = json.loads(json.dumps(self.base))
        scene["pieces"] = pieces
        scene["occluders"] = occluders
        return scene


def write_session(script: SessionScript, folder: Path, note: str, jpeg_quality: int | None = None) -> dict:
    if folder.exists():
        shutil.rmtree(folder)
    count = stable = 0
    truth_lines = []
    camera = None
    with SessionWriter(folder, game=script.game, fps=SESSION_FPS, source="rendered by samples/generate.py",
                       note=note) as writer:
        for n, (scene, is_stable, event, position) in enumerate(script.frames()):
            scene["effects"]["seed"] = 50_000 + n  # fresh sensor noise per frame
            image, truth = render_scene(scene)
            t = n / SESSION_FPS
            rel = writer.add_encoded(encode_jpeg(image, jpeg_quality or script.jpeg).tobytes(), t)
            camera = truth["camera"]
            truth_lines.append({"frame": str(rel.relative_to(folder)), "t": round(t, 4), "stable": is_stable,
                                "position": position, "event": event, "occluders": truth["occluders"],
                                "pieces": truth["pieces"], "stickers": truth["stickers"]})
            count += 1
            stable += int(is_stable)
    (folder / "camera.json").write_text(_dump(camera_file_of(camera, "true intrinsics of the rendered session")))
    (folder / "truth.jsonl").write_text("".join(json.dumps(line) + "\n" for line in truth_lines))
    print(f"session {folder.name}: {count} frames ({stable} stable), {len(script.positions) - 1} moves", flush=True)
    return {"folder": f"sessions/{folder.name}", "game": script.game, "frames": count, "stable_frames": stable,
            "moves": len(script.positions) - 1, "image_size": camera["image_size"], "fps": SESSION_FPS}


def _session_base(game: str, rng, pieces_for_view: list[dict], all_pieces: list[dict], size, fx_1080p: float,
                  roll: float, azimuth: float, tilt: float, heights=(600.0, 900.0)) -> dict:
    catalog = default_catalog()
    camera = fit_camera(rng, relevant_points(catalog, pieces_for_view), size, tilt_deg=tilt, fx=fx_1080p,
                        height_range=heights, azimuth_deg=azimuth, roll_deg=roll)
    if camera is None:
        raise SystemExit(f"samples: the {game} session does not fit in view; adjust the script")
    effects = random_effects(rng, SESSION_JPEG)
    effects["noise_sigma"] = 1.2
    return {"refcam_scene": 1, "game": game, "camera": camera, "table": table_for(rng, catalog, all_pieces),
            "pieces": [], "effects": effects, "occluders": []}


def kang_session() -> SessionScript:
    """Start position, then four entries from the start zones (SPEC section 3, Kang):
    a kangaroo of size n enters across its coach's edge and crosses n lines in all."""
    catalog = default_catalog()
    rng = np.random.default_rng(4242)
    pieces = [{"name": "kang/board", "x_mm": 0.0, "y_mm": 0.0, "theta_deg": 0.0}]
    owners = {"A": ["small-1", "small-2", "medium-1", "medium-2", "large-1", "large-2"],
              "B": ["small-3", "small-4", "medium-3", "medium-4", "large-3", "large-4"]}
    for coach, names in owners.items():
        for slot, nm in zip(kang_zone_slots(catalog, coach)[:6], names):
            pieces.append({"name": f"kang/{nm}", "x_mm": slot[0], "y_mm": slot[1],
                           "theta_deg": float(rng.uniform(-30, 30)) + (0 if coach == "A" else 180), "face": "front"})
    rows = catalog.game("kang")["grid"]["rows"]
    # (coach, token, file): straight in from the coach's edge; size n ends n rows in
    moves = [("A", "small-1", 3), ("B", "medium-3", 4), ("A", "large-1", 1), ("B", "small-3", 6)]
    full = pieces
    base = _session_base("kang", rng, full, full, RESOLUTIONS["720p"], 1500.0, roll=90.0, azimuth=0.0, tilt=12.0)
    script = SessionScript("kang", base, hand_from=(0.0, -600.0))
    current = [dict(p) for p in full]
    script.add_position(current)
    files = "abcdef"
    for coach, token, file_index in moves:
        name = f"kang/{token}"
        size = int(catalog.piece(name).attrs["size"])
        row = size if coach == "A" else rows + 1 - size
        x, y = kang_square_centre(catalog, file_index, row)
        nxt = [dict(p) for p in current]
        for p in nxt:
            if p["name"] == name:
                old = (p["x_mm"], p["y_mm"])
                p.update(x_mm=x + float(rng.uniform(-2, 2)), y_mm=y + float(rng.uniform(-2, 2)),
                         resting_on="kang/board")
        script.hand_from = (0.0, -600.0) if coach == "A" else (0.0, 600.0)
        event = {"kind": "enter", "coach": coach, "piece": name, "to": f"{files[file_index - 1]}{row}",
                 "lines_crossed": size}
        script.add_position(nxt, event, move_from=old, move_to=(x, y))
        current = nxt
    return script

# A whole Kang game opening, judged move by move (SPEC section 3). Found once by a seeded search
# over the engine's legal moves (seed 5, a bias toward jumps, kicks and exits) and written out
# here so the session does not depend on the search: chained jumps (plies 4, 9, 11), kicks
# (6-8, 10, 12-14), A scores with a five-jump chain (ply 11); on A's next turn A tries to score
# again (illegal: the no-score turn), takes it back, and plays a kick instead.
KANG_GAME = ["d0-d1-d2-d3", "d7-d6-c6", "f0-f1-f2-e2", "c7-c6^-c5-d5", "d0-d1-e1", "b7-b6-c6^-c5-d5xc1",
             "d0-d1-c1xe6", "c7-c6xd1", "d0-d1^-d2-e2^-e3-f3-f4", "f7-f6-f5-f4xf1",
             "d0-d1^-d2-e2^-e3-f3-f4^-f5-e5-d5^-d6-c6^-c7", "f7-f6-f5-f4xa1",
             "!d1-d2-d3^-d4-e4-f4^-f5-f6-f7", "d1-d2-d3^-d4-e4-f4xa6", "e7-e6xb1"]


def _kang_places(catalog, names_at: dict, rng) -> list[dict]:
    """Scene pieces for token places: ("sq", file, row) on the board or ("zone", coach, slot)."""
    pieces = [{"name": "kang/board", "x_mm": 0.0, "y_mm": 0.0, "theta_deg": 0.0}]
    for name, (kind, a, b) in sorted(names_at.items()):
        if kind == "sq":
            x, y = kang_square_centre(catalog, a + 1, b)
            pieces.append({"name": name, "x_mm": x + rng[name][0], "y_mm": y + rng[name][1], "theta_deg": rng[name][2],
                           "face": "front", "resting_on": "kang/board"})
        else:
            x, y = kang_zone_slots(catalog, a)[b]
            pieces.append({"name": name, "x_mm": x, "y_mm": y, "theta_deg": rng[name][2], "face": "front"})
    return pieces


def _kang_apply(catalog, names_at: dict, pos, move_text: str):
    """Token places after a move (the engine says what happens; this follows the token names)."""
    from referee.kang.moves import Rules, push, raw_moves_of
    from referee.kang.position import Move

    move = Move.parse(move_text)
    at = {v: k for k, v in names_at.items()}
    coach = pos.to_move
    size = {"s": "small", "m": "medium", "l": "large"}
    (f0, r0), end = move.origin, move.end
    if r0 in (0, 7):
        letter = "sml"[move.first_leg - 1]
        mover = next(n for n, (kind, c, slot) in sorted(names_at.items(), key=lambda kv: kv[1][2])
                     if kind == "zone" and c == coach and size[letter] in n)
    else:
        mover = at[("sq", f0, r0)]
        letter = pos.cells[(r0 - 1) * 6 + f0]
    assert any(Move(p, j, k) == move for p, j, k in raw_moves_of(pos, coach, move.origin, letter, Rules(no_score_turn=False)))
    new = dict(names_at)
    if move.kick is not None:
        new[at[("sq", end[0], end[1])]] = ("sq", move.kick[0], move.kick[1])
    if move.exits:
        opp = "B" if coach == "A" else "A"
        used = {slot for kind, c, slot in names_at.values() if kind == "zone" and c == opp}
        new[mover] = ("zone", opp, min(set(range(12)) - used))
    else:
        new[mover] = ("sq", end[0], end[1])
    return new, push(pos, move, letter=letter), _kang_xy(catalog, names_at[mover]), _kang_xy(catalog, new[mover])


def _kang_xy(catalog, place) -> tuple[float, float]:
    kind, a, b = place
    return kang_square_centre(catalog, a + 1, b) if kind == "sq" else kang_zone_slots(catalog, a)[b]


KANG_OWNERS = {"A": ["small-1", "small-2", "medium-1", "medium-2", "large-1", "large-2"],
               "B": ["small-3", "small-4", "medium-3", "medium-4", "large-3", "large-4"]}


def kang_start_table(catalog, rng) -> tuple[dict, dict, list[dict]]:
    """Kang's setup: (each token's place, all in their coach's start zone; each token's small
    offset and turn on its square, drawn from rng; every zone slot with a token, for the view)."""
    names_at = {f"kang/{n}": ("zone", c, k) for c, ns in KANG_OWNERS.items() for k, n in enumerate(ns)}
    jitter = {n: (float(rng.uniform(-2, 2)), float(rng.uniform(-2, 2)), float(rng.uniform(-30, 30)))
              for n in names_at}
    all_slots = [{"name": "kang/board", "x_mm": 0.0, "y_mm": 0.0, "theta_deg": 0.0}] + [
        {"name": f"kang/{n}", "x_mm": x, "y_mm": y, "theta_deg": 0.0}
        for c in "AB" for n, (x, y) in zip(KANG_OWNERS[c] * 2, kang_zone_slots(catalog, c))]
    return names_at, jitter, all_slots


def kang_game_session() -> SessionScript:
    """KANG_GAME played on the table, one stable position per move, a hand during each."""
    from referee.kang.explain import explain
    from referee.kang.position import Position

    catalog = default_catalog()
    rng = np.random.default_rng(5150)
    names_at, jitter, all_slots = kang_start_table(catalog, rng)
    base = _session_base("kang", rng, all_slots, all_slots, RESOLUTIONS["720p"], 1500.0, roll=90.0, azimuth=0.0,
                         tilt=12.0)
    script = SessionScript("kang", base, hand_from=(0.0, -600.0), stable_frames=4, move_frames=3, jpeg=72,
                           per_move_hands=True)
    pos = Position.start()
    script.add_position(_kang_places(catalog, names_at, jitter))
    for text in KANG_GAME:
        illegal = text.startswith("!")
        coach = pos.to_move
        new_at, new_pos, start_xy, end_xy = _kang_apply(catalog, names_at, pos, text.lstrip("!"))
        verdict = explain(pos, new_pos.layout())
        assert verdict.legal is (not illegal), (text, verdict.summary())
        script.hand_from = (0.0, -600.0) if coach == "A" else (0.0, 600.0)
        event = {"kind": "move", "coach": coach, "move": text.lstrip("!"), "legal": not illegal}
        script.add_position(_kang_places(catalog, new_at, jitter), event, move_from=start_xy, move_to=end_xy)
        if illegal:  # the coach takes it back: the board returns to the position before
            script.add_position(_kang_places(catalog, names_at, jitter), {"kind": "take-back", "coach": coach},
                                move_from=end_xy, move_to=start_xy)
            continue
        names_at, pos = new_at, new_pos
    return script


def _kayak_move(catalog, river, occupied, pawn_at, kind):
    """Where a paddle / swerve takes a pawn, or None when illegal (SPEC section 3, Kayak
    Chaos moves): no rocks on the way, never off the river, the target empty; a double
    space rides to its downstream half."""
    tile, row, lane = pawn_at
    rows_n, lanes_n, _ = kayak_geometry(catalog)
    if kind in ("paddle", "double-paddle"):
        steps = 1 if kind == "paddle" else 2
        path = []
        t, r, ln = tile, row, lane
        for _ in range(steps):
            r += 1
            if r >= rows_n:
                if t + 1 >= len(river):
                    return None
                ln = ln + river[t].shift - river[t + 1].shift
                t, r = t + 1, 0
            path.append((t, r, ln))
    else:
        d = {"swerve-left": 1, "swerve-right": -1}[kind]
        path = [(tile, row, lane + d)]
    for t, r, ln in path:
        if not 0 <= ln < lanes_n:
            return None
        layout = tile_layout_as_lying(catalog, river[t])
        if layout[r][ln] == "R" or (t, r, ln) in occupied:
            return None
    t, r, ln = path[-1]
    layout = tile_layout_as_lying(catalog, river[t])
    if layout[r][ln] == "D" and r + 1 < rows_n and layout[r + 1][ln] == "D":
        if (t, r + 1, ln) in occupied:
            return None
        r += 1
    return (t, r, ln)


def kayak_session() -> SessionScript:
    catalog = default_catalog()
    rng = np.random.default_rng(777)
    river = kayak_river(rng, catalog, n_river=2, finish=False)
    tiles = kayak_tile_pieces(catalog, river)
    where = {"kayak/pawn-1": (0, 0, 1), "kayak/pawn-2": (0, 0, 2), "kayak/pawn-3": (0, 0, 3)}

    def pieces_now():
        out = [dict(p) for p in tiles]
        for name, spot in where.items():
            x, y = kayak_space_world(catalog, river, *spot)
            out.append({"name": name, "x_mm": x, "y_mm": y, "theta_deg": 0.0})
        return out

    base = _session_base("kayak", rng, pieces_now(), pieces_now(), RESOLUTIONS["720p"], 1500.0, roll=0.0,
                         azimuth=90.0, tilt=15.0)
    script = SessionScript("kayak", base, hand_from=(200.0, -600.0))
    script.add_position(pieces_now())
    plan = [("kayak/pawn-1", "paddle"), ("kayak/pawn-2", "double-paddle"), ("kayak/pawn-3", "swerve-left"),
            ("kayak/pawn-1", "double-paddle"), ("kayak/pawn-2", "paddle"), ("kayak/pawn-3", "paddle"),
            ("kayak/pawn-1", "swerve-right"), ("kayak/pawn-2", "swerve-right")]
    done = 0
    for name, kind in plan:
        if done == 4:
            break
        occupied = {v for k, v in where.items() if k != name}
        target = _kayak_move(catalog, river, occupied, where[name], kind)
        if target is None:
            continue
        old = kayak_space_world(catalog, river, *where[name])
        event = {"kind": kind, "piece": name, "from": list(where[name]), "to": list(target),
                 "note": "(tile index, row, lane) as the tiles lie"}
        where[name] = target
        new = kayak_space_world(catalog, river, *target)
        script.add_position(pieces_now(), event, move_from=old, move_to=new)
        done += 1
    assert all(kayak_joint_open_lanes(catalog, a, b) for a, b in zip(river[:-1], river[1:]))
    return script


def tornado_session() -> SessionScript:
    """Two boats racing out of the start gate of the Tornado Circuit: each turn a boat's
    player lays a straight card touching its previous card and the boat moves onto the
    card's last movement space (at most 3 spaces a round)."""
    catalog = default_catalog()
    rng = np.random.default_rng(31337)
    course = load_course("tornado-circuit")
    layout = course_layout_pieces(rng, course, jitter=False)
    gate_half = catalog.piece("tornado/start-gate").footprint["size_mm"][0] / 2
    card_len = catalog.piece("tornado/card-1-01").footprint["size_mm"][0]
    lanes = {"tornado/boat-1": 50.0, "tornado/boat-2": -50.0}
    used: set[str] = set()
    chains: dict[str, list[dict]] = {}
    boats: dict[str, dict] = {}

    def lay_card(boat: str, kind: str) -> None:
        deck = int(boat.rsplit("-", 1)[1])
        name = next(n for n in racing_card_names(catalog, deck, kind) if n not in used)
        used.add(name)
        chain = chains.setdefault(boat, [])
        x = (chain[-1]["x_mm"] + card_len) if chain else gate_half + 2 + card_len / 2
        card = {"name": name, "x_mm": x, "y_mm": lanes[boat], "theta_deg": 0.0}
        chain.append(card)
        last = catalog.racing_card_kind(kind)["spaces"][-1]["centre_x"]
        boats[boat] = {"name": boat, "x_mm": x + last, "y_mm": lanes[boat], "theta_deg": 0.0}

    for boat in lanes:
        lay_card(boat, "straight-1")
    chars = [{"name": "tornado/character-1", "x_mm": 120.0, "y_mm": -240.0, "theta_deg": 0.0, "face": "face-up"},
             {"name": "tornado/character-2", "x_mm": 230.0, "y_mm": -240.0, "theta_deg": 0.0, "face": "face-down"}]

    def pieces_now():
        cards = [c for b in lanes for c in chains[b]]
        return [dict(p) for p in layout] + [dict(c) for c in cards] + [dict(b) for b in boats.values()] + \
            [dict(c) for c in chars]

    # the view: the gate, the finish line just behind it, and the first few cards ahead
    view = [p for p in layout if p["name"] in ("tornado/start-gate", "tornado/finish-line")] + chars + [
        {"name": "tornado/card-6-01", "x_mm": gate_half + 2 + 2.5 * card_len, "y_mm": 0.0, "theta_deg": 0.0}]
    base = _session_base("tornado", rng, view, pieces_now(), RESOLUTIONS["1080p"], 1400.0, roll=0.0,
                         azimuth=-90.0, tilt=20.0)
    script = SessionScript("tornado", base, hand_from=(150.0, -700.0))
    script.add_position(pieces_now())
    for boat, kind in (("tornado/boat-1", "straight-2"), ("tornado/boat-2", "straight-3"),
                       ("tornado/boat-1", "straight-3"), ("tornado/boat-2", "straight-1")):
        old = (boats[boat]["x_mm"], boats[boat]["y_mm"])
        lay_card(boat, kind)
        new = (boats[boat]["x_mm"], boats[boat]["y_mm"])
        spaces = len(catalog.racing_card_kind(kind)["spaces"])
        event = {"kind": "advance", "piece": boat, "card": chains[boat][-1]["name"], "spaces": spaces,
                 "from": [round(v, 2) for v in old], "to": [round(v, 2) for v in new]}
        script.add_position(pieces_now(), event, move_from=old, move_to=new)
    return script


# The Kayak Chaos rules session: (pawn, actions in the words of referee.kayak.actions.parse);
# None stands for the illegal turn, a kayak carried further than three actions can take it.
KAYAK_RULES_START = "0A/1A/4A 1@0.0.1,2@0.0.2,3@0.0.3"
KAYAK_RULES_TILE_STACK = ("6A",)  # drawn when a kayak moves beyond the last tile
KAYAK_RULES_TURNS = (
    (1, ("double-paddle 1 down",)),
    (2, ("swerve 2 right", "paddle 2 down")),
    (3, ("double-swerve 3 right", "paddle 3 down")),  # a push chain: pawn-3 pushes 2, which pushes 1
    (1, ("paddle 1 down", "double-swerve 1 left", "paddle 1 down")),  # rides a double space
    (2, ("weather-shift 4 left",)),
    (3, ("tip 1",)),  # pawn-1 turns with the tile and goes to the double space's downstream half
    (1, ("whirlpool 1 4",)),
    (2, ("paddle 2 down", "swerve 2 left", "paddle 2 down")),
    (3, None),  # illegal: pawn-3 is carried 5 rows and a lane in one turn
    (1, ("paddle 1 down", "paddle 1 down")),  # beyond the last tile: pawn-1's player lays tile 6
    (2, ("paddle 2 down",)),
)
KAYAK_RULES_ILLEGAL_TO = (1, 2, 0)  # where the illegal turn leaves pawn-3 (tile index, row, lane)


def kayak_rules_positions():
    """The positions of the rules session, played by the rules engine itself (referee.kayak):
    [(position, event)], the first event None."""
    from referee.kayak import actions as KA
    from referee.kayak.position import Position, Space, from_text
    from referee.kayak.rules import apply

    pos = from_text(KAYAK_RULES_START)
    stack = [from_text(f"0A/{t}").tiles[1] for t in KAYAK_RULES_TILE_STACK]
    out = [(pos, None)]
    for pawn, words in KAYAK_RULES_TURNS:
        before = pos
        if words is None:
            kayaks = dict(pos.kayaks)
            kayaks[pawn] = Space(*KAYAK_RULES_ILLEGAL_TO)
            pos = Position.make(pos.tiles, kayaks)
        else:
            for w in words:
                supply = tuple(type(t)(t.tile, t.side, t.rotation, None) for t in stack[:1])
                result = apply(pos, KA.parse(w), None, supply)
                if result.placements:
                    stack.pop(0)
                pos = result.position
        event = {"kind": "turn", "piece": f"kayak/pawn-{pawn}", "actions": list(words or ()),
                 "legal": words is not None, "before": before.text(), "after": pos.text()}
        out.append((pos, event))
    return out


def kayak_rules_session() -> SessionScript:
    """Kayak Chaos turn by turn: a push chain, a double space, a Weather Shift, a Tip, a
    Whirlpool, an illegal turn and a new tile called for (11 turns, 720p)."""
    from referee.kayak.river import space_centre
    from referee.kayak.tiles import tile_book

    catalog = default_catalog()
    book = tile_book(catalog)
    rng = np.random.default_rng(2027)
    plays = kayak_rules_positions()

    def pieces_of(pos):
        tiles = kayak_tile_pieces(catalog, list(pos.tiles))
        pawns = []
        for pawn, space in pos.kayaks:
            x, y = space_centre(book, pos, space)
            pawns.append({"name": f"kayak/pawn-{pawn}", "x_mm": x + float(rng.uniform(-2, 2)),
                          "y_mm": y + float(rng.uniform(-2, 2)), "theta_deg": float(rng.uniform(-40, 40))})
        return tiles + pawns

    positions = [pieces_of(pos) for pos, _ in plays]
    view = [p for pieces in positions for p in pieces if p["name"].startswith("kayak/tile")]
    base = _session_base("kayak", rng, view, positions[-1], RESOLUTIONS["720p"], 1500.0, roll=0.0,
                         azimuth=90.0, tilt=10.0, heights=(600.0, 1000.0))
    script = SessionScript("kayak", base, hand_from=(300.0, -650.0), stable_frames=6)
    script.add_position(positions[0])
    for k in range(1, len(plays)):
        (before, _), (after, event) = plays[k - 1], plays[k]
        pawn = int(event["piece"].rsplit("-", 1)[1])
        moved = [p for p, s in after.kayaks if before.where(p) is None or
                 (before.tiles[before.where(p).index].tile, before.where(p).row, before.where(p).lane) !=
                 (after.tiles[s.index].tile, s.row, s.lane)]
        src = space_centre(book, before, before.where(pawn))
        dst = space_centre(book, after, after.where(moved[0] if moved else pawn))
        script.add_position(positions[k], event, move_from=src, move_to=dst)
    return script


def generate_sessions(games) -> list:
    makers = {"kang": [("kang", kang_session, "Kang: start position, then four entries from the start zones"),
                       ("kang-game", kang_game_session, "Kang: 14 moves with chained jumps, kicks, a score, and an "
                                                        "illegal score on the no-score turn, taken back")],
              "kayak": [("kayak", kayak_session,
                         "Kayak Chaos: three kayaks leave the Start row with paddles and swerves"),
                        ("kayak-rules", kayak_rules_session,
                         "Kayak Chaos rules: 11 turns with a push chain, a double space, a Weather Shift, a Tip, "
                         "a Whirlpool, a new tile called for and one illegal turn")],
              "tornado": [("tornado", tornado_session,
                           "Tornado Splash: two boats race out of the start gate, two rounds")]}
    out = []
    for game in games:
        for folder, make, note in makers[game]:
            if ONLY_SESSION and folder != ONLY_SESSION:
                continue
            out.append(render_session(make, folder, note))
    return out


def generate_race() -> dict:
    """The Tornado full-race session (samples/tornado_race.py) with its course file."""
    script = race_session(SessionScript, _session_base)
    for pieces in script.positions:
        validate_scene(dict(script.base, pieces=pieces))
    folder = HERE / "sessions" / "tornado-race"
    entry = write_session(script, folder, "Tornado Splash: a full race of four rounds on the sprint course",
                          jpeg_quality=64)
    write_race_course(folder)
    slim_truth(folder / "truth.jsonl")
    entry["stable_states"] = dump_stable_observations(folder)
    entry["course"] = "sessions/tornado-race/course.json"
    entry["events"] = [e for e in script.events if e]
    return entry


MEASURE_COPY_SEED = 7  # the hand-stuck copy the line-up photos show
MEASURE_SEEDS = {"boats": 11, "course": 11, "finish": 6}


def write_measure_photos(folder: Path) -> dict:
    """One set of line-up photos for each `refcam measure` command (samples/tornado-measure/): the
    boats against the start gate, the six course photos, the boats behind the finish line, each set
    with its camera file, all of one hand-stuck copy, so a newcomer can run the three commands in
    their order. The copy's true sticker places are in truth-catalog.json beside them."""
    from synth.handstuck import (COURSE_LINEUP_PHOTOS, course_lineup_scene, finish_lineup_scene,
                                 hand_stuck_catalog, lineup_scene, write_photos)

    copy = hand_stuck_catalog(MEASURE_COPY_SEED)
    sets = {"boats": [lineup_scene(MEASURE_SEEDS["boats"])],
            "course": [course_lineup_scene(MEASURE_SEEDS["course"], k) for k in range(COURSE_LINEUP_PHOTOS)],
            "finish": [finish_lineup_scene(MEASURE_SEEDS["finish"])]}
    entry = {"copy_seed": MEASURE_COPY_SEED, "sets": {}}
    for name, scenes in sets.items():
        (folder / name).mkdir(parents=True, exist_ok=True)
        images, camera = write_photos(scenes, folder / name, copy, name)
        entry["sets"][name] = {"images": [str(Path(i).relative_to(HERE)) for i in images],
                               "camera": str(Path(camera).relative_to(HERE))}
    (folder / "truth-catalog.json").write_text(_dump(copy.data))
    return entry


ONLY_SESSION = None  # --session NAME: regenerate that one session folder only


def render_session(make, folder: str, note: str) -> dict:
    script = make()
    # validate every position once: a typo in a script should fail here, not in a test
    for pieces in script.positions:
        validate_scene(dict(script.base, pieces=pieces))
    return write_session(script, HERE / "sessions" / folder, note)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=("stills", "sessions", "race", "finish", "measure"),
                    help="race: the Tornado full-race session; finish: the Tornado finish-line stills; "
                         "measure: the line-up photos of the three `refcam measure` commands")
    ap.add_argument("--games", default=",".join(GAMES))
    ap.add_argument("--session", help="regenerate only this session folder (e.g. kayak-rules)")
    args = ap.parse_args(argv)
    global ONLY_SESSION
    ONLY_SESSION = args.session
    games = [g for g in args.games.split(",") if g]
    index_path = HERE / "index.json"
    index = json.loads(index_path.read_text()) if index_path.exists() else {"stills": [], "sessions": []}
    if args.only in (None, "stills"):
        stills: list = []
        generate_stills(games, stills)
        if "kang" in games:
            generate_straddle_stills(stills)
        index["stills"] = [s for s in index.get("stills", []) if s["game"] not in games] + stills
    if args.only in (None, "race") and "tornado" in games:
        index["race"] = generate_race()
    if args.only in (None, "finish") and "tornado" in games:
        index["finish_stills"] = write_finish_stills(HERE / "tornado-finish", fit_camera, table_for, random_effects,
                                                     camera_file_of, _dump)
    if args.only in (None, "measure") and "tornado" in games:
        index["measure"] = write_measure_photos(HERE / "tornado-measure")
    if args.only in (None, "sessions"):
        sessions = generate_sessions(games)
        redone = {s["folder"] for s in sessions}
        index["sessions"] = [s for s in index.get("sessions", [])
                             if s["folder"] not in redone and (args.session or s["game"] not in games)] + sessions
    index["stills"].sort(key=lambda s: s["image"])
    index["sessions"].sort(key=lambda s: s["folder"])
    index["note"] = "Rendered by samples/generate.py from fixed seeds; regenerate with `make samples`."
    index_path.write_text(_dump(index))
    return 0


if __name__ == "__main__":
    sys.exit(main())
