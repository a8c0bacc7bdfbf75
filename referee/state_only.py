"""The state-only game: for a game whose rules engine is not there yet.

It reports pieces arriving, moving and leaving, with ``legal=None``, and says plainly
that nothing is judged. Where the catalog gives the game a square grid, it names the
square a piece stands on; the overlay shapes are the catalog's grid and river tiles.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Mapping

from .board_squares import square_name
from .catalog import default_catalog
from .game import Command, Declaration, Explanation, Option, Shape, Step, View, check_declaration
from .motion import moved, shift_mm, turn_deg, turned
from .observation import Observation, PiecePose
from .rulings import Ruling

NO_ENGINE = "no rules engine yet for this game"
# Pieces that define the game frame or the furniture: their "moves" are not game moves.
FURNITURE_PREFIXES = ("table/", "kang/board")


@dataclass(frozen=True)
class PiecesState:
    pieces: tuple[PiecePose, ...] = ()  # the last stable state's pieces, by name
    states_seen: int = 0
    last_t: float | None = None


@dataclass(frozen=True)
class StateOnlyGame:
    """A Game (referee/game.py) that judges nothing: what changed between stable states."""

    id: str
    title: str
    options: tuple[Option, ...] = ()

    def new_state(self, settings: Mapping[str, Any]) -> PiecesState:
        return PiecesState()

    def where(self, p: PiecePose) -> str:
        square = None if p.name.startswith(FURNITURE_PREFIXES) else square_name(self.id, p.x_mm, p.y_mm)
        at = f"({p.x_mm:.0f}, {p.y_mm:.0f}) mm"
        return f"{square} {at}" if square else at

    def step(self, state: PiecesState, observation: Observation, t: float) -> Step:
        before = {p.name: p for p in state.pieces}
        now = {p.name: p for p in observation.pieces}
        rulings = [self._ruling(t, "state", f"{n} appeared at {self.where(now[n])}",
                                {"piece": n, "change": "appeared", "to": now[n].to_json()})
                   for n in sorted(now.keys() - before.keys())]
        for name in sorted(now.keys() & before.keys()):
            moved = self._moved(t, before[name], now[name])
            if moved is not None:
                rulings.append(moved)
        rulings += [self._ruling(t, "state", f"{n} left {self.where(before[n])}",
                                 {"piece": n, "change": "left", "from": before[n].to_json()})
                    for n in sorted(before.keys() - now.keys())]
        new = replace(state, pieces=tuple(sorted(now.values(), key=lambda p: p.name)),
                      states_seen=state.states_seen + 1, last_t=t)
        return Step(new, tuple(rulings))

    def _moved(self, t: float, a: PiecePose, b: PiecePose) -> Ruling | None:
        if not (moved(a, b) or turned(a, b)):
            return None
        dist, turn = shift_mm(a, b), turn_deg(a, b)
        if a.name.startswith(FURNITURE_PREFIXES):
            return None
        return self._ruling(t, "move", f"{a.name} moved from {self.where(a)} to {self.where(b)}",
                            {"piece": a.name, "change": "moved", "from": a.to_json(), "to": b.to_json(),
                             "distance_mm": round(dist, 1), "turn_deg": round(turn, 1)})

    def _ruling(self, t: float, kind: str, summary: str, details: dict) -> Ruling:
        return Ruling(t=t, game=self.id, kind=kind, summary=summary, legal=None,
                      rule=f"{self.title}: {NO_ENGINE}", details=details)

    def view(self, state: PiecesState) -> View:
        return View("pieces", {
            "game": self.id, "engine": "state-only", "note": NO_ENGINE, "states_seen": state.states_seen,
            "pieces": [{"name": p.name, "x_mm": round(p.x_mm, 1), "y_mm": round(p.y_mm, 1),
                        "theta_deg": round(p.theta_deg, 1), "where": self.where(p)} for p in state.pieces]},
            title=self.title)

    def shapes(self, state: PiecesState, observation: Observation | None) -> tuple[Shape, ...]:
        pieces = observation.pieces if observation is not None else state.pieces
        return grid_shapes(self.id) + tile_shapes(self.id, pieces)

    def explain(self, state: PiecesState, observation: Observation) -> Explanation | None:
        return None

    def commands(self) -> tuple[Command, ...]:
        return ()

    def declarables(self, state: PiecesState) -> tuple:
        return ()  # it judges nothing, so the players have nothing to tell it

    def declare(self, state: PiecesState, declaration: Declaration, t: float) -> Step:
        check_declaration(self, state, declaration)  # refuses: nothing is offered
        return Step(state)


def grid_shapes(game: str) -> tuple[Shape, ...]:
    """The lines of the game's square grid (catalog "grid"), centred on the game origin."""
    grid = default_catalog().game(game).get("grid")
    if grid is None:
        return ()
    a, nf, nr = float(grid["square_mm"]), int(grid["files"]), int(grid["rows"])
    hx, hy = a * nf / 2, a * nr / 2
    lines = [((-hx + i * a, -hy), (-hx + i * a, hy)) for i in range(nf + 1)]
    lines += [((-hx, -hy + j * a), (hx, -hy + j * a)) for j in range(nr + 1)]
    return tuple(Shape("line", pts, role="grid") for pts in lines)


def tile_shapes(game: str, pieces) -> tuple[Shape, ...]:
    """Each river tile's outline and lane lines (catalog "tile"), placed by the tile's pose."""
    tile = default_catalog().game(game).get("tile")
    if tile is None:
        return ()
    s, lanes, rows = float(tile["space_mm"]), int(tile["lanes"]), int(tile["rows"])
    length, width = rows * s, lanes * s
    out = []
    for p in pieces:
        if not p.name.startswith(f"{game}/tile-"):
            continue
        for k in range(1, lanes):
            y = -width / 2 + k * s
            out.append(Shape("line", _placed(p, [(-length / 2, y), (length / 2, y)]), role="grid"))
        corners = [(-length / 2, -width / 2), (length / 2, -width / 2), (length / 2, width / 2), (-length / 2, width / 2)]
        out.append(Shape("polygon", _placed(p, corners), role="boundary"))
    return tuple(out)


def _placed(p: PiecePose, points) -> tuple[tuple[float, float], ...]:
    c, s = math.cos(math.radians(p.theta_deg)), math.sin(math.radians(p.theta_deg))
    return tuple((p.x_mm + c * x - s * y, p.y_mm + s * x + c * y) for x, y in points)


