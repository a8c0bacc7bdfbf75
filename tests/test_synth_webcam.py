"""synth/webcam.py: the webcam chain blurs in linear light, keeps a still table's geometry across
frame seeds, scales with a camera file that follows the pixels, and is seeded."""

from __future__ import annotations

import cv2
import numpy as np

from synth import webcam


def _square(size=(400, 300), box=(150, 100, 250, 200), dark=20, light=235) -> np.ndarray:
    img = np.full((size[1], size[0], 3), light, np.uint8)
    x0, y0, x1, y1 = box
    img[y0:y1, x0:x1] = dark
    return img


def _plain(blur: float, **kw) -> webcam.WebcamSettings:
    """A webcam with only lens blur (no exposure error, tint, noise, S-curve; JPEG 100)."""
    base = dict(blur_sigma_px=blur, exposure=1.0, tint_bgr=(1.0, 1.0, 1.0), full_well=1e12, read_noise=0.0,
                s_curve=1.0, jpeg_quality=100)
    base.update(kw)
    return webcam.WebcamSettings(**base)


def test_lens_blur_in_linear_light_shrinks_a_dark_square():
    # blurred in linear light, a dark square on white loses area below mid-grey (the bright side
    # spreads); the same blur on display values keeps the 100 x 100 area to within a pixel row
    img = _square()
    got = webcam.webcam_frame(img, _plain(1.1))
    dark_area = int((got[..., 1] < 128).sum())
    display_blur = cv2.GaussianBlur(img, (0, 0), 1.1)
    assert abs(int((display_blur[..., 1] < 128).sum()) - 100 * 100) <= 100
    assert dark_area < 100 * 100 - 2 * 100  # each edge moved inwards by more than half a pixel


def test_without_effects_the_chain_returns_the_picture():
    img = _square()
    got = webcam.webcam_frame(img, _plain(0.01))
    assert np.abs(got.astype(int) - img.astype(int)).max() <= 3


def test_frames_of_a_still_table_differ_in_noise_only():
    img = _square()
    settings = webcam.draw_settings(5)
    a, b = webcam.webcam_frame(img, settings, 1), webcam.webcam_frame(img, settings, 2)
    assert np.array_equal(a, webcam.webcam_frame(img, settings, 1))  # seeded
    assert not np.array_equal(a, b)
    # same geometry: the dark square's centroid agrees to 0.15 px between the frames (noise moves it a little)
    def centroid(f):
        w = np.clip(128.0 - f[..., 1].astype(float), 0, None)
        ys, xs = np.indices(w.shape)
        return np.array([(w * xs).sum(), (w * ys).sum()]) / w.sum()
    assert np.linalg.norm(centroid(a) - centroid(b)) < 0.15
    assert np.linalg.norm(centroid(a) - (199.5, 149.5)) < 0.2


def test_settings_stay_in_the_ranges_of_an_ordinary_webcam():
    for seed in range(40):
        s = webcam.draw_settings(seed)
        assert 0.6 <= s.blur_sigma_px <= 1.1
        assert 0.85 <= s.exposure <= 1.15
        assert 70 <= s.jpeg_quality <= 80
        assert all(0.85 <= t <= 1.18 for t in s.tint_bgr) and s.tint_bgr[1] == 1.0
    assert webcam.draw_settings(3) == webcam.draw_settings(3)


def test_720p_scaling_and_its_camera_file_agree():
    # a small bright dot at 1080p pixel (1000, 600) lands where the scaled camera projects its ray
    img = np.zeros((1080, 1920, 3), np.uint8)
    img[599:602, 999:1002] = 255
    settings = _plain(0.5, size=webcam.SIZE_720P)
    got = webcam.webcam_frame(img, settings)[..., 1].astype(float)
    assert got.shape == (720, 1280)
    ys, xs = np.indices(got.shape)
    seen = np.array([(got * xs).sum(), (got * ys).sum()]) / got.sum()
    cam = {"image_size": [1920, 1080], "camera_matrix": [[1400.0, 0, 955.0], [0, 1400.0, 545.0], [0, 0, 1]],
           "dist_coeffs": [0.0] * 5}
    small = webcam.scaled_camera(cam, webcam.SIZE_720P)
    K, K2 = np.array(cam["camera_matrix"]), np.array(small["camera_matrix"])
    ray = np.linalg.solve(K, [1000.0, 600.0, 1.0])
    expected = (K2 @ ray)[:2]
    assert small["image_size"] == [1280, 720]
    assert np.linalg.norm(seen - expected) < 0.1
