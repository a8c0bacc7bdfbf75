"""Direct tests of the frames poses are reported in (issue 13: a flipped theta sign in the
camera-plane frame was caught only indirectly) and of the tracker's averaging."""

from __future__ import annotations

import math

import cv2
import numpy as np

from referee.observation import Observation, PiecePose
from tests.bench import synth
from tests.test_vision_geometry import CAT, detections_for
from vision.pipeline import observe
from vision.tracking import StableStateTracker, TrackerSettings


def _table_point(cam, u: float, v: float) -> np.ndarray:
    """Where the ray through pixel (u, v) (no distortion) meets the table z = 0, by hand."""
    R = cv2.Rodrigues(np.asarray(cam.rvec, dtype=np.float64))[0]
    centre = -R.T @ np.asarray(cam.tvec, dtype=np.float64).ravel()
    ray = R.T @ np.array([(u - cam.K[0, 2]) / cam.K[0, 0], (v - cam.K[1, 2]) / cam.K[1, 1], 1.0])
    return centre + (-centre[2] / ray[2]) * ray


def test_theta_in_the_camera_plane_frame():
    # the camera-plane frame: origin where the optical axis meets the table, +x along the
    # image's +x on the table; a piece's theta there is its game theta minus that heading
    rng = np.random.default_rng(4)
    pieces = [p for p in synth.tornado_scene(rng, catalog=CAT) if p.name != "tornado/start-gate"]
    # seen from an oblique azimuth, so that the frame's heading is neither 0 nor 180 degrees
    cam = synth.look_at_camera(target=(400, 150, 0), distance_mm=1100, elevation_deg=60, azimuth_deg=-120.0,
                               dist=(0.0, 0.0, 0.0, 0.0, 0.0))
    obs = observe(np.zeros((1080, 1920, 3), np.uint8), cam.camera_model(), catalog=CAT,
                  detections=detections_for(cam, pieces))
    assert obs.frame["kind"] == "camera-plane"
    origin = _table_point(cam, cam.K[0, 2], cam.K[1, 2])
    ahead = _table_point(cam, cam.K[0, 2] + 100.0, cam.K[1, 2])
    heading = math.atan2(ahead[1] - origin[1], ahead[0] - origin[0])
    assert 10 < abs(math.degrees(heading)) % 180 < 170
    c, s = math.cos(-heading), math.sin(-heading)
    for p in pieces:
        got = obs.piece(p.name)
        want_theta = (p.theta_deg - math.degrees(heading) + 180.0) % 360.0 - 180.0
        assert abs((got.theta_deg - want_theta + 180.0) % 360.0 - 180.0) < 0.2, p.name
        dx, dy = p.x_mm - origin[0], p.y_mm - origin[1]
        assert math.hypot(got.x_mm - (c * dx - s * dy), got.y_mm - (s * dx + c * dy)) < 0.5, p.name


def test_stable_pose_is_the_average_of_the_calm_period():
    # sightings alternate 0.6 mm / 0.6 deg either side of the true pose (inside the motion
    # tolerance): the stable state must be their average, not the latest sighting
    tracker = StableStateTracker(TrackerSettings(stable_s=0.5))
    state = None
    for i in range(12):
        sign = 1.0 if i % 2 == 0 else -1.0
        pose = PiecePose(name="tornado/boat-1", marker_ids=(200,), x_mm=100.0 + 0.6 * sign, y_mm=40.0 - 0.6 * sign,
                         theta_deg=10.0 + 0.6 * sign, z_mm=5.0, sigma_mm=0.3, sigma_theta_deg=0.3)
        update = tracker.update(Observation(pieces=(pose,), game="tornado"), i / 10.0)
        if update.new_stable is not None:
            state = update.new_stable.pieces[0]
            latest = pose
    assert state is not None
    # the latest sighting is 0.6 off; any average of 4 or more alternating samples is within 0.15
    assert abs(latest.x_mm - 100.0) > 0.5
    assert abs(state.x_mm - 100.0) < 0.15 and abs(state.y_mm - 40.0) < 0.15 and abs(state.theta_deg - 10.0) < 0.15
