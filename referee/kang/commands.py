"""Kang's own commands: ``refcam kang state|check|replay|perft`` (SPEC section 4).

They run on what the command line lends them (referee.game.Tools): an Observation from an
image or an observation file, and a recorded session's stable observations. No cv2 here.
"""

from __future__ import annotations

import argparse
import json
import os
import re

from .. import safeload
from ..errors import InvalidInputError, RefcamError
from ..game import Command
from ..observation import Observation
from .board import read_board
from .explain import RULES
from .judge import judge_change
from .moves import perft
from .position import Position, PositionError
from .sequences import Target

# Declared ranges for what a user types: a position string is about 40 characters; depth 12
# already takes minutes (tests/bench/kang.py), and the counts grow about twentyfold per ply.
MAX_POSITION_CHARS = 200
MAX_PERFT_DEPTH = 12
MAX_PERFT_POSITIONS = 1e7  # about a minute of counting on one core


def _common(p: argparse.ArgumentParser, image: bool = True) -> None:
    p.add_argument("--json", action="store_true", help="print one JSON document")
    if image:
        p.add_argument("--camera-file", default=None, metavar="F", help="camera file from `refcam calibrate`")


def _print(args, doc: dict, lines: list[str]) -> None:
    print(json.dumps(doc, indent=1) if args.json else "\n".join(lines))


# --- kang state ---------------------------------------------------------------------------------
def _state_args(p):
    p.add_argument("image", metavar="IMAGE", help="photo of the table, or an observation JSON file")
    _common(p)


def _observe(tools, path: str, camera_file) -> Observation:
    return _kang_board(tools.observe_path(path, camera_file, "kang"), path)


def _kang_board(obs: Observation, path: str) -> Observation:
    if obs.game not in (None, "kang") or obs.piece("kang/board") is None and obs.frame.get("anchor") != "kang/board":
        raise InvalidInputError(f"{path!r} shows no Kang board (no board-corner sticker found)")
    return obs


def board_table(rows: list[str], zones: dict) -> list[str]:
    out = [f"  zone B: {_zone(zones['B'])}"]
    out += [f"{6 - k}  {' '.join(row)}" for k, row in enumerate(rows)]
    out += ["   a b c d e f", f"  zone A: {_zone(zones['A'])}"]
    return out


def _zone(z: dict) -> str:
    return " ".join(f"{n}{s}" for s, n in z.items() if n) or "empty"


def run_state(args, tools) -> int:
    read = read_board(_observe(tools, args.image, args.camera_file))
    doc = read.to_json()
    problems = read.problems()
    on_board = sum(cell != "." for row in doc["board"] for cell in row)
    # the verdict first: is the board read whole, then the board itself
    head = (f"Cannot tell the whole board: {len(problems)} kangaroo{'s' * (len(problems) != 1)} not placed (below)"
            if problems else f"Board read: every kangaroo placed, {on_board} on the board")
    lines = [head + "."] + board_table(doc["board"], doc["start_zone"])
    lines += [f"cannot judge: {p}" for p in problems] or ["every kangaroo placed"]
    _print(args, doc, lines)
    return 0


# --- kang check ---------------------------------------------------------------------------------
SIDE_FORMS = ("an image, an observation file, a JSON position file, a position string "
              "(e.g. '6/6/6/6/6/6 ssmmll ssmmll A 0-0 -') or 'start'")


def _check_args(p):
    p.add_argument("before", metavar="BEFORE", help=f"the table before: {SIDE_FORMS}")
    p.add_argument("after", metavar="AFTER", help="the same after the turn(s)")
    _common(p)


def _load_side(tools, path: str, camera_file, label: str):
    """(position or layout, problems, image size) from a position (string, 'start' or JSON
    file), an observation file or an image."""
    if path == "start" or (" " in path.strip() and "/" in path and not os.path.exists(path)):
        try:
            return load_position(path), [], None
        except PositionError as exc:
            raise PositionError(f"{label} {exc}; {label} is {SIDE_FORMS}") from None
    if path.lower().endswith(".json"):
        doc = safeload.load_json(path, "position file", PositionError)  # regular file, size, depth, numbers
        if isinstance(doc, dict) and "board" in doc and "pieces" not in doc:
            try:
                return Position.from_json(doc), [], None
            except PositionError as exc:
                raise PositionError(f"{path}: {exc}") from None
    try:
        obs = tools.observe_path(path, camera_file, "kang")
    except RefcamError:
        if os.path.exists(path):
            raise
        raise InvalidInputError(f"{label} {safeload.show(path)} is no file and no position: it is {SIDE_FORMS}") \
            from None
    read = read_board(_kang_board(obs, path))
    return read.layout(), read.problems(), obs.image_size


def run_check(args, tools) -> int:
    before, why_b, size_b = _load_side(tools, args.before, args.camera_file, "BEFORE")
    after, why_a, size_a = _load_side(tools, args.after, args.camera_file, "AFTER")
    if size_b and size_a and tuple(size_b) != tuple(size_a):
        raise InvalidInputError(f"BEFORE {args.before!r} is {size_b[0]}x{size_b[1]} but AFTER {args.after!r} is "
                                f"{size_a[0]}x{size_a[1]}: not the same camera view")
    problems = [f"BEFORE: {p}" for p in why_b] + [f"AFTER: {p}" for p in why_a]
    if problems:
        doc = {"verdict": "cannot tell", "legal": None, "problems": problems,
               "summary": f"Cannot tell: {problems[0]}"}
        _print(args, doc, [f"Cannot tell: {p}" for p in problems])
        return 0
    from_photo = not isinstance(before, Position)
    if from_photo:
        before = Position(*before)  # a photo does not say whose turn it is: the turns seen will say
    after_layout = after.layout() if isinstance(after, Position) else after
    change = judge_change(before, Target.exact(after_layout), turn_known=not from_photo)
    doc = change.to_json()
    doc["before"] = str(before)
    unseen = not_judged_without_history(change) if from_photo else []
    if unseen and change.legal and any(turn.move.exits for turn in change.turns):
        # a score is legal only if its coach did not score on their last turn, which no photo shows
        doc.update(verdict="cannot tell", legal=None,
                   summary=f"Cannot tell: {change.summary().removeprefix('Legal: ')}; legal on the boards seen, "
                           f"but it scores, and whether that coach scored on their last turn needs the history")
    lines = [doc["summary"], f"before: {before}"]
    for k, turn in enumerate(change.turns, 1):
        lines.append(f"turn {k} of {len(change.turns)}: {turn} -> {turn.after}")
    doc["not_judged"] = unseen
    lines += [f"not judged without history: {u}" for u in unseen]
    _print(args, doc, lines)
    return 0


def not_judged_without_history(change) -> list[str]:
    """The rules two photos cannot settle (whose turn it is, the alfalfa, who scored last
    turn live in the game's history, not on the board), each with why."""
    out = [f"{RULES['turns']} (whose turn it is: a photo does not show it)",
           f"{RULES['game-over']} (the alfalfa tokens held before: a win at 3 is not judged)"]
    scorers = [turn.coach for turn in change.turns if turn.move.exits]
    if scorers:
        out.insert(1, f"{RULES['no-score']} (no score on the turn after scoring: whether "
                      f"{scorers[0]} scored on their last turn is not in the photos)")
    return out


# --- kang replay --------------------------------------------------------------------------------
def _replay_args(p):
    p.add_argument("folder", metavar="DIR", help="a recorded session folder (manifest.jsonl)")
    _common(p)


def run_replay(args, tools, game) -> int:
    state = game.new_state({})
    rulings = []
    for t, obs in tools.stable_observations(args.folder, args.camera_file, "kang"):
        step = game.step(state, obs, t)
        state = step.state
        rulings += step.rulings
    pos = state.position
    doc = {"rulings": [r.to_json() for r in rulings], "moves": list(state.moves),
           "position": str(pos) if pos else None,
           "alfalfa": dict(zip("AB", pos.alfalfa)) if pos else None, "winner": pos.winner if pos else None}
    lines = [f"{r.t:7.2f}s  {r.summary}  [{r.rule}]" for r in rulings]
    lines += ["moves: " + ", ".join(state.moves) if state.moves else "moves: none",
              f"alfalfa: A {doc['alfalfa']['A']} - B {doc['alfalfa']['B']}" if pos else "no clear board seen",
              f"winner: {doc['winner'] or 'none yet'}"]
    _print(args, doc, lines)
    return 0


# --- kang perft ---------------------------------------------------------------------------------
def _perft_args(p):
    p.add_argument("position", metavar="POSITION", help="start, a position string, or a JSON position file")
    p.add_argument("depth", metavar="DEPTH", help="plies to count (0 or more)")
    _common(p, image=False)


def load_position(text: str) -> Position:
    if text == "start":
        return Position.start()
    if text.lower().endswith(".json") and " " not in text:
        doc = safeload.load_json(text, "position file", PositionError)  # regular file, size, depth, numbers
        try:
            return Position.from_json(doc)
        except PositionError as exc:
            raise PositionError(f"{text}: {exc}") from None
    if len(text) > MAX_POSITION_CHARS:
        raise PositionError(f"a position string is at most {MAX_POSITION_CHARS} characters, "
                            f"got {len(text)}: {safeload.show(text)}")
    return Position.parse(text)


def perft_depth(text: str) -> int:
    """DEPTH as a whole number within 0..MAX_PERFT_DEPTH, checked before any counting."""
    shown = safeload.show(text)
    if not re.fullmatch(r"[0-9]{1,4}", text.strip()):  # ASCII digits only: "²" is a digit to str.isdigit
        raise InvalidInputError(f"depth {shown} must be a whole number from 0 to {MAX_PERFT_DEPTH}")
    depth = int(text)
    if depth > MAX_PERFT_DEPTH:
        raise InvalidInputError(f"depth {shown} must be a whole number from 0 to {MAX_PERFT_DEPTH}")
    return depth


def perft_counts(pos: Position, depth: int) -> list[int]:
    """Positions at each depth 1..depth. Before each depth past the second, its count is estimated
    from the last two (each turn multiplies them by about their ratio); a depth estimated past
    MAX_PERFT_POSITIONS, minutes of counting, is refused in one line, whatever the machine's speed."""
    memo: dict = {}
    counts: list[int] = []
    for d in range(1, depth + 1):
        if len(counts) >= 2:
            ratio = counts[-1] / max(1, counts[-2])
            estimate = counts[-1] * ratio ** (depth - d + 1)
            if estimate > MAX_PERFT_POSITIONS:
                raise InvalidInputError(
                    f"depth {depth} would count about {estimate:.1e} positions (each turn multiplies them by about "
                    f"{ratio:.0f}), hours of counting; refcam counts at most {MAX_PERFT_POSITIONS:.0e} positions, "
                    f"about a minute")
        counts.append(perft(pos, d, memo))
    return counts


def run_perft(args, tools) -> int:
    depth = perft_depth(args.depth)
    pos = load_position(args.position)
    counts = perft_counts(pos, depth)
    total = counts[-1] if counts else 1
    doc = {"position": str(pos), "depth": depth, "per_depth": counts, "perft": total}
    lines = [f"position: {pos}"] + [f"depth {d}: {n}" for d, n in enumerate(counts, 1)] + [str(total)]
    _print(args, doc, lines)
    return 0


def kang_commands(game) -> tuple[Command, ...]:
    """Kang's own commands; ``replay`` rules through ``game``'s step (the game passes itself)."""
    return (
        Command("state", "the Kang board in one image: squares, start zones, what cannot be placed", _state_args,
                run_state),
        Command("check", "whether and how a Kang move was legal, from two images or JSON positions", _check_args,
                run_check),
        Command("replay", "rule on a whole recorded Kang session: moves, alfalfa, winner", _replay_args,
                lambda args, tools: run_replay(args, tools, game)),
        Command("perft", "count Kang positions DEPTH turns ahead (SPEC section 3)", _perft_args, run_perft),
    )
