"""`refcam kayak state|check|replay`: the Kayak Chaos commands (no cv2: images come via Tools)."""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

from .. import safeload
from ..catalog import default_catalog
from ..errors import InvalidInputError
from ..game import Command
from ..observation import Observation
from .errors import KayakStateError, RiverGapError, rule
from ..rulings import CANNOT_TELL, LEGAL, verdict_line
from .explain import LEFT_OUT, explain
from .sequences import explain_turns
from .position import Position, Space, from_text, pawn_name, validate
from .river import read_river, survey_river
from .tiles import RiverTile

IMAGE_OR_DATA_SUFFIXES = (".json", ".txt", ".kayak", ".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp")
MAX_TEXT_POSITION_BYTES = 64 * 1024  # a river's text form is one line of well under 1 kB
_PAWN = re.compile(r"^kayak/pawn-(\d)$")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--camera-file", metavar="F", help="camera calibration file")
    p.add_argument("--catalog", metavar="FILE", help="an edited copy of the catalog data (tile layouts)")
    p.add_argument("--json", action="store_true", help="one JSON document on stdout")


def _with_advanced(p: argparse.ArgumentParser) -> None:
    _common(p)
    p.add_argument("--advanced", action="store_true", help="Advanced Rules: one action card of each type a turn")


def _game(game, args):
    """The game in play, or the same game on the user's --catalog (its own class: no import of
    game.py). --catalog was checked and made the catalog in use while the arguments were parsed
    (use_catalog), so the default catalog is the user's."""
    return type(game)(default_catalog()) if getattr(args, "catalog", None) else game


def position_from_state_json(doc: dict, book=None) -> Position:
    """A position from `kayak state --json` output (SPEC section 4)."""
    if doc.get("complete") is False and doc.get("text") is None:
        # `kayak state` reported a river with a tile out of view: a turn cannot be judged from it
        problems = "; ".join(map(str, doc.get("problems") or ()))
        raise KayakStateError(f"the state file holds an incomplete river ({problems}): take it again with every "
                              f"tile in view")
    try:
        tiles = [RiverTile(int(t["tile"]), str(t["side"]), int(t.get("rotation", 0)), int(t.get("shift", 0)))
                 for t in doc["river"]]
        kayaks = {}
        for name, k in (doc.get("kayaks") or {}).items():
            m = _PAWN.match(name)
            if not m:
                raise KayakStateError(f"{name!r} is not a kayak pawn name (kayak/pawn-1..4)")
            kayaks[int(m.group(1))] = Space(int(k["tile_index"]), int(k["row"]), int(k["lane"]))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InvalidInputError(f"Kayak state file: 'river' needs tile/side/rotation/shift entries and 'kayaks' "
                                f"tile_index/row/lane ({exc})") from None
    return validate(Position.make(tiles, kayaks), book)


def load_reading(game, path: str, args, tools):
    """(position, cards in view, the reading's JSON) from an image, an observation file, a
    state file (`kayak state --json`), a text file holding the position's text form, or that
    text form itself given in place of a file name."""
    p = Path(path)
    if not p.exists() and _looks_like_text_form(path):
        pos = from_text(path.strip(), game.book)
        return pos, Counter(), {"text": pos.text()}
    if p.suffix.lower() in (".txt", ".kayak"):
        text = safeload.read_text(p, "position file", max_bytes=MAX_TEXT_POSITION_BYTES)  # no FIFO, no /dev/zero
        pos = from_text(text.strip(), game.book)
        return pos, Counter(), {"text": pos.text()}
    if p.suffix.lower() == ".json":
        doc = safeload.load_json(p, "state file")  # size, depth and number limits
        if isinstance(doc, dict) and "river" in doc:
            pos = position_from_state_json(doc, game.book)
            return pos, Counter(), {"text": pos.text()}
        if isinstance(doc, dict) and "pieces" in doc:
            return _from_observation(game, Observation.from_json(doc))
    return _from_observation(game, tools.observe_path(path, args.camera_file, "kayak"))


def _looks_like_text_form(text: str) -> bool:
    """Whether an argument that names no file is meant as a position in the text form: it
    begins like a tile token (a digit then a letter: '0A', '0A/4B', even a mistyped '0C') or
    places a kayak with '@'. Decided by that syntax, never by a '/', so that the one-tile river
    of a game's first turn ('0A 1@0.0.1') is a position too; a malformed one then gets
    from_text's own message saying what is wrong with it."""
    if Path(text).suffix.lower() in IMAGE_OR_DATA_SUFFIXES:
        return False
    return bool(re.match(r"^\s*\d+[A-Za-z]", text)) or "@" in text


def _from_observation(game, observation: Observation):
    reading = read_river(observation, game.book, game.catalog)
    return reading.position, reading.cards, {**reading.to_json(), "warnings": list(observation.warnings)}


def run_state(game, args, tools) -> int:
    """Report what is in view: a river with a hidden tile or a kayak on a catalog rock is
    reported with the gap or the conflict marked, never refused."""
    game = _game(game, args)
    observation = tools.observe_path(args.image, args.camera_file, "kayak")
    try:
        reading = read_river(observation, game.book, game.catalog)
    except RiverGapError:
        return _print_survey(survey_river(observation, game.book, game.catalog), observation, args.json)
    doc = {**reading.to_json(), "complete": not reading.problems, "warnings": list(observation.warnings)}
    if args.json:
        print(json.dumps(doc))
        return 0
    conflicts = f"; {len(reading.conflicts)} rule conflict(s) flagged (below)" if reading.conflicts else ""
    print(f"River read: {len(reading.tiles)} tile(s) and {len(reading.kayaks)} kayak(s) placed{conflicts}.")
    print(f"river: {reading.position.text()}")
    for place, t in enumerate(reading.tiles):
        print(f"  {place}: tile {t['tile']}{t['side']} rotation {t['rotation']} shift {t['shift']:+d} lanes "
              f"(residual {t['residual_shift_mm']:+.1f} mm across, {t['residual_along_mm']:+.1f} mm along)")
    for name, k in reading.kayaks.items():
        print(f"  {name}: tile index {k['tile_index']} row {k['row']} lane {k['lane']} ({k['residual_mm']:.1f} mm off centre)")
    for section, why in reading.conflicts:
        print(f"  conflict: {why} ({rule(section)}): {_conflict_hint(section)}")
    for line in reading.problems + tuple(observation.warnings):
        print(f"  note: {line}")
    return 0


def _conflict_hint(section: str) -> str:
    if section == "Rocks":
        return "the catalog's layout may not match this copy (edit it, or pass --catalog), or the pawn is misplaced"
    return "a turn that led here broke this rule, or the pieces were set out by hand"


def _print_survey(doc: dict, observation: Observation, as_json: bool) -> int:
    doc = {**doc, "warnings": list(observation.warnings)}
    if as_json:
        print(json.dumps(doc))
        return 0
    print("Cannot tell the river: a tile is not in view (nothing is judged until every tile is seen).")
    print("river: incomplete")
    for t in doc["river"] or []:
        seen = None if t["tile"] is None else f"tile {t['tile']}{t['side']} rotation {t['rotation']}"
        print(f"  {t['place']}: " + (f"{seen} shift {t['shift']:+d} lanes" if seen else "not in view"))
    for t in doc.get("tiles_in_view", []):
        print(f"  tile {t['tile']}{t['side']} in view at ({t['x_mm']:.0f}, {t['y_mm']:.0f}) mm, place unknown")
    for name, k in doc.get("kayaks", {}).items():
        print(f"  {name}: tile index {k['tile_index']} row {k['row']} lane {k['lane']}")
    for name, k in doc.get("kayaks_in_view", {}).items():
        print(f"  {name} in view at ({k['x_mm']:.0f}, {k['y_mm']:.0f}) mm, space unknown")
    for line in doc["problems"] + doc["warnings"]:
        print(f"  note: {line}")
    return 0


LEFT_OUT_SHORT = ("left out: readings that leave no trace on the table (a kayak or a tile moved and back, "
                  "discards, Life Rings); `kayak check --json` gives the whole list")


def run_check(game, args, tools) -> int:
    """The verdict first, in plain words; then the two rivers and the readings. A change no
    single turn explains is searched as 2 or 3 turns seen together (referee/kayak/sequences.py)."""
    game = _game(game, args)
    before, cards_before, _ = load_reading(game, args.before, args, tools)
    after, cards_after, _ = load_reading(game, args.after, args, tools)
    # the cards played this turn are those that were not lying face up before it
    verdict = explain(before, after, game.book, args.advanced, (cards_after - cards_before) or None)
    together = None
    if not verdict.legal and not verdict.position_breaches:
        together = explain_turns(before, after, game.book, args.advanced)
    if together is not None and together.found:
        return _print_turns(before, after, together, args.json)
    if together is not None and together.cut:
        head = verdict_line(CANNOT_TELL, f"no single turn explains the change, and the search for 2-3 turns seen "
                                         f"together stopped after {together.visited} positions", "Turns")
        print(json.dumps({"legal": None, "summary": head, "before": before.text(), "after": after.text()})
              if args.json else head)
        return 0
    if args.json:
        print(json.dumps({**verdict.to_json(), "left_out": LEFT_OUT}))
        return 0
    print(verdict.summary())
    print(f"before: {before.text()}\nafter:  {after.text()}")
    for r in verdict.readings:
        print(f"  {r.text()}" + "".join(f"\n    breaks {s}: {why}" for s, why in r.breaches))
    if not verdict.legal:  # the verdict may rest on what the search leaves out
        print(LEFT_OUT_SHORT)
    return 0


def _print_turns(before: Position, after: Position, together, as_json: bool) -> int:
    """Turns seen together: one sequence (or several implying the same), or "cannot tell"."""
    options = together.sequences()
    if together.agreed:
        seq = options[0]
        head = verdict_line(LEGAL, f"{len(seq.turns)} turns seen together, each legal", "Turns")
    else:
        head = verdict_line(CANNOT_TELL, f"{len(options)} sequences of turns explain the change and differ in who "
                                         "reached the Finish first", "Game End")
    doc = {"legal": True if together.agreed else None, "summary": head, "before": before.text(),
           "after": after.text(), "seen_together": True,
           "sequences": [{"turns": [t.text() for t in s.turns], "finish_order": [pawn_name(p) for p in s.places]}
                         for s in options], "positions_searched": together.visited}
    if as_json:
        print(json.dumps(doc))
        return 0
    print(head)
    print(f"before: {before.text()}\nafter:  {after.text()}")
    for s in options:
        for k, turn in enumerate(s.turns, 1):
            print(f"  {k}. {turn.text()}")
        if s.winner:
            print(f"  -> {pawn_name(s.winner[0])} reaches the Finish first and wins")
    return 0


def run_replay(game, args, tools) -> int:
    game = _game(game, args)
    state = game.new_state({"advanced": args.advanced})
    rulings = []
    for t, observation in tools.stable_observations(args.session, args.camera_file, "kayak"):
        step = game.step(state, observation, t)
        state = step.state
        rulings += step.rulings
    illegal = [r for r in rulings if r.legal is False]
    winner = pawn_name(state.winner) if state.winner else None
    if args.json:
        print(json.dumps({"rulings": [r.to_json() for r in rulings], "turns": state.turns,
                          "illegal": [r.summary for r in illegal], "winner": winner,
                          "final": state.position.text() if state.position else None}))
        return 0
    for r in rulings:
        mark = {True: "legal", False: "ILLEGAL", None: "-"}[r.legal]
        print(f"{r.t:8.2f}s  {mark:7}  {r.summary}" + (f"  [{r.rule}]" if r.rule else ""))
    print(f"{state.turns} turn(s), {len(illegal)} illegal; winner: {winner or 'none yet'}")
    return 0


def kayak_commands(game) -> tuple[Command, ...]:
    def state_args(p):
        p.add_argument("image", metavar="IMAGE", help="a photo of the table (or an observation file)")
        _common(p)

    def check_args(p):
        p.add_argument("before", metavar="BEFORE", help="image, observation file, state file or text position")
        p.add_argument("after", metavar="AFTER", help="the same kinds of file, after the turn")
        _with_advanced(p)

    def replay_args(p):
        p.add_argument("session", metavar="DIR", help="a recorded session folder")
        _with_advanced(p)

    return (Command("state", "the river and the kayaks in one image", state_args, lambda a, t: run_state(game, a, t)),
            Command("check", "which actions explain the change between two images or state files", check_args,
                    lambda a, t: run_check(game, a, t)),
            Command("replay", "rule on a recorded Kayak Chaos session: actions per turn, anything illegal, the winner",
                    replay_args, lambda a, t: run_replay(game, a, t)))
