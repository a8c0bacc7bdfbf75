"""Seeded random games (in the OpenSpiel manner), for the tests, the bench and the samples."""

from __future__ import annotations

import random
from dataclasses import dataclass

from . import actions as A
from .errors import IllegalActionError, NeedsNewTileError
from .position import Position, Space, winners
from .rules import apply, check_turn
from .tiles import SIDES, RiverTile, TileBook, tile_book


def start_position(rng: random.Random, book: TileBook, pawns: int) -> Position:
    """Setup: the Start tile alone, every kayak on a Start space of its own lane."""
    lanes = rng.sample(range(book.lanes), pawns)
    return Position.make([RiverTile(book.start, rng.choice(SIDES))], {p + 1: Space(0, 0, lanes[p]) for p in range(pawns)})


def tile_stack(rng: random.Random, book: TileBook) -> list[int]:
    """Setup: the river tiles shuffled, the Finish tile at the bottom."""
    middle = sorted(t for t in book.roles if not book.is_start_or_finish(t))
    rng.shuffle(middle)
    return middle + [book.finish]


def lay_tile(rng: random.Random, book: TileBook, pos: Position, number: int) -> RiverTile:
    """A new tile lined up with the last one, side and turn chosen so that the way stays open."""
    last = pos.tiles[-1]
    options = [RiverTile(number, s, r, last.shift) for s in SIDES for r in (0, 180)]
    if number == book.finish:
        options = [o for o in options if o.rotation == 0]
    good = [o for o in options if book.open_joint_lanes(last, o)]
    return rng.choice(good or options)


def candidate_actions(pos: Position, pawn: int) -> list:
    out = []
    for d in A.ALONG:
        out += [A.Paddle(pawn, d), A.DoublePaddle(pawn, d)]
    for d in A.ACROSS:
        out += [A.Swerve(pawn, d), A.DoubleSwerve(pawn, d)]
    for i, rt in enumerate(pos.tiles):
        out += [A.WeatherShift(rt.tile, "left"), A.WeatherShift(rt.tile, "right"), A.Tip(rt.tile)]
        if i + 1 < len(pos.tiles):
            out.append(A.Whirlpool(rt.tile, pos.tiles[i + 1].tile))
    return out


@dataclass
class Turn:
    pawn: int
    before: Position
    after: Position
    actions: tuple
    positions: tuple  # the position after each action
    placed: tuple  # tiles laid during the turn


def deck_mix(catalog=None) -> dict[str, float]:
    """How often each card kind is in the catalog's action deck (its Kayak action-card mix)."""
    from ..catalog import default_catalog

    names = {"tip-the-kayak": "tip"}
    mix: dict[str, float] = {}
    for piece in (catalog or default_catalog()).pieces(game="kayak", family="kayak/action-card"):
        kind = names.get(piece.attrs.get("kind"), piece.attrs.get("kind"))
        mix[kind] = mix.get(kind, 0) + 1
    return mix


def _weighted_order(rng: random.Random, choices: list, mix: dict[str, float]) -> list:
    """The choices in a random order where each card kind comes first as often as the deck holds
    it (not as often as it has targets: a Whirlpool has many tile pairs, the deck few cards)."""
    per_kind: dict[str, int] = {}
    for a in choices:
        per_kind[a.kind] = per_kind.get(a.kind, 0) + 1
    keyed = [(rng.random() ** (per_kind[a.kind] / max(mix.get(a.kind, 0), 1e-9)), i) for i, a in enumerate(choices)]
    return [choices[i] for _, i in sorted(keyed, reverse=True)]


def play_turn(rng: random.Random, book: TileBook, pos: Position, pawn: int, stack: list[int],
              advanced: bool = False, discard_rate: float = 0.15, mix: dict[str, float] | None = None) -> Turn:
    """Up to three random legal actions by one player (discards included); ``mix``: card kinds
    drawn as often as the deck holds them (else every legal action alike)."""
    before, done, seen, placed = pos, [], [], []
    for _ in range(3):
        if rng.random() < discard_rate:
            done.append(A.Discard())
            continue
        choices = candidate_actions(pos, pawn)
        if mix:
            choices = _weighted_order(rng, choices, mix)
        else:
            rng.shuffle(choices)
        for action in choices:
            if check_turn(tuple(done) + (action,), advanced):
                continue
            try:
                supply = ()
                try:
                    out = apply(pos, action, book)
                except NeedsNewTileError:
                    if not stack:
                        continue
                    supply = (lay_tile(rng, book, pos, stack[0]),)
                    out = apply(pos, action, book, supply)
            except (IllegalActionError, NeedsNewTileError):
                continue
            if out.placements:
                stack.pop(0)
                placed += list(out.placements)
            pos = out.position
            done.append(action)
            seen.append(pos)
            break
        if winners(pos, book):
            break
    return Turn(pawn, before, pos, tuple(done), tuple(seen), tuple(placed))


def play_game(seed: int, max_turns: int = 12, book: TileBook | None = None, advanced: bool = False,
              mix: dict[str, float] | None = None):
    """Yield the turns of one seeded game until a kayak finishes or max_turns pass; ``mix``:
    see play_turn."""
    rng = random.Random(seed)
    book = book or tile_book()
    pawns = rng.randint(2, 4)
    pos, stack = start_position(rng, book, pawns), tile_stack(rng, book)
    for n in range(max_turns):
        turn = play_turn(rng, book, pos, n % pawns + 1, stack, advanced, mix=mix)
        yield turn
        pos = turn.after
        if winners(pos, book):
            return
