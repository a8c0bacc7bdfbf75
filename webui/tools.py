"""What the command line lends a game's own commands (referee.game.Tools): vision on an
image or an observation file, a recorded session's stable states, and drawing an
explanation picture. The games' folders stay free of cv2."""

from __future__ import annotations


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


class CliTools:
    """referee.game.Tools for the command line."""

    def observe_path(self, path: str, camera_file: str | None, game: str | None) -> Observation:
        if Path(path).suffix.lower() == ".json":
            return load_observation_file(path)
        from vision.imageio import load_image

        camera = _camera(camera_file)
        return observe_image(load_image(Path(path)), camera, game)

    def stable_observations(self, folder: str, camera_file: str | None, game: str | None):
        from vision.imageio import load_image
        from vision.session import read_session
        from vision.tracking import StableStateTracker

        session = read_session(Path(folder))
        camera = _camera(camera_file or session.camera_file)
        tracker = StableStateTracker()
        for frame in session.frames:
            update = tracker.update(observe_image(load_image(Path(frame.path)), camera, game), frame.t)
            if update.new_stable is not None:
                yield frame.t, update.new_stable

    def draw_explanation(self, explanation: Explanation, image_path: str | None, observation: Observation,
                         out_path: str, camera_file: str | None) -> str | None:
        from webui.photofinish import write_explanation

        image = None
        if image_path is not None:
            from vision.imageio import load_image

            image = load_image(Path(image_path))
        return write_explanation(explanation, out_path, image, observation)
