"""Tornado Splash samples for issue 11: a full race on a short course, and stills at the finish.

Used by samples/generate.py (``--only race`` / ``--only finish``). Everything comes from
fixed seeds and fixed positions, so the output is the same on every run.

The race (``sessions/tornado-race/``): three boats on the "sprint" course (start gate,
finish line 450 mm ahead, no curves; its course file is written beside the session).
Four rounds with: an illegal first card (off its gate line), an out-of-order turn, a card
laid at a wrong angle and replaced before the token moves, a boost, a boat under a
resting hand while it is ranked, two finish crossings (one by the movement space while
the boat's centre is still short of the line), and the last boat placed automatically.
Each position's event says which rulings the script expects (``expect``).
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np

from referee.catalog import default_catalog
from synth.render import encode_jpeg, render_scene
from synth.scenes import RESOLUTIONS, course_layout_pieces, load_course, racing_card_names

RACE_SEED = 4711
FINISH_X = 450.0
LANES = {"tornado/boat-1": 75.0, "tornado/boat-2": 0.0, "tornado/boat-3": -75.0}
SPRINT_COURSE = {
    "id": "sprint",
    "name": "Sprint (sample race course)",
    "setup": "Start gate, then the finish line 450 mm straight ahead; no curves. Used by the bundled race session.",
    "sequence": [{"kind": "start-gate"}, {"kind": "finish-line"}],
    "layout": {"track_width_mm": 300, "curve_radius_mm": 250, "start-gate": [0, 0, 0],
               "finish-line": [FINISH_X, 0, 0], "curves": {}},
}


class Race:
    """The table as the race goes: cards by name, boats, character cards."""

    def __init__(self):
        self.catalog = default_catalog()
        self.cards: dict[str, dict] = {}
        self.boats = {b: {"name": b, "x_mm": 0.0, "y_mm": y, "theta_deg": 0.0} for b, y in LANES.items()}
        self.chars = {k: {"name": f"tornado/character-{k}", "x_mm": 60.0 + 110.0 * k, "y_mm": -215.0,
                          "theta_deg": 0.0, "face": "face-up"} for k in (1, 2, 3)}
        self.used: set[str] = set()

    def lay(self, boat: str, kind: str, x: float, y: float, theta: float = 0.0) -> str:
        deck = int(boat.rsplit("-", 1)[1])
        name = next(n for n in racing_card_names(self.catalog, deck, kind) if n not in self.used)
        self.used.add(name)
        self.cards[name] = {"name": name, "x_mm": float(x), "y_mm": float(y), "theta_deg": float(theta)}
        return name

    def move(self, boat: str, x: float, y: float) -> tuple[tuple[float, float], tuple[float, float]]:
        old = (self.boats[boat]["x_mm"], self.boats[boat]["y_mm"])
        self.boats[boat].update(x_mm=float(x), y_mm=float(y))
        return old, (float(x), float(y))

    def pieces(self, layout: list[dict], hidden: tuple[str, ...] = ()) -> list[dict]:
        return [dict(p) for p in layout] + [dict(c) for c in self.cards.values()] + \
            [dict(b) for n, b in self.boats.items() if n not in hidden] + [dict(c) for c in self.chars.values()]


def expect(boat: str, rule: str, legal, note: str) -> dict:
    return {"boat": boat, "rule": rule, "legal": legal, "note": note}


def race_positions(race: Race) -> list[tuple[dict | None, tuple, dict | None]]:
    """(event, (hand from, hand to), resting hand or None) for each position after the start.

    The table changes are made on ``race`` as each position is produced."""
    b1, b2, b3 = LANES
    out = []

    def step(event, where, resting=None):
        out.append((event, where, resting, race.pieces(LAYOUT)))

    # Round 1, turn order by weight (all on the gate): boat-1, boat-2, boat-3
    a1 = race.lay(b1, "straight-3", 77, 75)
    step({"kind": "turn", "round": 1, "boat": b1, "cards": [a1], "spaces": 3,
          "expect": [expect(b1, "Racing Card Placement Methods", True, "first card on its gate line")]},
         race.move(b1, 113, 75))
    c = race.lay(b2, "straight-2", 77, 0)
    step({"kind": "turn", "round": 1, "boat": b2, "cards": [c], "spaces": 2,
          "expect": [expect(b2, "Player Token Movement", True, "2 spaces")]}, race.move(b2, 95, 0))
    c = race.lay(b3, "straight-3", 77, -100)
    step({"kind": "turn", "round": 1, "boat": b3, "cards": [c], "spaces": 3,
          "expect": [expect(b3, "Racing Card Placement Methods, Method 3: Coming Out the Starting Gate", False,
                            "first card 25 mm off the line from its gate space")]}, race.move(b3, 113, -100))
    # Round 2: boat-1 and boat-3 equidistant (weight: boat-1 first), then boat-2
    c = race.lay(b3, "straight-3", 187, -100)
    step({"kind": "turn", "round": 2, "boat": b3, "cards": [c], "spaces": 3,
          "expect": [expect(b3, "Action Phase", True, "boat-1 may have passed")]}, race.move(b3, 223, -100))
    c = race.lay(b1, "straight-3", 187, 75)
    step({"kind": "turn", "round": 2, "boat": b1, "cards": [c], "spaces": 3,
          "expect": [expect(b1, "Action Phase", False, "boat-1 acts after boat-3, who ranks below it")]},
         race.move(b1, 223, 75))
    wrong = race.lay(b2, "straight-3", 132 + 55 * math.cos(math.radians(20)), 55 * math.sin(math.radians(20)), 20)
    step({"kind": "card laid", "round": 2, "boat": b2, "cards": [wrong],
          "expect": [expect(b2, "Racing Card Placement Methods, Method 2: Curve", False,
                            "turned 20 deg with no diagonal line; the token has not moved, so it may be replaced")]},
         ((150.0, 20.0), (185.0, 18.0)))
    del race.cards[wrong]
    right = race.lay(b2, "straight-3", 187, 0)
    step({"kind": "card replaced", "round": 2, "boat": b2, "cards": [right], "replaces": wrong,
          "expect": [expect(b2, "Racing Card Placement Methods, Method 2: Curve", True,
                            "the card put right clears the violation")]}, ((185.0, 18.0), (187.0, 0.0)))
    step({"kind": "turn", "round": 2, "boat": b2, "cards": [right], "spaces": 3,
          "expect": [expect(b2, "Player Token Movement", True, "3 spaces")]}, race.move(b2, 223, 0))
    # Round 3: all three level at the same distance: by weight
    c = race.lay(b1, "straight-3", 297, 75)
    step({"kind": "turn", "round": 3, "boat": b1, "cards": [c], "spaces": 3,
          "expect": [expect(b1, "Action Phase", True, "first in ranking order")]}, race.move(b1, 333, 75))
    race.chars[2]["face"] = "face-down"
    c1, c2 = race.lay(b2, "straight-3", 297, 0), race.lay(b2, "straight-1", 407, 0)
    step({"kind": "turn", "round": 3, "boat": b2, "cards": [c1, c2], "spaces": 4, "boost": True,
          "expect": [expect(b2, "Boosting", True, "4 spaces on the turn the boost is used")]},
         race.move(b2, 407, 0))
    c = race.lay(b3, "straight-3", 297, -100)
    step({"kind": "turn", "round": 3, "boat": b3, "cards": [c], "spaces": 3,
          "expect": [expect(b3, "Action Phase", True, "last in ranking order")]}, race.move(b3, 333, -100))
    hand = {"kind": "hand", "x_mm": 333.0, "y_mm": 118.0, "theta_deg": 270.0, "z_mm": 60.0, "scale": 0.8,
            "arm_length_mm": 900.0}
    step({"kind": "hand rests", "round": 4, "boat": b1, "hidden": [b1],
          "expect": [expect(b1, "Ranking Phase", None, "boat-1 not seen: under a hand? the ranking is incomplete")]},
         ((333.0, 190.0), (333.0, 118.0)), resting=[hand])
    # Round 4: boat-2 first (nearest the finish), then boat-1, boat-3 (level: by weight)
    c = race.lay(b2, "straight-2", 517, 0)
    step({"kind": "turn", "round": 4, "boat": b2, "cards": [c], "spaces": 2, "finish": True,
          "expect": [expect(b2, "Crossing the Finish Line", True, "1st across")]}, race.move(b2, 535, 0))
    c = race.lay(b1, "straight-3", 407, 75)
    step({"kind": "turn", "round": 4, "boat": b1, "cards": [c], "spaces": 3, "finish": True,
          "expect": [expect(b1, "Crossing the Finish Line", True,
                            "its movement space touches the line while its centre is 7 mm short"),
                     expect(b3, "Ending the Game", True, "boat-3 is placed 3rd without crossing")]},
         race.move(b1, 443, 75))
    return out


LAYOUT = [{"name": "tornado/start-gate", "x_mm": 0.0, "y_mm": 0.0, "theta_deg": 0.0},
          {"name": "tornado/finish-line", "x_mm": FINISH_X, "y_mm": 0.0, "theta_deg": 0.0}]


def race_session(session_script_cls, session_base, size=(1280, 720)):
    """The SessionScript of the race (see the module docstring)."""
    rng = np.random.default_rng(RACE_SEED)
    race = Race()
    start = race.pieces(LAYOUT)
    steps = race_positions(race)
    every = start + [p for *_, pieces in steps for p in pieces]
    view = LAYOUT + list(race.chars.values()) + [
        {"name": "tornado/card-6-01", "x_mm": 560.0, "y_mm": 0.0, "theta_deg": 0.0},
        {"name": "tornado/card-5-01", "x_mm": 60.0, "y_mm": 120.0, "theta_deg": 0.0}]
    base = session_base("tornado", rng, view, every, size, 1400.0 * size[0] / 1920, roll=0.0, azimuth=-90.0,
                        tilt=15.0, heights=(500.0, 800.0))
    script = session_script_cls("tornado", base, hand_from=(300.0, -650.0), stable_frames=6)
    script.add_position(start)
    for event, (frm, to), resting, pieces in steps:
        script.add_position(pieces, event, move_from=frm, move_to=to, resting=resting)
    return script


def write_race_course(folder: Path) -> None:
    (folder / "course.json").write_text(json.dumps(SPRINT_COURSE, indent=1) + "\n")


# --- stills at the finish line -----------------------------------------------------------------
def finish_scenes() -> list[dict]:
    """Boats at and across the Splashway finish line, on their racing cards, with the truth
    of each crossing: clearly across, clearly short, and one within a fraction of a mm."""
    catalog = default_catalog()
    course = load_course("splashway")
    rng = np.random.default_rng(5150)
    layout = course_layout_pieces(rng, course, jitter=False)
    fx, fy, _ = course["layout"]["finish-line"]
    plans = [
        # (boat, lane offset across the line, front bracket past the line in mm, card kind)
        [("tornado/boat-1", 60.0, 12.0, "straight-3"), ("tornado/boat-3", -40.0, -15.0, "straight-2")],
        [("tornado/boat-2", 30.0, 0.05, "straight-1"), ("tornado/boat-4", -70.0, 25.0, "straight-3")],
        [("tornado/boat-5", 0.0, -0.05, "straight-2"), ("tornado/boat-6", 90.0, -40.0, "straight-1")],
    ]
    scenes = []
    for k, plan in enumerate(plans):
        pieces = [dict(p) for p in layout]
        truth = {}
        for boat, lane, past, kind in plan:
            deck = int(boat.rsplit("-", 1)[1])
            name = racing_card_names(catalog, deck, kind)[0]
            last = catalog.racing_card_kind(kind)["spaces"][-1]
            bracket_x = float(last["bracket_x"])
            cx = fx + past - bracket_x
            pieces.append({"name": name, "x_mm": cx, "y_mm": fy + lane, "theta_deg": 0.0})
            pieces.append({"name": boat, "x_mm": cx + float(last["centre_x"]), "y_mm": fy + lane, "theta_deg": 0.0})
            truth[boat] = {"front_bracket_past_mm": past, "card": name,
                           "crossed": True if past >= 0 else False}
        scenes.append({"pieces": pieces, "truth": truth, "seed": 5150 + k})
    return scenes


def write_finish_stills(folder: Path, fit_camera, table_for, random_effects, camera_file_of, dump) -> list:
    """Render finish_scenes() at 1080p, tilts 0/15/30 degrees; returns index entries."""
    from synth.scenes import relevant_points

    catalog = default_catalog()
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    entries = []
    for k, item in enumerate(finish_scenes()):
        rng = np.random.default_rng(item["seed"])
        near = [p for p in item["pieces"] if p["name"] == "tornado/finish-line" or p["name"].startswith(
            ("tornado/boat-", "tornado/card-"))]
        camera = fit_camera(rng, relevant_points(catalog, near), RESOLUTIONS["1080p"], tilt_deg=15.0 * k)
        scene = {"refcam_scene": 1, "game": "tornado", "course": "splashway", "camera": camera,
                 "table": table_for(rng, catalog, item["pieces"]), "pieces": item["pieces"],
                 "effects": random_effects(rng, 88), "occluders": [],
                 "tags": {"seed": item["seed"], "finish_truth": item["truth"]}}
        image, truth = render_scene(scene)
        stem = f"{k:03d}"
        (folder / f"{stem}.jpg").write_bytes(encode_jpeg(image, 88).tobytes())
        (folder / f"{stem}.truth.json").write_text(dump(truth))
        (folder / f"{stem}.scene.json").write_text(dump(scene))
        (folder / f"{stem}.camera.json").write_text(dump(camera_file_of(truth["camera"], "true intrinsics")))
        entries.append({"image": f"{folder.name}/{stem}.jpg", "course": "splashway", "finish": item["truth"]})
        print(f"{folder.name}/{stem}.jpg: finish still", flush=True)
    return entries


def dump_stable_observations(folder: Path) -> int:
    """Write each stable state of a recorded session as an observation file
    (``stable/NNN.observation.json``, with its time), so rule tests replay the race from
    files without the vision step. Uses the live page's tracker and vision pipeline."""
    from calibration.camera import CameraModel
    from vision.imageio import load_image
    from vision.session import read_session
    from vision.tracking import StableStateTracker
    from webui.live import pipeline_observe

    session = read_session(folder)
    camera = CameraModel.load(session.camera_file)
    out = folder / "stable"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir()
    tracker = StableStateTracker()
    n = 0
    for frame in session.frames:
        obs = pipeline_observe(load_image(frame.path), camera, "tornado")
        update = tracker.update(obs, frame.t)
        if update.new_stable is not None:
            doc = update.new_stable.to_json()
            doc["t"] = frame.t
            doc["frame_file"] = frame.path.name
            (out / f"{n:03d}.observation.json").write_text(json.dumps(doc, indent=1) + "\n")
            n += 1
    return n


def slim_truth(path: Path) -> None:
    """Keep samples/ small: the race's truth.jsonl keeps, per frame, the pieces, the
    occluders and the script's events, but not every sticker's corners (the still
    samples carry those; tests/test_samples_bundled.py checks the detector on them)."""
    lines = []
    for line in path.read_text().splitlines():
        d = json.loads(line)
        d["stickers_visible"] = sorted(st["id"] for st in d.pop("stickers", []) if st.get("visible"))
        lines.append(json.dumps(d))
    path.write_text("\n".join(lines) + "\n")
