"""Kang behind the game seam (referee/game.py): state, rulings from stable observations, the
board diagram, the overlay shapes and the move diagram. The object to register is ``GAME``."""

from __future__ import annotations

from typing import Any, Mapping

from ..game import Declarable, Declaration, ExpectedPiece, Explanation, Shape, Step, View
from ..observation import Observation
from ..pending import guarded_step, pending_json
from ..rulings import Ruling
from . import declare
from .commands import kang_commands
from .board import BoardRead, Geometry, kangaroo_names, read_board
from .diagram import board_diagram
from .explain import RULES, explain
from .position import COACHES, FILES, SIZES, Move, square_name
from .state import GAME_ID, TITLE, KangState, rule_ref
from .judge import judge_change
from .sequences import Target
from .step import rule_step

class KangGame:
    """The Game protocol for Kang."""

    id = GAME_ID
    title = TITLE
    options: tuple = ()  # Kang has no settings: one board, one rulebook

    def __init__(self):
        self.geometry = Geometry.from_catalog()

    def new_state(self, settings: Mapping[str, Any]) -> KangState:
        return KangState()

    # --- rulings --------------------------------------------------------------------------------
    def step(self, state: KangState, observation: Observation, t: float) -> Step:
        """One stable board ruled on; an illegal move holds the game (referee/pending.py)."""
        return guarded_step(GAME_ID, self._rule_step, state, observation, t, follows=follows_from_move,
                            restored=_board_restored)

    def _rule_step(self, state: KangState, observation: Observation, t: float) -> Step:
        return rule_step(state, observation, t)

    def expected_pieces(self, state: KangState) -> tuple[ExpectedPiece, ...]:
        """Each kangaroo where it was last read (it stays on its square: 2 sigma reach half a
        square), or before any reading in its start zone (kangaroos 1-2 of a size south in A's,
        3-4 north in B's, as the setup lays them out; any place along the zone); an alfalfa
        token where it was last read."""
        g = self.geometry
        last = {p.name: p for p in state.readings}
        out = []
        for name in kangaroo_names():
            p = last.get(name)
            if p is not None:
                out.append(ExpectedPiece(name, p.x_mm, p.y_mm, p.theta_deg, max(p.sigma_mm, g.square_mm / 4)))
            else:
                sign = -1.0 if int(name[-1]) <= 2 else 1.0
                out.append(ExpectedPiece(name, 0.0, sign * (g.half_extent_mm + g.square_mm), 0.0,
                                         g.files * g.square_mm / 4))
        out += [ExpectedPiece(p.name, p.x_mm, p.y_mm, p.theta_deg, max(p.sigma_mm, g.margin_mm))
                for p in state.readings if p.name.startswith("kang/alfalfa")]
        return tuple(out)

    # --- what the page shows ----------------------------------------------------------------------
    def view(self, state: KangState) -> View:
        pos = state.position
        data: dict = {"files": list(FILES), "rows": 6, "pending": state.pending, "moves": list(state.moves)}
        if pos is not None:
            data.update(board=pos.rows(), start_zone={c: dict(zip(SIZES, z)) for c, z in zip(COACHES, pos.zones)},
                        alfalfa=dict(zip(COACHES, pos.alfalfa)), to_move=pos.to_move if state.turn_known else None,
                        no_score=dict(zip(COACHES, pos.no_score)), winner=pos.winner, position=str(pos))
        if state.last is not None:
            data["last_move"] = {"notation": str(state.last), "coach": state.last_coach,
                                 "path": [square_name(sq) for sq in state.last.path],
                                 "kick": square_name(state.last.kick) if state.last.kick else None,
                                 "exits": state.last.exits}
        data["illegal_on_board"] = state.guard.illegal is not None
        data["illegal_turn"] = pending_json(state)
        data["diagram"] = board_diagram(data, self.geometry.square_mm)
        return View("board", data, TITLE)

    def shapes(self, state: KangState, observation: Observation | None) -> tuple[Shape, ...]:
        out = list(self._grid_shapes())
        if state.last is not None:
            out += self._move_shapes(state.last, "path", f"last move {state.last}")
        if observation is not None:
            out += self._doubt_shapes(read_board(observation))
        return tuple(out)

    def _grid_shapes(self) -> list[Shape]:
        g = self.geometry
        a = g.square_mm
        out = []
        for f in range(g.files):
            for r in range(1, g.rows + 1):
                cx, cy = g.square_centre(f, r)
                out.append(Shape("polygon", ((cx - a / 2, cy - a / 2), (cx + a / 2, cy - a / 2),
                                             (cx + a / 2, cy + a / 2), (cx - a / 2, cy + a / 2)), "zone",
                                 z_mm=2.0, legend="board squares"))
        for f in range(g.files):
            out.append(Shape("label", (g.square_centre(f, 0),), "info", FILES[f], z_mm=2.0))
        for r in range(1, g.rows + 1):
            x, y = g.square_centre(0, r)
            out.append(Shape("label", ((x - a, y),), "info", str(r), z_mm=2.0))
        h = g.half_extent_mm
        for coach, sign in (("A", -1), ("B", 1)):
            out.append(Shape("label", ((0.0, sign * (h + 15)),), "info", f"start zone {coach}"))
        return out

    def _move_shapes(self, move: Move, role: str, legend: str) -> list[Shape]:
        g = self.geometry
        if move.is_pass:
            return []
        pts = tuple(g.square_centre(*sq) for sq in move.path)
        out = [Shape("arrow", pts, role, str(move), z_mm=4.0, legend=legend)]
        if move.kick is not None:
            out.append(Shape("arrow", (g.square_centre(*move.end), g.square_centre(*move.kick)), "highlight",
                             f"kicked to {square_name(move.kick)}", z_mm=4.0, legend="kicked kangaroo"))
        for i in move.jumps:
            out.append(Shape("circle", (g.square_centre(*move.path[i]),), "highlight", "jump", radius_mm=8.0,
                             z_mm=4.0, legend="jumped from here"))
        return out

    def _doubt_shapes(self, read: BoardRead) -> list[Shape]:
        return [Shape("circle", ((p.x_mm, p.y_mm),), "uncertain", f"{p.name}: {p.where}",
                      radius_mm=2 * p.sigma_mm + self.geometry.margin_mm + self.geometry.square_mm / 4,
                      z_mm=4.0, legend="cannot place")
                for p in read.unclear]

    def explain(self, state: KangState, observation: Observation) -> Explanation | None:
        """The move diagram: the board, the path of the judged move, and the ruling beside it."""
        if state.position is None:
            return None
        read = read_board(observation)
        g = self.geometry
        h = g.half_extent_mm
        focus = (-h, -h - 60, h, h + 60)
        if not read.complete:
            return Explanation("cannot tell", tuple(self._grid_shapes() + self._doubt_shapes(read)),
                               tuple(read.problems()), focus, read.to_json())
        change = judge_change(state.position, Target.exact(read.layout()), turn_known=state.turn_known)
        single = change.single or explain(state.position, read.layout())
        shapes = self._grid_shapes()
        if change.turns:
            for k, turn in enumerate(change.turns, 1):
                shapes += self._move_shapes(turn.move, "legal", f"turn {k} of {len(change.turns)}")
        else:
            for m in single.moves[:3]:
                shapes += self._move_shapes(m, "illegal" if change.legal is False else "info", "judged move")
        if single.nearest is not None and change.legal is False:
            shapes += self._move_shapes(single.nearest, "info", "nearest legal move")
        lines = (change.summary(), f"rule: {change.rule} - {change.rule.words}", f"before: {state.position}")
        return Explanation(f"Kang: {change.verdict}", tuple(shapes), lines, focus, change.to_json())

    def commands(self):
        return kang_commands(self)

    # --- what the players declare (the camera cannot see it) -------------------------------------
    def declarables(self, state: KangState) -> tuple[Declarable, ...]:
        return declare.declarables(self, state)

    def declare(self, state: KangState, declaration: Declaration, t: float) -> Step:
        return declare.declare(self, state, declaration, t)


_CONSEQUENCES = (str(rule_ref(RULES["no-score"])), str(rule_ref(RULES["game-over"])))


def follows_from_move(ruling: Ruling) -> bool:
    """What a move leads to and an illegal one must not: a score, a win (referee/pending.py)."""
    return ruling.kind == "state" and ruling.rule in _CONSEQUENCES


def _board_restored(state: KangState, observation: Observation) -> bool:
    """The board read is the last legal position's (kangaroos of a size are alike, so a
    token put back on its square counts even when it is another of the same size)."""
    read = read_board(observation)
    return state.position is not None and read.complete and read.layout() == state.position.layout()


GAME = KangGame()
