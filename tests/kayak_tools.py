"""Test helpers for Kayak Chaos: a Tools object like the command line's (referee.game.Tools),
and observations built from the samples' truth."""

from __future__ import annotations

import json
from pathlib import Path

from referee.kayak import actions as A
from referee.kayak.position import from_text
from referee.observation import Observation, PiecePose

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def truth_observation(pieces: list[dict], warnings=()) -> Observation:
    """The observation a perfect camera would give for a truth file's pieces."""
    return Observation(tuple(PiecePose(p["name"], tuple(p.get("marker_ids", ())), p["x_mm"], p["y_mm"],
                                       p.get("theta_deg", 0.0), p.get("z_mm", 0.0), 0.5, face=p.get("face"))
                             for p in pieces), game="kayak", warnings=tuple(warnings))


def visible_names(truth: dict) -> set[str]:
    return {s["piece"] for s in truth.get("stickers", []) if s.get("visible")}


class FakeTools:
    """observe_path runs the real vision pipeline on images (and reads observation files);
    stable_observations replays a session's truth: one observation per stable frame whose
    pieces differ from the last, and a hand in view where the session has an occluder."""

    def __init__(self):
        self.drawn = []

    def observe_path(self, path, camera_file, game):
        if str(path).endswith(".json"):
            return Observation.from_json(json.loads(Path(path).read_text()))
        import cv2

        from calibration.camera import CameraModel
        from vision.pipeline import observe

        image = cv2.imread(str(path))
        cam_path = camera_file or _camera_beside(Path(path))
        camera = CameraModel.load(cam_path) if cam_path else None
        return observe(image, camera=camera, game=game)

    def stable_observations(self, folder, camera_file, game):
        last = None
        for line in (Path(folder) / "truth.jsonl").read_text().splitlines():
            frame = json.loads(line)
            if frame.get("occluders"):
                yield frame["t"], truth_observation(frame["pieces"], ["a hand is in view"])
                last = None
                continue
            if not frame.get("stable"):
                continue
            key = json.dumps(frame["pieces"], sort_keys=True)
            if key != last:
                last = key
                yield frame["t"], truth_observation(frame["pieces"])

    def draw_explanation(self, explanation, image_path, observation, out_path, camera_file):
        self.drawn.append((explanation, out_path))


def _camera_beside(image: Path):
    for candidate in (image.with_suffix(".camera.json"), image.parent.parent / "camera.json"):
        if candidate.is_file():
            return str(candidate)
    return None


class VisionTools(FakeTools):
    """Like the command line: stable observations of a session come from the vision pipeline
    on every frame and the stable-state tracker (a frame with no sticker is an empty table)."""

    def stable_observations(self, folder, camera_file, game):
        import cv2

        from calibration.camera import CameraModel
        from referee.errors import RefcamError
        from vision.pipeline import observe
        from vision.session import read_session
        from vision.tracking import StableStateTracker

        session = read_session(folder)
        cam_path = camera_file or _camera_beside(Path(folder) / "frames" / "x.jpg")
        camera = CameraModel.load(cam_path) if cam_path else None
        tracker = StableStateTracker()
        for entry in session.frames:
            try:
                obs = observe(cv2.imread(str(entry.path)), camera=camera, game=game)
            except RefcamError:
                obs = Observation(pieces=(), game=game)
            update = tracker.update(obs, entry.t)
            if update.new_stable is not None:
                yield entry.t, update.new_stable


def findable(turn) -> bool:
    """Whether explain's search (changed kayaks and tiles only, no position twice) can list
    exactly the played actions; otherwise it must still find some legal reading."""
    path = [turn.before, *turn.positions]
    if len(set(path)) != len(path):
        return False
    ident = lambda p: {k: (p.tiles[s.index].tile, s.row, s.lane) for k, s in p.kayaks}  # noqa: E731
    was, now = ident(turn.before), ident(turn.after)
    grew = len(turn.after.tiles) > len(turn.before.tiles)
    old = {rt.tile: (i, rt) for i, rt in enumerate(turn.before.tiles)}
    new = {rt.tile: (i, rt) for i, rt in enumerate(turn.after.tiles)}
    for a in turn.actions:
        if hasattr(a, "pawn") and not grew and was[a.pawn] == now[a.pawn]:
            return False
        for t in [getattr(a, k) for k in ("tile", "tile_a", "tile_b") if hasattr(a, k)]:
            if t in old and old[t] == new[t]:
                return False
            if t not in old and isinstance(a, A.Tip):
                return False  # explain reports the shorter reading: the tile laid the other way round
    return True


def observation_of(text: str) -> Observation:
    """A perfect camera's observation of a position given in the text form."""
    from referee.kayak.river import space_centre
    from referee.kayak.tiles import tile_book

    book, pos = tile_book(), from_text(text)
    pieces = [{"name": f"kayak/tile-{rt.tile}", "x_mm": i * book.tile_length_mm, "y_mm": rt.shift * book.space_mm,
               "theta_deg": float(rt.rotation), "face": rt.side} for i, rt in enumerate(pos.tiles)]
    for pawn, space in pos.kayaks:
        x, y = space_centre(book, pos, space)
        pieces.append({"name": f"kayak/pawn-{pawn}", "x_mm": x, "y_mm": y})
    return truth_observation(pieces)
