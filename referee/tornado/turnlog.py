"""The turn rules across a whole race: a frozen log and a pure ``advance``.

The game step hands every new stable observation to ``advance`` together with the
ranking it computed; ``advance`` judges the change since the last stable observation
with referee/tornado/check.py and keeps what a race needs between turns:

- Action Phase: this round's turn order (the ranking when the round began), who has
  acted and who was declared as passing; whether a turn begins the next round is
  turns.begins_round's call (the round ends once the last-ranked boat has acted);
  acting after a lower-ranked boat within a round is a violation, turns merged between
  two stable views are "cannot tell".
- FAQ (replacing cards): a placement violation seen before the token moves stays
  open; a card put right withdraws it (a "cleared" ruling, and it leaves the open list);
  once the token moves, what is still open stands.
- Out of Bounds: a card off the table is pending until the token moves; a boat is
  eliminated only when its token moved with no acceptable placement left on the table.
- Boosting: once a game (a boat whose character card went face down is remembered).
- Ranking Phase: a boat in play (set by the players, seen earlier, or whose cards lie on
  the table) but not seen now is named, with what vision said kept it from being read ("boat-6 not read:
  its sticker shows about 13 px wide here; ...") or, where vision said nothing, "boat-6 not seen: under a
  hand?"; its last stable position is kept and flagged, and the ranking is marked incomplete.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping, Sequence

from referee.observation import Observation, PiecePose, reasons_not_read

from .cards import BOAT_PREFIX, CARD_PREFIX
from .placement import PLACEMENT_SECTIONS
from .check import SECTION_TOKEN, Ruling, TurnReport, boats_of, check_turn
from .turns import (CANNOT_TELL, SECTION_OUT, SECTION_RANKING, SECTION_REPLACE, begins_round, hidden_boat_warnings,
                    turn_order_call)


@dataclass(frozen=True)
class OpenViolation:
    """A placement violation whose token has not moved yet: it may still be put right."""

    boat: str
    cards: tuple[str, ...]
    ruling: Ruling


@dataclass(frozen=True)
class TurnLog:
    previous: Observation | None = None
    round: int = 1
    turn_order: tuple[str, ...] = ()
    acted: tuple[str, ...] = ()
    passed: tuple[str, ...] = ()  # boats the players declared as passing this round (Moving Less Than 3 Spaces)
    in_turn: tuple[str, ...] = ()  # boats that laid cards and have not moved their token yet
    open: tuple[OpenViolation, ...] = ()
    standing: tuple[Ruling, ...] = ()  # violations that stand (the token moved)
    eliminated: tuple[str, ...] = ()
    boosted: frozenset[str] = frozenset()
    seen: tuple[tuple[str, PiecePose], ...] = ()  # each boat's last stable pose (pairs: stays frozen)
    hidden: tuple[str, ...] = ()
    hidden_why: tuple[tuple[str, str], ...] = ()  # (hidden boat, what vision said kept it from being read)
    in_play: tuple[str, ...] = ()  # the boats the players said are racing (the game's boats setting)

    @property
    def last_seen(self) -> dict[str, PiecePose]:
        return dict(self.seen)

    def why_hidden(self, boat: str) -> str:
        """What vision said kept a hidden boat from being read, or '' (it said nothing: a hand?)."""
        return dict(self.hidden_why).get(boat, "")

    @property
    def incomplete(self) -> bool:
        """The ranking leaves out a boat still in the race (hidden)."""
        return bool(self.hidden)

    def to_json(self) -> dict:
        return {"round": self.round, "turn_order": list(self.turn_order), "acted": list(self.acted),
                "passed": list(self.passed),
                "open_violations": [o.ruling.to_json() for o in self.open],
                "violations": [r.to_json() for r in self.standing], "eliminated": list(self.eliminated),
                "boost_used": sorted(self.boosted), "hidden": list(self.hidden),
                "kept_positions": {n: _kept_json(p, self.why_hidden(n)) for n, p in self.last_seen.items()
                                   if n in self.hidden},
                "ranking_incomplete": self.incomplete}


def _kept_json(pose: PiecePose, why: str) -> dict:
    """A hidden boat's kept position: "not seen" (a hand?), or "not read" and why when vision said."""
    out = {"x_mm": round(pose.x_mm, 1), "y_mm": round(pose.y_mm, 1), "flag": "not read" if why else "not seen"}
    return dict(out, why=why) if why else out


def _owners_on_table(obs: Observation, owners: Mapping[int, str]) -> set[str]:
    # Player Setup: one deck per player (as learned, else deck d is boat d); a card of a
    # deck on the table means its boat races.
    decks = {int(p.name[len(CARD_PREFIX):].split("-")[0]) for p in obs.pieces if p.name.startswith(CARD_PREFIX)}
    return {owners.get(d, f"{BOAT_PREFIX}{d}") for d in decks}


def _hidden(log: TurnLog, obs: Observation, finished: Sequence[str], owners: Mapping[int, str]) -> list[str]:
    expected = (set(log.last_seen) | set(log.in_play) | _owners_on_table(obs, owners)) - set(log.eliminated) \
        - set(finished)
    seen = set(boats_of(obs))
    return sorted(expected - seen)


def _round_turn(log: TurnLog, report: TurnReport, movers: Sequence[str], ranking: Sequence[str],
                finished: Sequence[str] = ()) -> tuple[TurnLog, list[Ruling]]:
    """Action Phase bookkeeping and its ruling. A turn begins when a boat lays a card or
    moves its token; a boat that laid cards and moves its token later (even after another
    boat went) is going on with the same turn."""
    starting = [m for m in movers if m not in log.in_turn]
    starting += [b for b in _boats_laying(report) if b not in starting and b not in log.in_turn]
    in_turn = tuple(b for b in set(log.in_turn) | set(_boats_laying(report)) if b not in movers)
    if not starting:
        return replace(log, in_turn=in_turn), []
    order, acted, passed, rnd = log.turn_order or tuple(ranking), log.acted, log.passed, log.round
    if begins_round(order, acted, passed, starting, out=tuple(finished) + log.eliminated):
        order, acted, passed, rnd = tuple(ranking), (), (), rnd + 1
    call = turn_order_call(list(order), list(acted) + list(passed), starting)
    rulings = [] if call.verdict == "ok" else [Ruling(starting[0], call.section, call.verdict, call.summary)]
    return replace(log, turn_order=order, acted=acted + tuple(m for m in starting if m not in acted), round=rnd,
                   passed=passed, in_turn=in_turn), rulings


def declare_pass(log: TurnLog, boat: str) -> TurnLog:
    """The players say ``boat`` passes this round (a 0-space turn, Moving Less Than 3 Spaces):
    for the turn order it has taken its turn."""
    return log if boat in log.passed else replace(log, passed=log.passed + (boat,))


def _boats_laying(report: TurnReport) -> list[str]:
    return sorted({r.boat for r in report.rulings if r.section.startswith(PLACEMENT_SECTIONS)})


def _settle_open(log: TurnLog, report: TurnReport, movers: Sequence[str]) -> tuple[TurnLog, list[Ruling]]:
    """FAQ (replacing cards): an open violation whose card was taken away or laid again is
    withdrawn (the card laid again is judged afresh); one whose boat's token moved stands."""
    changed = set(report.laid) | set(report.gone)
    out, still, standing = [], [], list(log.standing)
    for o in log.open:
        if any(c in changed for c in o.cards):
            out.append(Ruling(o.boat, SECTION_REPLACE, "ok", f"{', '.join(c.split('/')[-1] for c in o.cards)} "
                              f"replaced before the token moved: withdrawn ({o.ruling.summary})", o.cards))
        elif o.boat in movers:
            standing.append(o.ruling)
        else:
            still.append(o)
    return replace(log, open=tuple(still), standing=tuple(standing)), out


def advance(log: TurnLog, obs: Observation, ranking: Sequence[str], finished: Sequence[str] = (),
            owners: Mapping[int, str] | None = None, card_order: Sequence[str] = ()) -> tuple[TurnLog, list[Ruling], list[str]]:
    """Judge the change from the last stable observation to ``obs``.

    ranking: the ranking of the last stable state (first place first), which is the turn
    order of a round beginning now; finished: boats that crossed the finish line.
    owners: deck colour -> boat as learned on the table (default: deck d is boat d);
    card_order: the racing cards in the order laid (which lies on top of which).
    Returns (new log, rulings, warnings).
    """
    boats = boats_of(obs)
    warnings: list[str] = []
    owners = dict(owners or {})
    hidden = _hidden(log, obs, finished, owners)
    warnings += hidden_boat_warnings(hidden, (), obs.warnings)
    hidden_why = reasons_not_read(obs.warnings, hidden)
    if hidden:
        warnings.append("ranking incomplete: " + ", ".join(h.split("/")[-1] for h in hidden) +
                        " kept at the last stable position, flagged")
    seen = dict(log.last_seen)
    seen.update(boats)
    if log.previous is None:
        return replace(log, previous=obs, seen=tuple(sorted(seen.items())), hidden=tuple(hidden),
                       hidden_why=hidden_why), [], warnings
    # A hidden boat is judged against its last stable position when it is seen again.
    prev = log.previous
    now = _with_kept(obs, log, hidden)
    report = check_turn(prev, now, deck_owner=owners, card_order=card_order)
    movers = [m for m in report.movers if m not in log.eliminated]
    log, rulings = _round_turn(log, report, movers, ranking, finished)
    log, cleared = _settle_open(log, report, movers)
    rulings += cleared
    opened, eliminated, boosted = list(log.open), list(log.eliminated), set(log.boosted)
    for r in report.rulings:
        if r.section == SECTION_TOKEN:
            continue  # the step's move ruling applies the same rule function (cards.token_placement_fault)
        if r.section == SECTION_REPLACE:  # a card off the table, token not moved: pending
            rulings.append(r)
            continue
        if r.verdict == "violation" and r.boat not in movers and r.section.startswith(PLACEMENT_SECTIONS):
            opened.append(OpenViolation(r.boat, r.cards, r))
        if r.section == SECTION_OUT and r.verdict == "violation":
            eliminated.append(r.boat)
        if "with its boost" in r.summary:
            boosted.add(r.boat)
        if r.verdict != "ok":  # what is legal the step's own move ruling already says
            rulings.append(r)
    standing = list(log.standing) + [r for r in report.rulings if r.verdict == "violation" and r.boat in movers]
    log = replace(log, previous=now, open=tuple(opened), eliminated=tuple(dict.fromkeys(eliminated)),
                  boosted=frozenset(boosted), standing=tuple(standing), seen=tuple(sorted(seen.items())),
                  hidden=tuple(hidden), hidden_why=hidden_why)
    # the step says itself once that the table corners are out of view
    return log, rulings, warnings + [w for w in report.warnings if "corner stickers" not in w]


def _with_kept(obs: Observation, log: TurnLog, hidden: Sequence[str]) -> Observation:
    """The observation with hidden boats at their last stable position, so a boat under a
    hand is not taken for a boat that left (nor for one that moved)."""
    kept = [log.last_seen[h] for h in hidden if h in log.last_seen]
    return replace(obs, pieces=obs.pieces + tuple(kept)) if kept else obs


__all__ = ["TurnLog", "OpenViolation", "advance", "CANNOT_TELL", "SECTION_RANKING"]


def as_rulings(rulings: Sequence[Ruling], warnings: Sequence[str], t: float, cite=None) -> list:
    """advance()'s output as entries of the rulings log (referee.rulings.Ruling); cite(section)
    makes the rule citation (default: its text)."""
    from referee.rulings import CANNOT_TELL as CANNOT, ILLEGAL, LEGAL, Ruling as LogRuling

    from .rules import headline, whose

    cite = cite or (lambda section: f"Tornado Splash, {section}")
    out = []
    for r in rulings:
        kind = {"violation": "violation", "cannot tell": "state"}.get(r.verdict, "state")
        # a placement fault put right before the token moved is withdrawn: "Put right" is its verdict
        verdict = {"violation": ILLEGAL, CANNOT_TELL: CANNOT}.get(r.verdict, "Put right" if r.section == SECTION_REPLACE
                                                                  else LEGAL)
        out.append(LogRuling(t=t, game="tornado", kind=kind, summary=headline(verdict, whose(r.boat, r.summary), r.section),
                             legal=r.legal, rule=cite(r.section),
                             details={"boat": r.boat, "verdict": r.verdict, "cards": list(r.cards),
                                      "pieces": [r.boat] + list(r.cards)}))
    out += [LogRuling(t=t, game="tornado", kind="warning", summary=w,
                      rule=cite(SECTION_RANKING) if _hidden_note(w) else None) for w in warnings]
    return out


def _hidden_note(warning: str) -> bool:
    """A warning of the Ranking Phase: a boat not seen or not read, or the ranking left incomplete."""
    return any(w in warning for w in ("not seen", "not read", "incomplete"))
