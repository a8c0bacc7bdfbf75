"""Kayak Chaos behind the game seam (referee/game.py): state, step, view, shapes, explain.

Each new stable observation is read as a river (referee.kayak.river) and the change from
the last one is explained as one turn of up to three actions (referee.kayak.explain).
The game frame is the Start tile's frame.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping

from ..catalog import Catalog, default_catalog
from ..errors import InvalidInputError, RefcamError
from ..game import Declarable, Declaration, Explanation, Option, Shape, Step, View
from ..observation import Observation
from ..pending import TurnGuard, guarded_step, pending_json
from ..rulings import Ruling
from . import declare
from .errors import GAME_ID, GAME_TITLE, rule
from .commands import kayak_commands
from .diagram import river_diagram
from .explain import MAX_ACTIONS, Explained, explain, first_to_finish
from .position import Position, pawn_name
from .river import RiverReading, read_river, space_centre
from .tiles import DOUBLE, FINISH, ROCK, START, TileBook, tile_book

_OCCLUSION_WORDS = ("hand", "occlu", "hidden")


def _parse_on_off(text: str) -> bool:
    value = str(text).strip().lower()
    if value in ("on", "yes", "true", "1"):
        return True
    if value in ("off", "no", "false", "0"):
        return False
    raise InvalidInputError(f"advanced rules must be on or off, not {text!r}")


ADVANCED = Option("advanced", "Advanced Rules: at most one action card of each type a turn (on/off)",
                  _parse_on_off, False, lambda v: "on" if v else "off", ("off", "on"), "on|off")


@dataclass(frozen=True)
class KayakState:
    """What the referee knows: the last river read, the last turn's verdict, the winner."""

    advanced: bool = False
    position: Position | None = None
    last: Explained | None = field(default=None, compare=False)
    turns: int = 0
    winner: int | None = None
    cards: tuple[tuple[str, int], ...] = ()  # action cards in view at the last stable state
    cannot_tell: str = ""
    # what the players declared (referee/kayak/declare.py): whose turn it is, actions used out of
    # sight this turn (discards, an action a Life Ring cancelled), players holding four cards
    turn_of: int | None = None
    spent_actions: int = 0
    short_hands: tuple[int, ...] = ()
    guard: TurnGuard = field(default=TurnGuard(), compare=False)  # an illegal turn pending (referee/pending.py)


class KayakGame:
    """The Kayak Chaos referee; see referee.game.Game."""

    id = GAME_ID
    title = GAME_TITLE
    options = (ADVANCED,)

    def __init__(self, catalog: Catalog | None = None):
        self._catalog = catalog

    @property
    def catalog(self) -> Catalog:
        return self._catalog or default_catalog()

    @property
    def book(self) -> TileBook:
        return tile_book(self.catalog)

    def new_state(self, settings: Mapping[str, Any]) -> KayakState:
        return KayakState(advanced=bool(settings.get("advanced", False)))

    # --- step -----------------------------------------------------------------------------------
    def step(self, state: KayakState, observation: Observation, t: float) -> Step:
        """One stable state ruled on; an illegal turn holds the game (referee/pending.py): the
        win it would give is recorded only once the players accept it."""
        return guarded_step(GAME_ID, self._rule_step, state, observation, t, follows=_follows_from_turn,
                            restored=self._restored)

    def _restored(self, state: KayakState, observation: Observation) -> bool:
        """The river read from the observation is the state's river (kayaks where they were)."""
        try:
            reading = read_river(observation, self.book, self.catalog)
        except RefcamError:
            return False
        return not reading.problems and reading.position == state.position

    def _rule_step(self, state: KayakState, observation: Observation, t: float) -> Step:
        blocked = next((w for w in observation.warnings if any(k in w.lower() for k in _OCCLUSION_WORDS)), None)
        if blocked:
            return self._cannot_tell(state, t, f"a hand or an object is in view ({blocked})")
        try:
            # a tile out of view keeps its last stable place (tiles never leave the river)
            reading = read_river(observation, self.book, self.catalog, state.position)
        except RefcamError as exc:
            return self._cannot_tell(state, t, str(exc))
        if reading.problems:
            return self._cannot_tell(state, t, "; ".join(reading.problems))
        if state.position is not None:
            gone = [pawn_name(p) for p, _ in state.position.kayaks if reading.position.where(p) is None]
            if gone:
                return self._cannot_tell(state, t, f"{', '.join(gone)} not in view")
        step = self._rule(state, reading, t)
        if not reading.kept:
            return step
        kept = Ruling(t, GAME_ID, "warning", f"{', '.join(reading.kept)} not in view: its last stable place is kept",
                      None, None)
        return Step(step.state, (kept,) + step.rulings)

    def _cannot_tell(self, state: KayakState, t: float, why: str) -> Step:
        ruling = Ruling(t, GAME_ID, "warning", f"cannot tell: {why}", None, None)
        return Step(replace(state, cannot_tell=why), (ruling,) if why != state.cannot_tell else ())

    def _rule(self, state: KayakState, reading: RiverReading, t: float) -> Step:
        after = reading.position
        cards = tuple(sorted((k, n) for k, n in reading.cards.items() if k))
        if state.position is None:
            text = f"river {after.text()} ({len(after.tiles)} tile(s), {len(after.kayaks)} kayak(s))"
            # a first river that breaks a rule is reported with the conflict flagged, not refused
            text += "".join(f"; conflict: {why} ({rule(section)})" for section, why in reading.conflicts)
            text += self._taken_up(after)
            new = replace(state, position=after, cards=cards, cannot_tell="")
            return Step(new, (Ruling(t, GAME_ID, "state", text, None, str(rule("Game Setup")),
                                     {"position": after.text()}),))
        before, joined = self._joining(state.position, after, t)
        if after == before:
            return Step(replace(state, position=after, cards=cards, cannot_tell=""), joined)
        seen_before = dict(state.cards)
        played = reading.cards.copy()
        for kind, n in seen_before.items():
            played[kind] -= n
        played = +played
        # Turns: actions the players declared (discards, a cancelled action) leave fewer for what is seen
        verdict = explain(before, after, self.book, state.advanced, played or None,
                          limit=max(0, MAX_ACTIONS - state.spent_actions))
        rulings = list(joined) + [self._move_ruling(verdict, t, state.turns + 1, state)]
        winner = state.winner
        firsts = first_to_finish(verdict, self.book) if winner is None else ()
        if len(firsts) > 1:
            rulings.append(Ruling(t, GAME_ID, "warning", "cannot tell which kayak reached the Finish space first: "
                                  + " or ".join(map(pawn_name, firsts)), None, str(rule("Game End"))))
        elif firsts:
            winner = firsts[0]
            rulings.append(Ruling(t, GAME_ID, "finish", f"{pawn_name(winner)} reaches the Finish space and wins",
                                  True, str(rule("Game End"))))
        new = replace(state, position=after, last=verdict, turns=state.turns + 1, winner=winner, cards=cards,
                      cannot_tell="", turn_of=None, spent_actions=0)
        return Step(new, tuple(rulings))

    def _taken_up(self, first: Position) -> str:
        """Game Setup puts every kayak on the Start space: a first river with kayaks elsewhere is
        a game under way. Said once, so the turns that follow are read from this river."""
        off = [pawn_name(p) for p, space in first.kayaks
               if not (space.index == 0 and self.book.cell(first.tiles[0], space.row, space.lane) == START)]
        if not off:
            return ""
        return (f"; not the setup ({', '.join(off)} off the Start space): play is taken up from this river "
                f"({rule('Game Setup')})")

    def _joining(self, before: Position, after: Position, t: float) -> tuple[Position, tuple[Ruling, ...]]:
        """Game Setup: a kayak seen for the first time joins the game on a Start space; it is
        added to the position before the turn so that only the turn itself is explained."""
        kayaks, rulings = dict(before.kayaks), []
        for pawn, space in after.kayaks:
            if pawn in kayaks:
                continue
            on_start = space.index == 0 and self.book.cell(after.tiles[0], space.row, space.lane) == START
            if on_start and before.occupant_free(space):
                kayaks[pawn] = space
                rulings.append(Ruling(t, GAME_ID, "state", f"{pawn_name(pawn)} joins on the Start space", True,
                                      str(rule("Game Setup"))))
            else:
                rulings.append(Ruling(t, GAME_ID, "violation", f"{pawn_name(pawn)} appears at {space}, not on the "
                                      "Start space", False, str(rule("Game Setup"))))
                if space.index < len(before.tiles):
                    kayaks[pawn] = space
        return Position.make(before.tiles, kayaks), tuple(rulings)

    @staticmethod
    def _move_ruling(verdict: Explained, t: float, turn: int, state: KayakState) -> Ruling:
        first = verdict.readings[0] if verdict.readings else None
        if verdict.legal and first and first.actions:
            section = {"free-move": "Turns"}.get(first.actions[0].kind) or _card_section(first.actions[0].kind)
        else:
            section = first.breaches[0][0] if first and first.breaches else "Turns"
        whose = f" ({pawn_name(state.turn_of)}'s)" if state.turn_of else ""
        spent = f" after {state.spent_actions} declared action(s)" if state.spent_actions else ""
        return Ruling(t, GAME_ID, "move", f"turn {turn}{whose}{spent}: {verdict.summary()}", verdict.legal,
                      str(rule(section)), verdict.to_json())

    # --- what the page shows -------------------------------------------------------------------
    def view(self, state: KayakState) -> View:
        pos, book = state.position, self.book
        data: dict[str, Any] = {"lanes": book.lanes, "rows": book.rows, "space_mm": book.space_mm,
                                "advanced": state.advanced, "turns": state.turns, "cannot_tell": state.cannot_tell,
                                "winner": pawn_name(state.winner) if state.winner else None,
                                "illegal_turn": pending_json(state),
                                "tiles": [], "kayaks": [], "text": pos.text() if pos else None}
        if pos is not None:
            for i, rt in enumerate(pos.tiles):
                data["tiles"].append({"index": i, "tile": rt.tile, "side": rt.side, "rotation": rt.rotation,
                                      "shift": rt.shift, "cells": list(book.lying(rt))})
            data["kayaks"] = [{"name": pawn_name(p), "tile_index": s.index, "row": s.row, "lane": s.lane}
                              for p, s in pos.kayaks]
        if state.last is not None:
            data["last_turn"] = {**state.last.to_json(), "arrows": self._arrows(state.last)}
        data["diagram"] = river_diagram(book, pos, state.last, _caption(state))
        return View("river", data, f"{GAME_TITLE}: the river")

    def _arrows(self, verdict: Explained) -> list[dict]:
        out = []
        for pawn, s in verdict.before.kayaks:
            t = verdict.after.where(pawn)
            if t is not None and (verdict.before.tiles[s.index].tile, s.row, s.lane) != \
                    (verdict.after.tiles[t.index].tile, t.row, t.lane):
                out.append({"name": pawn_name(pawn), "from": space_centre(self.book, verdict.before, s),
                            "to": space_centre(self.book, verdict.after, t)})
        return out

    def shapes(self, state: KayakState, observation: Observation | None) -> tuple[Shape, ...]:
        if state.position is None:
            return ()
        shapes = river_shapes(self.book, state.position)
        if state.last is not None:
            role = "legal" if state.last.legal else "illegal"
            for arrow in self._arrows(state.last):
                shapes.append(Shape("arrow", (arrow["from"], arrow["to"]), role, text=arrow["name"], z_mm=15.0,
                                    legend="last turn"))
        return tuple(shapes)

    def explain(self, state: KayakState, observation: Observation) -> Explanation | None:
        if state.position is None:
            return None
        verdict = state.last
        lines = [f"river: {state.position.text()}"]
        if verdict is None:
            lines.append("no turn seen yet")
        else:
            lines.append(("legal: " if verdict.legal else "") + verdict.summary())
            lines += [f"  reading: {r.text()}" for r in verdict.readings[:6]]
            lines += [f"  rule: {x}" for x in verdict.rules]
        if state.winner:
            lines.append(f"{pawn_name(state.winner)} won ({rule('Game End')})")
        book = self.book
        x1 = len(state.position.tiles) * book.tile_length_mm - book.tile_length_mm / 2
        shifts = [rt.shift * book.space_mm for rt in state.position.tiles]
        focus = (-book.tile_length_mm / 2, min(shifts) - book.tile_width_mm / 2, x1, max(shifts) + book.tile_width_mm / 2)
        return Explanation(f"{GAME_TITLE}: turn {state.turns}", self.shapes(state, observation), tuple(lines), focus,
                           verdict.to_json() if verdict else {"position": state.position.text()})

    def commands(self):
        return kayak_commands(self)

    # --- what the players declare (the camera cannot see it) ------------------------------------
    def declarables(self, state: KayakState) -> tuple[Declarable, ...]:
        return declare.declarables(state)

    def declare(self, state: KayakState, declaration: Declaration, t: float) -> Step:
        return declare.declare(self, state, declaration, t)


def _follows_from_turn(ruling: Ruling) -> bool:
    """Game End: reaching the Finish wins; a turn ruled illegal must not win (referee/pending.py)."""
    return ruling.kind == "finish"


def _caption(state: KayakState) -> tuple[str, ...]:
    """The lines under the river diagram: the turn, the last turn's verdict, the winner, what blocks judging."""
    if state.position is None:
        return (f"cannot tell: {state.cannot_tell}",) if state.cannot_tell else ("no river seen yet",)
    lines = [f"turn {state.turns}" if state.turns else "no turn played yet"]
    if state.last is not None:
        lines.append(("last turn: " if state.last.legal else "last turn, ") + state.last.summary())
    if state.winner:
        lines.append(f"winner: {pawn_name(state.winner)}")
    declared = declare.summary(state)
    if declared:
        lines.append(f"declared: {declared}")
    if state.cannot_tell:
        lines.append(f"cannot tell: {state.cannot_tell}")
    return tuple(lines)


def _card_section(kind: str) -> str:
    return {"paddle": "Paddle Cards", "double-paddle": "Double Paddle Cards", "swerve": "Swerve Cards",
            "double-swerve": "Double Swerve Cards", "weather-shift": "Weather Shift Cards",
            "tip": "Tip the Kayak Cards", "whirlpool": "Whirlpool Cards"}.get(kind, "Action Cards")


def river_shapes(book: TileBook, pos: Position) -> list[Shape]:
    """Tile outlines, rocks, double spaces, the Finish row and the kayaks, in game-frame mm."""
    a, length, width = book.space_mm, book.tile_length_mm, book.tile_width_mm
    out = []
    for i, rt in enumerate(pos.tiles):
        x0, y0 = i * length - length / 2, rt.shift * a - width / 2
        out.append(Shape("polygon", ((x0, y0), (x0 + length, y0), (x0 + length, y0 + width), (x0, y0 + width)),
                         "zone", text=f"tile {rt.tile}{rt.side}{' turned' if rt.rotation else ''}", z_mm=2.0,
                         legend="river tile"))
        for r, row in enumerate(book.lying(rt)):
            for lane, cell in enumerate(row):
                cx, cy = x0 + (r + 0.5) * a, y0 + (lane + 0.5) * a
                if cell == ROCK:
                    out.append(Shape("circle", ((cx, cy),), "boundary", radius_mm=a * 0.35, z_mm=2.0, legend="rock"))
                elif cell in (FINISH, START):
                    box = ((cx - a / 2, cy - a / 2), (cx + a / 2, cy - a / 2), (cx + a / 2, cy + a / 2), (cx - a / 2, cy + a / 2))
                    out.append(Shape("polygon", box, "finish" if cell == FINISH else "info", z_mm=2.0,
                                     legend="finish" if cell == FINISH else "start"))
                elif cell == DOUBLE and book.double_halves(rt, r, lane)[0] == r:
                    box = ((cx - a / 2 + 3, cy - a / 2 + 3), (cx + 1.5 * a - 3, cy - a / 2 + 3),
                           (cx + 1.5 * a - 3, cy + a / 2 - 3), (cx - a / 2 + 3, cy + a / 2 - 3))
                    out.append(Shape("polygon", box, "path", z_mm=2.0, legend="double space"))
    for pawn, s in pos.kayaks:
        out.append(Shape("circle", (space_centre(book, pos, s),), "piece", text=pawn_name(pawn), radius_mm=12.0,
                         z_mm=15.0, legend="kayak"))
    return out


GAME = KayakGame()
