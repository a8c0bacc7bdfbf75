"""One stable Kang board ruled on: read it, keep where each kangaroo stands, judge the change
since the last legal position (judge.py) and record what its turns lead to.

A kangaroo missing from the observation and not in its ``seen_empty`` was not read: it stands
where it stood (the state's ``places``), and a ruling that rests on it says so. One in
``seen_empty`` is not where it was, and is placed nowhere until it is read again.
"""

from __future__ import annotations

from dataclasses import replace

from ..game import Step
from ..observation import Observation, PiecePose
from ..rulings import CANNOT_TELL, LEGAL, Ruling, verdict_line
from .board import BoardRead, read_board
from .explain import RULES, explain
from .judge import Change, Unread, fits_names, judge_change
from .position import COACHES, FILES, SIZES, Position, cell_index
from .sequences import UNKNOWN, Search, Target, consequence, text
from .state import GAME_ID, KangState, played, rule_ref

MAX_OPEN = 4  # ways the game may have gone on, carried from a "Cannot tell" to the next table
START_PER_ZONE = 2  # Setup: each coach puts 2 kangaroos of each size in their start zone
KANG_PREFIX = "kang/"


def rule_step(state: KangState, observation: Observation, t: float) -> Step:
    read = read_board(observation)
    if not read.placed:
        return _cannot_tell(state, "; ".join(read.problems(missing=False)), t, {"problems": read.problems()})
    gone = tuple(n for n in read.missing if n in observation.seen_empty)
    unread = tuple(n for n in read.missing if n not in observation.seen_empty)
    readings = _readings(state.readings, observation)
    if state.position is None:
        return _first_board(replace(state, pending="", readings=readings), read, unread + gone, t)
    places = dict(state.places)
    target = _target(read, [places.get(n) for n in gone])
    missing = tuple(Unread(n, _letter(n), None if n in gone else _place_index(places.get(n)))
                    for n in unread + gone)
    now = {p.name: p.where for p in read.places}
    named = places if places and all(n in places for n in now) else None  # names known where they stood
    change = judge_change(state.position, target, missing, state.turn_known, named, now)
    if state.open_sequences and (change.verdict in ("illegal", "cannot tell") or
                                 (state.open_rivals and change.verdict == "legal")):
        change = _settled(state, change, target, missing) or change
    if change.verdict == "no change":
        return Step(replace(state, pending="", readings=readings, places=_places(read, places)))
    if change.verdict == "cannot tell":
        said = _cannot_tell(state, change.summary().split(": ", 1)[1], t, dict(change.to_json(), cannot_tell=True))
        if len(change.sequences) > 1:
            won = _won_every_way(change.sequences, t) if said.rulings else ()
            return Step(replace(said.state, open_sequences=change.sequences, open_rivals=True), said.rulings + won)
        return said
    if change.verdict == "illegal":
        ruling = Ruling(t, GAME_ID, "move", change.summary(), False, str(rule_ref(change.rule)), change.to_json())
        return Step(replace(state, pending=""), (ruling,))  # held by the step's guard (referee/pending.py)
    after = replace(state, pending="", readings=readings, places=_places(read, places), open_sequences=())
    recorded = _record(after, change, t)
    return Step(replace(recorded.state, open_sequences=_kick_alternatives(change, target, named, now),
                        open_rivals=False), recorded.rulings)


def _kick_alternatives(change: Change, target: Target, places, read) -> tuple:
    """A kick ruled as one move may also be two turns: the kick, then the other coach moving
    the kicked kangaroo on (a table missed between). The board is the same, whose turn is not;
    both are kept, and a next table that only the two turns explain settles it."""
    turns = change.turns
    if len(turns) != 1 or turns[0].move.kick is None or not target.is_exact:
        return ()
    two = Search(turns[0].before, target, 2, 2, fits_names(places, read, ())).found
    return (turns,) + tuple(two[:MAX_OPEN]) if two else ()


def _settled(state: KangState, base: Change, target: Target, missing) -> Change | None:
    """A table after a "Cannot tell" between sequences: where it follows legally from exactly
    one of them (or from several that agree), that sequence and the new turns are ruled
    together, all seen together; the change judged from the position (``base``) is one more
    way where the open ones are rivals."""
    ways = [base.turns] if base.verdict == "legal" and state.open_rivals else []
    for seq in state.open_sequences:
        then = judge_change(seq[-1].after, target, missing)
        if then.verdict == "legal":
            ways.append(seq + then.turns)
        elif then.verdict == "no change":
            ways.append(seq)
    ends: dict = {}
    for way in ways:
        ends.setdefault(consequence(way), way)
    if not ends:
        return None
    if len(ends) > 1:  # still more than one way the game went on: each carried to the next table
        shown = "; ".join(text(way) for way in list(ends.values())[:MAX_OPEN])
        return Change("cannot tell", f"{len(ends)} ways the game may have gone on explain the board: {shown}",
                      RULES["legal"], tuple(list(ends.values())[:MAX_OPEN]))
    if base.verdict == "legal" and consequence(base.turns) in ends:
        return base
    return Change("legal", f"{len(ways[0])} turns seen together: {text(ways[0])}", RULES["legal"], (ways[0],))


def _won_every_way(ways, t: float) -> tuple[Ruling, ...]:
    """End of the Game where the ways the game may have gone on disagree only on what the board
    does not show: if every way ends with the same coach's third alfalfa, that coach has won,
    whichever way it went; the other coach's alfalfa is said as not known."""
    ends = [consequence(way) for way in ways]
    winners = {pos.winner for pos in ends}
    if len(winners) != 1 or None in winners:
        return ()
    winner = winners.pop()
    loser = COACHES.index(winner) ^ 1
    counts = sorted({pos.alfalfa[loser] for pos in ends})
    known = len(counts) == 1
    score = f"{ends[0].alfalfa[0]}-{ends[0].alfalfa[1]}" if known else None
    told = f" ({score})" if known else (f"; {COACHES[loser]}'s alfalfa cannot be told: "
                                        f"{' or '.join(map(str, counts))}")
    return (Ruling(t, GAME_ID, "state", f"{winner} wins with 3 alfalfa in every way the game may have gone on{told}",
                   None, str(rule_ref(RULES["game-over"])), {"winner": winner, "score": score,
                                                             "ways": [text(w) for w in ways]}),)


def _cannot_tell(state: KangState, why: str, t: float, details: dict) -> Step:
    if why == state.pending:
        return Step(state)
    ruling = Ruling(t, GAME_ID, "warning", verdict_line(CANNOT_TELL, why), None, str(rule_ref(RULES["components"])),
                    details)
    return Step(replace(state, pending=why), (ruling,))


def _record(state: KangState, change: Change, t: float) -> Step:
    """Each turn of the change ruled and played, with what it leads to (a score, a win)."""
    turns = change.turns
    said: list[Ruling] = []
    for k, turn in enumerate(turns, 1):
        if len(turns) == 1:
            ruling = Ruling(t, GAME_ID, "move", change.summary(), True, str(rule_ref(change.rule)), change.to_json())
        else:
            ruling = _seen_together(change, k, t)
        step = played(state, turn.move, turn.coach, turn.after, t, (ruling,))
        state = step.state
        said += step.rulings
    return Step(state, tuple(said))


def _seen_together(change: Change, k: int, t: float) -> Ruling:
    """Turn k of a sequence seen together: its own ruling, the sequence after the headline."""
    seq = change.turns
    turn = seq[k - 1]
    ways = [] if turn.move.is_pass else list(explain(turn.before, turn.after.layout()).moves) or [turn.move]
    what = (f"{turn.coach} had no legal move and passed" if turn.move.is_pass else f"{turn.coach} played {turn.move}")
    summary = verdict_line(LEGAL, f"{what}, turn {k} of {len(seq)} seen together", RULES["legal"].section)
    summary += f". Seen together: {text(seq)}"
    if len(ways) > 1:
        summary += f". The board cannot tell {len(ways)} ways apart: " + ", ".join(str(m) for m in ways[:6])
    others = [text(s) for s in change.sequences[1:]]
    if others:
        summary += f". Also explained by: {'; '.join(others[:3])}"
    details = {"verdict": "legal", "legal": True, "coach": turn.coach, "moves": [str(m) for m in ways] or ["pass"],
               "seen_together": k, "sequence": [str(x) for x in seq], "after": str(turn.after),
               "alternatives": others}
    return Ruling(t, GAME_ID, "move", summary, True, str(rule_ref(RULES["legal"])), details)


def _first_board(state: KangState, read: BoardRead, missing: tuple[str, ...], t: float) -> Step:
    """Setup: the start, a board picked up mid-game, or, with kangaroos not read, the start
    only where they are exactly what the start zones lack."""
    cells, zones = read.cells, read.zones
    rule = str(rule_ref(RULES["setup"]))
    fills = EMPTY_BOARD == cells and all(n <= START_PER_ZONE for z in zones for n in z)
    if missing and not fills:
        names = ", ".join(missing)
        return _cannot_tell(state, f"{names} not read, and the kangaroos read are not the start: where "
                            f"{'it stands' if len(missing) == 1 else 'they stand'} is not known", t,
                            {"cannot_tell": True, "not_read": list(missing)})
    places = _places(read, {})
    if missing:  # each kangaroo not read goes to a start zone short of its size
        short = [[START_PER_ZONE - n for n in z] for z in zones]
        for name in missing:
            k = next(i for i in (0, 1) if short[i][SIZES.index(_letter(name))] > 0)
            short[k][SIZES.index(_letter(name))] -= 1
            places[name] = f"zone {COACHES[k]}"
        zones = tuple(tuple(START_PER_ZONE for _ in SIZES) for _ in COACHES)
    pos = Position(cells, zones)
    known = pos.layout() == Position.start().layout()
    if known:
        summary = verdict_line(LEGAL, "the start position, A moves first", RULES["setup"].section)
        if missing:
            summary += f". Not read: {', '.join(missing)}, taken to be in the start zones, which lack them"
    else:
        summary = ("Taken as seen: the first board is not the start; whose turn it is follows from the first move "
                   f"({RULES['legal'].section})")
        rule = str(rule_ref(RULES["legal"]))
    new = replace(state, position=pos, turn_known=known, places=tuple(sorted(places.items())))
    return Step(new, (Ruling(t, GAME_ID, "state", summary, None, rule, {"position": str(pos),
                                                                        "not_read": list(missing)}),))


EMPTY_BOARD = "." * 36


def _letter(name: str) -> str:
    return name.removeprefix(KANG_PREFIX)[0]  # kang/small-1 -> "s"


def _place_index(place: str | None) -> int | str | None:
    if place is None or place.startswith("zone "):
        return place
    return cell_index((FILES.index(place[0]), int(place[1])))


def _places(read: BoardRead, before: dict) -> dict:
    """Where each kangaroo stands: as read, else where it stood."""
    now = dict(before)
    now.update({p.name: p.where for p in read.places})
    return now


def _target(read: BoardRead, gone_places) -> Target:
    """The board seen: read kangaroos, and where some were not read every square not seen
    empty may hold one of them."""
    free = [0, 0, 0]
    for name in read.missing:
        free[SIZES.index(_letter(name))] += 1
    if not any(free):
        return Target(read.cells, read.zones)
    empty = {_place_index(p) for p in gone_places if p and not p.startswith("zone ")}
    cells = "".join(c if c != "." or i in empty else UNKNOWN for i, c in enumerate(read.cells))
    return Target(cells, read.zones, tuple(free))


def _readings(before: tuple[PiecePose, ...], observation: Observation) -> tuple[PiecePose, ...]:
    """Each Kang piece's last reading: this observation's, else the one before."""
    now = {p.name: p for p in before}
    now.update({p.name: p for p in observation.pieces if p.name.startswith(KANG_PREFIX) and p.name != "kang/board"})
    return tuple(now[n] for n in sorted(now))
