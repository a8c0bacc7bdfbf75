"""Seeded whole games of Kang, Kayak Chaos and Tornado Splash, played to the winner by random
playouts that use the rules engines as move generators, with the table each turn leaves.

Each game is a ``PlayedGame``: the scene base (one fixed camera for the whole game), the start
table, and each turn with its truth: who moved, what, legal or not, the position after it in
the referee's own notation, the score or places, and where a hand goes to make it. One
illegal change and its take-back may be put in a game (``illegal_at``): the truth says so.

The moves come from the engines (referee/kang/moves.py, referee/kayak/rules.py through
referee/kayak/playout.py) and the Tornado race follows the rulebook's round structure by
construction (straight cards on a straight course, turn order by distance then weight);
``synth/game_sessions.py`` renders a PlayedGame as a recorded session.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np

from referee.catalog import default_catalog
from synth.scenes import RESOLUTIONS, kayak_tile_pieces, racing_card_names

GAMES = ("kang", "kayak", "tornado")


@dataclass
class PlayedTurn:
    """One change of the table and its truth."""

    player: str  # "A", "pawn-2", "boat-1"
    move: str  # the move in the game's notation ("d0-d1", "paddle 2 down; swerve 2 left", "straight-3")
    legal: bool
    kind: str  # "turn" or "take-back" (the illegal change undone)
    position: str  # the position after the turn, in the referee's notation (see position_key)
    pieces: list[dict]  # the scene's pieces after the turn
    hand_path: tuple[tuple[float, float], tuple[float, float]]  # over the moved piece: from, to
    arm_from: tuple[float, float]  # where the player sits: the arm comes from there
    score: str | None = None  # after the turn: Kang alfalfa "A-B"; Tornado places "boat-2,boat-1,..."
    winner: str | None = None  # once decided


@dataclass
class PlayedGame:
    game: str
    seed: int
    base: dict  # scene without pieces: camera, table, effects
    start_pieces: list[dict]
    start_position: str
    turns: list[PlayedTurn] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # extra files of the session folder (course.json)

    @property
    def winner(self) -> str | None:
        return self.turns[-1].winner if self.turns else None

    @property
    def score(self) -> str | None:
        return self.turns[-1].score if self.turns else None


def scene_base(game: str, rng: np.random.Generator, view: list[dict], every: list[dict], size, fx: float,
               roll: float, azimuth: float, tilt: float, heights=(600.0, 900.0)) -> dict:
    """The fixed camera, table and image effects of one game's session, as the bundled sessions
    get theirs (samples/generate.py): the camera sees every piece in ``view`` from start to end."""
    from samples.generate import _session_base

    return _session_base(game, rng, view, every, size, fx, roll=roll, azimuth=azimuth, tilt=tilt, heights=heights)


# --- Kang -----------------------------------------------------------------------------------
KANG_ARM = {"A": (0.0, -600.0), "B": (0.0, 600.0)}


def _kang_pick(rng: random.Random, moves: list):
    """A random legal move, most often a score, else often a kick: games end in 15-40 moves."""
    exits = [m for m in moves if m.exits]
    kicks = [m for m in moves if m.kick is not None]
    if exits and rng.random() < 0.9:
        return rng.choice(exits)
    if kicks and rng.random() < 0.5:
        return rng.choice(kicks)
    return rng.choice(moves)


def _kang_wrong_coach(pos, rng: random.Random):
    """An illegal change: the coach who does not have the move plays one of their own moves."""
    from referee.kang.explain import explain
    from referee.kang.moves import legal_moves, push
    from referee.kang.position import Position, other

    swapped = Position(pos.cells, pos.zones, other(pos.to_move), pos.alfalfa, pos.no_score)
    moves = [m for m in legal_moves(swapped) if not m.exits]
    rng.shuffle(moves)
    for m in moves:
        if not explain(pos, push(swapped, m).layout()).legal:
            return swapped, m
    return None, None


def kang_game(seed: int, max_moves: int = 40, illegal_at: int | None = None) -> PlayedGame:
    """A Kang game to its winner (first to 3 alfalfa, Kang End of the Game), at most max_moves."""
    from referee.kang.moves import legal_moves
    from referee.kang.position import Position
    from samples.generate import _kang_apply, _kang_places, kang_start_table

    catalog = default_catalog()
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    names_at, jitter, every_slot = kang_start_table(catalog, nrng)
    base = scene_base("kang", nrng, every_slot, every_slot, RESOLUTIONS["720p"], 1500.0, roll=90.0, azimuth=0.0,
                      tilt=12.0)
    pos = Position.start()
    game = PlayedGame("kang", seed, base, _kang_places(catalog, names_at, jitter), str(pos))
    while pos.winner is None and len(game.turns) < max_moves:
        coach = pos.to_move
        if illegal_at is not None and len(game.turns) == illegal_at:
            mover_pos, move = _kang_wrong_coach(pos, rng)
            if move is not None:
                wrong_at, wrong_pos, a, b = _kang_apply(catalog, names_at, mover_pos, str(move))
                game.turns.append(PlayedTurn(mover_pos.to_move, str(move), False, "turn", str(wrong_pos),
                                             _kang_places(catalog, wrong_at, jitter), (a, b),
                                             KANG_ARM[mover_pos.to_move], _kang_score(pos)))
                game.turns.append(PlayedTurn(mover_pos.to_move, "take-back", True, "take-back", str(pos),
                                             _kang_places(catalog, names_at, jitter), (b, a),
                                             KANG_ARM[mover_pos.to_move], _kang_score(pos)))
        move = _kang_pick(rng, list(legal_moves(pos)))
        names_at, pos, a, b = _kang_apply(catalog, names_at, pos, str(move))
        game.turns.append(PlayedTurn(coach, str(move), True, "turn", str(pos), _kang_places(catalog, names_at, jitter),
                                     (a, b), KANG_ARM[coach], _kang_score(pos), pos.winner))
    return game


def _kang_score(pos) -> str:
    return f"{pos.alfalfa[0]}-{pos.alfalfa[1]}"


# --- Kayak Chaos ----------------------------------------------------------------------------
def _kayak_actions_by_taste(rng: random.Random, pos, pawn: int) -> list:
    """The engine's candidate actions, ordered so that a kayak mostly heads downstream and now
    and then swerves or changes the river: a game reaches the Finish in a few dozen turns."""
    from referee.kayak import actions as A
    from referee.kayak.playout import candidate_actions

    def taste(action) -> float:
        if isinstance(action, (A.Paddle, A.DoublePaddle)):
            return rng.random() + (2.0 if action.direction == "down" else -1.0)
        if isinstance(action, (A.Swerve, A.DoubleSwerve)):
            return rng.random() + 0.8
        return rng.random() - 0.6  # Weather Shift, Tip, Whirlpool: now and then

    return sorted(candidate_actions(pos, pawn), key=taste, reverse=True)


def kayak_turn(rng: random.Random, book, pos, pawn: int, stack: list[int]):
    """Up to three legal actions of one player, taken from the engine (rules.apply, check_turn);
    returns (position after, the actions' words)."""
    from referee.kayak import actions as A
    from referee.kayak.errors import IllegalActionError, NeedsNewTileError
    from referee.kayak.playout import lay_tile
    from referee.kayak.position import winners
    from referee.kayak.rules import apply, check_turn

    done: list = []
    for _ in range(rng.choice((1, 2, 3, 3))):
        for action in _kayak_actions_by_taste(rng, pos, pawn):
            if check_turn(tuple(done) + (action,), False):
                continue
            try:
                try:
                    out = apply(pos, action, book)
                except NeedsNewTileError:
                    if not stack:
                        continue
                    out = apply(pos, action, book, (lay_tile(rng, book, pos, stack[0]),))
            except (IllegalActionError, NeedsNewTileError):
                continue
            if out.placements:
                stack.pop(0)
            pos = out.position
            done.append(action)
            break
        if winners(pos, book):
            break
    return pos, "; ".join(A.words(a) for a in done)


def _kayak_too_far(rng: random.Random, book, pos, pawn: int):
    """An illegal change: the kayak carried at least 5 spaces (more than three actions can take
    it), onto an empty space of no rock; the rules engine's explain confirms it is illegal."""
    from referee.kayak.explain import explain
    from referee.kayak.position import Position, Space

    here = pos.where(pawn)
    taken = {s for p, s in pos.kayaks}
    spots = [Space(i, r, ln) for i in range(len(pos.tiles)) for r in range(book.rows) for ln in range(book.lanes)
             if book.cell(pos.tiles[i], r, ln) in ".S" and Space(i, r, ln) not in taken
             and abs((i * book.rows + r) - (here.index * book.rows + here.row)) + abs(ln - here.lane) >= 5]
    rng.shuffle(spots)
    for space in spots[:20]:
        after = Position.make(pos.tiles, {**dict(pos.kayaks), pawn: space})
        if not explain(pos, after, book).legal:
            return after
    return None


def _kayak_pieces(book, catalog, pos, jitter) -> list[dict]:
    from referee.kayak.river import space_centre

    pawns = []
    for pawn, space in pos.kayaks:
        x, y = space_centre(book, pos, space)
        dx, dy, th = jitter[pawn]
        pawns.append({"name": f"kayak/pawn-{pawn}", "x_mm": x + dx, "y_mm": y + dy, "theta_deg": th})
    return kayak_tile_pieces(catalog, list(pos.tiles)) + pawns


def _kayak_hand(book, before, after, pawn: int) -> tuple[tuple[float, float], tuple[float, float]]:
    from referee.kayak.river import space_centre

    moved = [p for p, s in after.kayaks if before.where(p) != s] or [pawn]
    src = space_centre(book, before, before.where(moved[0]))
    return src, space_centre(book, after, after.where(moved[0]))


def kayak_game(seed: int, pawns: int = 3, max_turns: int = 60, illegal_at: int | None = None) -> PlayedGame:
    """A Kayak Chaos game from the Start tile alone, the river laid as kayaks need it from the
    shuffled stack (every river tile before the Finish tile: Game Setup), played until a kayak
    reaches a Finish space (Game End)."""
    from referee.kayak.playout import start_position, tile_stack
    from referee.kayak.position import winners
    from referee.kayak.tiles import tile_book

    catalog, book = default_catalog(), tile_book()
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    pos = start_position(rng, book, pawns)
    stack = tile_stack(rng, book)
    jitter = {p: (float(nrng.uniform(-2, 2)), float(nrng.uniform(-2, 2)), float(nrng.uniform(-40, 40)))
              for p in range(1, pawns + 1)}
    start = pos
    plays: list[tuple] = []  # (pawn, words, legal, kind, before, after)
    while not winners(pos, book) and len(plays) < max_turns:
        pawn = len([p for p in plays if p[3] == "turn" and p[2]]) % pawns + 1
        if illegal_at is not None and len(plays) == illegal_at:
            wrong = _kayak_too_far(rng, book, pos, pawn)
            if wrong is not None:
                plays += [(pawn, "carried too far", False, "turn", pos, wrong),
                          (pawn, "take-back", True, "take-back", wrong, pos)]
        after, words = kayak_turn(rng, book, pos, pawn, stack)
        plays.append((pawn, words, True, "turn", pos, after))
        pos = after
    return _kayak_played(seed, nrng, book, catalog, start, plays, jitter)


def _kayak_played(seed, nrng, book, catalog, start, plays, jitter) -> PlayedGame:
    from referee.kayak.position import winners

    every = [_kayak_pieces(book, catalog, after, jitter) for *_, after in plays] or [
        _kayak_pieces(book, catalog, start, jitter)]
    view = [p for pieces in every for p in pieces if p["name"].startswith("kayak/tile")]
    base = scene_base("kayak", nrng, view, every[-1] + view, RESOLUTIONS["1080p"], 1500.0, roll=0.0, azimuth=90.0,
                      tilt=10.0, heights=(600.0, 1500.0))
    game = PlayedGame("kayak", seed, base, _kayak_pieces(book, catalog, start, jitter), start.text())
    for (pawn, words, legal, kind, before, after), pieces in zip(plays, every):
        won = winners(after, book) if legal else []
        game.turns.append(PlayedTurn(f"pawn-{pawn}", words, legal, kind, after.text(), pieces,
                                     _kayak_hand(book, before, after, pawn), (300.0, -650.0),
                                     None, f"pawn-{won[0]}" if won else None))
    return game


# --- Tornado Splash -------------------------------------------------------------------------
TORNADO_FINISH_X = 342.0  # between the brackets of a 2- and a 3-space card on the third card: 9 mm either way
TORNADO_CARD_STEP = 110.0  # a straight card's length: the next one lies this far ahead
TORNADO_FIRST_CARD_X = 77.0  # the first card touches the start gate
TORNADO_LANES = {"tornado/boat-1": 75.0, "tornado/boat-2": 0.0, "tornado/boat-3": -75.0}


def tornado_course() -> dict:
    """The course file: the bundled race's sprint course with the finish line nearer."""
    from samples.tornado_race import SPRINT_COURSE

    layout = dict(SPRINT_COURSE["layout"], **{"finish-line": [TORNADO_FINISH_X, 0, 0]})
    return dict(SPRINT_COURSE, id="bench-sprint", name="Bench sprint", layout=layout,
                setup=f"Start gate, then the finish line {TORNADO_FINISH_X:.0f} mm straight ahead; no curves "
                      f"(make bench-games).")


def _tornado_order(boats: dict[str, dict], racing: list[str]) -> list[str]:
    """Ranking Phase on a straight course: the boat furthest ahead first, level boats by weight
    (boat number); boats 18 mm or more apart are never level."""
    return sorted(racing, key=lambda b: (-round(boats[b]["x_mm"], 1), int(b.rsplit("-", 1)[1])))


def tornado_game(seed: int, max_rounds: int = 6) -> PlayedGame:
    """A Tornado Splash race of three boats from the start gate to the finish line: each turn a
    boat's player lays one straight card continuing the boat's chain and moves it onto the card's
    last space (Player Token Movement: 1-3 spaces). A boat crosses when its space's front bracket
    reaches the line; places follow the crossing order and the last boat racing takes the last
    place (Ending the Game)."""
    import json

    catalog = default_catalog()
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    layout = [{"name": "tornado/start-gate", "x_mm": 0.0, "y_mm": 0.0, "theta_deg": 0.0},
              {"name": "tornado/finish-line", "x_mm": TORNADO_FINISH_X, "y_mm": 0.0, "theta_deg": 0.0}]
    boats = {b: {"name": b, "x_mm": 0.0, "y_mm": y, "theta_deg": 0.0} for b, y in TORNADO_LANES.items()}
    chars = [{"name": f"tornado/character-{k}", "x_mm": 60.0 + 110.0 * k, "y_mm": -215.0, "theta_deg": 0.0,
              "face": "face-up"} for k in (1, 2, 3)]
    cards: list[dict] = []
    used: set[str] = set()
    laid = {b: 0 for b in boats}
    crossed: list[str] = []

    def table() -> list[dict]:
        return [dict(p) for p in layout + cards + list(boats.values()) + chars]

    start = table()
    turns: list[tuple] = []
    for _ in range(max_rounds):
        racing = [b for b in boats if b not in crossed]
        if len(racing) <= 1:
            break
        for boat in _tornado_order(boats, racing):
            kind = rng.choice(("straight-1", "straight-2", "straight-3", "straight-3"))
            deck = int(boat.rsplit("-", 1)[1])
            name = next(n for n in racing_card_names(catalog, deck, kind) if n not in used)
            used.add(name)
            x = TORNADO_FIRST_CARD_X + TORNADO_CARD_STEP * laid[boat]
            laid[boat] += 1
            cards.append({"name": name, "x_mm": x, "y_mm": TORNADO_LANES[boat], "theta_deg": 0.0})
            last = catalog.racing_card_kind(kind)["spaces"][-1]
            old = (boats[boat]["x_mm"], boats[boat]["y_mm"])
            boats[boat]["x_mm"] = x + float(last["centre_x"])
            if x + float(last["bracket_x"]) >= TORNADO_FINISH_X:
                crossed.append(boat)
            left = [b for b in boats if b not in crossed]
            places = crossed + left if len(left) <= 1 else list(crossed)
            turns.append((boat, f"{name} ({kind})", table(), (old, (boats[boat]["x_mm"], old[1])),
                          tornado_position(boat, name, len(catalog.racing_card_kind(kind)["spaces"])),
                          ",".join(short for short in (p.split("/")[1] for p in places)), len(left) <= 1))
            if len(left) <= 1:
                break
    every = start + [p for t in turns for p in t[2]]
    view = layout + chars + [{"name": "tornado/card-6-01", "x_mm": TORNADO_FINISH_X + 90.0, "y_mm": 0.0,
                              "theta_deg": 0.0}, {"name": "tornado/card-5-01", "x_mm": 60.0, "y_mm": 120.0,
                                                  "theta_deg": 0.0}]
    base = scene_base("tornado", nrng, view, every, RESOLUTIONS["720p"], 1400.0, roll=0.0,
                      azimuth=-90.0, tilt=15.0, heights=(450.0, 700.0))
    game = PlayedGame("tornado", seed, base, start, "", files={"course.json": json.dumps(tornado_course(), indent=1)})
    for boat, move, pieces, hand, position, places, over in turns:
        game.turns.append(PlayedTurn(boat.split("/")[1], move, True, "turn", position, pieces,
                                     hand, (300.0, -650.0), places or None,
                                     places.split(",")[0] if over else None))
    return game


def tornado_position(boat: str, card: str, spaces: int) -> str:
    """The position a Tornado turn leaves, in the referee's words: where the moved boat stands
    ("boat-1 space 3 of card-1-06")."""
    return f"{boat.split('/')[1]} space {spaces} of {card.split('/')[1]}"


def play(game: str, seed: int, size: str = "full", illegal: bool = True) -> PlayedGame:
    """One seeded game. size "full": to the winner; "tiny": a few turns (tests)."""
    if game == "kang":
        return kang_game(seed, max_moves=3 if size == "tiny" else 40,
                         illegal_at=(4 + seed % 5) if illegal and size != "tiny" else None)
    if game == "kayak":
        return kayak_game(seed, max_turns=3 if size == "tiny" else 60,
                          illegal_at=(3 + seed % 4) if illegal and size != "tiny" else None)
    if game == "tornado":
        return tornado_game(seed, max_rounds=1 if size == "tiny" else 6)
    raise ValueError(f"unknown game {game!r}; one of {', '.join(GAMES)}")
