"""Rules about one player's turn as a whole, as pure functions on plain values:
how far the token moved and where it ended, the boost, out of bounds while cards may
still be replaced, the order of turns, the empty deck, and boats out of sight.

Each function says which rulebook section it applies; the game step strings them
together over stable observations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from referee.observation import why_not_read

SECTION_MOVEMENT = "Player Token Movement"
SECTION_LESS = "Moving Less Than 3 Spaces"
SECTION_FAQ_FRONT = "FAQ (token on the front-most card)"
SECTION_BOOST = "Boosting"
SECTION_LIMIT = "Racing Card Limitation"
SECTION_OUT = "Out of Bounds"
SECTION_REPLACE = "FAQ (replacing cards before the token moves)"
SECTION_ORDER = "Action Phase"
SECTION_EMPTY_DECK = "When Your Deck is Empty"
SECTION_RANKING = "Ranking Phase"

CANNOT_TELL = "cannot tell"


@dataclass(frozen=True)
class TurnCall:
    """A ruling on part of a turn: verdict "ok", "violation" or "cannot tell", why, which rule."""

    verdict: str
    section: str
    summary: str
    cards: tuple[str, ...] = ()

    @property
    def legal(self) -> bool | None:
        return {"ok": True, "violation": False}.get(self.verdict)

    def to_json(self) -> dict:
        return {"verdict": self.verdict, "section": self.section, "summary": self.summary}


def space_limit(boosting_now: bool) -> int:
    """Player Token Movement / Boosted Movement: up to 3 spaces, 4 on the turn the boost is used."""
    return 4 if boosting_now else 3


def boost_call(face_before: str | None, face_after: str | None, boat: str) -> tuple[bool, TurnCall | None]:
    """Boosting: flipping the character card face down uses the boost, once a game; it
    never comes back face up. Returns (boosting this turn, a violation or None)."""
    if face_before == "face-down" and face_after == "face-up":
        return False, TurnCall("violation", SECTION_BOOST, f"{boat}'s character card came back face up: "
                               "a boost is used once a game and the card stays face down")
    return face_before == "face-up" and face_after == "face-down", None


def _short(name: str) -> str:
    return name.split("/", 1)[-1]


def move_length_call(boat: str, spaces: int, boosting_now: bool) -> TurnCall:
    """Player Token Movement / Boosted Movement: the token moves no more spaces in its turn
    than the turn allows (3, or 4 on the turn the boost is used). The one rule function the
    live referee and `tornado check` both use."""
    limit = space_limit(boosting_now)
    if spaces > limit:
        return TurnCall("violation", SECTION_BOOST if boosting_now else SECTION_LIMIT,
                        f"{_short(boat)} moved {spaces} movement spaces this round, where at most {limit} are allowed")
    return TurnCall("ok", SECTION_MOVEMENT, f"{_short(boat)} moved {spaces} space{'s' if spaces != 1 else ''}"
                    + (" with its boost" if boosting_now else ""))


def spaces_ahead_call(boat: str, ahead: int, boosting_now: bool, cards: Sequence[str] = ()) -> TurnCall:
    """Racing Card Limitation (Boosting: 4): cards are laid only so far that the token can move
    up to 3 spaces this round, counted from where its turn began to the end of its route, the
    spaces wholly covered by any player's card left out (Overlapping Player Cards). However
    far the token then moves, a card that puts more spaces ahead breaks it. The one rule
    function the live referee and `tornado check` both use."""
    limit = space_limit(boosting_now)
    if ahead > limit:
        return TurnCall("violation", SECTION_BOOST if boosting_now else SECTION_LIMIT,
                        f"the cards on {_short(boat)}'s route give it {ahead} movement spaces this round, "
                        f"where at most {limit} are allowed", tuple(cards))
    return TurnCall("ok", SECTION_LIMIT, f"{_short(boat)}'s cards give it {ahead} movement "
                    f"space{'s' if ahead != 1 else ''} this round (at most {limit})")


def front_card_call(boat: str, route: Sequence[str], standing_on: str | None) -> TurnCall:
    """FAQ / Moving Less Than 3 Spaces: the turn ends with the token on the front-most card
    of its route, so no card is laid beyond what the move used."""
    if not route or standing_on is None:
        return TurnCall(CANNOT_TELL, SECTION_FAQ_FRONT, f"{boat}: no racing card seen under the token")
    if standing_on == route[-1]:
        return TurnCall("ok", SECTION_FAQ_FRONT, f"{boat} ends on its front-most card {route[-1]}")
    if standing_on not in route:
        return TurnCall(CANNOT_TELL, SECTION_FAQ_FRONT, f"{boat} stands on {standing_on}, not a card of its route")
    extra = list(route[route.index(standing_on) + 1:])
    return TurnCall("violation", SECTION_LESS, f"{boat} stands on {standing_on} but {len(extra)} card"
                    f"{'s' if len(extra) != 1 else ''} lie ahead of it ({', '.join(extra)}): "
                    "lay only the cards the move needs and end on the front-most")


def out_of_bounds_call(boat: str, hanging: Sequence[str], token_moved: bool) -> TurnCall:
    """Out of Bounds, with the FAQ on replacing cards: until the token moves a card may be
    replaced, so a card seen hanging off the table is a pending problem, not yet an
    elimination; once the token has moved with the card still hanging (no acceptable
    placement stayed on the table), the boat is out."""
    if not hanging:
        return TurnCall("ok", SECTION_OUT, f"{boat}'s cards are all on the table")
    names = ", ".join(hanging)
    if not token_moved:
        return TurnCall(CANNOT_TELL, SECTION_REPLACE, f"{names} hangs off the table; {boat} may still replace it "
                        "before moving its token")
    return TurnCall("violation", SECTION_OUT, f"{names} hangs off the table and {boat} moved its token: "
                    f"{boat} is eliminated")


def round_over(turn_order: Sequence[str], acted: Iterable[str], passed: Iterable[str] = (),
               out: Iterable[str] = ()) -> bool:
    """Ending the Action Phase: the round ends when the last-ranked boat still racing has
    taken its turn (every boat it ranks below that has not acted passed, since turns go
    down the ranking), or when every boat has acted or passed. ``passed``: boats declared
    as passing (a 0-space turn the camera cannot see); ``out``: boats no longer racing."""
    done, gone = set(acted) | set(passed), set(out)
    racing = [b for b in turn_order if b not in gone]
    return bool(racing) and (racing[-1] in done or all(b in done for b in racing))


def begins_round(turn_order: Sequence[str], acted: Iterable[str], passed: Iterable[str],
                 starting: Iterable[str], out: Iterable[str] = ()) -> bool:
    """Action Phase, the one decision every referee uses: do these boats, beginning a turn
    now, begin the next round? Yes once this round is over (round_over), and when one of
    them already took its turn this round (a boat has one turn a round, so the boats that
    had not acted passed)."""
    acted = list(acted)
    return round_over(turn_order, acted, passed, out) or any(b in acted for b in starting)


def turn_order_call(turn_order: Sequence[str], acted: Iterable[str], movers: Sequence[str]) -> TurnCall:
    """Action Phase: players act in ranking order, first place first.

    A player may pass (move 0 spaces), so a boat acting before a higher-ranked one is
    not yet wrong (that one passed); it is wrong when a boat acts after a lower-ranked boat
    has already acted or passed this round. Whether a round is over is begins_round's to
    decide first. When several boats moved between two stable states their turns merged
    and their order cannot be seen.
    """
    pos = {name: i for i, name in enumerate(turn_order)}
    acted = [a for a in acted if a in pos]
    latest = max((pos[a] for a in acted), default=-1)
    # the latest boat to act or pass is out of turn too when seen acting again: its turn ended
    # (Ending the Action Phase) and play went on to the next boat in the ranking
    late = [m for m in movers if m in pos and pos[m] <= latest]
    if late:
        after = turn_order[latest]
        order = ", ".join(_short(b) for b in turn_order)
        if late == [after]:
            return TurnCall("violation", SECTION_ORDER, f"{_short(after)} acts again though its turn this round is "
                            f"over; turn order this round: {order}")
        return TurnCall("violation", SECTION_ORDER, f"{', '.join(_short(b) for b in late)} acted after "
                        f"{_short(after)}, who ranks below; turn order this round: {order}")
    if len(movers) > 1:
        # turns go down the ranking, so the rules order turns the camera saw together
        ordered = sorted(movers, key=lambda m: pos.get(m, len(pos)))
        return TurnCall("ok", SECTION_ORDER, f"{' and '.join(_short(m) for m in ordered)} took their turns between "
                        f"the same two still tables, seen together in this round's turn order: "
                        f"{', then '.join(_short(m) for m in ordered)}")
    if not movers:
        return TurnCall("ok", SECTION_ORDER, "no boat moved")
    return TurnCall("ok", SECTION_ORDER, f"{movers[0]} acts in ranking order")


def pickup_call(boat: str, route: Sequence[str], removed: Sequence[str]) -> TurnCall:
    """When Your Deck is Empty: cards are taken back from the rear of the route first,
    the first card played first."""
    if not removed:
        return TurnCall("ok", SECTION_EMPTY_DECK, f"{boat} picked up no card")
    want = list(route[:len(removed)])
    if sorted(removed) == sorted(want):
        return TurnCall("ok", SECTION_EMPTY_DECK, f"{boat} picked up its rearmost card{'s' if len(want) > 1 else ''} "
                        f"{', '.join(want)}")
    return TurnCall("violation", SECTION_EMPTY_DECK, f"{boat} picked up {', '.join(removed)}; the rearmost card of "
                    f"its route comes first ({', '.join(want)})")


def hidden_boat_note(name: str, why: str = "") -> str:
    """How a boat in the race but not in the table is named: what vision said kept it from being
    read (referee.observation.why_not_read), else (vision said nothing: something moved over its
    place) a hand is the likely cause, asked rather than claimed."""
    short = name.split('/', 1)[-1]
    return f"{short} not read: {why}" if why else f"{short} not seen: under a hand?"


def hidden_boat_warnings(expected: Iterable[str], seen_now: Iterable[str], warnings: Iterable[str] = ()) -> list[str]:
    """Ranking Phase: a boat that is still in the race (seen earlier, or its cards lie on
    the table) but not in view cannot be ranked; say so, and why when vision's ``warnings``
    say it, rather than drop it."""
    now, warnings = set(seen_now), tuple(warnings)
    return [hidden_boat_note(name, why_not_read(warnings, name)) for name in sorted(set(expected)) if name not in now]


def short_why(why: str) -> str:
    """A label's few words for what kept a piece from being read: the sticker's size in px when
    that is the reason, else the reason's first clause (the whole reason is in the rulings)."""
    size = re.search(r"sticker shows about (\d+) px", why)
    if size:
        return f"sticker {size.group(1)} px"
    return re.sub(r"\s*\(.*?\)", "", why.split(";", 1)[0]).strip()
