"""Kayak Chaos behind the game seam (referee/game.py): state, step, view, shapes, explain.

Each new stable observation is read as a river (referee.kayak.river) and the change from
the last one is explained as one turn of up to three actions (referee.kayak.explain), or,
when no single turn explains it, as 2 or 3 turns seen together in turn order
(referee.kayak.sequences). A kayak not read keeps its last reading; a change while one is
unread is "cannot tell", naming it. The game frame is the Start tile's frame.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

from ..catalog import Catalog, default_catalog
from ..errors import InvalidInputError, RefcamError
from ..game import Declarable, Declaration, ExpectedPiece, Explanation, Option, Shape, Step, View
from ..observation import Observation, not_read_piece, why_not_read
from ..pending import TurnGuard, guarded_step, pending_json
from ..rulings import CANNOT_TELL, ILLEGAL, LEGAL, Ruling, verdict_line
from . import declare
from .errors import GAME_ID, GAME_TITLE, rule
from .commands import kayak_commands
from .diagram import river_diagram
from .explain import MAX_ACTIONS, Explained, Reading, explain, first_to_finish
from .position import Position, Space, pawn_name
from .river import RiverReading, read_river, space_centre
from .sequences import Sequence, explain_turns, seating_orders
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
    rings: tuple[int, ...] = ()  # players who played a Life Ring during the turn not ruled yet
    guard: TurnGuard = field(default=TurnGuard(), compare=False)  # an illegal turn pending (referee/pending.py)
    # the player who took the last turn ruled, when the camera or the players told (turn order)
    last_mover: int | None = None
    # the players of the last legal turns ruled, oldest first (the seating order they show)
    movers: tuple[int, ...] = field(default=(), compare=False)
    # each piece's last reading (name -> pose, stable tables since it was read): a piece not
    # read keeps it (Observation.seen_empty says which places were seen empty)
    readings: tuple = field(default=(), compare=False)


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
        state = replace(state, readings=_readings_after(state.readings, observation))
        # a not-read warning says what limits the read ("... a hand or glare may hide it"): no hand in view
        blocked = next((w for w in observation.warnings if any(k in w.lower() for k in _OCCLUSION_WORDS)
                        and not_read_piece(w) is None), None)
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
            unread = [p for p, _ in state.position.kayaks if reading.position.where(p) is None]
            if unread:
                return self._unread(state, reading, unread, observation, t)
        step = self._rule(state, reading, t)
        if not reading.kept:
            return step
        # a tile out of view kept its last stable place: each ruling says so after its verdict
        note = f" ({', '.join(reading.kept)} not in view: its last stable place is kept)"
        return Step(step.state, tuple(replace(r, summary=r.summary + note) if r.kind in ("move", "state") else r
                                      for r in step.rulings))

    def _unread(self, state: KayakState, reading: RiverReading, unread: list[int], observation: Observation,
                t: float) -> Step:
        """A kayak of the last river is missing from the observation. Not read: it keeps its last
        reading, and if nothing else changed there is nothing to rule; anything else rests on it
        and is "cannot tell", naming it. Its place seen empty (Observation.seen_empty): it moved,
        and where to is not known."""
        kayaks = dict(reading.position.kayaks)
        for p in unread:
            kayaks[p] = state.position.where(p)
        names = [pawn_name(p) for p in unread]
        empty = [n for n in names if n in observation.seen_empty]
        if not empty and Position.make(reading.position.tiles, kayaks) == state.position:
            return Step(replace(state, cannot_tell=""))
        if empty:
            why = f"{', '.join(empty)} left its space and was not read elsewhere"
        else:
            why = f"{', '.join(names)} {'was' if len(names) == 1 else 'were'} not read"
            limits = [f"{n}: {reason}" for n in names if (reason := why_not_read(observation.warnings, n))]
            why += f" ({'; '.join(limits)})" if limits else ""
        return self._cannot_tell(state, t, why)

    def _cannot_tell(self, state: KayakState, t: float, why: str) -> Step:
        ruling = Ruling(t, GAME_ID, "warning", verdict_line(CANNOT_TELL, why), None, None, {"cannot_tell": True})
        return Step(replace(state, cannot_tell=why), (ruling,) if why != state.cannot_tell else ())

    def _rule(self, state: KayakState, reading: RiverReading, t: float) -> Step:
        after = reading.position
        cards = tuple(sorted((k, n) for k, n in reading.cards.items() if k))
        if state.position is None:
            return self._first_river(state, reading, cards, t)
        played = reading.cards.copy()
        for kind, n in dict(state.cards).items():
            played[kind] -= n
        played = +played
        # Turns: actions the players declared (discards, a cancelled action) leave fewer for what is seen
        limit = max(0, MAX_ACTIONS - state.spent_actions)
        before, joined, verdict = self._joining(state, after, played or None, limit, t)
        if after == before:
            return Step(replace(state, position=after, cards=cards, cannot_tell=""), joined)
        if verdict is None:
            verdict = explain(before, after, self.book, state.advanced, played or None, limit=limit,
                              player=state.turn_of)
        if not verdict.legal and state.turn_of is None and not verdict.position_breaches:
            players = self._players(state, before)
            together = explain_turns(before, after, self.book, state.advanced, players, state.last_mover, limit,
                                     seating=seating_seen(state.movers, players))
            if together.found:
                return self._seen_together(state, before, after, together, joined, cards, t)
            if together.cut:  # not searched to the end: no ground to call it illegal
                return self._cannot_tell(state, t, f"no single turn explains the change, and the search for 2-3 "
                                                   f"turns seen together stopped after {together.visited} positions")
            step = self._one_turn(state, verdict, joined, cards, t)
            return Step(step.state, tuple(replace(r, summary=r.summary + ". No 2-3 turns seen together explain it "
                                                  "either") if r.kind == "move" else r for r in step.rulings))
        return self._one_turn(state, verdict, joined, cards, t)

    def _first_river(self, state: KayakState, reading: RiverReading, cards, t: float) -> Step:
        """Game Setup: the first river seen. A kayak not read yet is not missing: it joins when
        it is first read, from a Start space."""
        after = reading.position
        pawns = ", ".join(pawn_name(p) for p, _ in after.kayaks) or "none yet"
        if reading.conflicts:
            # a first river that breaks a rule is reported with the conflict flagged, not refused
            section, why = reading.conflicts[0]
            head = verdict_line(ILLEGAL, why, section)
        else:
            head = verdict_line(LEGAL, f"the river is set up with {len(after.tiles)} tile(s)", "Game Setup")
        text = f"{head}. River {after.text()}; kayaks read: {pawns}"
        text += "".join(f"; conflict: {why} ({rule(section)})" for section, why in reading.conflicts[1:])
        text += self._taken_up(after)
        new = replace(state, position=after, cards=cards, cannot_tell="")
        return Step(new, (Ruling(t, GAME_ID, "state", text, None, str(rule("Game Setup")),
                                 {"position": after.text()}),))

    def _players(self, state: KayakState, before: Position) -> tuple[int, ...]:
        return tuple(p for p, _ in before.kayaks)

    def _one_turn(self, state: KayakState, verdict: Explained, joined, cards, t: float) -> Step:
        """One turn (or the nearest reading of an illegal change) ruled, and what it leads to."""
        rulings = list(joined) + [self._move_ruling(verdict, t, state.turns + 1, state)]
        mover = state.turn_of or _mover(verdict)
        if verdict.legal and mover is not None and mover in state.rings:
            rulings.append(_ring_on_own_turn(mover, t))
        winner = state.winner
        firsts = first_to_finish(verdict, self.book) if winner is None else ()
        if len(firsts) > 1:
            rulings.append(Ruling(t, GAME_ID, "warning", verdict_line(
                CANNOT_TELL, "which kayak reached the Finish space first: " + " or ".join(map(pawn_name, firsts)),
                rule("Game End")), None, str(rule("Game End")), {"cannot_tell": True}))
        elif firsts:
            winner = firsts[0]
            rulings.append(_win_ruling(winner, t))
        new = replace(state, position=verdict.after, last=verdict, turns=state.turns + 1, winner=winner,
                      cards=cards, cannot_tell="", turn_of=None, spent_actions=0, rings=(), last_mover=mover,
                      movers=_with_movers(state.movers, (mover,) if verdict.legal and mover is not None else None))
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

    def _seen_together(self, state: KayakState, before: Position, after: Position, together, joined, cards,
                       t: float) -> Step:
        """Turns Seen Together: one ruling per turn when every sequence found implies the same
        (the winner); "cannot tell", naming them, when they do not, and nothing recorded."""
        options = together.sequences()
        if not together.agreed:
            named = " or ".join(f"[{s.text()}]" + (f" ({pawn_name(s.winner[0])} first)" if s.winner else "")
                                for s in options)
            why = f"{len(options)} sequences of turns explain the change and differ in who reached the Finish first: {named}"
            return self._cannot_tell(state, t, why)
        sequence: Sequence = options[0]
        listing = [turn.text() for turn in sequence.turns]
        rulings = list(joined)
        for k, turn in enumerate(sequence.turns, 1):
            n = state.turns + k
            what = f"turn {n}, {turn.text()}"
            section = _turn_section(turn)
            text = verdict_line(LEGAL, what, section) + f"; seen together with {len(sequence.turns) - 1} other turn(s)"
            verdict = Explained(turn.before, turn.after, (Reading(turn.actions, turn.placements),), True)
            details = {**verdict.to_json(), "seen_together": k, "sequence": listing, "player": f"pawn-{turn.player}"}
            rulings.append(Ruling(t, GAME_ID, "move", text, True, str(rule(section)), details))
        first = sequence.turns[0].player
        if first in state.rings:
            rulings.append(_ring_on_own_turn(first, t))
        winner = state.winner
        if winner is None and sequence.winner:
            winner = sequence.winner[0]
            rulings.append(_win_ruling(winner, t))
        actions = tuple(a for turn in sequence.turns for a in turn.actions)
        placed = tuple(p for turn in sequence.turns for p in turn.placements)
        last = Explained(before, after, (Reading(actions, placed),), True)
        new = replace(state, position=after, last=last, turns=state.turns + len(sequence.turns), winner=winner,
                      cards=cards, cannot_tell="", turn_of=None, spent_actions=0, rings=(),
                      last_mover=sequence.turns[-1].player,
                      movers=_with_movers(state.movers, tuple(turn.player for turn in sequence.turns)))
        return Step(new, tuple(rulings))

    def _joining(self, state: KayakState, after: Position, played, limit: int, t: float):
        """Game Setup: a kayak read for the first time was on a Start space since the setup (it
        may not have been read then). On a free Start space it joins there before the turn; seen
        elsewhere, it has moved since: each free Start space is tried as where it began, and the
        first from which the change is legal is taken. Returns (river before the turn, rulings,
        the verdict found while trying, or None)."""
        before = state.position
        new = [(p, s) for p, s in after.kayaks if before.where(p) is None]
        if not new:
            return before, (), None
        kayaks, rulings, moved = dict(before.kayaks), [], []
        for pawn, space in new:
            on_start = space.index == 0 and self.book.cell(after.tiles[0], space.row, space.lane) == START
            if on_start and before.occupant_free(space):
                kayaks[pawn] = space
                rulings.append(Ruling(t, GAME_ID, "state", verdict_line(
                    LEGAL, f"{pawn_name(pawn)} joins on the Start space", "Game Setup"), True, str(rule("Game Setup"))))
            else:
                moved.append((pawn, space))
        if not moved:
            return Position.make(before.tiles, kayaks), tuple(rulings), None
        starts = [Space(0, 0, lane) for lane in range(self.book.lanes)
                  if self.book.cell(before.tiles[0], 0, lane) == START and Space(0, 0, lane) not in kayaks.values()]
        for origins in itertools.islice(itertools.permutations(starts, len(moved)), 60):
            trial = Position.make(before.tiles, {**kayaks, **{p: o for (p, _), o in zip(moved, origins)}})
            verdict = explain(trial, after, self.book, state.advanced, played, limit=limit, player=state.turn_of)
            if verdict.legal:
                rulings += [Ruling(t, GAME_ID, "state", verdict_line(
                    LEGAL, f"{pawn_name(p)} joins, first read at {s}: it began on the Start space {o}", "Game Setup"),
                    True, str(rule("Game Setup"))) for (p, s), o in zip(moved, origins)]
                return trial, tuple(rulings), verdict
        for pawn, space in moved:
            rulings.append(Ruling(t, GAME_ID, "violation", verdict_line(
                ILLEGAL, f"{pawn_name(pawn)} appears at {space}, not on the Start space and not by a legal turn from "
                "it", "Game Setup"), False, str(rule("Game Setup"))))
            if space.index < len(before.tiles):
                kayaks[pawn] = space
        return Position.make(before.tiles, kayaks), tuple(rulings), None

    @staticmethod
    def _move_ruling(verdict: Explained, t: float, turn: int, state: KayakState) -> Ruling:
        whose = f" (pawn-{state.turn_of}'s)" if state.turn_of else ""
        spent = f" after {state.spent_actions} declared action(s)" if state.spent_actions else ""
        return Ruling(t, GAME_ID, "move", verdict.summary(f"turn {turn}{whose}{spent}"), verdict.legal,
                      str(rule(verdict.section)), verdict.to_json())

    # --- where vision should look again ----------------------------------------------------------
    def expected_pieces(self, state: KayakState) -> tuple[ExpectedPiece, ...]:
        """Each tile's and kayak's last reading (its sigma grown by a space for every stable table
        since, as far as a turn can carry a kayak); nothing before anything is read (the Start
        space's lanes are not fixed per pawn by the setup). The pawn that may take the next turn
        (movers_next) may be anywhere a turn carries it before the next stable table: its sigma
        covers that (turn_spread_mm), so vision looks for it there and not only where it was."""
        a, out = self.book.space_mm, []
        wide = {f"kayak/pawn-{p}" for p in movers_next(state)}
        for name, (pose, missed) in state.readings:
            grown = min(pose.sigma_mm + missed * a, 2 * self.book.tile_length_mm)
            if name in wide:
                grown = max(grown, turn_spread_mm(self.book))
            out.append(ExpectedPiece(name, pose.x_mm, pose.y_mm, pose.theta_deg, grown))
        return tuple(out)

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
            lines.append(verdict.summary())
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


LONGEST_MOVE_SPACES = 2  # Double Paddle / Double Swerve Cards: the most spaces one card moves a kayak
MOVERS_KEPT = 6  # the last legal turns' players kept to read the seating order from


def _with_movers(movers: tuple[int, ...], new: tuple[int, ...] | None) -> tuple[int, ...]:
    """The players of the last turns with ``new`` after them; None: a turn whose player is not
    known (or not legal) breaks the chain, so what came before no longer says who sits next."""
    return () if new is None else (movers + new)[-MOVERS_KEPT:]


def seating_seen(movers: tuple[int, ...], players: tuple[int, ...]) -> tuple[int, ...] | None:
    """Playing the Game: play passes to the left, so the seating order is fixed. The one seating
    order (a cycle of ``players``) in which each of the last turns ruled followed the one before.
    A turn the camera missed inside a merge (one player's turn taken for a push of another) breaks
    the chain, so the longest run of last turns that some seating fits is read; None where it fits
    several, or none is read."""
    for start in range(max(0, len(movers) - MOVERS_KEPT), len(movers) - 1):
        fits = _seatings_fitting(movers[start:], players)
        if fits:
            return fits[0] if len(fits) == 1 else None
    return None


def _seatings_fitting(movers: tuple[int, ...], players: tuple[int, ...]) -> list[tuple[int, ...]]:
    pairs = {(a, b) for a, b in zip(movers, movers[1:])}
    if any(a == b for a, b in pairs) or not set(movers) <= set(players):
        return []
    fits = []
    for order in seating_orders(tuple(sorted(players))):
        after = {order[k]: order[(k + 1) % len(order)] for k in range(len(order))}
        if all(after[a] == b for a, b in pairs):
            fits.append(order)
    return fits


def movers_next(state: KayakState) -> tuple[int, ...]:
    """Playing the Game: turns pass to the left, one player at a time. The pawn whose turn comes
    next: the one the players declared, else the one seated after the last mover (when the turns
    ruled show the seating), else every pawn (refcam cannot tell whose turn it is)."""
    if state.turn_of is not None:
        return (state.turn_of,)
    players = tuple(p for p, _ in state.position.kayaks) if state.position is not None else ()
    seating = seating_seen(state.movers, players)
    if seating is not None and state.last_mover in seating:
        return (seating[(seating.index(state.last_mover) + 1) % len(seating)],)
    return players


def turn_spread_mm(book: TileBook) -> float:
    """The spread (mm, one sigma) of where one turn may leave a kayak: Turns allows up to three
    actions, and the longest a card moves a kayak is two spaces (Double Paddle and Double Swerve
    Cards), so a turn reaches MAX_ACTIONS * 2 spaces (the tile's space size from the catalog).
    Anywhere within that reach is a spread of half of it, as a place anywhere in a disc."""
    return MAX_ACTIONS * LONGEST_MOVE_SPACES * book.space_mm / 2.0


def _mover(verdict: Explained) -> int | None:
    """The player whose kayak every legal reading moves by its own cards; None when no reading
    moves a kayak (river cards only: anyone's turn) or the readings disagree."""
    movers = {next((a.pawn for a in r.actions if hasattr(a, "pawn")), None) for r in verdict.readings}
    return movers.pop() if len(movers) == 1 else None


def _turn_section(turn) -> str:
    from .explain import action_section

    return action_section(turn.actions[0]) if turn.actions else "Turns"


def _ring_on_own_turn(player: int, t: float) -> Ruling:
    """Life Ring Cards: a Life Ring is played on another player's turn, never on one's own."""
    return Ruling(t, GAME_ID, "violation", verdict_line(ILLEGAL, f"pawn-{player} played a Life Ring on their own turn",
                                                        "Life Ring Cards"), False, str(rule("Life Ring Cards")))


def _win_ruling(winner: int, t: float) -> Ruling:
    return Ruling(t, GAME_ID, "finish", verdict_line(LEGAL, f"{pawn_name(winner)} reaches the Finish space and wins",
                                                     "Game End"), True, str(rule("Game End")))


def _readings_after(readings: tuple, observation: Observation) -> tuple:
    """Each Kayak piece's last reading: read now, or kept with one more stable table since, unless
    its place was seen empty (then it is gone from where it was)."""
    now = {p.name: (p, 0) for p in observation.pieces if p.name.startswith(("kayak/tile-", "kayak/pawn-"))}
    for name, (pose, missed) in readings:
        if name not in now and name not in observation.seen_empty:
            now[name] = (pose, missed + 1)
    return tuple(sorted(now.items()))


def _follows_from_turn(ruling: Ruling) -> bool:
    """Game End: reaching the Finish wins; a turn ruled illegal must not win (referee/pending.py)."""
    return ruling.kind == "finish"


def _caption(state: KayakState) -> tuple[str, ...]:
    """The lines under the river diagram: the turn, the last turn's verdict, the winner, what blocks judging."""
    if state.position is None:
        return (f"cannot tell: {state.cannot_tell}",) if state.cannot_tell else ("no river seen yet",)
    lines = [f"turn {state.turns}" if state.turns else "no turn played yet"]
    if state.last is not None:
        lines.append("last turn: " + state.last.summary())
    if state.winner:
        lines.append(f"winner: {pawn_name(state.winner)}")
    declared = declare.summary(state)
    if declared:
        lines.append(f"declared: {declared}")
    if state.cannot_tell:
        lines.append(f"cannot tell: {state.cannot_tell}")
    return tuple(lines)


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
