"""What the command line lends a game's own commands (referee.game.Tools): vision on an
image or an observation file, a recorded session's stable states, and drawing an
explanation picture. The games' folders stay free of cv2."""

from __future__ import annotations

import sys

from referee import safeload
from pathlib import Path

from referee.errors import InvalidInputError
from referee.game import Explanation
from referee.observation import Observation


def _camera(camera_file: str | None):
    if not camera_file:
        return None
    from calibration.camera import CameraModel

    return CameraModel.load(camera_file)


def load_observation_file(path: str) -> Observation:
    """An observation JSON file (`refcam observe --json`, or a document holding one under "observation")."""
    doc = safeload.load_json(Path(path), "observation file")  # size, depth and number limits
    if isinstance(doc, dict) and "observation" in doc and "pieces" not in doc:
        doc = doc["observation"]
    if not isinstance(doc, dict) or "pieces" not in doc:
        raise InvalidInputError(f"observation file {path!r} has no 'pieces' list")
    try:
        return Observation.from_json(doc)
    except InvalidInputError as exc:
        raise InvalidInputError(f"observation file {path!r}: {exc}") from None


def observe_image(image, camera, game: str | None) -> Observation:
    """vision.pipeline.observe on one picture, keeping the sticker detections (no stickers: an error)."""
    from webui.live import pipeline_observe

    return pipeline_observe(image, camera, game, empty_ok=False)


IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp")


def photo_paths(entries: list[str]) -> list[Path]:
    """The photos named: files as given, a folder's images in name order (refused: none, or a
    folder with no image)."""
    out: list[Path] = []
    for e in entries:
        p = Path(e)
        if p.is_dir():
            found = sorted(f for f in p.iterdir() if f.is_file() and f.suffix.lower() in IMAGE_SUFFIXES)
            if not found:
                raise InvalidInputError(f"folder {e!r} holds no photos ({', '.join(IMAGE_SUFFIXES)})")
            out.extend(found)
        else:
            if p.suffix.lower() == ".json" and len(entries) > 1:
                raise InvalidInputError(f"{e!r} is an observation file: several photos are fused, one "
                                        "observation file is read on its own")
            out.append(p)
    return out


def observe_photos(entries: list[str], camera, game: str | None):
    """(Observation, picture): one photo observed as always, or several photos of one still table
    (files or a folder) registered and fused first (vision/fusion.py); the picture is the one the
    observation's pixels refer to (the fused one, registered on the first photo). Photos beyond
    what fusion may hold in memory are left out with a warning; photos that are not of one still
    table are refused, naming the photo."""
    from dataclasses import replace

    from vision import fusion
    from vision.imageio import load_image

    paths = photo_paths(entries)
    first = load_image(paths[0])
    if camera is not None:
        camera.check_image_size(first.shape[1], first.shape[0])
    if len(paths) == 1:
        return observe_image(first, camera, game), first
    keep = min(len(paths), fusion.frames_that_fit([fusion.Frame(first, {})]))
    images = [first] + [load_image(p) for p in paths[1:keep]]
    frames = fusion.detected_frames(images, [p.name for p in paths[:keep]])
    obs, fused = fusion.observe_fused(frames, camera, game)
    if keep < len(paths):
        obs = replace(obs, warnings=obs.warnings + (
            f"only the first {keep} of {len(paths)} photos were fused ({fusion.DEFAULT_MAX_BYTES // 2 ** 20} MB "
            f"of pictures at most)",))
    return obs, fused.image


class CliTools:
    """referee.game.Tools for the command line."""

    def observe_path(self, path: str, camera_file: str | None, game: str | None) -> Observation:
        if Path(path).suffix.lower() == ".json":
            return load_observation_file(path)
        from vision.imageio import load_image

        camera = _camera(camera_file)
        return observe_image(load_image(Path(path)), camera, game)

    def observe_photos(self, paths: list[str], camera_file: str | None, game: str | None) -> Observation:
        if len(paths) == 1 and Path(paths[0]).suffix.lower() == ".json":
            return load_observation_file(paths[0])
        return observe_photos(paths, _camera(camera_file), game)[0]

    def stable_observations(self, folder: str, camera_file: str | None, game: str | None):
        from vision.imageio import load_image
        from vision.session import SessionError, read_session
        from vision.tracking import StableStateTracker
        from webui.live import pipeline_observe

        session = read_session(Path(folder))
        camera = _camera(camera_file or session.camera_file)
        if not session.frames:  # the same refusal as `refcam replay`: one line, exit 2
            raise SessionError(f"session folder {folder} holds no frames")
        tracker = StableStateTracker()
        for message in session.warnings:
            self.warn(message)
        for frame in session.frames:
            try:
                image = load_image(Path(frame.path))
            except InvalidInputError as exc:  # one bad frame is skipped, as `refcam replay` does
                self.warn(f"{exc}; frame skipped")
                continue
            # a frame with no sticker in view (a hand over the table, the lens covered) is an
            # empty table for the tracker, which remembers the pieces: never the end of the replay
            update = tracker.update(pipeline_observe(image, camera, game, empty_ok=True), frame.t)
            if update.new_stable is not None:
                yield frame.t, update.new_stable

    @staticmethod
    def warn(message: str) -> None:
        print(f"refcam: warning: {message}", file=sys.stderr)

    def draw_explanation(self, explanation: Explanation, image_path: str | None, observation: Observation,
                         out_path: str, camera_file: str | None) -> str | None:
        from webui.photofinish import write_explanation

        image = None
        if image_path is not None:
            from vision.imageio import load_image

            image = load_image(Path(image_path))
        return write_explanation(explanation, out_path, image, observation)
