"""Round bookkeeping: hand sizes, draws, turns within a round, final places, grand prix points.

Pure functions on plain values plus a small round tracker used by the referee.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from referee.errors import InvalidInputError

from .turns import begins_round


# ---------------------------------------------------------------- Draw Phase
def hand_limit(rank: int, n_racing: int) -> int:
    """Draw Phase, Hand Size: 1st holds 4, last 6, everyone in between 5.

    rank: 1-based among the boats still racing; n_racing: how many are.
    """
    if not 1 <= rank <= n_racing:
        raise InvalidInputError(f"rank {rank} is not between 1 and {n_racing}")
    if rank == 1:
        return 4
    if rank == n_racing:
        return 6
    return 5


def cards_to_draw(rank: int, n_racing: int, holding: int) -> int:
    """Draw Phase: draw up to the limit; nothing when already at or over it."""
    if holding < 0:
        raise InvalidInputError(f"a hand of {holding} cards")
    return max(0, hand_limit(rank, n_racing) - holding)


def hand_sizes(order: list[str]) -> dict[str, int]:
    """Hand limit of every boat still racing, given their ranking (first place first)."""
    n = len(order)
    return {name: hand_limit(i + 1, n) for i, name in enumerate(order)}


# ---------------------------------------------------------------- Final Rankings, Grand Prix
def final_places(crossing_order: list[str], racing_by_rank: list[str], eliminated: list[str]) -> dict[str, int] | None:
    """Final places once they are decided, else None.

    Final Rankings / Ending the Game: places follow the crossing order; once one
    boat is left racing it takes the next place without crossing, and the game
    ends; eliminated boats (Out of Bounds) share last place.
    """
    n_total = len(crossing_order) + len(racing_by_rank) + len(eliminated)
    if len(racing_by_rank) > 1:
        return None
    places = {name: i + 1 for i, name in enumerate(crossing_order)}
    for name in racing_by_rank:
        places[name] = len(places) + 1
    for name in eliminated:
        places[name] = n_total
    return places


def grand_prix_points(place: int, n_players: int) -> int:
    """Grand Prix Mode: 5 / 3 / 2 / 0 points; in a 2-player race 2nd scores 0 and in a
    3-player race 3rd scores 0 (that place is last)."""
    if not 1 <= place <= max(n_players, 1):
        raise InvalidInputError(f"place {place} in a {n_players}-player race")
    if place == n_players and n_players in (2, 3):
        return 0
    return {1: 5, 2: 3, 3: 2}.get(place, 0)


def check_race_result(places: dict[str, int], eliminated=()) -> None:
    """Final Rankings: every boat has its own place, 1..n, except that the eliminated
    boats (Out of Bounds) share the last place. Raises InvalidInputError naming the clash."""
    by_place: dict[int, list[str]] = {}
    for name, place in places.items():
        if not isinstance(place, int) or isinstance(place, bool) or not 1 <= place <= len(places):
            raise InvalidInputError(f"race result: {name} has place {place!r} (places run 1 to {len(places)})")
        by_place.setdefault(place, []).append(name)
    last = len(places)
    for place, names in sorted(by_place.items()):
        if len(names) < 2:
            continue
        if place == last and all(n in eliminated for n in names):
            continue
        raise InvalidInputError(f"race result puts {' and '.join(sorted(names))} both in place {place}: "
                                "two boats cannot share a place (only eliminated boats share the last)")


@dataclass
class GrandPrix:
    """Grand Prix Mode: three races, points added up, most points wins."""

    races: list[dict[str, int]] = field(default_factory=list)
    RACES = 3

    def add_race(self, places: dict[str, int], eliminated: tuple[str, ...] | list[str] = ()) -> None:
        """Grand Prix Mode: one more race's final places. Refused: a fourth race, and a
        result with two boats in one place (Final Rankings: places follow the crossing
        order), except the boats eliminated for going out of bounds, who share last place."""
        if len(self.races) >= self.RACES:
            raise InvalidInputError(f"a grand prix has {self.RACES} races; race {len(self.races) + 1} given")
        check_race_result(places, eliminated)
        self.races.append(dict(places))

    def totals(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for places in self.races:
            n = len(places)
            for name, place in places.items():
                out[name] = out.get(name, 0) + grand_prix_points(place, n)
        return out

    @property
    def over(self) -> bool:
        return len(self.races) == self.RACES

    def leaders(self) -> list[str]:
        t = self.totals()
        if not t:
            return []
        best = max(t.values())
        return sorted(n for n, v in t.items() if v == best)

    def clone(self) -> "GrandPrix":
        return GrandPrix([dict(r) for r in self.races])


# ---------------------------------------------------------------- turns within a round
@dataclass
class RoundTracker:
    """Which round it is, which boats have taken their turn in it and which were declared
    as passing.

    Action Phase: players take turns in the order of this round's ranking, and a player
    may move 0 spaces (Moving Less Than 3 Spaces), which the camera cannot see. The
    referee decides when a boat's action is a new turn; whether that turn begins the next
    round is turns.begins_round's call, the one every referee uses.
    """

    round: int = 1
    turn_order: list[str] = field(default_factory=list)
    acted: list[str] = field(default_factory=list)
    passed: list[str] = field(default_factory=list)

    def start(self, ranking: list[str]) -> None:
        self.turn_order = list(ranking)
        self.acted = []
        self.passed = []

    def next_round(self, ranking: list[str]) -> None:
        """Ranking Phase: a new round with its turn order from the ranking."""
        self.round += 1
        self.start(ranking)

    def begins_round(self, boat: str, out: list[str] = ()) -> bool:
        """Whether ``boat`` beginning a turn now begins the next round (turns.begins_round)."""
        return begins_round(self.turn_order, self.acted, self.passed, [boat], out)

    def begin_turn(self, boat: str, ranking_now: list[str], out: list[str] = ()) -> bool:
        """A boat begins a turn; returns True when that begins a new round."""
        new_round = self.begins_round(boat, out)
        if new_round:
            self.next_round(ranking_now)
        self.acted.append(boat)
        return new_round

    def waiting_before(self, boat: str, gone: list[str] = ()) -> list[str]:
        """Boats ahead of ``boat`` in this round's turn order that have not acted or passed yet."""
        if boat not in self.turn_order:
            return []
        return [n for n in self.turn_order[:self.turn_order.index(boat)]
                if n not in self.acted and n not in self.passed and n not in gone]

    def complete(self, racing: list[str]) -> bool:
        return bool(racing) and all(b in self.acted or b in self.passed for b in racing)


# ---------------------------------------------------------------- Grand Prix as a declared setting
def parse_grand_prix(text: str | None) -> GrandPrix:
    """The earlier races of a grand prix as a user types them (a declared game option):
    races separated by ';', each 'boat-2=1,boat-1=2,...' (boat=place), eliminated boats
    marked with a trailing '*' (they share the last place). '' is a fresh grand prix."""
    gp = GrandPrix()
    for race_text in (text or "").split(";"):
        if not race_text.strip():
            continue
        places: dict[str, int] = {}
        out: list[str] = []
        for item in race_text.split(","):
            name, sep, place = item.strip().partition("=")
            name = name.strip()
            if not sep or not name:
                raise InvalidInputError(f"grand prix race {race_text.strip()!r}: expected boat=place, e.g. boat-2=1")
            if place.strip().endswith("*"):
                place = place.strip()[:-1]
                out.append(_boat(name))
            try:
                places[_boat(name)] = int(place)
            except ValueError:
                raise InvalidInputError(f"grand prix race {race_text.strip()!r}: place {place.strip()!r} "
                                        "is not a whole number") from None
        gp.add_race(places, out)
    return gp


def format_grand_prix(gp: GrandPrix, eliminated: list[list[str]] | None = None) -> str:
    """The text parse_grand_prix reads back (eliminated boats, when known per race, get '*')."""
    races = []
    for k, places in enumerate(gp.races):
        out = set((eliminated or [])[k]) if eliminated and k < len(eliminated) else set()
        races.append(",".join(f"{n.split('/')[-1]}={p}{'*' if n in out else ''}"
                              for n, p in sorted(places.items(), key=lambda kv: (kv[1], kv[0]))))
    return ";".join(races)


def _boat(name: str) -> str:
    return name if name.startswith("tornado/") else f"tornado/{name}"


def grand_prix_view(gp: GrandPrix, this_race: dict[str, int] | None = None, eliminated=()) -> dict:
    """Grand Prix Mode for the page: each race's points, the totals, and the setting that
    starts the next race with the totals kept ("next race")."""
    races = [{"places": dict(r), "points": {n: grand_prix_points(p, len(r)) for n, p in r.items()}}
             for r in gp.races]
    view = {"races": races, "totals": gp.totals(), "races_left": GrandPrix.RACES - len(gp.races)}
    if this_race is not None and not gp.over:
        nxt = gp.clone()
        nxt.add_race(this_race, eliminated)
        view["this_race"] = {"places": dict(this_race),
                             "points": {n: grand_prix_points(p, len(this_race)) for n, p in this_race.items()}}
        view["next_race_setting"] = format_grand_prix(nxt, [[]] * len(gp.races) + [list(eliminated)])
        view["totals_after_this_race"] = nxt.totals()
    return view
