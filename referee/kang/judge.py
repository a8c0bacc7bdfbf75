"""The change since the last legal Kang position, judged whole: one move, turns seen
together, "cannot tell", or illegal.

- One legal move turns the position into the board seen: it is ruled (explain.py).
- Otherwise the sequences of up to 3 turns are searched (sequences.py). One sequence, or
  several that agree on everything the board does not show (whose turn, the alfalfa, who
  may not score next, the winner): each of its turns is ruled, marked seen together.
  Several that disagree: "Cannot tell", naming them; nothing is recorded.
- No sequence: only then illegal, with the rule the one-move judge finds broken and the
  nearest sequence.
- A kangaroo not read stands where it was last read. Where the board can also be explained
  with it moved, the ruling would rest on it: "Cannot tell: <kangaroo> was not read".
"""

from __future__ import annotations

from dataclasses import dataclass

from ..rulings import CANNOT_TELL, ILLEGAL, LEGAL, verdict_line
from .explain import RULES, Judgement, Rule, explain
from .moves import PASS, push
from .position import COACHES, SIZES, Position, other
from .sequences import MAX_TURNS, Search, Sequence, Target, Turn, consequence, text


@dataclass(frozen=True)
class Unread:
    """A kangaroo the camera did not read: its name, size letter and its last place (a
    square index into Position.cells, or "zone A" / "zone B"; None: never read, or seen
    empty there)."""

    name: str
    letter: str
    place: int | str | None


@dataclass(frozen=True)
class Change:
    """verdict: "legal", "illegal", "cannot tell" or "no change"; what: the headline's words;
    sequences: for "legal" the sequences ruled (the first is the one shown, the others agree
    with it on every consequence), for "cannot tell" the ones that disagree; single: the
    one-move judgement, where it ruled; nearest: for "illegal", the sequence nearest the board."""

    verdict: str
    what: str
    rule: Rule
    sequences: tuple[Sequence, ...] = ()
    single: Judgement | None = None
    nearest: Sequence = ()
    nearest_differs: int = 0

    @property
    def legal(self) -> bool | None:
        return {"legal": True, "illegal": False}.get(self.verdict)

    @property
    def turns(self) -> Sequence:
        return self.sequences[0] if self.verdict == "legal" else ()

    def summary(self) -> str:
        if self.single is not None and self.verdict in ("legal", "illegal") and len(self.turns) <= 1:
            near = self._nearest_text() if self.verdict == "illegal" and len(self.nearest) > 1 else ""
            return self.single.summary() + near
        word = {"legal": LEGAL, "illegal": ILLEGAL, "cannot tell": CANNOT_TELL}.get(self.verdict, "No change")
        return verdict_line(word, self.what, self.rule.section) + (self._nearest_text() if self.nearest else "")

    def _nearest_text(self) -> str:
        return f"; nearest legal sequence {text(self.nearest)} ({self.nearest_differs} places differ)"

    def to_json(self) -> dict:
        doc = self.single.to_json() if self.single is not None else {
            "verdict": self.verdict, "legal": self.legal, "reason": self.what,
            "rule": {"section": self.rule.section, "text": str(self.rule), "words": self.rule.words}}
        doc.update(verdict=self.verdict, legal=self.legal, summary=self.summary(),
                   sequences=[[str(turn) for turn in seq] for seq in self.sequences])
        if self.verdict == "legal" and self.turns:
            doc["after"] = str(self.turns[-1].after)
        if self.nearest:
            doc.update(nearest_sequence=[str(turn) for turn in self.nearest], nearest_differs=self.nearest_differs)
        return doc


def _flipped(pos: Position) -> Position:
    return Position._trusted(pos.cells, pos.zones, other(pos.to_move), pos.alfalfa, pos.no_score)


def full_layout(target: Target, unread: tuple[Unread, ...]):
    """The board seen with each kangaroo not read at its last place; None where one has no
    place to stand (never read, seen empty there, or its square now holds another)."""
    cells = list(target.cells.replace("?", "."))
    zones = [list(target.zones[0]), list(target.zones[1])]
    for piece in unread:
        if piece.place is None:
            return None
        if isinstance(piece.place, str):
            zones[COACHES.index(piece.place[-1])][SIZES.index(piece.letter)] += 1
        elif cells[piece.place] != ".":
            return None
        else:
            cells[piece.place] = piece.letter
    return "".join(cells), (tuple(zones[0]), tuple(zones[1]))


def judge_change(position: Position, target: Target, unread: tuple[Unread, ...] = (),
                 turn_known: bool = True) -> Change:
    """The change from ``position`` (the last legal one) to the board seen (see module doc)."""
    full = full_layout(target, unread) if unread else (target.cells, target.zones)
    if full == position.layout():
        return Change("no change", "the board did not change", RULES["legal"])
    single = None
    if full is not None:
        single = _one_move(position, full, turn_known)
        if single.verdict in ("legal", "cannot tell") and not unread:
            return _from_single(single, position)
    starts = [position] if turn_known else [position, _flipped(position)]
    searches = [Search(s, target, 2 if target.is_exact else 1) for s in starts]
    length = min((len(s.found[0]) for s in searches if s.found), default=0)
    found = [seq for s in searches for seq in s.found if len(seq) == length]
    if not found:
        return _illegal(position, single, searches)
    moved = _moved_unread(found, unread, full)
    if moved:
        names = ", ".join(p.name for p in moved)
        return Change("cannot tell", f"{names} {'was' if len(moved) == 1 else 'were'} not read, and the board "
                      f"can be explained with {'it' if len(moved) == 1 else 'them'} moved", RULES["legal"], tuple(found))
    if length == 1 and single is not None and single.legal:
        return _from_single(single, position)
    return _agreeing(found)


def _one_move(position: Position, layout, turn_known: bool) -> Judgement:
    single = explain(position, layout)
    if single.verdict != "legal" and not turn_known and single.wrong_coach:
        return explain(_flipped(position), layout)  # nobody told us whose turn it was: now we know
    return single


def _from_single(single: Judgement, position: Position) -> Change:
    """The one-move judgement as a Change (its turn: the mover's, after a forced pass)."""
    if single.verdict != "legal":
        return Change(single.verdict, single.reason, single.rule, single=single)
    base = position if position.to_move == single.coach else _flipped(position)
    before = push(base, PASS) if single.passed else base
    turn = Turn(before.to_move, single.moves[0], before, single.after)
    return Change("legal", "", single.rule, ((turn,),), single=single)


def _agreeing(found: list[Sequence]) -> Change:
    outcomes: dict[Position, list[Sequence]] = {}
    for seq in found:
        outcomes.setdefault(consequence(seq), []).append(seq)
    if len(outcomes) == 1:
        seqs = tuple(found)
        n = len(seqs[0])
        what = f"{n} turns seen together: {text(seqs[0])}" if n > 1 else f"{seqs[0][0]} played"
        return Change("legal", what, RULES["legal"], seqs)
    shown = "; ".join(f"{text(seqs[0])} ({_outcome(pos)})" for pos, seqs in list(outcomes.items())[:4])
    return Change("cannot tell", f"{len(outcomes)} sequences of turns explain the board, with different outcomes: "
                  f"{shown}", RULES["legal"], tuple(seqs[0] for seqs in outcomes.values()))


def _outcome(pos: Position) -> str:
    won = f", {pos.winner} wins" if pos.winner else ""
    return f"alfalfa {pos.alfalfa[0]}-{pos.alfalfa[1]}, {pos.to_move} to move{won}"


def _illegal(position: Position, single: Judgement | None, searches: list[Search]) -> Change:
    best = min(searches, key=lambda s: (s.nearest_distance, len(s.nearest)))
    if single is not None and single.verdict == "illegal":
        return Change("illegal", single.reason, single.rule, single=single, nearest=best.nearest,
                      nearest_differs=best.nearest_distance)
    return Change("illegal", f"no sequence of at most {MAX_TURNS} turns from {position.to_move} on explains "
                  "the kangaroos read", RULES["legal"], nearest=best.nearest, nearest_differs=best.nearest_distance)


def _moved_unread(found: list[Sequence], unread: tuple[Unread, ...], full) -> list[Unread]:
    """The kangaroos not read that some explaining sequence moves from their last place."""
    if not unread:
        return []
    moved = []
    for piece in unread:
        for seq in found:
            cells, zones = seq[-1].after.layout()
            if full is None or piece.place is None:
                moved.append(piece)
                break
            if isinstance(piece.place, str):
                k, s = COACHES.index(piece.place[-1]), SIZES.index(piece.letter)
                if zones[k][s] < full[1][k][s]:
                    moved.append(piece)
                    break
            elif cells[piece.place] != piece.letter:
                moved.append(piece)
                break
    return moved
