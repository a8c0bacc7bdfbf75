"""`refcam rank IMAGE [IMAGE ...]`: Tornado Splash ranking, finish crossings, hand sizes, and the photo finish.

Several photos of the same still table (or a folder of them) are fused into one less noisy
picture before the read (the command line's Tools.observe_photos). IMAGE may also be an
observation JSON file (what `refcam observe --json` prints),
which ranks without any vision step. Vision and drawing come from the command line's
Tools (referee/game.py), so nothing here needs cv2.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from referee import safeload
from referee.errors import InvalidInputError
from referee.game import Command, Tools
from referee.paths import refuse_overwriting_inputs
from referee.rulings import CANNOT_TELL, sigma_text

from . import picture
from .dispute import completeness, course_for, parse_boats
from .errors import MissingPiecesError
from .pairs import START_GATE
from .ranking import EQUIDISTANT
from .referee import RULE_END, RULE_RANKING, TornadoReferee
from .rules import headline
from .standings import parse_weights

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp")
GAME_ID = "tornado"


def add_arguments(p) -> None:
    p.add_argument("image", metavar="IMAGE", nargs="+",
                   help="photo of the table, or an observation JSON file; several photos of the same still table "
                        "(a player's quick shots), or a folder of them, are fused into one less noisy picture")
    p.add_argument("--course", default=None, metavar="C",
                   help="course id (tornado-circuit, splashway, roundabout-river, raindrop-road) or a course file; "
                        "without it the course is identified from the pieces in view, or the fitting ones are listed")
    p.add_argument("--weights", default=None, metavar="boat-1=3,...", help="boat weights (default: boat k weighs k)")
    p.add_argument("--boats", default=None, metavar="boat-1,boat-6",
                   help="the boats in play (e.g. 1,2,6): a boat in play but not in view marks the ranking "
                        "incomplete; without it (or --history) completeness is not claimed")
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


def _history_states(entries: list[str], camera_file: str | None, tools: Tools, progress=None):
    """Earlier stable states, oldest first, as (label, t, Observation).

    A session folder (manifest.jsonl) goes through the stable-state tracker, as on
    the live page, so only the table at rest is ruled on; a plain folder or a file
    list counts each image / observation file as one stable state.
    """
    t = 0.0
    for e in entries:
        p = Path(e)
        if p.is_dir() and (p / "manifest.jsonl").exists():
            last = 0.0
            for k, (ts, obs) in enumerate(tools.stable_observations(str(p), camera_file, GAME_ID)):
                last = ts
                if progress is not None:
                    progress(f"reading history {p.name}: stable state {k + 1} at {ts:.1f} s")
                yield f"{p.name} at {ts:.1f} s", t + ts, obs
            t += last + 1.0
            continue
        if p.is_dir():
            files = sorted(f for f in p.iterdir()
                           if f.suffix.lower() in IMAGE_SUFFIXES + (".json",) and not f.name.endswith(
                               (".truth.json", ".scene.json")))
            if not files:
                raise InvalidInputError(f"history folder {e!r} holds no images or observation files")
        else:
            files = [safeload.regular_file(p, "history entry")]  # missing, a FIFO, a device, a loop: one line
        for f in files:
            yield f.name, t, tools.observe_path(str(f), camera_file, GAME_ID)
            t += 1.0


def run(args, tools: Tools, game) -> int:
    if args.annotate and Path(args.annotate).suffix.lower() not in (".png", ".jpg", ".jpeg"):
        raise InvalidInputError(f"--annotate {args.annotate!r}: use a .png or .jpg file name")
    if args.strict and args.assume_layout:
        raise InvalidInputError("--strict and --assume-layout contradict each other: pick one")
    if args.annotate:
        safeload.output_path(args.annotate, "--annotate")  # a FIFO or a device is refused before any work
    refuse_overwriting_inputs("--annotate", args.annotate,
                              [("the image", i) for i in args.image] + [("the camera file", args.camera_file)]
                              + [("the history file", h) for h in args.history or []])
    for e in args.history or []:  # refused before any long work
        if not Path(e).is_dir():
            safeload.regular_file(e, "history entry")
    referee, obs, notes = _referee_for(args, tools)
    # Check the course on the image itself before the (possibly long) history is read.
    try:
        referee.assess(obs)
    except MissingPiecesError as exc:
        raise MissingPiecesError(f"{exc} (--strict refuses pieces out of view; without it they come from the "
                                 "course file's layout)") from None
    referee, history_warnings, states, seen_before = _read_history(referee, args, tools, game)
    result = referee.assess(obs)
    doc = result.to_json()
    if args.history:
        doc["history_states"] = states
        doc["round"] = referee.rounds.round
    doc["complete"], hidden = completeness(obs, parse_boats(args.boats), seen_before,
                                           list(referee.memory.crossed) + list(referee.memory.eliminated),
                                           bool(args.history))
    doc["warnings"] = notes + list(obs.warnings) + history_warnings + doc["warnings"] + hidden
    if doc["game_over"] and doc["complete"] is not True:
        # Ending the Game needs every boat in play placed: a boat out of view may still be racing
        doc["game_over"] = None
    doc["headline"] = rank_headline(doc)
    if args.annotate:
        # several photos are registered on the first: the picture drawn on is the first photo
        first = Path(args.image[0])
        if first.is_dir():
            first = min(f for f in first.iterdir() if f.suffix.lower() in IMAGE_SUFFIXES)
        image = None if first.suffix.lower() == ".json" else str(first)
        note = tools.draw_explanation(picture.photo_finish(result, extra_warnings=hidden), image, obs,
                                      args.annotate, args.camera_file)
        if note:
            doc["warnings"].append(note)
        doc["annotated"] = str(args.annotate)
    print(json.dumps(doc, indent=2) if args.json else format_table(doc))
    return 0


def _referee_for(args, tools: Tools):
    """(referee, observation, notes): the course from --course, or the one the pieces in
    view fit; course pieces out of view from its layout unless --strict."""
    parse_weights(args.weights)  # refuse bad weights and boats, and a bad course, before reading any image
    parse_boats(args.boats)
    if args.course:
        TornadoReferee(args.course, args.weights, nominal_fallback=not args.strict)
    if len(args.image) == 1 and not Path(args.image[0]).is_dir():
        obs = tools.observe_path(args.image[0], args.camera_file, GAME_ID)
    else:
        obs = tools.observe_photos(args.image, args.camera_file, GAME_ID)
    spec, notes = course_for(args.course, obs)
    return TornadoReferee(spec, args.weights, nominal_fallback=not args.strict), obs, notes


def _read_history(referee, args, tools: Tools, game) -> tuple[TornadoReferee, list[str], int, set]:
    """The history through the game's own step, so an illegal turn in it is held as on the
    live page (referee/pending.py: no place or race end follows from it); returns the
    referee after it, its warnings (and pending illegal turns), the states read and the boats seen."""
    warnings: list[str] = []
    states = 0
    seen: set[str] = set()
    state = referee.to_state()

    def progress(message: str) -> None:
        print(f"refcam: {message}", file=sys.stderr, flush=True)

    for label, t, hobs in _history_states(args.history or [], args.camera_file, tools, progress):
        states += 1
        seen |= {p.name for p in hobs.pieces if p.name.startswith("tornado/boat-")}
        step = game.step(state, hobs, t)
        state = step.state
        for r in step.rulings:
            said = r.summary if r.kind == "warning" else f"{r.summary} ({r.rule}: {r.details.get('why', '')})" \
                if r.kind == "pending" else None
            if said is not None and not any(said in w for w in warnings):
                warnings.append(f"history {label}: {said}")
    return TornadoReferee.from_state(state), warnings, states, seen


def _places(doc: dict) -> str:
    return ", ".join(f"{p}. {n.split('/')[-1]}" for n, p in sorted(doc["final_places"].items(), key=lambda kv: kv[1]))


def rank_headline(doc: dict) -> str:
    """The sentence a player reads first: the race's end, or the ranking and whether it is complete."""
    ranked = [b for b in doc["ranking"] if b["rank"] is not None]
    order = "; ".join(f"{b['rank']}. {b['name'].split('/')[-1]}" for b in ranked)
    if doc.get("game_over"):
        return headline("Race over", _places(doc), RULE_END)
    if doc.get("game_over") is None:
        return headline(CANNOT_TELL, f"whether the race is over: the boats in view give {_places(doc)}, but the boats "
                        "in play are not known (give --boats or --history)", RULE_END)
    if not ranked:
        return headline(CANNOT_TELL, "no boat could be ranked (see the warnings)", RULE_RANKING)
    if doc.get("complete") is False:
        return headline("Incomplete", f"{order}; a boat still in the race is not in view (see the warnings)",
                        RULE_RANKING)
    if doc.get("complete") is None:
        return headline("Ranking", f"{order}, of the boats in view; whether another boat is in play cannot be told "
                        "without --boats or --history", RULE_RANKING)
    return headline("Ranking", order, RULE_RANKING)


def format_table(doc: dict) -> str:
    lines = [doc.get("headline") or rank_headline(doc)]
    lines += [f"Tornado Splash ranking, course {doc['course']}" + (" (first round: by boat weight)" if doc.get("first_round") else "")]
    head = f"{'rank':>4}  {'boat':<7} {'zone':<24} {'measure':>22}  {'finished':<17} notes"
    lines += [head, "-" * len(head)]
    lines += [_table_row(b, doc.get("calls", ())) for b in doc["ranking"]]
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
    if doc.get("hand_size"):
        lines.append("hand size: " + ", ".join(f"{k.split('/')[-1]} {v}" for k, v in doc["hand_size"].items()))
    for w in doc.get("warnings", []):
        lines.append(f"warning: {w}")
    if doc.get("annotated"):
        lines.append(f"photo finish written to {doc['annotated']}")
    return "\n".join(lines)


def _table_row(b: dict, calls=()) -> str:
    m = b.get("measure")
    if m:
        unit = "mm" if m["kind"] == "distance_mm" else "deg"
        meas = f"{m['value']:.1f} +- {sigma_text(m['sigma'])} {unit}"
    else:
        meas = "-"
    notes = []
    for n in b.get("equidistant_with", ()):
        gate = any({c["ahead"], c["behind"]} == {b["name"], n} and c["kind"] == START_GATE for c in calls)
        notes.append(f"{'start gate: equal by the rules' if gate else EQUIDISTANT} with {n.split('/')[-1]}")
    if b["status"] not in ("racing", "finished"):
        notes.append(b["status"] + (": " + " or ".join(b["zone_candidates"]) if b.get("zone_candidates") else ""))
    fin = b.get("finished")
    fin = "yes" if fin is True else ("no" if fin is False else str(fin))
    rank = "-" if b["rank"] is None else str(b["rank"])
    return (f"{rank:>4}  {b['name'].split('/')[-1]:<7} {str(b.get('zone') or '-'):<24} {meas:>22}  {fin:<17} "
            + "; ".join(notes))


def rank_command(game) -> Command:
    """`refcam rank`, ruling a --history through ``game``'s own step (the game passes itself)."""
    return Command("rank", "Tornado Splash ranking, finish crossings and hand sizes from one image (or several "
                           "photos of one still table)", add_arguments, lambda args, tools: run(args, tools, game),
                   top_level=True)
