"""`refcam rank IMAGE`: Tornado Splash ranking, finish crossings, hand sizes, and the photo finish.

IMAGE may also be an observation JSON file (what `refcam observe --json` prints),
which ranks without any vision step.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from referee.errors import InvalidInputError

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp")


def register(subparsers) -> None:
    p = subparsers.add_parser("rank", help="Tornado Splash ranking, finish crossings and hand sizes from one image",
                              description="Rank the Tornado Splash boats in IMAGE (or an observation JSON file): "
                                          "zones, distances or angles with their uncertainty, finish crossings, "
                                          "hand sizes, and optionally the annotated photo finish.")
    p.add_argument("image", metavar="IMAGE", help="photo of the table, or an observation JSON file")
    p.add_argument("--course", default=None, metavar="C",
                   help="course id (tornado-circuit, splashway, roundabout-river, raindrop-road) or a course file; "
                        "without it the course is identified from the pieces in view, or the fitting ones are listed")
    p.add_argument("--weights", default=None, metavar="boat-1=3,...", help="boat weights (default: boat k weighs k)")
    p.add_argument("--camera-file", default=None, metavar="F", help="camera file from `refcam calibrate`")
    p.add_argument("--annotate", default=None, metavar="OUT.png", help="write the annotated photo finish here")
    p.add_argument("--history", nargs="+", default=None, metavar="DIR_OR_FILE",
                   help="earlier images / observation files of the same race, oldest first, or a folder of them")
    p.add_argument("--strict", action="store_true",
                   help="refuse an image whose course pieces are not all in view (by default pieces out of view "
                        "come from the course file's layout, with a wider sigma and a warning naming each)")
    p.add_argument("--assume-layout", action="store_true",
                   help="the default now (kept for old scripts): course pieces out of view come from the layout")
    p.add_argument("--json", action="store_true", help="print the rank document as JSON")
    p.set_defaults(run=run)


def _load_observation(path: str, camera):
    """(observation, image or None, the image's sticker detections or None)."""
    from referee.observation import Observation

    p = Path(path)
    if p.suffix.lower() == ".json":
        try:
            doc = json.loads(p.read_text())
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"observation file {path!r} is not valid JSON (line {exc.lineno})") from None
        if isinstance(doc, dict) and "observation" in doc and "pieces" not in doc:
            doc = doc["observation"]
        if not isinstance(doc, dict) or "pieces" not in doc:
            raise InvalidInputError(f"observation file {path!r} has no 'pieces' list")
        try:
            return Observation.from_json(doc), None, None
        except InvalidInputError as exc:
            raise InvalidInputError(f"observation file {path!r}: {exc}") from None
    from referee.catalog import default_catalog
    from vision.detect import detect_all
    from vision.imageio import load_image
    from vision.pipeline import observe

    image = load_image(p)
    found = detect_all(image, default_catalog())  # once: the photo finish reuses it
    return observe(image, camera, game="tornado", detections=found), image, found


def _history_states(entries: list[str], camera, progress=None):
    """Earlier stable states, oldest first, as (label, t, Observation).

    A session folder (manifest.jsonl) goes through the stable-state tracker, as on
    the live page, so only the table at rest is ruled on; a plain folder or a file
    list counts each image / observation file as one stable state.
    """
    t = 0.0
    for e in entries:
        p = Path(e)
        if p.is_dir() and (p / "manifest.jsonl").exists():
            from vision.session import read_session
            from vision.tracking import StableStateTracker

            session = read_session(p)
            cam = camera
            if cam is None and session.camera_file is not None:
                from calibration.camera import CameraModel

                cam = CameraModel.load(session.camera_file)
            tracker = StableStateTracker()
            for k, frame in enumerate(session.frames):
                if progress is not None:
                    progress.update(p.name, k + 1, len(session.frames))
                obs, _, _ = _load_observation(str(frame.path), cam)
                update = tracker.update(obs, frame.t)
                if update.new_stable is not None:
                    yield f"{p.name}/{frame.path.name}", t + frame.t, update.new_stable
            t += (session.frames[-1].t if session.frames else 0.0) + 1.0
            continue
        if p.is_dir():
            files = sorted(f for f in p.iterdir()
                           if f.suffix.lower() in IMAGE_SUFFIXES + (".json",) and not f.name.endswith(
                               (".truth.json", ".scene.json")))
            if not files:
                raise InvalidInputError(f"history folder {e!r} holds no images or observation files")
        elif p.is_file():
            files = [p]
        else:
            raise InvalidInputError(f"history entry {e!r} does not exist")
        for f in files:
            obs, _, _ = _load_observation(str(f), camera)
            yield f.name, t, obs
            t += 1.0


def run(args) -> int:
    from referee.tornado.errors import MissingPiecesError
    from webui.paths import refuse_overwriting_inputs

    if args.annotate and Path(args.annotate).suffix.lower() not in (".png", ".jpg", ".jpeg"):
        raise InvalidInputError(f"--annotate {args.annotate!r}: use a .png or .jpg file name")
    if args.strict and args.assume_layout:
        raise InvalidInputError("--strict and --assume-layout contradict each other: pick one")
    refuse_overwriting_inputs("--annotate", args.annotate,
                              [("the image", args.image), ("the camera file", args.camera_file)]
                              + [("the history file", h) for h in args.history or []])
    _check_history_entries(args.history or [])
    camera = None
    if args.camera_file:
        from calibration.camera import CameraModel

        camera = CameraModel.load(args.camera_file)
    referee, obs, image, found, course_notes = _referee_for(args, camera)
    # Check the course on the image itself before the (possibly long) history is read.
    try:
        referee.assess(obs)
    except MissingPiecesError as exc:
        raise MissingPiecesError(f"{exc} (--strict refuses pieces out of view; without it they come from the "
                                 "course file's layout)") from None
    history_warnings, states, seen_before = _read_history(referee, args.history or [], camera)
    result = referee.assess(obs)
    doc = result.to_json()
    if args.history:
        doc["history_states"] = states
        doc["round"] = referee.rounds.round
    hidden = _hidden_notes(obs, seen_before, referee)
    doc["complete"] = not any(n.startswith("ranking incomplete") for n in hidden)
    doc["warnings"] = course_notes + list(obs.warnings) + history_warnings + doc["warnings"] + hidden
    if args.annotate:
        from webui.photofinish import write_photo_finish

        note = write_photo_finish(result, args.annotate, image=image, observation=obs, camera=camera,
                                  detections=found)
        if note:
            doc["warnings"].append(note)
        doc["annotated"] = str(args.annotate)
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        print(format_table(doc))
    return 0


def _check_history_entries(entries: list[str]) -> None:
    """Refuse a history entry that does not exist before any long work."""
    for e in entries:
        if not Path(e).exists():
            raise InvalidInputError(f"history entry {e!r} does not exist")


def _referee_for(args, camera):
    """(referee, observation, image, detections, notes): the course from --course, or the one
    the pieces in view fit; course pieces out of view from its layout unless --strict."""
    from referee.tornado.api import TornadoReferee
    from referee.tornado.dispute import course_for

    from referee.tornado.standings import parse_weights

    parse_weights(args.weights)  # refuse bad weights, and a bad course, before reading any image
    if args.course:
        TornadoReferee(args.course, args.weights, nominal_fallback=not args.strict)
    obs, image, found = _load_observation(args.image, camera)
    spec, notes = course_for(args.course, obs)
    return TornadoReferee(spec, args.weights, nominal_fallback=not args.strict), obs, image, found, notes


def _read_history(referee, entries: list[str], camera) -> tuple[list[str], int, set]:
    warnings: list[str] = []
    states = 0
    seen: set[str] = set()
    progress = _HistoryProgress()
    for label, t, hobs in _history_states(entries, camera, progress):
        states += 1
        seen |= {p.name for p in hobs.pieces if p.name.startswith("tornado/boat-")}
        for r in referee.observe_stable(hobs, t):
            if r.kind == "warning" and not any(r.summary in w for w in warnings):
                warnings.append(f"history {label}: {r.summary}")
    progress.close()
    return warnings, states, seen


def _hidden_notes(obs, seen_before: set, referee) -> list[str]:
    from referee.tornado.dispute import hidden_boat_notes

    gone = list(referee.memory.crossed) + list(referee.memory.eliminated)
    return hidden_boat_notes(obs, seen_before, gone)


class _HistoryProgress:
    """Progress on stderr while a long history is read: a line every 10 % of a session's frames."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.shown = -1

    def update(self, label: str, done: int, total: int) -> None:
        pct = int(100 * done / max(total, 1))
        if total >= 20 and pct // 10 != self.shown // 10:
            self.stream.write(f"refcam: reading history {label}: {pct}% ({done}/{total} frames)\n")
            self.stream.flush()
            self.shown = pct

    def close(self) -> None:
        self.shown = -1


def format_table(doc: dict) -> str:
    lines = [f"Tornado Splash ranking, course {doc['course']}" + (" (first round: by boat weight)" if doc.get("first_round") else "")]
    head = f"{'rank':>4}  {'boat':<7} {'zone':<24} {'measure':>22}  {'finished':<17} notes"
    lines += [head, "-" * len(head)]
    for b in doc["ranking"]:
        m = b.get("measure")
        if m:
            unit = "mm" if m["kind"] == "distance_mm" else "deg"
            meas = f"{m['value']:.1f} +- {m['sigma']:.1f} {unit}"
        else:
            meas = "-"
        notes = []
        if b.get("equidistant_with"):
            notes.append("equidistant within measurement with " + ", ".join(n.split("/")[-1] for n in b["equidistant_with"]))
        if b["status"] not in ("racing", "finished"):
            notes.append(b["status"] + (": " + " or ".join(b["zone_candidates"]) if b.get("zone_candidates") else ""))
        fin = b.get("finished")
        fin = "yes" if fin is True else ("no" if fin is False else str(fin))
        rank = "-" if b["rank"] is None else str(b["rank"])
        lines.append(f"{rank:>4}  {b['name'].split('/')[-1]:<7} {str(b.get('zone') or '-'):<24} {meas:>22}  {fin:<17} "
                     + "; ".join(notes))
    if doc.get("pairs"):
        lines.append("why this order (D: measured difference, sD: its sigma, band = 2 sD):")
        for p in doc["pairs"]:
            a, b = p["ahead"].split("/")[-1], p["behind"].split("/")[-1]
            if p["kind"] in ("zone", "start gate"):
                lines.append(f"  {a} before {b}: {p['reason']}")
            else:
                unit = "mm" if p["kind"] == "distance_mm" else "deg"
                lines.append(f"  {a} before {b}: D {p['delta']:+.2f} {unit}, sD {p['sigma_delta']:.2f}, "
                             f"band {p['band']:.2f}: {p['reason']}")
    if doc.get("complete") is False:
        lines.append("ranking INCOMPLETE: a boat still in the race is not in view (see the warnings)")
    if doc.get("hand_size"):
        lines.append("hand size: " + ", ".join(f"{k.split('/')[-1]} {v}" for k, v in doc["hand_size"].items()))
    if doc.get("game_over"):
        lines.append("race over: " + ", ".join(f"{p}. {n.split('/')[-1]}" for n, p in
                                               sorted(doc["final_places"].items(), key=lambda kv: kv[1])))
    for w in doc.get("warnings", []):
        lines.append(f"warning: {w}")
    if doc.get("annotated"):
        lines.append(f"photo finish written to {doc['annotated']}")
    return "\n".join(lines)
