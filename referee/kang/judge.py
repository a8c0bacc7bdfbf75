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
from .sequences import MAX_TURNS, PLACES_PER_TURN, Search, Sequence, Target, Turn, consequence, identities, text


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


def judge_change(position: Position, target: Target, unread: tuple[Unread, ...] = (), turn_known: bool = True,
                 places: dict[str, str] | None = None, read: dict[str, str] | None = None) -> Change:
    """The change from ``position`` (the last legal one) to the board seen (see module doc).
    places: where each named kangaroo stood in ``position``, read: where each read one stands
    now (both None where no names are known, as from two positions): a sequence must fit them."""
    full = full_layout(target, unread) if unread else (target.cells, target.zones)
    if full == position.layout():
        return Change("no change", "the board did not change", RULES["legal"])
    single = _one_move(position, full, turn_known) if full is not None else None
    if single is not None and single.verdict == "cannot tell":
        return Change("cannot tell", single.reason, single.rule, single=single)
    fits = fits_names(places, read or {}, unread)
    starts = [position] if turn_known else [position, _flipped(position)]
    exact = Target.exact(full) if full is not None else None
    searches = [Search(s, exact, accept=fits) for s in starts] if exact is not None else []
    length = min((len(s.found[0]) for s in searches if s.found), default=0)
    found = [seq for s in searches for seq in s.found if len(seq) == length]
    if unread:
        moved = _rests_on_unread(starts, target, unread, places, read or {}, full, fits, length)
        if moved:
            names = ", ".join(moved)
            one = len(moved) == 1
            return Change("cannot tell", f"{names} {'was' if one else 'were'} not read, and the ruling would rest on "
                          f"{'it' if one else 'them'}", RULES["legal"], tuple(found))
    if not found:
        changed = exact.distance(position.layout()) if exact is not None else 0
        if changed > PLACES_PER_TURN * MAX_TURNS:
            # more places changed than 3 turns can change: more turns were played than are searched,
            # so no sequence found proves nothing (a quick game, a long stretch with no still table)
            return Change("cannot tell", f"the board changed in {changed} places, more than {MAX_TURNS} turns "
                          "can change: more turns were played than refcam searches", RULES["legal"])
        return _illegal(position, _one_move(position, full, turn_known, why=True) if full else None, searches)
    if length == 1 and single is not None and single.legal and \
            all(consequence(seq) == single.after for seq in found):
        return _from_single(single, position)
    return _agreeing(found)


def _rests_on_unread(starts, target: Target, unread: tuple[Unread, ...], places, read, full, fits,
                     length: int) -> list[str]:
    """The kangaroos not read that the ruling would rest on: seen empty where they stood, or
    the board not explained with them where they stood, or (for a one-turn change) also
    explained by a turn that moves one of them. A longer change with a kangaroo not read waits
    for a table that reads it (the search with its place open is too wide to run each time)."""
    if any(u.place is None for u in unread) or not length or length > 1:
        return sorted(u.name for u in unread)
    found = [seq for s in starts for seq in Search(s, target, 1, 1, fits).found]
    return _moved_unread(found, unread, places, read, full)


def fits_names(places: dict[str, str] | None, read: dict[str, str], unread: tuple[Unread, ...]):
    """Whether a sequence fits the kangaroos' names: some way of playing it ends with every
    read kangaroo where it was read (and none seen empty where it stood)."""
    gone = {u.name: places.get(u.name) for u in unread if u.place is None} if places else {}

    def fit(seq: Sequence) -> bool:
        if places is None:
            return True
        return any(all(out.get(n) == p for n, p in read.items()) and all(out.get(n) != p for n, p in gone.items())
                   for out in identities(places, seq))
    return fit


def _one_move(position: Position, layout, turn_known: bool, why: bool = False) -> Judgement:
    single = explain(position, layout, why)
    if single.verdict == "legal" or turn_known:
        return single
    flipped = explain(_flipped(position), layout, why)  # nobody told us whose turn it was
    return flipped if flipped.verdict == "legal" else single


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


def _moved_unread(found: list[Sequence], unread: tuple[Unread, ...], places, read: dict[str, str],
                  full) -> list[str]:
    """The kangaroos not read that some explaining sequence must move from where they stood
    (each sequence played the way that keeps the most of them in place)."""
    moved: set[str] = set()
    for seq in found:
        if places is None:
            cells, zones = seq[-1].after.layout()
            moved |= {u.name for u in unread if not _in_place(u, cells, zones, full)}
            continue
        outs = [o for o in identities(places, seq) if all(o.get(n) == p for n, p in read.items())]
        best = min(outs, key=lambda o: sum(o.get(u.name) != places.get(u.name) for u in unread))
        moved |= {u.name for u in unread if best.get(u.name) != places.get(u.name)}
    return sorted(moved)


def _in_place(piece: Unread, cells: str, zones, full) -> bool:
    if isinstance(piece.place, str):
        k, s = COACHES.index(piece.place[-1]), SIZES.index(piece.letter)
        return zones[k][s] >= full[1][k][s]
    return cells[piece.place] == piece.letter
