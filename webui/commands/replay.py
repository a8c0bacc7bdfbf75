"""`refcam replay DIR`: rule on a recorded session offline, as fast as possible."""

from __future__ import annotations

import argparse
import sys

from webui.catalog_option import add_catalog_option
from webui.replays import default_detect
from webui.game_flags import add_game_arguments


def register(subparsers) -> None:
    p = subparsers.add_parser("replay", help="rule on a recorded session and print the timeline of rulings",
                              description="Observe every frame of a session folder, find the stable states and "
                                          "print what the referee ruled, in order.")
    p.add_argument("session", metavar="DIR", help="session folder (manifest.jsonl + frames/)")
    add_game_arguments(p, "the game (default: the session's)")
    p.add_argument("--camera-file", metavar="F", help="camera file (default: the session's camera.json)")
    p.add_argument("--quick", action="store_true",
                   help="skip the detector's second look at small stickers (for slow computers)")
    p.add_argument("--detect", choices=("follow", "regions", "whole"), default=default_detect("session"),
                   help="between frames where something moves (searched whole), follow the stickers "
                        "(fast), detect in the regions around them (the same corners as whole frames) or "
                        "search every frame whole (default regions)")
    p.add_argument("--stable-s", type=float, default=0.5, metavar="S", help="calm time before a ruling (default 0.5)")
    p.add_argument("--json", action="store_true", help="print the rulings as one JSON list on stdout")
    add_catalog_option(p)
    p.set_defaults(run=run)


class Progress:
    """A bar on a terminal, a few percentage lines otherwise (stderr)."""

    def __init__(self, total: int, stream=None):
        self.total = max(1, total)
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.last_pct = -1
        self.on_line = False  # a bar is drawn on the terminal's current line

    def update(self, done: int) -> None:
        pct = min(100, int(100 * done / self.total))
        if self.tty:
            if pct != self.last_pct:
                bar = "#" * (pct // 4)
                self.stream.write(f"\rrefcam: replay [{bar:<25}] {pct:3d}% ({done}/{self.total} frames)")
                self.stream.flush()
                self.on_line = True
        elif pct // 10 != self.last_pct // 10 or (pct == 100 and self.last_pct != 100):
            self.stream.write(f"refcam: replay {pct}%\n")
            self.stream.flush()
        self.last_pct = pct

    def end_line(self) -> None:
        """End the bar's line, if one is drawn (an error or a warning then starts a line of its
        own; with no bar, nothing: an error before the first frame used to follow a blank line)."""
        if self.on_line:
            self.stream.write("\n")
            self.stream.flush()
            self.on_line = False

    close = end_line


def replay_session(folder, game=None, options=None, camera=None, stable_s=0.5, observe=None,
                   progress=None, on_warning=None, thorough=True,
                   detect=None) -> tuple[list[dict], str]:
    """Every ruling of a session, in order, as JSON dicts (each with the frame it came from); and the game.

    options: the game's option texts by name (e.g. from --course); an option the game lacks is refused."""
    from referee.registry import game_ids, get_game
    from vision.sources import SessionSource
    from vision.tracking import TrackerSettings
    from webui.game_flags import settings_for
    from webui.live import LiveEngine, LiveSettings, tracking_observe

    source = SessionSource(folder, realtime=False)
    if game:
        check_pieces_game(folder, game)
    game = game or source.info.game or game_ids()[0]
    options, notes = session_options(folder, get_game(game), source.session.header, dict(options or {}))
    for note in notes:
        if on_warning:
            on_warning(note)
    settings_for(get_game(game), options)  # refuse bad settings before the long part
    if camera is None and source.info.camera_file is not None:
        from calibration.camera import CameraModel

        camera = CameraModel.load(source.info.camera_file)
    if camera is not None and source.info.frame_size is not None:
        camera.check_image_size(*source.info.frame_size)  # the message names the file it was loaded from
    settings = LiveSettings(game=game, options=dict(options or {}), camera=camera,
                            tracker=TrackerSettings(stable_s=stable_s), stream=False)
    if observe is None:
        observe = tracking_observe(thorough=thorough, mode=detect or default_detect("session"))
    engine = LiveEngine(source, observe, settings)
    events = engine.events.subscribe()
    timeline: list[dict] = []
    frames = {"n": 0}

    def drain() -> None:
        while True:
            ev = events.get(timeout=0)
            if ev is None:
                break
            if ev["type"] == "ruling":
                timeline.append(dict(ev["ruling"], frame=source.frame_name))
            elif ev["type"] == "warning" and on_warning:
                on_warning(ev["message"])

    def after_frame() -> None:
        frames["n"] += 1
        drain()
        if progress:
            progress.update(frames["n"])

    engine.play(after_frame)  # the loop the live page's engine runs, as fast as the frames come
    drain()  # declarations after the last frame; a bad frame at the very end, reported as the source finishes
    return timeline, game


def session_options(folder, game, header: dict, options: dict) -> tuple[dict, list[str]]:
    """A session's own settings, for each option of the game not given on the command line:
    a file named after the option in the session folder (``course.json`` for ``--course``),
    else the session header's text under the option's name. Returns (options, notes saying
    which were taken from the session)."""
    from pathlib import Path

    out, notes = dict(options), []
    for option in game.options:
        if out.get(option.name) not in (None, ""):
            continue
        own = Path(folder) / f"{option.name}.json"
        if own.is_file():
            out[option.name] = str(own)
            notes.append(f"{option.flag} not given: the session's own {own.name} is used")
        elif isinstance(header.get(option.name), str):
            out[option.name] = header[option.name]
            notes.append(f"{option.flag} not given: the session's {option.name} {header[option.name]!r} is used")
    return out, notes


def check_pieces_game(folder, game: str, frames_to_look: int = 3) -> None:
    """Refuse a --game whose pieces are not on the table: the stickers of the session's first frames
    say whose pieces these are (a piece's name starts with its game's id)."""
    import collections

    from referee.catalog import default_catalog
    from referee.errors import InvalidInputError
    from referee.registry import game_ids, get_game
    from vision import detect
    from vision.imageio import load_image
    from vision.session import read_session

    catalog = default_catalog()
    known = set(game_ids())
    for entry in read_session(folder).frames[:frames_to_look]:
        found = detect.detect_all(load_image(entry.path), catalog, second_pass=False)
        owners = collections.Counter()
        for d in found.detections:
            sticker = catalog.sticker(d.marker_id)
            prefix = sticker.piece.split("/", 1)[0] if sticker is not None else ""
            if prefix in known:  # table stickers ("table/...") belong to no game
                owners[prefix] += 1
        if not owners:
            continue
        if game in owners:
            return
        theirs = owners.most_common(1)[0][0]
        title = get_game(theirs).title
        raise InvalidInputError(f"--game {game}: these are {title} pieces (stickers of {theirs}/... in {entry.path.name}); "
                                f"use --game {theirs}, or leave --game out")


def run(args: argparse.Namespace) -> int:
    import json

    from calibration.camera import CameraModel
    from referee.errors import InvalidInputError
    from vision.session import read_session
    from webui.game_flags import option_texts

    if not (0.0 <= args.stable_s <= 30.0):  # the same bounds as `refcam serve`
        raise InvalidInputError(f"--stable-s {args.stable_s} must be between 0 and 30 seconds")
    camera = CameraModel.load(args.camera_file) if args.camera_file else None
    total = len(read_session(args.session).frames)
    progress = Progress(total)
    warnings: list[str] = []

    def warn(message: str) -> None:
        warnings.append(message)
        progress.end_line()
        print(f"refcam: warning: {message}", file=sys.stderr)

    try:
        timeline, game = replay_session(args.session, game=args.game, options=option_texts(args),
                                        camera=camera, stable_s=args.stable_s, progress=progress, on_warning=warn,
                                        thorough=not args.quick, detect=args.detect)
    finally:
        progress.close()
    if args.json:
        print(json.dumps(timeline))
        return 0
    print(replay_verdict(timeline, game))
    for r in timeline:
        verdict = {True: "LEGAL  ", False: "ILLEGAL", None: "       "}[r.get("legal")]
        rule = f"  [{r['rule']}]" if r.get("rule") else ""
        print(f"{r['t']:8.2f} s  {verdict}  {r['summary']}{rule}")
    return 0


def replay_verdict(timeline: list[dict], game: str) -> str:
    """The first line a player reads: what the session's rulings came to, by verdict."""
    from referee.rulings import Ruling, cannot_tell

    if not timeline:
        return f"No rulings: the {game} session never settled into a new stable state."
    legal = sum(r.get("legal") is True for r in timeline)
    illegal = sum(r.get("legal") is False for r in timeline)
    unsure = sum(cannot_tell(Ruling.from_json(r)) for r in timeline)
    pending = any(r.get("kind") == "pending" for r in timeline[-1:])
    end = "; the game ends held at an illegal turn" if pending else ""
    return (f"Replayed: {len(timeline)} rulings: {legal} legal, {illegal} illegal, {unsure} cannot tell{end}.")
