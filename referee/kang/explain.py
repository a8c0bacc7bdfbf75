"""Judging a Kang turn from two boards: which legal moves turn the position into what is seen.

``explain(position, observed)`` compares boards and start zones only (a camera sees neither
whose turn it is nor the alfalfa). The answer is one legal move, several moves the board
cannot tell apart (all reported), or none; for none it names the rule that was broken (by
trying the change again with one rule waived at a time) and the nearest legal move.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..rulings import CANNOT_TELL, ILLEGAL, LEGAL, verdict_line
from .moves import PASS, Rules, legal_moves, movers, push, raw_moves_of
from .position import (COACHES, EMPTY, PER_SIZE, SIZE_NAMES, SIZE_OF, SIZES, ZONE_ROW, Move, Position, cell_index,
                       other, square_name)

RULEBOOK = "Kang"


@dataclass(frozen=True)
class Rule:
    """A rule as refcam reads it: the rulebook section and the rule in our own words."""

    key: str
    section: str
    words: str

    def __str__(self) -> str:
        return f"{RULEBOOK}, {self.section}"


RULES = {r.key: r for r in (
    Rule("legal", "Gameplay", "a coach moves one kangaroo by the rules, or passes when none can move"),
    Rule("setup", "Setup", "each coach starts with 2 kangaroos of each size in their start zone; A moves first"),
    Rule("own-edge", "How to move kangaroo tokens",
         "a kangaroo on the board leaves it only across the opponent's edge, never back into a start zone"),
    Rule("turns", "Gameplay", "the coaches move in turn, one move each"),
    Rule("one-kangaroo", "Gameplay", "a turn moves one kangaroo; only a kick moves a second one, to a free square"),
    Rule("nearest-row", "Which tokens you may move",
         "a coach plays from the start zone first, then from the board row nearest them, skipping a row "
         "only when none of its kangaroos can move"),
    Rule("exact-count", "How to move kangaroo tokens",
         "a kangaroo crosses exactly as many lines as its size: small 1, medium 2, large 3"),
    Rule("segment-once", "How to move kangaroo tokens", "no line is crossed twice in one move"),
    Rule("empty-path", "Ordinary move",
         "a kangaroo passes only over empty squares, straight or sideways, and stops on an empty one"),
    Rule("kick", "Kick",
         "the kicked kangaroo goes to a free square no farther from the opponent than the opponent's nearest "
         "row holding a kangaroo, so the opponent can play it"),
    Rule("no-score", "How to get an alfalfa token", "a coach who has just scored may not leave the board next turn"),
    Rule("exit-last", "How to get an alfalfa token",
         "a kangaroo leaves the board only across the opponent's edge, and only with its last crossing"),
    Rule("components", "Components", "the set has 12 kangaroos, 4 of each size"),
    Rule("game-over", "End of the Game", "the first coach to hold 3 alfalfa tokens has won; nobody moves after"),
)}

# One rule waived at a time, in the order a player most often breaks them. A line crossed
# twice is tried before a square passed over: both can end on a square nearer than the
# kangaroo's count, and there the back-and-forth (often in a jump chain) is the narrower
# reading of what the board shows.
LADDER = (("nearest-row", Rules(nearest_row=False)), ("no-score", Rules(no_score_turn=False)),
          ("kick", Rules(kick_target=False)), ("exit-last", Rules(exit_last=False)),
          ("segment-once", Rules(segment_once=False)), ("empty-path", Rules(empty_path=False)),
          ("exact-count", Rules(exact_count=False)))

Layout = tuple  # (cells, zones): what a camera sees


@dataclass(frozen=True)
class Judgement:
    """verdict: "legal", "illegal", "no change" or "cannot tell". moves: every move that turns
    the position into the observed board (for "illegal", the attempted move with the rule
    waived, when one was found). after: the position after a legal move."""

    verdict: str
    coach: str | None
    reason: str
    rule: Rule
    moves: tuple[Move, ...] = ()
    after: Position | None = None
    nearest: Move | None = None
    nearest_differs: int = 0
    passed: bool = False
    wrong_coach: bool = False

    @property
    def legal(self) -> bool | None:
        return {"legal": True, "illegal": False}.get(self.verdict)

    def summary(self) -> str:
        """The verdict first, who did what and the rule; the notation after."""
        moves = ", ".join(str(m) for m in self.moves[:6]) + (" ..." if len(self.moves) > 6 else "")
        if self.verdict == "legal":
            who = other(self.coach) if self.passed else self.coach
            lead = f"{self.coach} had no legal move and passed, then " if self.passed else ""
            alt = f". The board cannot tell {len(self.moves)} ways apart: {moves}" if len(self.moves) > 1 else ""
            return verdict_line(LEGAL, f"{lead}{who} played {self.moves[0]}", self.rule.section) + alt
        if self.verdict == "illegal":
            shown = f" Move read: {self.moves[0]}." if self.moves else ""
            near = f"; nearest legal move {self.nearest} ({self.nearest_differs} squares differ)" if self.nearest else ""
            return f"{verdict_line(ILLEGAL, self.reason, self.rule.section)}.{shown} Rule: {self.rule.words}{near}"
        if self.verdict == "cannot tell":
            return verdict_line(CANNOT_TELL, self.reason, self.rule.section)
        return f"No change: {self.reason}"

    def to_json(self) -> dict:
        return {"verdict": self.verdict, "legal": self.legal, "coach": self.coach, "reason": self.reason,
                "rule": {"section": self.rule.section, "text": str(self.rule), "words": self.rule.words},
                "moves": [str(m) for m in self.moves], "after": str(self.after) if self.after else None,
                "nearest": str(self.nearest) if self.nearest else None, "nearest_differs": self.nearest_differs,
                "passed": self.passed, "wrong_coach": self.wrong_coach, "summary": self.summary()}


def layout_of(observed) -> Layout:
    """(cells, zones) of a Position or of an already bare layout."""
    if isinstance(observed, Position):
        return observed.layout()
    cells, zones = observed
    return cells, (tuple(zones[0]), tuple(zones[1]))


def count_problem(layout: Layout) -> str | None:
    """Components: why the layout cannot be a full set of kangaroos, or None when it is."""
    cells, zones = layout
    for k, s in enumerate(SIZES):
        n = cells.count(s) + zones[0][k] + zones[1][k]
        if n != PER_SIZE:
            return f"{n} {('small', 'medium', 'large')[k]} kangaroos seen, {PER_SIZE} expected"
    return None


def differs(a: Layout, b: Layout) -> int:
    """Squares whose content differs, plus kangaroos that changed start zone counts."""
    return sum(x != y for x, y in zip(a[0], b[0])) + sum(abs(x - y) for za, zb in zip(a[1], b[1])
                                                         for x, y in zip(za, zb))


def matching(pos: Position, target: Layout, moves) -> list[Move]:
    return [m for m in moves if not m.is_pass and push(pos, m).layout() == target]


def explain(position: Position, observed, why: bool = True) -> Judgement:
    """Every legal move that turns `position` into the `observed` board (a Position or a
    (cells, zones) layout), else why not (``why``: find the rule broken, which tries the
    change again with each rule waived; without it an illegal change says only that)."""
    target = layout_of(observed)
    coach = position.to_move
    problem = count_problem(target)
    if problem:
        return Judgement("cannot tell", None, problem, RULES["components"])
    if target == position.layout():
        return Judgement("no change", None, "the board did not change", RULES["legal"])
    if position.winner:
        return Judgement("illegal", coach, f"a kangaroo moved after {position.winner} had won", RULES["game-over"])
    pos, passed = position, False
    if legal_moves(pos) == (PASS,):
        pos, passed = push(pos, PASS), True
    found = _relaxed(pos, target, Rules(), _changed_origins(pos, target, _allowed_group(pos)))
    if found:
        return Judgement("legal", coach, "", RULES["legal"], tuple(found), push(pos, found[0]), passed=passed)
    if not why:
        return Judgement("illegal", coach, "no legal move gives the board seen", RULES["legal"], passed=passed)
    return _illegal(pos, target, passed)


def _illegal(pos: Position, target: Layout, passed: bool) -> Judgement:
    """The change is no legal move of the coach to move: find out which rule it breaks."""
    coach = pos.to_move
    legal = [m for m in legal_moves(pos) if not m.is_pass]
    nearest = min(legal, key=lambda m: (differs(push(pos, m).layout(), target), str(m)), default=None)
    near = {"nearest": nearest, "passed": passed,
            "nearest_differs": differs(push(pos, nearest).layout(), target) if nearest else 0}
    home = _back_home(pos, target)
    if home:
        return Judgement("illegal", coach, f"{coach} moved a kangaroo back into their own start zone",
                         RULES["own-edge"], tuple(home), **near)
    flipped = Position._trusted(pos.cells, pos.zones, other(coach), pos.alfalfa, pos.no_score)
    theirs = matching(flipped, target, legal_moves(flipped))
    if theirs:
        return Judgement("illegal", other(coach), f"{other(coach)} moved, but it was {coach}'s turn",
                         RULES["turns"], tuple(theirs), wrong_coach=True, **near)
    origins = _changed_origins(pos, target, [o for g in movers(pos, coach) for o in g])
    allowed = _allowed_group(pos)
    for key, rules in LADDER:
        pool = origins if not rules.nearest_row else [o for o in origins if o in allowed]
        tried = sorted(_relaxed(pos, target, rules, pool), key=lambda m: (len(m.path), str(m)))  # the plainest first
        if tried:
            return Judgement("illegal", coach, _why(key, tried[0], pos, target), RULES[key], tuple(tried), **near)
    moved = _kangaroos_moved(pos.layout(), target)
    if moved > 2:
        return Judgement("illegal", coach, f"{moved} kangaroos changed place in one turn", RULES["one-kangaroo"],
                         **near)
    return Judgement("illegal", coach, f"no move of {coach}'s turns the board into the one seen", RULES["legal"],
                     **near)


def _back_home(pos: Position, target: Layout) -> list[Move]:
    """How to move kangaroo tokens: moves of the coach to move that would take a kangaroo from
    the board back across their own edge into their own start zone (every other rule kept)."""
    out = []
    k = COACHES.index(pos.to_move)
    for origin, letter in _changed_origins(pos, target, [o for g in movers(pos, pos.to_move) for o in g]):
        if origin[1] in (0, 7):
            continue
        for path, jumps, kick in raw_moves_of(pos, pos.to_move, origin, letter, Rules(own_edge=False)):
            if path[-1][1] != ZONE_ROW[pos.to_move]:
                continue
            cells = list(pos.cells)
            cells[cell_index(origin)] = EMPTY
            zones = [list(pos.zones[0]), list(pos.zones[1])]
            zones[k][SIZES.index(letter)] += 1
            if ("".join(cells), (tuple(zones[0]), tuple(zones[1]))) == target:
                out.append(Move(path, jumps, kick))
    return out


def _why(key: str, move: Move, pos: Position, target: Layout) -> str:
    """Who did what, in one phrase (the notation follows the headline)."""
    coach = pos.to_move
    start = "the start zone" if move.origin[1] in (0, 7) else square_name(move.origin)
    k = COACHES.index(coach)
    letter = pos.at(move.origin) if move.origin[1] not in (0, 7) else \
        next((s for i, s in enumerate(SIZES) if target[1][k][i] < pos.zones[k][i]), "")
    size = SIZE_NAMES.get(letter, "")
    texts = {"nearest-row": f"{coach} moved a kangaroo from {start}, but must play from {_group_name(pos)}",
             "no-score": f"{coach} scored again on the turn right after scoring",
             "kick": f"{coach}'s kick sends the kicked kangaroo too far from the opponent",
             "exit-last": f"{coach}'s kangaroo leaves the board before its last crossing",
             "empty-path": f"{coach}'s kangaroo passes over an occupied square",
             "exact-count": f"{coach}'s {size} kangaroo crosses {move.first_leg} lines, not {SIZE_OF.get(letter, '?')}",
             "segment-once": f"{coach}'s kangaroo crosses the same line twice in one move"}
    return texts[key]


def _group_name(pos: Position) -> str:
    group = _allowed_group(pos)
    if not group:
        return "nowhere"
    row = next(iter(group))[0][1]
    return "the start zone" if row in (0, 7) else f"row {row}"


def _allowed_group(pos: Position) -> list:
    """Which tokens you may move: the nearest group that has a legal move."""
    full = Rules()
    for group in movers(pos, pos.to_move):
        if any(raw_moves_of(pos, pos.to_move, o, s, full) for o, s in group):
            return group
    return []


def _changed_origins(pos: Position, target: Layout, candidates) -> list:
    """Of (origin, letter) candidates, the kangaroos whose place changed: a move starts there."""
    cells, zones = target
    k = COACHES.index(pos.to_move)
    out = []
    for origin, letter in candidates:
        if origin[1] in (0, 7):
            if zones[k][SIZES.index(letter)] < pos.zones[k][SIZES.index(letter)]:
                out.append((origin, letter))
        elif cells[cell_index(origin)] != letter:
            out.append((origin, letter))
    return out


def _relaxed(pos: Position, target: Layout, rules: Rules, origins) -> list[Move]:
    """Moves from these origins under these rules that turn pos into target. Only a path whose
    last square shows the mover (and whose kick target shows the kicked one) is pushed."""
    out = []
    cells = target[0]
    for origin, letter in origins:
        for path, jumps, kick in raw_moves_of(pos, pos.to_move, origin, letter, rules):
            end = path[-1]
            if end[1] not in (0, 7) and cells[cell_index(end)] != letter:
                continue
            if kick is not None and cells[cell_index(kick)] != pos.cells[cell_index(end)]:
                continue
            move = Move(path, jumps, kick)
            if push(pos, move, letter=letter).layout() == target:
                out.append(move)
    return out


def _kangaroos_moved(before: Layout, after: Layout) -> int:
    gone = sum(a != EMPTY and a != b for a, b in zip(before[0], after[0]))
    left_zone = sum(max(0, x - y) for za, zb in zip(before[1], after[1]) for x, y in zip(za, zb))
    return gone + left_zone
