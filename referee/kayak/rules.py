"""Applying Kayak Chaos actions to a position, each rule citing its rulebook section.

``apply`` returns the new position (or raises IllegalActionError / NeedsNewTileError);
``is_legal`` answers without raising. ``apply(..., breaches=list)`` is the lenient mode
the explainer uses: a rule that is broken is noted in the list (section, reason) and the
action goes ahead wherever it physically can.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import actions as A
from .errors import IllegalActionError, NeedsNewTileError
from .position import Position, Space, pawn_name, tile_token
from .tiles import DOUBLE, ROCK, RiverTile, TileBook, tile_book

SIDE_STEP = {"left": 1, "right": -1}
CARD_SECTION = {"paddle": "Paddle Cards", "double-paddle": "Double Paddle Cards", "swerve": "Swerve Cards",
                "double-swerve": "Double Swerve Cards", "free-move": "Turns"}


@dataclass(frozen=True)
class Placement:
    """A tile drawn and laid at the end of the river, and the pawn whose player laid it."""

    tile: RiverTile
    placer: int


@dataclass(frozen=True)
class Outcome:
    position: Position
    placements: tuple[Placement, ...] = ()


def _breach(breaches, section: str, reason: str) -> None:
    if breaches is None:
        raise IllegalActionError(reason, section)
    breaches.append((section, reason))


class _Board:
    """A working copy for one action: tiles, kayak spaces, tiles waiting to be laid."""

    def __init__(self, book: TileBook, pos: Position, supply, breaches):
        self.book, self.breaches = book, breaches
        self.tiles = list(pos.tiles)
        self.at = dict(pos.kayaks)
        self.supply = list(supply)
        self.placed: list[Placement] = []

    def occupant(self, space: Space, besides: int | None = None) -> int | None:
        for pawn, s in self.at.items():
            if s == space and pawn != besides:
                return pawn
        return None

    def cell(self, space: Space) -> str:
        return self.book.cell(self.tiles[space.index], space.row, space.lane)

    def outcome(self) -> Outcome:
        return Outcome(Position.make(self.tiles, self.at), tuple(self.placed))

    # --- where a single step leads ------------------------------------------------------------
    def neighbour(self, s: Space, direction: str) -> tuple[Space | None, str]:
        """The space one step away, or None and why: "bank", "top" (above the Start) or "end"."""
        book = self.book
        if direction in SIDE_STEP:
            lane = s.lane + SIDE_STEP[direction]
            return (Space(s.index, s.row, lane), "") if 0 <= lane < book.lanes else (None, "bank")
        row = s.row + (1 if direction == "down" else -1)
        if 0 <= row < book.rows:
            return Space(s.index, row, s.lane), ""
        index = s.index + (1 if direction == "down" else -1)
        if index < 0:
            return None, "top"
        if index >= len(self.tiles):
            return None, "end"
        # crossing a joint keeps the river lane: lanes are counted in each tile's own lanes
        lane = s.lane + self.tiles[s.index].shift - self.tiles[index].shift
        if not 0 <= lane < book.lanes:
            return None, "bank"
        return Space(index, 0 if direction == "down" else book.rows - 1, lane), ""

    def lay_new_tile(self, placer: int) -> bool:
        """The River: a kayak moving past the last tile makes its player draw and lay the next
        tile, lined up with the last one (our reading of "aligned": the same lateral shift)."""
        if not self.supply or self.tiles[-1].tile == self.book.finish:
            return False
        new = self.supply.pop(0)
        last = self.tiles[-1]
        if new.shift is None:  # laid lined up with the last tile, however that lies now
            new = RiverTile(new.tile, new.side, new.rotation, last.shift)
        if any(rt.tile == new.tile for rt in self.tiles):
            _breach(self.breaches, "The River", f"tile {new.tile} is already in the river")
        if new.shift != last.shift:
            _breach(self.breaches, "The River", f"new tile {tile_token(new)} is not lined up with tile {last.tile}")
        undrawn = sorted(t for t, role in self.book.roles.items()
                         if role == "river" and all(rt.tile != t for rt in self.tiles))
        if new.tile == self.book.finish and undrawn:
            # Game Setup: the Finish tile waits at the bottom of the stack, under every other tile
            _breach(self.breaches, "Game Setup", f"the Finish tile {new.tile} is laid while tile(s) "
                                                 f"{', '.join(map(str, undrawn))} are still in the stack above it")
        self.tiles.append(new)
        self.placed.append(Placement(new, placer))
        return True

    # --- moving kayaks ------------------------------------------------------------------------
    def step(self, pawn: int, direction: str, section: str, pushed: bool = False) -> None:
        """Move one kayak one space, pushing any kayak in the way along the chain."""
        src = self.at[pawn]
        target, why = self.neighbour(src, direction)
        halves = self.book.double_halves(self.tiles[src.index], src.row, src.lane)
        if target and direction == "up" and halves and src.row == halves[1] and target.row == halves[0] \
                and target.index == src.index:
            # Double Spaces: the double space is one space, so going upstream leaves it whole
            target, why = self.neighbour(target, "up")
        if target is None and why == "end" and self.lay_new_tile(pawn):
            target, why = self.neighbour(src, direction)
        if target is None:
            self._off_river(pawn, why, section, pushed)
        if self.cell(target) == ROCK:
            # Rocks: no kayak ever moves onto (or, in a double move, over) a rock, pushed or not
            _breach(self.breaches, "Pushing Kayaks" if pushed else "Rocks",
                    f"{pawn_name(pawn)} would {'be pushed' if pushed else 'move'} onto a rock at {target}")
        if direction in SIDE_STEP and self.shared_double_from_side(target, pawn):
            # Double Spaces: a kayak may join another in a double space only from upstream,
            # behind it; coming in from the side, beside the one already there, is not allowed
            _breach(self.breaches, "Double Spaces",
                    f"{pawn_name(pawn)} would {'be pushed' if pushed else 'move'} into the double space at {target} "
                    f"from the side, where {pawn_name(self.double_partner(target, pawn))} already is")
        ahead = self.occupant(target, besides=pawn)
        if ahead is not None:
            # Pushing Kayaks: the kayak in the way goes one space further the same way, and so on
            self.step(ahead, direction, section, pushed=True)
        self.at[pawn] = target
        self.ride_rapids(pawn)

    def double_partner(self, space: Space, pawn: int) -> int | None:
        """The kayak (other than ``pawn``) in the other half of the double space holding ``space``."""
        halves = self.book.double_halves(self.tiles[space.index], space.row, space.lane)
        if not halves:
            return None
        other = Space(space.index, halves[1] if space.row == halves[0] else halves[0], space.lane)
        return self.occupant(other, besides=pawn)

    def shared_double_from_side(self, target: Space, pawn: int) -> bool:
        """Whether moving sideways into ``target`` would join a kayak already in its double space:
        a kayak in the other half, whether ``target`` is empty or its occupant is pushed out
        (the occupant leaves; the one in the other half stays and would be joined from the side)."""
        return self.double_partner(target, pawn) is not None

    def _off_river(self, pawn: int, why: str, section: str, pushed: bool):
        if why == "end":
            if self.tiles[-1].tile == self.book.finish:
                raise IllegalActionError(f"{pawn_name(pawn)} would leave the river past the Finish tile",
                                         "Pushing Kayaks" if pushed else section)
            raise NeedsNewTileError(f"{pawn_name(pawn)} moves beyond the last tile: pawn-{pawn}'s player "
                                    f"lays a new tile first (The River)", pawn)
        where = "past the bank" if why == "bank" else "off the river above the Start tile"
        # Pushing Kayaks / the card sections: a move or a push that would leave the river is not allowed
        raise IllegalActionError(f"{pawn_name(pawn)} would {'be pushed' if pushed else 'move'} {where}",
                                 "Pushing Kayaks" if pushed else section)

    def ride_rapids(self, pawn: int) -> None:
        """Double Spaces: a kayak in the upstream half rides at once to the downstream half,
        unless a kayak is already there (then it waits behind it)."""
        s = self.at[pawn]
        rt = self.tiles[s.index]
        if self.book.lying(rt)[s.row][s.lane] != DOUBLE:
            return
        halves = self.book.double_halves(rt, s.row, s.lane)
        if halves and s.row == halves[0]:
            down = Space(s.index, halves[1], s.lane)
            if self.occupant(down, besides=pawn) is None:
                self.at[pawn] = down

    def settle(self) -> None:
        """Double Spaces: when the front kayak has left, the one behind moves down at once."""
        for pawn in sorted(self.at):
            self.ride_rapids(pawn)


def _move(board: _Board, action, steps: int, direction: str) -> None:
    section = CARD_SECTION[action.kind]
    before = dict(board.at)
    for i in range(steps):
        try:
            board.step(action.pawn, direction, section)
        except IllegalActionError as exc:
            if i == 0:
                raise
            # Double Paddle / Double Swerve Cards: the full two spaces or nothing
            raise IllegalActionError(f"{pawn_name(action.pawn)} cannot move the full two spaces: {exc.reason}",
                                     section) from None
        board.settle()
    if board.at == before:
        raise IllegalActionError(f"{action} changes nothing", section)


def _river_tile(board: _Board, tile: int, section: str) -> int:
    index = next((i for i, rt in enumerate(board.tiles) if rt.tile == tile), None)
    if index is None:
        raise IllegalActionError(f"tile {tile} is not in the river", section)
    if board.book.is_start_or_finish(tile):
        # Weather Shift / Tip the Kayak / Whirlpool Cards: the Start and Finish tiles never change
        _breach(board.breaches, section, f"tile {tile} is the {'Start' if tile == board.book.start else 'Finish'} "
                                         f"tile, which cannot be changed")
    return index


def _weather_shift(board: _Board, action: A.WeatherShift) -> None:
    """Weather Shift Cards: one tile one lane sideways, its kayaks with it (their spaces, counted
    in the tile's own lanes, do not change); the river must keep an open lane across each joint."""
    i = _river_tile(board, action.tile, "Weather Shift Cards")
    rt = board.tiles[i]
    board.tiles[i] = RiverTile(rt.tile, rt.side, rt.rotation, rt.shift + SIDE_STEP[action.direction])
    for j in (i - 1, i):
        if 0 <= j and j + 1 < len(board.tiles):
            up, down = board.tiles[j], board.tiles[j + 1]
            if not board.book.open_joint_lanes(up, down):
                _breach(board.breaches, "Weather Shift Cards",
                        f"shifting tile {action.tile} {action.direction} closes the way between tiles {up.tile} and {down.tile}")


def _tip(board: _Board, action: A.Tip) -> None:
    """Tip the Kayak Cards: the tile turns 180 degrees where it lies, shift kept; its kayaks turn
    with it, and one in a double space goes to the downstream half."""
    i = _river_tile(board, action.tile, "Tip the Kayak Cards")
    rt = board.tiles[i]
    board.tiles[i] = RiverTile(rt.tile, rt.side, 180 - rt.rotation, rt.shift)
    rows, lanes = board.book.rows, board.book.lanes
    for pawn, s in board.at.items():
        if s.index == i:
            board.at[pawn] = Space(i, rows - 1 - s.row, lanes - 1 - s.lane)
    board.settle()


def _whirlpool(board: _Board, action: A.Whirlpool) -> None:
    """Whirlpool Cards: two neighbouring tiles trade places, each taking the other's shift, not
    turned; kayaks stay on their tile."""
    i = _river_tile(board, action.tile_a, "Whirlpool Cards")
    j = _river_tile(board, action.tile_b, "Whirlpool Cards")
    if abs(i - j) != 1:
        _breach(board.breaches, "Whirlpool Cards", f"tiles {action.tile_a} and {action.tile_b} are not neighbours")
    a, b = board.tiles[i], board.tiles[j]
    board.tiles[i] = RiverTile(b.tile, b.side, b.rotation, a.shift)
    board.tiles[j] = RiverTile(a.tile, a.side, a.rotation, b.shift)
    for pawn, s in board.at.items():
        if s.index in (i, j):
            board.at[pawn] = Space(j if s.index == i else i, s.row, s.lane)


def apply(pos: Position, action, book: TileBook | None = None, supply=(), breaches=None) -> Outcome:
    """The position after one action. ``supply``: tiles to lay, in order, if a kayak goes
    beyond the last tile. Life Ring and Discard leave the river as it is."""
    board = _Board(book or tile_book(), pos, supply, breaches)
    if isinstance(action, (A.Paddle, A.DoublePaddle)):
        _check_direction(action, A.ALONG)
        _move(board, action, 1 if isinstance(action, A.Paddle) else 2, action.direction)
    elif isinstance(action, (A.Swerve, A.DoubleSwerve)):
        _check_direction(action, A.ACROSS)
        _move(board, action, 1 if isinstance(action, A.Swerve) else 2, action.direction)
    elif isinstance(action, A.FreeMove):
        _check_direction(action, A.ALONG + A.ACROSS)
        _move(board, action, 1, action.direction)
    elif isinstance(action, A.WeatherShift):
        _check_direction(action, A.ACROSS)
        _weather_shift(board, action)
    elif isinstance(action, A.Tip):
        _tip(board, action)
    elif isinstance(action, A.Whirlpool):
        _whirlpool(board, action)
    elif isinstance(action, A.LifeRing):
        # Life Ring Cards: only a Weather Shift, a Tip or a Whirlpool can be cancelled
        if not isinstance(action.cancels, A.RIVER_ACTIONS):
            _breach(breaches, "Life Ring Cards", f"a Life Ring cannot cancel {action.cancels}")
    elif not isinstance(action, A.Discard):
        raise IllegalActionError(f"{action!r} is not a Kayak Chaos action", "Action Cards")
    return board.outcome()


def _check_direction(action, allowed) -> None:
    if action.direction not in allowed:
        raise IllegalActionError(f"{action.kind} direction {action.direction!r} is not one of {', '.join(allowed)}",
                                 CARD_SECTION.get(action.kind, "Action Cards"))
    if hasattr(action, "pawn") and not 1 <= action.pawn <= 4:
        raise IllegalActionError(f"there is no pawn {action.pawn}", "What's in the Box")


def why_illegal(pos: Position, action, book: TileBook | None = None, supply=()) -> str | None:
    """None when the action may be played here, else the reason with its rule."""
    try:
        apply(pos, action, book, supply)
    except IllegalActionError as exc:
        return str(exc)
    except NeedsNewTileError:
        return None  # legal: the move calls for a new tile first
    return None


def is_legal(pos: Position, action, book: TileBook | None = None, supply=()) -> bool:
    return why_illegal(pos, action, book, supply) is None


MOVED = {"paddle": "paddled", "double-paddle": "double-paddled", "swerve": "swerved",
         "double-swerve": "double-swerved", "free-move": "moved (discard-5 free move)"}


def check_turn(turn, advanced: bool = False, player: int | None = None) -> list[tuple[str, str]]:
    """Broken turn rules, as (section, reason): Turns allows at most three actions (a card played,
    cancelled or discarded counts as one) or else the discard-5 free move alone, and only the
    player whose turn it is moves their own kayak (``player``: whose turn it is, when known); the
    Advanced Rules allow at most one card of each type per turn."""
    out = []
    if player is not None:
        # Turns: a turn is one player's; another kayak moves only when pushed
        other = next((a for a in turn if getattr(a, "pawn", player) != player), None)
        if other is not None:
            out.append(("Turns", f"pawn-{other.pawn} {MOVED[other.kind]} on pawn-{player}'s turn"))
    cancelled = [a.cancels for a in turn if isinstance(a, A.LifeRing)]
    own = [a for a in turn if not isinstance(a, A.LifeRing)] + cancelled
    if any(isinstance(a, A.FreeMove) for a in own) and len(own) > 1:
        out.append(("Turns", "the discard-5 free move ends the turn at once: nothing else that turn"))
    elif len(own) > 3:
        out.append(("Turns", f"{len(own)} actions in one turn; at most 3"))
    movers = {a.pawn for a in own if hasattr(a, "pawn")}
    if len(movers) > 1:
        out.append(("Turns", f"one turn moves one player's kayak, not {', '.join(f'pawn-{p}' for p in sorted(movers))}"))
    if advanced:
        kinds = [a.kind for a in own if a.kind not in ("discard", "free-move")]
        twice = sorted({k for k in kinds if kinds.count(k) > 1})
        if twice:
            out.append(("Advanced Rules", f"{' and '.join(twice)} played more than once in one turn"))
    return out
