"""Fusing frames of a still table (vision/fusion.py): reads what no single frame reads, marks it,
takes sigma from the fused picture, and refuses photos that are not of one still table.

The truth is the renderer's (synth/render.py): where each piece lies and which stickers show.
The frames are one rendered 720p Tornado Splash table with heavy sensor noise (sigma 30 grey
levels, seeded) and JPEG, so that single frames miss stickers the average of 8 can read.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.catalog import default_catalog
from referee.observation import Observation, PiecePose
from tests.bench.accuracy import camera_of
from tests.bench.vision_scenes import BUILDERS
from tests.conftest import run_cli
from vision import detect, fusion

CAT = default_catalog()
SAMPLES = Path(__file__).resolve().parents[1] / "samples"
NOISE = 30.0
FRAMES = 8


def _scene():
    return BUILDERS["tornado"](np.random.default_rng(1), "720p")


def _render(scene):
    from synth.render import render_scene

    return render_scene(scene, apply_jpeg=False)


def _noisy(image: np.ndarray, rng: np.random.Generator, shift=(0.0, 0.0)) -> np.ndarray:
    if shift != (0.0, 0.0):
        m = np.float32([[1, 0, shift[0]], [0, 1, shift[1]]])
        image = cv2.warpAffine(image, m, image.shape[1::-1], flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    x = image.astype(np.float32) + rng.normal(0, NOISE, image.shape).astype(np.float32)
    ok, buf = cv2.imencode(".jpg", np.clip(x, 0, 255).astype(np.uint8), [cv2.IMWRITE_JPEG_QUALITY, 80])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


@pytest.fixture(scope="module")
def table():
    image, truth = _render(_scene())
    rng = np.random.default_rng(1)
    images = [_noisy(image, rng) for _ in range(FRAMES)]
    frames = fusion.detected_frames(images, [f"frame-{k}" for k in range(FRAMES)], CAT)
    obs, fused = fusion.observe_fused(frames, camera_of(truth), "tornado", CAT)
    visible = {s["id"] for s in truth["stickers"] if s.get("visible") and s["id"] in CAT.known_ids()}
    return {"image": image, "truth": truth, "images": images, "frames": frames, "obs": obs, "fused": fused,
            "visible": visible}


def test_fusion_reads_a_sticker_no_single_frame_reads_and_marks_it(table):
    obs, frames, visible = table["obs"], table["frames"], table["visible"]
    seen_alone = set().union(*(f.stickers for f in frames))
    fused_only = [p for p in obs.pieces if p.source == f"fused({FRAMES})"]
    assert fused_only, "the fused picture read nothing that the single frames missed"
    truth = {p["name"]: p for p in table["truth"]["pieces"]}
    for p in fused_only:
        assert not set(p.marker_ids) & seen_alone  # truly missed by every single frame
        assert set(p.marker_ids) <= visible  # and truly there: no phantom
        err = math.hypot(p.x_mm - truth[p.name]["x_mm"], p.y_mm - truth[p.name]["y_mm"])
        assert err <= 3.0 * p.sigma_mm, f"{p.name} off {err:.1f} mm with sigma {p.sigma_mm:.2f}"
    for p in obs.pieces:  # a piece some frame showed is not marked
        assert (p.source is None) == bool(set(p.marker_ids) & seen_alone)
    assert obs.extra["fusion"]["fused_only"] == sorted(p.name for p in fused_only)
    assert {d for p in obs.pieces for d in p.marker_ids} <= visible


def test_fusion_keeps_every_sticker_a_single_frame_read(table):
    seen_alone = set().union(*(f.stickers for f in table["frames"])) & table["visible"]
    read = {d for p in table["obs"].pieces for d in p.marker_ids}
    # a piece left out for a reason the observation states (e.g. a duplicate) would be named in a warning
    assert seen_alone <= read


def test_noise_falls_about_as_the_square_root_of_the_frames(table):
    fused = table["fused"]
    ratio = fused.noise_fused / fused.noise_single
    # trimmed mean of 8 (6 values kept per pixel): about 1/sqrt(7); JPEG's smoothing makes it a little larger
    assert 0.25 < ratio < 0.5, ratio
    assert fused.frames == FRAMES and table["obs"].extra["fusion"]["noise_fused"] < table["obs"].extra["fusion"]["noise_single"]


def test_sigma_comes_from_the_fused_pictures_edges(table):
    """The sigma model's noise term is the scatter of a sticker's edge points about its fitted edges:
    measured on the fused picture it must be well below one frame's for the same stickers."""
    single = {d.marker_id: d.edge_rms_px for d in table["frames"][0].detections if d.edge_rms_px > 0}
    fused = {d.marker_id: d.edge_rms_px for d in detect.detect_all(table["fused"].image, CAT).detections
             if d.edge_rms_px > 0}
    common = sorted(set(single) & set(fused))
    assert len(common) >= 5
    assert np.median([fused[i] for i in common]) < 0.7 * np.median([single[i] for i in common])


def test_fused_source_in_json_round_trips_and_single_frame_json_is_unchanged():
    plain = PiecePose("tornado/boat-1", (1,), 1.0, 2.0, 3.0, 4.0, 0.5)
    assert "source" not in plain.to_json()
    fused = PiecePose("tornado/boat-1", (1,), 1.0, 2.0, 3.0, 4.0, 0.5, source="fused(8)")
    doc = Observation(pieces=(fused,)).to_json()
    assert doc["pieces"][0]["source"] == "fused(8)"
    assert Observation.from_json(json.loads(json.dumps(doc))).pieces[0].source == "fused(8)"


def test_a_camera_shifted_by_a_pixel_or_two_is_registered(table):
    rng = np.random.default_rng(2)
    shifts = [(0.0, 0.0), (1.5, -1.0), (-2.0, 0.5), (0.7, 1.8)]
    images = [_noisy(table["image"], rng, s) for s in shifts]
    frames = fusion.detected_frames(images, [f"s{k}" for k in range(4)], CAT)
    kept, regs = fusion.register_all(frames, CAT)
    assert len(kept) == 4 and regs[0].identity
    for (dx, dy), reg in zip(shifts[1:], regs[1:]):
        assert not reg.identity and not reg.moved
        back = cv2.perspectiveTransform(np.float64([[[640 + dx, 360 + dy]]]), reg.homography).ravel()
        assert np.hypot(*(back - [640, 360])) < 0.3  # the frame's shift is undone to a third of a pixel


def test_a_moved_piece_refuses_the_photos_naming_photo_and_piece(table):
    scene = _scene()
    boat = next(p for p in scene["pieces"] if p["name"] == "tornado/boat-2")
    boat["x_mm"] += 20.0
    moved, _ = _render(scene)
    frames = fusion.detected_frames([table["image"], table["image"], moved], ["a.jpg", "b.jpg", "c.jpg"], CAT)
    with pytest.raises(fusion.FusionError) as exc:
        fusion.register_all(frames, CAT)
    message = str(exc.value)
    assert "c.jpg" in message and "tornado/boat-2" in message and "\n" not in message
    kept, _ = fusion.register_all(frames, CAT, strict=False)  # the live engine leaves such a frame out
    assert len(kept) == 2


def test_a_photo_of_another_table_is_refused():
    other, _ = _render(BUILDERS["kang"](np.random.default_rng(4), "720p"))
    image, _ = _render(_scene())
    frames = fusion.detected_frames([image, other], ["race.jpg", "kang.jpg"], CAT)
    with pytest.raises(fusion.FusionError, match="kang.jpg shares no sticker with race.jpg"):
        fusion.register_all(frames, CAT)


def test_memory_is_capped_by_bytes():
    k4 = fusion.Frame(np.zeros((2160, 3840, 3), np.uint8), {})
    p1080 = fusion.Frame(np.zeros((1080, 1920, 3), np.uint8), {})
    assert fusion.frames_that_fit([k4]) == 5
    assert fusion.frames_that_fit([p1080]) >= fusion.DEFAULT_FRAMES


def test_observe_and_rank_take_several_photos(table, tmp_path, capsys):
    paths = []
    for k, img in enumerate(table["images"][:3]):
        paths.append(tmp_path / f"shot-{k}.png")
        cv2.imwrite(str(paths[-1]), img)
    camera = tmp_path / "camera.json"
    camera_of(table["truth"]).save(camera)
    code, out, err = run_cli(capsys, ["observe", *paths, "--camera-file", camera, "--json"])
    assert code == 0, err
    doc = json.loads(out)
    assert doc["fusion"]["frames"] == 3 and doc["fusion"]["method"] == "median of 3"
    code, out, err = run_cli(capsys, ["observe", tmp_path, "--camera-file", camera])  # a folder of them
    assert code == 0, err
    assert "fused 3 photos" in out
    # rank: three quick noisy shots of a bundled race still, on its own course
    still = cv2.imread(str(SAMPLES / "tornado" / "001.jpg"))
    rng = np.random.default_rng(8)
    shots = []
    for k in range(3):
        shots.append(tmp_path / f"race-{k}.png")
        cv2.imwrite(str(shots[-1]), np.clip(still + rng.normal(0, 4, still.shape), 0, 255).astype(np.uint8))
    code, out, err = run_cli(capsys, ["rank", *shots, "--camera-file", SAMPLES / "tornado" / "001.camera.json",
                                      "--course", "roundabout-river", "--json"])
    assert code == 0, err
    assert [b["name"] for b in json.loads(out)["ranking"] if b["rank"] is not None]


def test_photos_of_a_moved_table_exit_2_with_one_line(table, tmp_path, capsys):
    scene = _scene()
    next(p for p in scene["pieces"] if p["name"] == "tornado/boat-2")["x_mm"] += 20.0
    moved, _ = _render(scene)
    a, b = tmp_path / "before.png", tmp_path / "after.png"
    cv2.imwrite(str(a), table["image"])
    cv2.imwrite(str(b), moved)
    for command in (["observe", a, b], ["rank", a, b, "--course", "tornado-circuit"]):
        code, out, err = run_cli(capsys, command)
        assert code == 2 and out == ""
        lines = err.rstrip("\n").splitlines()
        assert len(lines) == 1 and "after.png" in lines[0] and "tornado/boat-2 moved" in lines[0], err


def test_the_live_engine_rules_on_what_fusion_reads(table):
    """A calm table whose per-frame observe never shows boat-2 (a stand-in that drops it): the
    stable state handed to the game has boat-2 from the fusion of the calm frames, marked, and
    the fused picture is the one kept for "Settle it"."""
    rng = np.random.default_rng(5)
    engine, clean, boat = _engine_without_boat_2(table, [_mild(table["image"], rng) for _ in range(12)])
    stable = engine.stable_obs
    assert stable is not None and engine.fusion_s
    got = stable.piece("tornado/boat-2")
    assert got is not None and got.source.startswith("fused(")
    frames = int(got.source[len("fused("):-1])
    assert 2 <= frames <= 8 and "tornado/boat-2" in stable.extra["fusion"]["fused_only"]
    truly_there = {CAT.sticker(s["id"]).piece for s in table["truth"]["stickers"] if s.get("visible")
                   and s["id"] in CAT.known_ids()}
    assert set(stable.extra["fusion"]["fused_only"]) <= truly_there  # no phantom comes in through fusion
    assert math.hypot(got.x_mm - boat.x_mm, got.y_mm - boat.y_mm) < 3.0 * max(got.sigma_mm, 0.1)
    assert all((p.source is None) == (p.name in clean.names()) for p in stable.pieces if p.name != boat.name)
    assert engine.stable_image.shape == table["image"].shape


def _engine_without_boat_2(table, frames: list):
    """(engine, clean reading, boat-2 in it): a live engine that has processed these frames (10 fps),
    its per-frame observe a stand-in that never shows boat-2 (the clean reading without it)."""
    from dataclasses import replace

    from vision.sources import FrameSource, SourceInfo
    from vision.tracking import TrackerSettings
    from webui.live import LiveEngine, LiveSettings, pipeline_observe

    camera = camera_of(table["truth"])
    clean = pipeline_observe(table["image"], camera, "tornado")
    boat = clean.piece("tornado/boat-2")
    assert boat is not None
    dropped = replace(clean, pieces=tuple(p for p in clean.pieces if p.name != boat.name),
                      extra={**clean.extra, "detections": [d for d in clean.extra["detections"]
                                                           if d["id"] not in boat.marker_ids]})

    class Frames(FrameSource):
        def __init__(self):
            super().__init__()
            self.info = SourceInfo(kind="video", name="noisy frames", fps=10.0)

        def __iter__(self):
            yield from ((k * 0.1, frame) for k, frame in enumerate(frames))

    engine = LiveEngine(Frames(), lambda image, cam, game: dropped,
                        LiveSettings(game="tornado", camera=camera, stream=False,
                                     tracker=TrackerSettings(stable_s=0.5)))
    for t, image in engine.source:
        engine.process(t, image)
    return engine, clean, boat


def _mild(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A webcam's noise (sigma 6 grey levels) on a frame: every sticker stays readable."""
    x = image.astype(np.float32) + rng.normal(0, 6.0, image.shape).astype(np.float32)
    return np.clip(np.round(x), 0, 255).astype(np.uint8)


def test_a_sticker_frames_read_alone_joins_the_fused_read_when_enough_frames_read_it(table):
    """A live frame keeps only its stickers' corners: a sticker the fused picture missed joins when
    LIVE_MIN_READS frames read it, measured again on the frame's own edges (so its sigma has its
    edge scatter, not the doubled fallback of an unmeasured sticker), and not when one frame did."""
    result = detect.detect_all(table["image"], CAT)
    boat = next(d for d in result.detections if CAT.sticker(d.marker_id).piece == "tornado/boat-2")
    without = detect.DetectionResult(tuple(d for d in result.detections if d is not boat), ())
    everything = fusion.stickers_of(result)
    rest = {i: c for i, c in everything.items() if i != boat.marker_id}
    still = fusion.Registration(None, 0.0, len(rest))

    def joined(reads: int) -> list:
        frames = [fusion.Frame(table["image"], everything if k < reads else rest) for k in range(3)]
        got = fusion._with_frames_own(without, frames, [still] * 3, fusion.LIVE_MIN_READS)
        return [d for d in got.detections if d.marker_id == boat.marker_id]

    assert joined(1) == []
    (added,) = joined(2)
    assert added.edge_rms_px > 0 and added.blur_px > 0 and np.array_equal(added.corners, boat.corners)


def test_the_live_engine_fuses_only_frames_that_can_gain():
    """worth_fusing: quiet frames that all read the same stickers are not fused; frames whose reads
    differ, or whose noise reaches QUIET_GREY_LEVELS (measured against the noise drawn), are."""
    rng = np.random.default_rng(7)
    base = np.full((240, 320, 3), 128, np.uint8)

    def noisy(sigma: float) -> np.ndarray:
        return np.clip(np.round(base + rng.normal(0, sigma, base.shape)), 0, 255).astype(np.uint8)

    same = {1: np.zeros((4, 2)), 2: np.ones((4, 2))}
    quiet = [fusion.Frame(noisy(1.0), same) for _ in range(3)]
    assert not fusion.worth_fusing(quiet)
    assert fusion.worth_fusing(quiet[:2] + [fusion.Frame(quiet[2].image, {1: same[1]})])
    # the grey picture the detector reads weighs the channels' independent noise (luma weights)
    to_grey = math.sqrt(0.299 ** 2 + 0.587 ** 2 + 0.114 ** 2)
    assert abs(fusion.temporal_noise(noisy(5.0), noisy(5.0), step=1) - 5.0 * to_grey) < 0.15 * 5.0 * to_grey
    just_below = fusion.QUIET_GREY_LEVELS * 0.85 / to_grey
    assert not fusion.worth_fusing([fusion.Frame(noisy(just_below), same) for _ in range(3)])
    just_above = fusion.QUIET_GREY_LEVELS * 1.15 / to_grey
    assert fusion.worth_fusing([fusion.Frame(noisy(just_above), same) for _ in range(3)])
    assert not fusion.worth_fusing(quiet[:1])


def test_hand_held_photos_a_few_centimetres_apart_register_and_read_right():
    """Three photos from a phone moved by 2-4 cm between shots (rendered from moved cameras): one
    homography per photo registers them (raised pieces' parallax stays far below MOVED_PX), and
    the fused read puts every piece within 3 sigma of the truth of the first photo's camera."""
    import copy

    scene = BUILDERS["tornado"](np.random.default_rng(11), "720p")
    images, truth = [], None
    for dx, dy, dz in ((0, 0, 0), (30, -20, 10), (-25, 15, -10)):
        moved = copy.deepcopy(scene)
        x, y, z = moved["camera"]["pose"]["position_mm"]
        moved["camera"]["pose"]["position_mm"] = [x + dx, y + dy, z + dz]
        image, t = _render(moved)
        images.append(image)
        truth = truth or t
    frames = fusion.detected_frames(images, ["a.jpg", "b.jpg", "c.jpg"], CAT)
    obs, _ = fusion.observe_fused(frames, camera_of(truth), "tornado", CAT)
    kept, regs = fusion.register_all(frames, CAT)
    assert len(kept) == 3 and all(not r.identity and r.rms_px < 0.5 for r in regs[1:])
    where = {p["name"]: p for p in truth["pieces"]}
    for p in obs.pieces:
        err = math.hypot(p.x_mm - where[p.name]["x_mm"], p.y_mm - where[p.name]["y_mm"])
        assert err <= 3.0 * p.sigma_mm + 0.05, f"{p.name} off {err:.2f} mm, sigma {p.sigma_mm:.2f}"
    assert len(obs.pieces) >= 10


def test_photos_of_three_different_tables_are_refused_naming_the_photo(capsys):
    """samples/tornado-finish holds three stills of three different races: the finish line's
    stickers are common to all, the boats and cards are not. `rank` once fused them into one
    "complete" 6-boat ranking; it must refuse in one line naming the photo, exit 2."""
    folder = SAMPLES / "tornado-finish"
    if not (folder / "000.jpg").is_file():
        pytest.skip("samples/tornado-finish missing")
    code, out, err = run_cli(capsys, ["rank", str(folder)])
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "001.jpg does not show the table of 000.jpg" in lines[0], err
    assert "tornado/boat-1" in lines[0] and "tornado/boat-2" in lines[0]


def test_a_piece_taken_away_between_photos_is_refused_but_a_small_sticker_lost_to_noise_is_not(table):
    still = SAMPLES / "tornado" / "000.scene.json"
    if not still.is_file():
        pytest.skip("samples/tornado missing")
    scene = json.loads(still.read_text())
    image, _ = _render(scene)
    first = fusion.detected_frames([image], ["a.jpg"], CAT)[0]
    biggest = max(first.detections, key=lambda d: d.side_px)
    assert biggest.side_px >= fusion.MISSING_SIDE_PX
    name = CAT.sticker(biggest.marker_id).piece
    scene["pieces"] = [p for p in scene["pieces"] if p["name"] != name]
    gone, _ = _render(scene)
    frames = [first] + fusion.detected_frames([gone], ["b.jpg"], CAT)
    with pytest.raises(fusion.FusionError, match=f"b.jpg does not show the table of a.jpg \\({name} of a.jpg not in it\\)"):
        fusion.register_all(frames, CAT)
    assert len(fusion.register_all(frames, CAT, strict=False)[0]) == 2  # the live engine's calm frames: not checked
    # the noisy frames of one still table read different small stickers, and fuse
    kept, _ = fusion.register_all(table["frames"], CAT)
    assert len(kept) == FRAMES


def test_the_trimmed_mean_drops_each_pixels_lowest_and_highest_value():
    """Four frames and more: the mean without each pixel's lowest and highest value. A hand's
    edge in one frame (255 there) and a shadow in another (0) leave the pixel at the others'
    mean exactly; worked by hand: (100 + 104) / 2 = 102 with 4 frames."""
    base = np.full((8, 8, 3), 100, np.uint8)
    frames = [base.copy(), base.copy(), base.copy(), base.copy()]
    frames[1][2, 3] = 104
    frames[2][2, 3] = 255  # bright: dropped
    frames[3][2, 3] = 0  # dark: dropped
    fused = fusion.fuse([fusion.Frame(f, {}) for f in frames], [fusion.Registration(None, 0.0, 0)] * 4)
    assert fused.image[2, 3].tolist() == [102, 102, 102]
    assert (np.delete(fused.image.reshape(-1, 3), 2 * 8 + 3, axis=0) == 100).all()
    assert "without each pixel's lowest and highest" in fused.method


def _stickers(shift_of_last: float) -> dict:
    square = np.array([[0, 0], [30, 0], [30, 30], [0, 30]], dtype=np.float64)
    places = [(100, 100), (600, 120), (1100, 90), (320, 400), (900, 380), (150, 600), (640, 620), (1150, 600),
              (400, 250)]  # nine stickers over a 720p table
    out = {200 + k: square + p for k, p in enumerate(places)}
    out[203] = out[203] + (shift_of_last, 0.0)
    return out


@pytest.mark.parametrize("shift, moved", [(2.5, False), (3.5, True), (4.0, True), (5.0, True), (6.0, True)])
def test_a_piece_moved_a_few_pixels_between_photos_is_refused(shift, moved):
    """MOVED_PX = 3: a sticker 3.5-6 px off the homography the other stickers agree on moved
    (a hand-held phone's parallax stays below it); 2.5 px is still the same place."""
    still = np.zeros((720, 1280, 3), np.uint8)
    frames = [fusion.Frame(still, _stickers(0.0), "a.jpg"), fusion.Frame(still, _stickers(shift), "b.jpg")]
    reg = fusion.register(frames[0].stickers, frames[1].stickers)
    assert (203 in reg.moved) == moved
    if moved:
        with pytest.raises(fusion.FusionError, match="b.jpg: .* moved since a.jpg"):
            fusion.register_all(frames, CAT)
    else:
        assert len(fusion.register_all(frames, CAT)[0]) == 2


def test_the_rounded_mean_rounds_every_total_to_nearest_a_tie_to_even():
    """_rounded_mean (OpenCV's division) against integer arithmetic, for every total of every count
    of frames a uint16 sum holds: the quotient below plus one when the remainder is over half the
    count, or exactly half and the quotient odd. Odd lengths reach the vector loops' tails."""
    for n in range(2, 258):
        totals = np.arange(255 * n + 1, dtype=np.uint16)
        quotient, remainder = np.divmod(totals.astype(np.int64), n)
        up = (2 * remainder > n) | ((2 * remainder == n) & (quotient % 2 == 1))
        assert np.array_equal(fusion._rounded_mean(totals, n).ravel(), (quotient + up).astype(np.uint8)), n


@pytest.mark.parametrize("count", [2, 3, 4, 5, 8])
def test_the_fused_picture_is_each_pixels_sorted_values_without_the_ends_averaged(count):
    """fuse, a band of rows at a time, against a sort of each pixel's values across the frames: the
    mean of 2, the middle of 3, from 4 on the mean of all but the lowest and highest, rounded to
    nearest (np.round: a tie to even). Rows not a multiple of the band, random values 0-255."""
    rng = np.random.default_rng(count)
    shape = (fusion.ROWS_PER_BAND * 3 + 5, 37, 3)
    images = [rng.integers(0, 256, shape, dtype=np.uint8) for _ in range(count)]
    ordered = np.sort(np.stack(images), axis=0).astype(np.int64)
    kept = ordered if count == 2 else ordered[1:-1]
    expected = np.round(kept.sum(axis=0) / len(kept)).astype(np.uint8)
    fused = fusion.fuse([fusion.Frame(im, {}) for im in images], [fusion.Registration(None, 0.0, 0)] * count)
    assert np.array_equal(fused.image, expected)


def test_the_noise_level_is_immerkaers_float_estimate():
    """noise_level (16-bit separable filter, exact sum) against Immerkaer's estimator written out
    in float: the 3x3 Laplacian difference's mean magnitude inside the border, times sqrt(pi/2)/6."""
    rng = np.random.default_rng(3)
    kernel = np.array([[1, -2, 1], [-2, 4, -2], [1, -2, 1]], dtype=np.float64)
    for image in (rng.integers(0, 256, (61, 83, 3), dtype=np.uint8),  # extremes: |difference| up to 16 * 255
                  np.clip(np.round(rng.normal(128, 4.0, (120, 160))), 0, 255).astype(np.uint8),
                  (np.indices((40, 50)).sum(axis=0) % 2 * 255).astype(np.uint8)):
        grey = detect.to_gray(image).astype(np.float64)
        diff = cv2.filter2D(grey, -1, kernel)[1:-1, 1:-1]
        expected = math.sqrt(math.pi / 2.0) * np.abs(diff).mean() / 6.0
        assert fusion.noise_level(image) == pytest.approx(expected, rel=1e-12)


def test_the_temporal_noise_is_the_median_absolute_difference_of_the_sampled_grey():
    """temporal_noise (grey of the sampled pixels only, medians from a histogram) against the MAD of
    the whole grey pictures' sampled difference by np.median, for odd and even counts of samples."""
    rng = np.random.default_rng(5)
    for shape, step in (((48, 64, 3), 4), ((49, 63, 3), 4), ((30, 41, 3), 1), ((30, 40), 1)):
        a, b = (np.clip(np.round(rng.normal(120, 12, shape)), 0, 255).astype(np.uint8) for _ in range(2))
        d = (detect.to_gray(a)[::step, ::step].astype(np.float64) - detect.to_gray(b)[::step, ::step])
        expected = 1.4826 * np.median(np.abs(d - np.median(d))) / math.sqrt(2.0)
        assert fusion.temporal_noise(a, b, step) == pytest.approx(expected, rel=1e-6)


def test_the_live_engine_fuses_no_frame_a_hand_still_shows_in(table):
    """A calm period whose first frames still show a hand withdrawing (the tracker finds the pieces
    still) is fused over the frames after it only: the fused picture holds no ghost of the hand."""
    rng = np.random.default_rng(6)
    h, w = table["image"].shape[:2]
    hand = (slice(0, h // 5), slice(0, w // 5))  # a corner of the picture, away from the pieces
    frames = [_mild(table["image"], rng) for _ in range(12)]
    for frame in frames[:3]:
        frame[hand] = (60, 90, 150)
    engine, _, _ = _engine_without_boat_2(table, frames)
    got = engine.stable_obs.piece("tornado/boat-2")
    assert got is not None and got.source.startswith("fused(") and int(got.source[6:-1]) <= 9
    corner = engine.stable_image[hand].astype(np.float32) - table["image"][hand].astype(np.float32)
    assert np.abs(corner.mean(axis=(0, 1))).max() < 3.0  # the table there, not a blend with the hand
