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

The harsher chain (`draw_harsh(seed, condition)`) adds what cheap webcams do and the chain
above does not, each one a field of WebcamSettings that is off by default:

- a defocus DISC (the lens's out-of-focus blur is a pillbox, not a Gaussian: flat-topped,
  with hard ends, so a 2 px cell loses its middle), in linear light;
- matte paper and grey ink: the sticker's black is a grey and its white is not white
  (lower contrast, in linear light);
- a rolling exposure change across the frame (rolling shutter under mains flicker and an
  auto-exposure settling while the frame is read: horizontal bands and a ramp);
- sensor pattern noise fixed per camera (pixel gain PRNU, pixel offset DSNU, column offsets),
  drawn from the camera's seed, never from the frame's;
- in-camera sharpening with halos (unsharp mask on the encoded values, clipped: a light rim
  beside every dark edge and a dark rim beside every light one);
- stronger JPEG with visible 8x8 block edges (quality 50-70 too);
- motion blur along a line (a piece pushed or the table knocked while the frame is exposed).

HARSH_CONDITIONS names the parameter ranges. Those in TUNING_CONDITIONS may be looked at while
tuning the reader (vision/reread.py's threshold and blur models were chosen on them); those in
HELD_BACK_CONDITIONS (other ranges, other combinations, and other seeds: HELD_BACK_SEED_OFFSET)
are NEVER used for tuning, only for reporting (tests/bench/webcam.py, docs/vision-webcam.md).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

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
    # the harsher chain (draw_harsh); each is off at its default
    defocus_disc_px: float = 0.0  # radius of the out-of-focus disc, rendered px (linear light)
    ink_paper: tuple[float, float] = (0.0, 1.0)  # linear black and white the stickers' ink and paper reach
    rolling: tuple[float, float, float, float] = (0.0, 0.0, 1.0, 0.0)  # ramp, band amplitude, band period
    # (frame heights), band phase: exposure gain 1 + ramp (y - 1/2) + band sin(2 pi y / period + phase), y in [0, 1]
    pattern_noise: tuple[float, float, float] = (0.0, 0.0, 0.0)  # PRNU gain sigma, DSNU offset sigma, column offset sigma
    pattern_seed: int = 0  # the camera's own seed: its pattern noise is the same in every frame
    sharpen: tuple[float, float] = (0.0, 1.0)  # unsharp-mask amount and radius (output px) on the encoded values
    motion_px: float = 0.0  # motion blur length in output px (linear light)
    motion_deg: float = 0.0


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
    ink, paper = settings.ink_paper
    if (ink, paper) != (0.0, 1.0):  # matte paper and grey ink: the scene itself has less contrast
        lin = np.float32(ink) + np.float32(paper - ink) * lin
    lin = _optics(lin, settings, image.shape[1])
    lin *= np.float32(settings.exposure) * np.asarray(settings.tint_bgr, np.float32)[None, None, :]
    lin *= _rolling_gain(lin.shape[0], settings.rolling)[:, None, None]
    lin = _pattern_noise(lin, settings)
    rng = np.random.default_rng(frame_seed)
    variance = np.clip(lin, 0, None) / settings.full_well + settings.read_noise ** 2
    lin += np.sqrt(variance) * rng.standard_normal(lin.shape, dtype=np.float32)
    codes = np.clip(lin * 4095.0 + 0.5, 0, 4095).astype(np.uint16)
    out = _tone_lut(settings.s_curve)[codes]
    if settings.size is not None and tuple(settings.size) != (out.shape[1], out.shape[0]):
        out = cv2.resize(out, tuple(settings.size), interpolation=cv2.INTER_AREA)
    return mjpeg(_sharpened(out, settings.sharpen), settings.jpeg_quality)


def _optics(lin: np.ndarray, settings: WebcamSettings, width: int) -> np.ndarray:
    """The lens (Gaussian, or a defocus disc with a little Gaussian) and motion, in linear light."""
    if settings.defocus_disc_px > 0:
        lin = cv2.filter2D(lin, -1, disc_kernel(settings.defocus_disc_px), borderType=cv2.BORDER_REFLECT)
    if settings.blur_sigma_px > 0:
        lin = cv2.GaussianBlur(lin, (0, 0), settings.blur_sigma_px)  # optics act on light, not on display values
    if settings.motion_px > 0:  # its length is said in output px: scaled to the sensor's
        out_w = settings.size[0] if settings.size is not None else width
        lin = cv2.filter2D(lin, -1, line_kernel(settings.motion_px * width / out_w, settings.motion_deg),
                           borderType=cv2.BORDER_REFLECT)
    return lin


def disc_kernel(radius: float) -> np.ndarray:
    """A normalised pillbox of the given radius (px), its rim antialiased by 8x supersampling."""
    r = int(np.ceil(radius))
    fine = (np.arange(-(r + 0.5) * 8 + 0.5, (r + 0.5) * 8) / 8.0)
    xx, yy = np.meshgrid(fine, fine)
    inside = (xx ** 2 + yy ** 2 <= radius ** 2).astype(np.float32)
    k = inside.reshape(2 * r + 1, 8, 2 * r + 1, 8).mean(axis=(1, 3))
    return k / k.sum()


def line_kernel(length: float, angle_deg: float) -> np.ndarray:
    """A normalised line of `length` px at angle_deg (motion blur), antialiased."""
    n = int(np.ceil(length)) | 1
    k = np.zeros((n * 8, n * 8), np.float32)
    c = (n * 8 - 1) / 2.0
    d = np.array([np.cos(np.radians(angle_deg)), np.sin(np.radians(angle_deg))]) * length * 4
    cv2.line(k, (int(round(c - d[0])), int(round(c - d[1]))), (int(round(c + d[0])), int(round(c + d[1]))), 1.0, 8)
    k = k.reshape(n, 8, n, 8).sum(axis=(1, 3))
    return k / k.sum()


def _rolling_gain(height: int, rolling: tuple[float, float, float, float]) -> np.ndarray:
    """(height,) exposure gain down the frame: a ramp and mains-flicker bands (rolling shutter)."""
    ramp, band, period, phase = rolling
    y = (np.arange(height, dtype=np.float32) + 0.5) / height
    return (1.0 + ramp * (y - 0.5) + band * np.sin(2 * np.pi * y / max(period, 1e-3) + phase)).astype(np.float32)


def _pattern_noise(lin: np.ndarray, settings: WebcamSettings) -> np.ndarray:
    """Fixed pattern noise of this camera (the same in every frame: drawn from pattern_seed)."""
    prnu, dsnu, column = settings.pattern_noise
    if not (prnu or dsnu or column):
        return lin
    rng = np.random.default_rng(settings.pattern_seed)
    h, w = lin.shape[:2]
    gain = 1.0 + prnu * rng.standard_normal((h, w, 1), dtype=np.float32)
    offset = dsnu * rng.standard_normal((h, w, 1), dtype=np.float32) + column * rng.standard_normal((1, w, 1), dtype=np.float32)
    return lin * gain + offset


def _sharpened(out: np.ndarray, sharpen: tuple[float, float]) -> np.ndarray:
    """In-camera sharpening: an unsharp mask on the encoded 8-bit values, clipped (halos)."""
    amount, radius = sharpen
    if amount <= 0:
        return out
    f = out.astype(np.float32)
    f += np.float32(amount) * (f - cv2.GaussianBlur(f, (0, 0), radius))
    return np.clip(np.round(f), 0, 255).astype(np.uint8)


@dataclass(frozen=True)
class HarshRanges:
    """The ranges one named condition of the harsher chain draws a camera from (uniform in each)."""

    defocus_disc_px: tuple[float, float]  # disc radius, rendered px
    blur_sigma_px: tuple[float, float]  # the Gaussian left beside the disc
    ink: tuple[float, float]  # linear black of the ink (0.03 is a display grey of about 50)
    paper: tuple[float, float]  # linear white of the paper
    ramp: tuple[float, float]  # exposure change from the top to the bottom of the frame
    band: tuple[float, float]  # flicker band amplitude
    prnu: tuple[float, float]
    dsnu: tuple[float, float]
    sharpen: tuple[float, float]  # unsharp-mask amount
    sharpen_radius: tuple[float, float]
    jpeg_quality: tuple[int, int]  # inclusive
    motion_px: float = 0.0


# Looked at while tuning (vision/reread.py's thresholds): moderate versions of each effect.
TUNING_CONDITIONS = {
    "tune-soft": HarshRanges(defocus_disc_px=(0.8, 1.4), blur_sigma_px=(0.3, 0.5), ink=(0.02, 0.05), paper=(0.75, 0.9),
                             ramp=(-0.1, 0.1), band=(0.0, 0.04), prnu=(0.005, 0.015), dsnu=(0.001, 0.003),
                             sharpen=(0.3, 0.8), sharpen_radius=(0.8, 1.2), jpeg_quality=(60, 75)),
    "tune-motion7": HarshRanges(defocus_disc_px=(0.5, 0.9), blur_sigma_px=(0.3, 0.5), ink=(0.02, 0.04),
                                paper=(0.8, 0.9), ramp=(-0.1, 0.1), band=(0.0, 0.03), prnu=(0.005, 0.01),
                                dsnu=(0.001, 0.002), sharpen=(0.3, 0.6), sharpen_radius=(0.8, 1.2),
                                jpeg_quality=(65, 75), motion_px=7.0),
    # a cheap webcam as soft as the softest held-back one, on its own ranges (a wider disc, dimmer
    # paper, stronger halos and blocks) and the tuning seeds: the re-read of 12-15 px stickers at
    # 1080p is studied on this one
    "tune-cheap": HarshRanges(defocus_disc_px=(1.5, 2.4), blur_sigma_px=(0.3, 0.8), ink=(0.04, 0.11),
                              paper=(0.5, 0.72), ramp=(-0.3, 0.3), band=(0.02, 0.09), prnu=(0.01, 0.035),
                              dsnu=(0.002, 0.006), sharpen=(0.6, 1.6), sharpen_radius=(0.7, 1.3),
                              jpeg_quality=(46, 60)),
}
# NEVER used for tuning: other ranges (stronger defocus and halos, lower contrast, q 50-60 blocks,
# deeper flicker), other combinations, and other seeds (HELD_BACK_SEED_OFFSET).
HELD_BACK_CONDITIONS = {
    "held-halo-jpeg": HarshRanges(defocus_disc_px=(0.6, 1.2), blur_sigma_px=(0.2, 0.4), ink=(0.03, 0.07),
                                  paper=(0.7, 0.85), ramp=(-0.2, 0.2), band=(0.03, 0.08), prnu=(0.01, 0.025),
                                  dsnu=(0.002, 0.004), sharpen=(0.8, 1.5), sharpen_radius=(0.7, 1.0),
                                  jpeg_quality=(50, 60)),
    "held-defocus-matte": HarshRanges(defocus_disc_px=(1.2, 1.8), blur_sigma_px=(0.3, 0.6), ink=(0.05, 0.09),
                                      paper=(0.6, 0.75), ramp=(-0.25, 0.25), band=(0.0, 0.05), prnu=(0.015, 0.03),
                                      dsnu=(0.002, 0.005), sharpen=(0.5, 1.0), sharpen_radius=(1.0, 1.5),
                                      jpeg_quality=(55, 70)),
    "held-motion7": HarshRanges(defocus_disc_px=(0.7, 1.1), blur_sigma_px=(0.2, 0.4), ink=(0.03, 0.06),
                                paper=(0.7, 0.85), ramp=(-0.2, 0.2), band=(0.02, 0.06), prnu=(0.01, 0.02),
                                dsnu=(0.002, 0.004), sharpen=(0.6, 1.2), sharpen_radius=(0.8, 1.2),
                                jpeg_quality=(55, 70), motion_px=7.0),
    # added after the first after-run (which all three above passed): the cheapest webcam we could
    # describe, out of focus, dim paper, heavy halos and blocks; never used for tuning either
    "held-cheap": HarshRanges(defocus_disc_px=(1.6, 2.2), blur_sigma_px=(0.4, 0.7), ink=(0.05, 0.1),
                              paper=(0.55, 0.7), ramp=(-0.25, 0.25), band=(0.03, 0.08), prnu=(0.015, 0.03),
                              dsnu=(0.002, 0.005), sharpen=(0.8, 1.4), sharpen_radius=(0.8, 1.2),
                              jpeg_quality=(50, 58)),
}
HARSH_CONDITIONS = {**TUNING_CONDITIONS, **HELD_BACK_CONDITIONS}
HELD_BACK_SEED_OFFSET = 900_000_007  # held-back cameras are drawn from seeds no tuning run uses


def is_held_back(condition: str) -> bool:
    return condition in HELD_BACK_CONDITIONS


def draw_harsh(seed: int, condition: str, size: tuple[int, int] | None = None) -> WebcamSettings:
    """A camera of the named harsher condition (deterministic in seed; held-back conditions draw
    from seed + HELD_BACK_SEED_OFFSET so they never share a camera with a tuning run)."""
    r = HARSH_CONDITIONS[condition]
    base = draw_settings(seed + (HELD_BACK_SEED_OFFSET if is_held_back(condition) else 0), size)
    rng = np.random.default_rng([seed, len(condition), sum(map(ord, condition))])
    u = lambda lo_hi: float(rng.uniform(*lo_hi))  # noqa: E731
    return replace(base, blur_sigma_px=u(r.blur_sigma_px), defocus_disc_px=u(r.defocus_disc_px),
                   ink_paper=(u(r.ink), u(r.paper)),
                   rolling=(u(r.ramp), u(r.band), u((0.2, 0.6)), u((0.0, 2 * np.pi))),
                   pattern_noise=(u(r.prnu), u(r.dsnu), u(r.dsnu) * 0.5), pattern_seed=int(rng.integers(1 << 31)),
                   sharpen=(u(r.sharpen), u(r.sharpen_radius)),
                   jpeg_quality=int(rng.integers(r.jpeg_quality[0], r.jpeg_quality[1] + 1)),
                   motion_px=r.motion_px, motion_deg=u((0.0, 180.0)))


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
