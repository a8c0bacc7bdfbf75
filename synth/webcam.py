"""An ordinary webcam's whole chain, all effects at once, applied to a rendered picture.

The renderer paints what a well-set camera would show (display values). A real webcam gets
there through optics and firmware that each move the stickers' edges:

1. the lens blurs the scene in LINEAR light (sigma 0.6-1.1 px), so the later tone curve
   makes the blurred edge asymmetric (the bright side grows);
2. auto-exposure misses by up to +-15 %, and the white balance leaves a tint;
3. the sensor adds shot noise (grows with the light) and read noise (constant);
4. the firmware encodes with an sRGB-like curve plus a contrast S-curve;
5. optionally the camera scales its sensor picture down to 720p itself;
6. MJPEG at quality 70-80 with 4:2:0 chroma.

`draw_settings(seed)` draws one camera (what stays the same while the table is still: blur,
exposure, tint, curve, noise levels, JPEG quality); `webcam_frame(image, settings, frame_seed)`
makes one frame from it, with its own noise and therefore its own JPEG blocks, so N frame
seeds give N frames of one still table with the same geometry (for multi-frame fusion).
`webcam_chain(image, seed)` does both for a single frame. `scaled_camera` gives the camera
file of the scaled picture.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

SIZE_720P = (1280, 720)


@dataclass(frozen=True)
class WebcamSettings:
    """One webcam as it stays over a still table.

    blur_sigma_px: lens blur in linear light, at the rendered resolution;
    exposure: auto-exposure gain in linear light (1 = the renderer's exposure);
    tint_bgr: white-balance gains per channel, in linear light;
    full_well: photo-electrons at full scale (shot noise sigma = sqrt(signal / full_well));
    read_noise: read noise sigma in linear units (of full scale);
    s_curve: contrast S-curve exponent after the sRGB-like curve (1 = none);
    jpeg_quality: MJPEG quality (4:2:0 chroma);
    size: output (width, height) when the camera scales its picture itself, else None.
    """

    blur_sigma_px: float
    exposure: float
    tint_bgr: tuple[float, float, float]
    full_well: float
    read_noise: float
    s_curve: float
    jpeg_quality: int
    size: tuple[int, int] | None = None


def draw_settings(seed: int, size: tuple[int, int] | None = None) -> WebcamSettings:
    """A webcam drawn from the ranges of an ordinary one (deterministic in seed)."""
    rng = np.random.default_rng(seed)
    tint = rng.uniform(0.92, 1.08, 3)
    tint /= tint[1]  # white balance keeps green; blue and red drift
    return WebcamSettings(blur_sigma_px=float(rng.uniform(0.6, 1.1)), exposure=float(rng.uniform(0.85, 1.15)),
                          tint_bgr=tuple(float(t) for t in tint), full_well=float(rng.uniform(800.0, 3000.0)),
                          read_noise=float(rng.uniform(0.002, 0.005)), s_curve=float(rng.uniform(1.1, 1.4)),
                          jpeg_quality=int(rng.integers(70, 81)), size=size)


def srgb_to_linear(v: np.ndarray) -> np.ndarray:
    """Display values in [0, 1] to linear light (the sRGB decoding)."""
    return np.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)


def linear_to_srgb(v: np.ndarray) -> np.ndarray:
    """Linear light in [0, 1] to display values (the sRGB encoding)."""
    v = np.clip(v, 0.0, 1.0)
    return np.where(v <= 0.0031308, 12.92 * v, 1.055 * np.power(v, 1 / 2.4) - 0.055)


def s_curve(x: np.ndarray, a: float) -> np.ndarray:
    """A contrast S-curve: black, mid-grey and white kept, mid-tones pushed apart (a > 1)."""
    xa = np.power(x, a)
    return xa / (xa + np.power(1.0 - x, a))


def _tone_lut(a: float) -> np.ndarray:
    """4096-entry table from linear light to the firmware's 8-bit output (sRGB-like + S-curve)."""
    lin = np.linspace(0.0, 1.0, 4096)
    return np.clip(np.round(255.0 * s_curve(linear_to_srgb(lin), a)), 0, 255).astype(np.uint8)


def webcam_frame(image: np.ndarray, settings: WebcamSettings, frame_seed: int = 0) -> np.ndarray:
    """One frame of the rendered (H, W, 3) BGR uint8 picture through the webcam: (h, w, 3) BGR uint8
    (decoded JPEG). Only the sensor noise (and so the JPEG blocks) depends on frame_seed."""
    lin = srgb_to_linear(image.astype(np.float32) / 255.0).astype(np.float32)
    lin = cv2.GaussianBlur(lin, (0, 0), settings.blur_sigma_px)  # optics act on light, not on display values
    lin *= np.float32(settings.exposure) * np.asarray(settings.tint_bgr, np.float32)[None, None, :]
    rng = np.random.default_rng(frame_seed)
    variance = np.clip(lin, 0, None) / settings.full_well + settings.read_noise ** 2
    lin += np.sqrt(variance) * rng.standard_normal(lin.shape, dtype=np.float32)
    codes = np.clip(lin * 4095.0 + 0.5, 0, 4095).astype(np.uint16)
    out = _tone_lut(settings.s_curve)[codes]
    if settings.size is not None and tuple(settings.size) != (out.shape[1], out.shape[0]):
        out = cv2.resize(out, tuple(settings.size), interpolation=cv2.INTER_AREA)
    return mjpeg(out, settings.jpeg_quality)


def mjpeg(image: np.ndarray, quality: int) -> np.ndarray:
    """The picture as an MJPEG webcam sends it (4:2:0 chroma), decoded again."""
    params = [cv2.IMWRITE_JPEG_QUALITY, int(quality)]
    if hasattr(cv2, "IMWRITE_JPEG_SAMPLING_FACTOR"):
        params += [cv2.IMWRITE_JPEG_SAMPLING_FACTOR, cv2.IMWRITE_JPEG_SAMPLING_FACTOR_420]
    ok, buf = cv2.imencode(".jpg", image, params)
    if not ok:
        raise ValueError("could not encode the webcam frame as JPEG")
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


def webcam_chain(image: np.ndarray, seed: int, size: tuple[int, int] | None = None,
                 frame_seed: int | None = None) -> tuple[np.ndarray, WebcamSettings]:
    """(frame, settings): the picture through a webcam drawn from seed (frame seed: seed unless given)."""
    settings = draw_settings(seed, size)
    return webcam_frame(image, settings, seed if frame_seed is None else frame_seed), settings


def scaled_camera(camera: dict, size: tuple[int, int]) -> dict:
    """The camera file (image_size, camera_matrix, dist_coeffs, ...) of the picture scaled to size.

    Scaling by s maps pixel centres x -> (x + 0.5) s - 0.5, so the focal lengths scale by s
    and the principal point moves with the centres; the lens distortion (in normalised
    coordinates) does not change."""
    w0, h0 = camera["image_size"]
    sx, sy = size[0] / w0, size[1] / h0
    K = np.array(camera["camera_matrix"], dtype=np.float64)
    K2 = K.copy()
    K2[0, 0], K2[0, 1], K2[0, 2] = K[0, 0] * sx, K[0, 1] * sx, (K[0, 2] + 0.5) * sx - 0.5
    K2[1, 1], K2[1, 2] = K[1, 1] * sy, (K[1, 2] + 0.5) * sy - 0.5
    out = dict(camera)
    out["image_size"] = [int(size[0]), int(size[1])]
    out["camera_matrix"] = K2.tolist()
    return out
