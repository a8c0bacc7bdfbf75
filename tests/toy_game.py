"""A toy game for the seam tests: "counter" counts the pieces on the table.

Rule (our own, for the test): a new stable state is legal when it holds exactly one
piece more than the last one; any other change of the count is illegal. Its one invisible
event: the players may declare the count ("count = 3"). Its one
setting, ``start``, is the count before anything is seen. It is registered from the
tests only (referee.registry.register); webui knows nothing of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from referee.errors import InvalidInputError
from referee.game import (Declarable, Declaration, Explanation, Option, RuleRef, Shape, Step, View,
                          check_declaration, declared_ruling)
from referee.observation import Observation
from referee.rulings import Ruling

RULE = RuleRef("counter", "One at a time", "Counter")


def parse_start(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise InvalidInputError(f"--start {text!r} is not a whole number") from None
    if value < 0:
        raise InvalidInputError(f"--start {text!r} must be 0 or more")
    return value


@dataclass(frozen=True)
class CounterState:
    count: int
    states_seen: int = 0


class CounterGame:
    id = "counter"
    title = "Counter"
    options = (Option("start", "pieces on the table before the game starts", parse_start, default=0, metavar="N"),)

    def new_state(self, settings: Mapping[str, Any]) -> CounterState:
        return CounterState(count=settings.get("start") or 0)

    def step(self, state: CounterState, observation: Observation, t: float) -> Step:
        now = len(observation.pieces)
        if now == state.count:
            return Step(CounterState(now, state.states_seen + 1))
        legal = now == state.count + 1
        ruling = Ruling(t, self.id, "move", f"count {state.count} -> {now}", legal=legal, rule=RULE,
                        details={"before": state.count, "after": now})
        return Step(CounterState(now, state.states_seen + 1), (ruling,))

    def view(self, state: CounterState) -> View:
        return View("counter", {"count": state.count, "states_seen": state.states_seen}, title=self.title)

    def shapes(self, state: CounterState, observation: Observation | None) -> tuple[Shape, ...]:
        pieces = observation.pieces if observation is not None else ()
        return tuple(Shape("circle", ((p.x_mm, p.y_mm),), role="highlight", radius_mm=20.0) for p in pieces)

    def explain(self, state: CounterState, observation: Observation) -> Explanation | None:
        shapes = tuple(Shape("label", ((p.x_mm, p.y_mm),), role="info", text=str(i + 1))
                       for i, p in enumerate(observation.pieces))
        return Explanation(f"{len(observation.pieces)} pieces", shapes, lines=(f"count: {state.count}",),
                           focus=(-300.0, -300.0, 300.0, 300.0), measures={"count": len(observation.pieces)})

    def commands(self) -> tuple:
        return ()

    # the toy's invisible event: a piece the players add or take away under a hand, so they
    # declare the count (a whole number); the next state is judged from it
    def declarables(self, state: CounterState) -> tuple[Declarable, ...]:
        return (Declarable("count", "pieces on the table", (), RULE, "the count the next state is judged from",
                           value_help="a whole number, e.g. 3"),)

    def declare(self, state: CounterState, declaration: Declaration, t: float) -> Step:
        check_declaration(self, state, declaration)
        count = parse_start(declaration.value)
        return Step(CounterState(count, state.states_seen),
                    (declared_ruling(self.id, declaration, t, f"players declare {count} pieces", RULE),))


GAME = CounterGame()
