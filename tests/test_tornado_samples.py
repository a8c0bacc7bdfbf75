"""Ranking calls with sigma from real detections on the rendered samples, checked
against an independent computation from the ground truth.

For every sample still (samples/tornado/NNN.jpg with its exact NNN.truth.json), the
image goes through vision.pipeline.observe (with the sample's camera, as after
`refcam calibrate`, or without a camera file) and the referee ranks the detected
boats. The expected zones, measures and order come from tests/tornado_oracle.py,
which works the Ranking Phase out by hand from the true piece poses, the course
file and the catalog: no referee.tornado code is used for the expectation.

Per boat: the zone is the true one, the measure lies within 3 sigma of the true
measure, a boat short of the final straight has not finished.
Per pair of boats (true margin, in mm: a curve angle at the nearer boat's radius):
- a true tie (under TIE_RESOLUTION_MM, no camera can part them) is called
  "equidistant within measurement", lighter boat first (When Equidistant);
- a clear pair (apart by CLEAR_MM, or by 4 sigma of the referee's own difference)
  gets a confident call in the true order, and the ranking follows it;
- in between, a confident call must still be right, and an equidistant pair that
  forms its own group goes lighter boat first.

Course pieces outside the picture come from the course file's layout (as on the
live page), with their wider sigma.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from referee.tornado.ranking import EQUIDISTANT
from referee.tornado.standings import TornadoGame, assess
from tests import tornado_oracle as oracle

SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "tornado"
# Two boats this far apart on the table are told apart by any working camera set-up,
# whatever sigma the referee reports (the samples' worst pair difference error is ~2.5 mm).
CLEAR_MM = 20.0
MEASURE_SIGMAS = 3.0
CLEAR_SIGMAS = 4.0

COUNT_KEYS = ("images", "images_ranked", "refused", "boats", "boats_checked", "zone_errors", "unranked",
              "measure_beyond_3_sigma", "finish_wrong", "pairs_tie", "pairs_clear", "pairs_between",
              "tie_called_confident", "clear_called_equidistant", "wrong_confident_calls", "order_errors",
              "weight_order_errors")


def _check_boats(stem, truth, got, course, tb, counts, notes):
    """Zone, measure and finish of each boat the referee reports, against the truth."""
    poses = {p["name"]: p for p in truth["pieces"]}
    for b in got.boats:
        counts["boats"] += 1
        t = tb.get(b.name)
        if t is None or t.zone is None:
            notes.append(f"{stem}: {b.name} not checked: {t.why if t else 'not in the truth'}")
            continue
        counts["boats_checked"] += 1
        if b.zone_index is None or b.rank is None:
            counts["unranked"] += 1
            notes.append(f"{stem}: {b.name} not ranked ({b.status}: {b.how}); truth zone {t.zone}")
            continue
        if b.zone_index != t.zone:
            counts["zone_errors"] += 1
            notes.append(f"{stem}: {b.name} in zone {b.zone_index}, truth {t.zone} ({t.why})")
            continue
        err = b.measure.value - t.measure
        if abs(err) > MEASURE_SIGMAS * b.measure.sigma:
            counts["measure_beyond_3_sigma"] += 1
            notes.append(f"{stem}: {b.name} measure {b.measure.value:.3f} +- {b.measure.sigma:.3f}, "
                         f"truth {t.measure:.3f} ({abs(err) / max(b.measure.sigma, 1e-12):.1f} sigma off)")
        fin = oracle.finished(course, t, poses[b.name], truth)
        if fin is not None and b.finished is not fin:
            counts["finish_wrong"] += 1
            notes.append(f"{stem}: {b.name} finished={b.finished}, truth {fin}")


def _pair_class(course, ta, tb_, call, got) -> str:
    """tie / clear / between, from the truth (and the referee's sigma of the difference)."""
    if ta.zone == tb_.zone:
        gap_mm = oracle.margin_mm(ta, tb_)
        if gap_mm < oracle.TIE_RESOLUTION_MM:
            return "tie"
        sigma = call.sigma if call.kind != "zone" else 0.0
        beyond = sigma > 0 and abs(ta.measure - tb_.measure) >= CLEAR_SIGMAS * sigma
        return "clear" if gap_mm >= CLEAR_MM or beyond else "between"
    front, behind = (ta, tb_) if ta.zone > tb_.zone else (tb_, ta)
    if front.zone - behind.zone > 1:
        return "clear"
    gap = oracle.line_gap(course, front, behind)
    sa, sb = got.boat(ta.name).sigma_mm, got.boat(tb_.name).sigma_mm
    return "clear" if gap >= CLEAR_MM or gap >= CLEAR_SIGMAS * math.hypot(sa, sb) else "between"


def _check_pairs(stem, got, course, tb, counts, notes):
    """Every pairwise call and the ranking's order, against the truth."""
    ranking = got.ranking()
    by = {b.name: b for b in got.boats}
    for c in got.calls:
        ta, tb_ = tb.get(c.ahead), tb.get(c.behind)
        if ta is None or tb_ is None or ta.zone is None or tb_.zone is None:
            continue
        if by[c.ahead].zone_index != ta.zone or by[c.behind].zone_index != tb_.zone:
            continue  # already counted as a zone error
        kind = _pair_class(course, ta, tb_, c, got)
        counts[f"pairs_{kind}"] += 1
        first, second = (ta, tb_) if oracle.truly_ahead(ta, tb_) else (tb_, ta)
        what = (f"{stem}: {c.ahead} vs {c.behind} ({kind}, true gap "
                f"{oracle.margin_mm(ta, tb_) if ta.zone == tb_.zone else 'zones'}): {c.verdict}, "
                f"delta {c.delta:.3f} +- {c.sigma:.3f}")
        equidistant = c.verdict == EQUIDISTANT
        if kind == "tie" and not equidistant:
            counts["tie_called_confident"] += 1
            notes.append(what + "; truth: a tie")
        if kind == "clear" and equidistant:
            counts["clear_called_equidistant"] += 1
            notes.append(what + f"; truth: {first.name} clearly ahead")
        if not equidistant and kind != "tie":
            if c.ahead != first.name:
                counts["wrong_confident_calls"] += 1
                notes.append(what + f"; WRONG: truth {first.name} ahead")
            elif ranking.index(first.name) > ranking.index(second.name):
                counts["order_errors"] += 1
                notes.append(what + f"; ranking {ranking} puts it the other way")
        if equidistant and by[c.ahead].equidistant_with == (c.behind,) and by[c.behind].equidistant_with == (c.ahead,):
            # a group of two: When Equidistant, the lower weight goes first
            light, heavy = sorted((c.ahead, c.behind), key=lambda n: (oracle.default_weight(n), n))
            if ranking.index(light) > ranking.index(heavy):
                counts["weight_order_errors"] += 1
                notes.append(what + f"; ranking {ranking}: the lighter {light} must go first")


def score_samples(folder: Path = SAMPLES, use_camera: bool = True) -> dict:
    """Run every sample still; returns the counts and per-image notes.

    use_camera: observe with the sample's camera (as after `refcam calibrate`), or
    without a camera file (focal length estimated, sigma widened by the pipeline)."""
    from calibration.camera import CameraModel
    from referee.errors import RefcamError
    from vision.imageio import load_image
    from vision.pipeline import observe

    counts = dict.fromkeys(COUNT_KEYS, 0)
    notes = []
    for truth_path in sorted(folder.glob("*.truth.json")):
        stem = truth_path.name.split(".")[0]
        image_path = folder / f"{stem}.jpg"
        if not image_path.exists():
            continue
        truth = json.loads(truth_path.read_text())
        counts["images"] += 1
        course, tb = oracle.true_boats(truth)
        game = TornadoGame.make(truth.get("course") or "tornado-circuit")
        camera = CameraModel.from_json(truth["camera"], "truth camera") if use_camera else None
        try:
            got = assess(game, observe(load_image(image_path), camera, game="tornado"), nominal_fallback=True)
        except RefcamError as exc:
            counts["refused"] += 1
            notes.append(f"{stem}: refused: {exc}")
            continue
        counts["images_ranked"] += 1
        _check_boats(stem, truth, got, course, tb, counts, notes)
        _check_pairs(stem, got, course, tb, counts, notes)
    return {"counts": counts, "notes": notes}


@pytest.mark.slow
@pytest.mark.parametrize("use_camera", [True, False], ids=["camera-file", "no-camera-file"])
def test_no_wrong_confident_calls_on_the_samples(use_camera):
    if not SAMPLES.is_dir() or not any(SAMPLES.glob("*.truth.json")):
        pytest.skip("samples/tornado is not rendered yet (make samples)")
    pytest.importorskip("vision.pipeline")
    result = score_samples(use_camera=use_camera)
    counts = result["counts"]
    print(f"tornado samples ({'camera file' if use_camera else 'no camera file'}):", json.dumps(counts))
    for n in result["notes"]:
        print("  ", n)
    # every still ranked, and the truth has ties, clear pairs and boats to check in it
    assert counts["images_ranked"] == counts["images"] > 0
    assert counts["boats_checked"] >= 30 and counts["pairs_tie"] >= 1 and counts["pairs_clear"] >= 20
    failures = {k: counts[k] for k in ("zone_errors", "unranked", "measure_beyond_3_sigma", "finish_wrong",
                                       "tie_called_confident", "clear_called_equidistant", "wrong_confident_calls",
                                       "order_errors", "weight_order_errors") if counts[k]}
    assert not failures, failures


if __name__ == "__main__":  # python -m tests.test_tornado_samples [FOLDER]
    import sys

    for cam in (True, False):
        out = score_samples(Path(sys.argv[1]) if len(sys.argv) > 1 else SAMPLES, use_camera=cam)
        print("camera file" if cam else "no camera file", json.dumps(out["counts"]))
        for n in out["notes"]:
            print("  ", n)


def test_photo_finish_maps_the_game_frame_onto_the_photo():
    if not SAMPLES.is_dir() or not any(SAMPLES.glob("*.truth.json")):
        pytest.skip("samples/tornado is not rendered yet (make samples)")
    pytest.importorskip("vision.pipeline")
    from calibration.camera import CameraModel
    from vision.imageio import load_image
    from referee.tornado.picture import photo_finish
    from webui.photofinish import render_explanation
    from webui.tools import observe_image

    truth_path = sorted(SAMPLES.glob("*.truth.json"))[0]
    truth = json.loads(truth_path.read_text())
    image = load_image(SAMPLES / truth_path.name.replace(".truth.json", ".jpg"))
    camera = CameraModel.from_json(truth["camera"], "truth camera")
    obs = observe_image(image, camera, "tornado")
    mapping = obs.image_from_game
    assert mapping is not None
    # every visible flat sticker of the truth lands within a few pixels of where the mapping puts it
    errors = []
    for st in truth["stickers"]:
        if not st["visible"] or st["z_mm"] > 2.0:
            continue
        x, y = (sum(c[0] for c in st["corners_mm"]) / 4, sum(c[1] for c in st["corners_mm"]) / 4)
        errors.append(math.dist(mapping.project([(x, y)])[0], st["centre_px"]))
    print("photo finish mapping error px: max", round(max(errors), 2), "of", len(errors), "stickers")
    assert errors and max(errors) < 4.0, errors
    explanation = photo_finish(assess(TornadoGame.make(truth["course"]), obs, nominal_fallback=True))
    picture, note = render_explanation(explanation, image, obs)
    assert note is None and picture.shape[1] > 640  # the picture and its text panel


def test_live_referee_on_the_sample_session():
    """The bundled Tornado session: one stable frame per position through observe and
    the live referee (course pieces out of view come from the layout)."""
    folder = SAMPLES.parent / "sessions" / "tornado"
    if not (folder / "manifest.jsonl").exists():
        pytest.skip("samples/sessions/tornado is not rendered yet (make samples)")
    pytest.importorskip("vision.pipeline")
    from calibration.camera import CameraModel
    from referee.tornado.referee import TornadoReferee
    from vision.imageio import load_image
    from vision.pipeline import observe
    from vision.session import read_session

    session = read_session(folder)
    camera = CameraModel.load(session.camera_file) if session.camera_file else None
    truth = session.truth()
    referee = TornadoReferee(session.header.get("course") or "tornado-circuit")
    rulings, seen, events = [], set(), []
    for frame, t in zip(session.frames, truth):
        if not t.get("stable") or t["position"] in seen:
            continue
        seen.add(t["position"])
        if t.get("event"):
            events.append(t["event"])
        rulings += referee.observe_stable(observe(load_image(frame.path), camera, game="tornado"), frame.t)
    state = referee.state_json()
    print("session rulings:", [f"{r.kind}: {r.summary}" for r in rulings if r.kind != "warning"])
    assert not [r for r in rulings if r.kind == "violation"]  # every move in the script is legal
    movers = [e["piece"].split("/")[-1] for e in events]
    # Ending the Action Phase: a round ends once its last-ranked boat has acted. Round 1
    # (boat-1, boat-2 by weight): boat-1, boat-2; round 2 (boat-2 ahead): boat-1, the last,
    # acts, so boat-2 passed; round 3: boat-2.
    assert movers == ["boat-1", "boat-2", "boat-1", "boat-2"] and state["round"] == 3
    truth_last = {p["name"]: p for p in truth[-1]["pieces"] if p["name"].startswith("tornado/boat-")}
    ranked = [b["name"] for b in state["ranking"] if b["rank"]]
    assert set(ranked) == set(truth_last)
    for b in state["ranking"]:
        if b["rank"] and not b["equidistant_with"]:
            others = [o for o in state["ranking"] if o["rank"] and o["rank"] > b["rank"]]
            assert all(truth_last[b["name"]]["x_mm"] > truth_last[o["name"]]["x_mm"] for o in others)


def test_referee_on_the_true_poses_matches_the_hand_computation():
    """Without the camera: the referee fed the exact truth poses finds each boat's zone and
    measure as tests/tornado_oracle.py works them out, and ranks in that order."""
    from referee.observation import Observation, PiecePose

    truths = sorted(SAMPLES.glob("*.truth.json"))
    if not truths:
        pytest.skip("samples/tornado is not rendered yet (make samples)")
    checked = 0
    for truth_path in truths:
        truth = json.loads(truth_path.read_text())
        pieces = tuple(PiecePose(name=p["name"], marker_ids=tuple(p.get("marker_ids") or ()), x_mm=p["x_mm"],
                                 y_mm=p["y_mm"], theta_deg=p["theta_deg"], z_mm=p.get("z_mm", 0.0), sigma_mm=1e-6,
                                 sigma_theta_deg=1e-6, face=p.get("face")) for p in truth["pieces"])
        got = assess(TornadoGame.make(truth["course"]),
                     Observation(pieces, frame={"anchor": "tornado/start-gate"}, game="tornado"))
        _, tb = oracle.true_boats(truth)
        for b in got.boats:
            t = tb[b.name]
            assert t.zone is not None, (truth_path.name, t)
            assert (b.zone_index, b.zone_kind) == (t.zone, t.kind), (truth_path.name, b.name, b.how, t.why)
            assert b.measure.value == pytest.approx(t.measure, abs=1e-6), (truth_path.name, b.name)
            checked += 1
        expected = sorted(tb, key=lambda n: (-tb[n].zone, tb[n].measure))
        assert got.ranking() == expected, truth_path.name
    assert checked >= 40
