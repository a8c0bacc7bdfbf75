"""Which referee rules which game, for the live page and `refcam replay`.

``make_referee(game, course=None, weights=None)`` returns a GameReferee. Tornado
Splash uses its own rules engine (referee.tornado) when it is installed; a game whose
rules engine is not there yet gets a StateOnlyReferee, which reports pieces arriving,
moving and leaving with ``legal=None`` and says plainly that nothing is judged.
"""

from __future__ import annotations

import importlib
import math
from typing import Callable

from .catalog import check_game, default_catalog
from .observation import Observation, PiecePose
from .rulings import GameReferee, Ruling

NO_ENGINE = "no rules engine yet for this game"
GAME_TITLES = {"tornado": "Tornado Splash", "kayak": "Kayak Chaos", "kang": "Kang"}

# Where each game's full referee lives, tried in order: (module, class name).
RULES_ENGINES: dict[str, tuple[tuple[str, str], ...]] = {
    "tornado": (("referee.tornado.api", "TornadoReferee"), ("referee.tornado.referee", "TornadoReferee"),
                ("referee.tornado", "TornadoReferee")),
    "kang": (("referee.kang.api", "KangReferee"), ("referee.kang.referee", "KangReferee")),
    "kayak": (("referee.kayak.api", "KayakReferee"), ("referee.kayak.referee", "KayakReferee")),
}

# Pieces that define the game frame or the furniture: their "moves" are not game moves.
_FURNITURE_PREFIXES = ("table/", "kang/board")


def kang_square(x_mm: float, y_mm: float, square_mm: float | None = None) -> str:
    """Kang square name (a1..f6, SPEC section 2) under a board-frame point, or where it is off the board."""
    cat = default_catalog().game("kang")
    a = square_mm or float(cat["grid"]["square_mm"])
    files, rows = int(cat["grid"]["files"]), int(cat["grid"]["rows"])
    half = float(cat.get("board_half_extent_mm", files * a / 2))
    f = math.floor(x_mm / a + files / 2)
    r = math.floor(y_mm / a + rows / 2)
    if 0 <= f < files and 0 <= r < rows:
        return f"{'abcdef'[f]}{r + 1}"
    if y_mm < -half:
        return "start zone A"
    if y_mm > half:
        return "start zone B"
    return "off the grid"


class StateOnlyReferee:
    """Reports what changed between stable states, judging nothing (legal=None)."""

    def __init__(self, game: str, moved_mm: float = 5.0):
        self.game = check_game(game)
        self.moved_mm = moved_mm
        self.pieces: dict[str, PiecePose] = {}
        self.states_seen = 0
        self.last_t: float | None = None

    def where(self, p: PiecePose) -> str:
        if self.game == "kang" and not p.name.startswith(_FURNITURE_PREFIXES):
            return f"{kang_square(p.x_mm, p.y_mm)} ({p.x_mm:.0f}, {p.y_mm:.0f}) mm"
        return f"({p.x_mm:.0f}, {p.y_mm:.0f}) mm"

    def observe_stable(self, observation: Observation, t: float) -> list[Ruling]:
        rule = f"{GAME_TITLES[self.game]}: {NO_ENGINE}"
        now = {p.name: p for p in observation.pieces}
        out: list[Ruling] = []
        for name in sorted(now.keys() - self.pieces.keys()):
            p = now[name]
            out.append(Ruling(t=t, game=self.game, kind="state", summary=f"{name} appeared at {self.where(p)}",
                              legal=None, rule=rule, details={"piece": name, "change": "appeared", "to": p.to_json()}))
        for name in sorted(now.keys() & self.pieces.keys()):
            a, b = self.pieces[name], now[name]
            dist = math.hypot(b.x_mm - a.x_mm, b.y_mm - a.y_mm)
            turn = (b.theta_deg - a.theta_deg + 180.0) % 360.0 - 180.0
            if dist < max(self.moved_mm, 3 * max(a.sigma_mm, b.sigma_mm)) and abs(turn) < 10.0:
                continue
            if name.startswith(_FURNITURE_PREFIXES):
                continue
            out.append(Ruling(t=t, game=self.game, kind="move",
                              summary=f"{name} moved from {self.where(a)} to {self.where(b)}",
                              legal=None, rule=rule,
                              details={"piece": name, "change": "moved", "from": a.to_json(), "to": b.to_json(),
                                       "distance_mm": round(dist, 1), "turn_deg": round(turn, 1)}))
        for name in sorted(self.pieces.keys() - now.keys()):
            p = self.pieces[name]
            out.append(Ruling(t=t, game=self.game, kind="state", summary=f"{name} left {self.where(p)}",
                              legal=None, rule=rule, details={"piece": name, "change": "left", "from": p.to_json()}))
        self.pieces = now
        self.states_seen += 1
        self.last_t = t
        return out

    def state_json(self) -> dict:
        return {"game": self.game, "engine": "state-only", "note": NO_ENGINE, "states_seen": self.states_seen,
                "pieces": [{"name": p.name, "x_mm": round(p.x_mm, 1), "y_mm": round(p.y_mm, 1),
                            "theta_deg": round(p.theta_deg, 1), "where": self.where(p)}
                           for p in sorted(self.pieces.values(), key=lambda p: p.name)]}


def rules_engine(game: str) -> Callable[..., GameReferee] | None:
    """The game's full referee class, if its module is installed."""
    for module, cls in RULES_ENGINES.get(game, ()):
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name and module.startswith(exc.name):
                continue
            raise
        factory = getattr(mod, cls, None)
        if factory is not None:
            return factory
    return None


def make_referee(game: str, course: str | None = None, weights: dict[str, float] | None = None) -> GameReferee:
    """The referee for a game: its rules engine when there is one, else the state-only referee."""
    check_game(game)
    factory = rules_engine(game)
    if factory is None:
        return StateOnlyReferee(game)
    kwargs = {}
    if game == "tornado":
        if course:
            kwargs["course"] = course
        if weights:
            kwargs["weights"] = weights
    return factory(**kwargs)


def parse_weights(text: str | None) -> dict[str, float]:
    """'boat-1=3,boat-2=1.5' -> {'tornado/boat-1': 3.0, 'tornado/boat-2': 1.5}: only the boats given."""
    from referee.tornado.standings import parse_weight_overrides

    return parse_weight_overrides(text)
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise InvalidInputError(f"boat weight {item!r} is not NAME=NUMBER (e.g. boat-1=3)")
        if not name.startswith("tornado/"):
            name = f"tornado/{name}"
        if not default_catalog().has_piece(name):
            raise InvalidInputError(f"unknown boat {item.partition('=')[0].strip()!r} in --weights (boat-1 .. boat-6)")
        try:
            w = float(value)
        except ValueError:
            raise InvalidInputError(f"boat weight {item!r}: {value.strip()!r} is not a number") from None
        if not math.isfinite(w) or w < 0:
            raise InvalidInputError(f"boat weight {item!r} must be a finite number >= 0")
        if name in out:  # which of the two was meant? refuse rather than keep the last
            raise InvalidInputError(f"boat {name.split('/', 1)[1]!r} is given two weights in --weights {text!r}")
        out[name] = w
    return out
