"""One image's standings: every boat located, measured and ranked, finish crossings
called, hand sizes given. Pure: reads the race state, never changes it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Mapping

from referee.catalog import Catalog, default_catalog, json_ready
from referee.observation import Observation, PiecePose

from . import geometry as g
from .cards import BOAT_PREFIX, Card, StandingOn, card_under, cards_in, covered_spaces
from .course import Course, build_course
from .course_spec import CourseSpec, load_course
from .errors import DuplicateBoatError, WeightsError
from .crossing import LineCrossing, zone_after_crossing
from .finish import TOO_CLOSE, FinishCall, finish_call
from .pairs import GROUPING_RULE, START_GATE, order_racers
from .ranking import (CANNOT_TELL, EQUIDISTANT, Call, Measure, Racer, measure, measure_direction_deg,
                      placement_warning)
from .rounds import final_places, hand_sizes
from .rules import short_name
from .zones import Location, is_on_start_gate, locate


# ---------------------------------------------------------------- fixed game facts
def boat_names(catalog: Catalog | None = None) -> list[str]:
    catalog = catalog or default_catalog()
    return [p.name for p in catalog.pieces(game="tornado", family="tornado/boat")]


def default_weights(catalog: Catalog | None = None) -> dict[str, float]:
    """Determining Start Position: each boat card shows a weight; default boat k weighs k (catalog)."""
    catalog = catalog or default_catalog()
    return {k: float(v) for k, v in catalog.game("tornado")["boat_weights_default"].items()}


def _boat_name(text: str, catalog: Catalog, source: str) -> str:
    t = text.strip()
    name = t if t.startswith(BOAT_PREFIX) else (f"{BOAT_PREFIX}{t}" if t.isdigit() else f"tornado/{t}")
    if name not in boat_names(catalog):
        short = ", ".join(n.split("/")[1] for n in boat_names(catalog))
        raise WeightsError(f"weights name an unknown boat {t!r} in {source!r} (boats: {short})")
    return name


def parse_weights(text: str | Mapping | None, catalog: Catalog | None = None) -> dict[str, float]:
    """The weights a user gives, ``boat-1=3,boat-2=1`` (or a mapping), by boat name: only the
    boats given (the others keep their default weight, boat k weighs k).

    Refused with the input quoted: a malformed item, an unknown boat, a weight that is
    not a finite number >= 0, a boat given two weights (which one was meant?).
    """
    catalog = catalog or default_catalog()
    if text is None or text == "":
        return {}
    if isinstance(text, Mapping):
        items = [(str(k), v) for k, v in text.items()]
        source = repr(dict(text))
    else:
        source = str(text)
        items = []
        for part in source.split(","):
            if not part.strip():
                continue
            m = re.fullmatch(r"\s*([^=\s]+)\s*=\s*([^=\s]+)\s*", part)
            if not m:
                raise WeightsError(f"malformed weights {source!r}: expected NAME=NUMBER, e.g. boat-1=3,boat-2=1")
            items.append((m.group(1), m.group(2)))
    out: dict[str, float] = {}
    for key, value in items:
        name = _boat_name(key, catalog, source)
        try:
            w = float(value)
        except (TypeError, ValueError):
            raise WeightsError(f"weight {value!r} of {key} in {source!r} is not a number") from None
        if not math.isfinite(w) or w < 0:
            raise WeightsError(f"weight {value!r} of {key} in {source!r} must be a finite number >= 0")
        if name in out:
            raise WeightsError(f"boat {name.split('/', 1)[1]!r} is given two weights in {source!r}")
        out[name] = w
    return out


@dataclass(frozen=True)
class TornadoGame:
    """Fixed facts of one race: the course and the boat weights (OpenSpiel-style game)."""

    course: CourseSpec
    weights: Mapping[str, float]
    catalog: Catalog = field(default_factory=default_catalog, hash=False, compare=False)

    @classmethod
    def make(cls, course: str | CourseSpec | None = None, weights: str | Mapping | None = None,
             catalog: Catalog | None = None) -> "TornadoGame":
        catalog = catalog or default_catalog()
        spec = course if isinstance(course, CourseSpec) else load_course(course)
        return cls(spec, MappingProxyType({**default_weights(catalog), **parse_weights(weights, catalog)}), catalog)

    def weight(self, boat: str) -> float:
        return float(self.weights.get(boat, math.inf))

    def __deepcopy__(self, memo) -> "TornadoGame":
        return self  # fixed facts: a copy would be the same value


# ---------------------------------------------------------------- results
@dataclass(frozen=True)
class BoatResult:
    """One boat's line in the rank document (SPEC section 4)."""

    name: str
    rank: int | None
    weight: float
    status: str  # "racing", "finished", "finished earlier", "eliminated", "ambiguous", "outside"
    zone: str | None = None
    zone_index: int | None = None
    zone_kind: str | None = None
    measure: Measure | None = None
    equidistant_with: tuple[str, ...] = ()
    finished: bool | str = False
    how: str = ""
    position: g.Point | None = None
    sigma_mm: float = 0.0
    theta_deg: float = 0.0
    finish: FinishCall | None = None
    standing_on: str | None = None
    candidates: tuple[str, ...] = ()
    exit_crossing: LineCrossing | None = None  # its zone's exit line touched within the measurement

    def to_json(self) -> dict:
        d = {"name": self.name, "rank": self.rank, "zone": self.zone, "zone_index": self.zone_index,
             "zone_kind": self.zone_kind, "measure": self.measure.to_json() if self.measure else None,
             "equidistant_with": list(self.equidistant_with), "finished": self.finished, "status": self.status,
             "weight": self.weight, "how": self.how}
        if self.position is not None:
            d["position"] = {"x_mm": self.position[0], "y_mm": self.position[1], "sigma_mm": self.sigma_mm}
        if self.finish is not None:
            d["finish"] = self.finish.to_json()
        if self.standing_on:
            d["standing_on"] = self.standing_on
        if self.candidates:
            d["zone_candidates"] = list(self.candidates)
        if self.exit_crossing is not None:
            d["exit_crossing"] = self.exit_crossing.to_json()
        return json_ready(d)


@dataclass(frozen=True)
class RankResult:
    """The rank document: ranking (first place first, then the unranked), hand sizes, warnings."""

    course_id: str
    boats: tuple[BoatResult, ...]
    hand_size: Mapping[str, int]
    calls: tuple[Call, ...] = ()
    pairs: tuple = ()  # pairs.PairRecord per adjacent pair of the racing order
    first_round: bool = False
    game_over: bool = False
    final_places: Mapping[str, int] | None = None
    warnings: tuple[str, ...] = ()
    course: Course | None = field(default=None, hash=False, compare=False)
    cards: tuple[Card, ...] = field(default=(), hash=False, compare=False)

    def ranking(self) -> list[str]:
        return [b.name for b in self.boats if b.rank is not None]

    def boat(self, name: str) -> BoatResult | None:
        return next((b for b in self.boats if b.name == name), None)

    def equal_words(self, a: str, b: str) -> str:
        """Why two boats rank as equals, in words: boats in their start-gate spaces are equal by
        the rules (When Equidistant); others are equal within the measurement (SPEC section 3)."""
        gate = any({c.ahead, c.behind} == {a, b} and c.kind == START_GATE for c in self.calls)
        return "start gate: equal by the rules" if gate else EQUIDISTANT

    def equidistant_pairs(self) -> list[tuple[str, str]]:
        return [(c.ahead, c.behind) for c in self.calls if c.verdict == EQUIDISTANT]

    def __deepcopy__(self, memo) -> "RankResult":
        return self  # a frozen result: a copy would be the same value

    def to_json(self) -> dict:
        return json_ready({
            "game": "tornado", "course": self.course_id,
            "ranking": [b.to_json() for b in self.boats],
            "hand_size": dict(self.hand_size),
            "first_round": self.first_round, "game_over": self.game_over,
            "final_places": dict(self.final_places) if self.final_places is not None else None,
            "calls": [c.to_json() for c in self.calls],
            "pairs": [p.to_json() for p in self.pairs],
            "grouping": GROUPING_RULE,
            "zones": [z.to_json() for z in self.course.zones] if self.course else [],
            "warnings": list(self.warnings),
        })


# ---------------------------------------------------------------- race memory the standings read
@dataclass
class RaceMemory:
    """What earlier stable states proved (mutable; the referee owns and updates it)."""

    progress: dict[str, int] = field(default_factory=dict)  # furthest zone each boat was seen in for sure
    started: set[str] = field(default_factory=set)  # boats seen off the start gate or on a card
    crossed: list[str] = field(default_factory=list)  # finish crossing order (Final Rankings)
    eliminated: list[str] = field(default_factory=list)  # Out of Bounds
    last_ranking: list[str] = field(default_factory=list)  # this round's turn order
    card_order: list[str] = field(default_factory=list)  # racing cards in the order first seen (laid)
    seen_boats: list[str] = field(default_factory=list)
    deck_owner: dict[int, str] = field(default_factory=dict)  # deck colour -> boat, as learned live

    def card_owner(self, card: Card) -> str:
        """Player Setup: one deck per player; learned live, else deck d goes with boat d."""
        return self.deck_owner.get(card.deck, card.boat)


def boats_in(obs: Observation) -> list[PiecePose]:
    """The boats of an observation; two with the same id are refused."""
    seen: dict[str, PiecePose] = {}
    for p in obs.pieces:
        if not p.name.startswith(BOAT_PREFIX):
            continue
        if p.name in seen:
            q = seen[p.name]
            raise DuplicateBoatError(f"two boats with the same id {p.name!r}: at ({q.x_mm:.0f}, {q.y_mm:.0f}) and "
                                     f"({p.x_mm:.0f}, {p.y_mm:.0f}) mm")
        seen[p.name] = p
    return list(seen.values())


def stack_order(cards: list[Card], memory: RaceMemory) -> list[Card]:
    """Cards bottom to top: those laid earlier lie under later ones."""
    rank = {n: i for i, n in enumerate(memory.card_order)}
    return sorted(cards, key=lambda c: (rank.get(c.name, len(rank)), c.name))


def assess(game: TornadoGame, obs: Observation, memory: RaceMemory | None = None,
           nominal_fallback: bool = False) -> RankResult:
    """Rank the boats of one observation, reading (not changing) the race memory.

    nominal_fallback: course pieces out of view come from the course file's layout
    (the live page); otherwise they are an error naming them.
    Stages: build the course -> locate each boat -> measure it -> order the racers ->
    places (crossings first, then the racers, then the eliminated).
    """
    memory = memory or RaceMemory()
    # every call here weighs pieces of this one picture against each other (boats, boundary lines,
    # cards): the frame's own uncertainty moves them all together and cancels, so it is left out
    obs = obs.within_frame()
    boats = boats_in(obs)
    course = build_course(game.course, obs, game.catalog, nominal_fallback=nominal_fallback)
    warnings = list(course.warnings)
    cards = stack_order(cards_in(obs, game.catalog), memory)
    located = _locate_boats(course, boats, cards, memory, warnings)
    results: dict[str, BoatResult] = {}
    racers: list[Racer] = []
    crossing_now: list[tuple[str, float]] = []
    for name, (b, loc, on) in located.items():
        r = _boat_result(game, course, b, loc, on, memory, warnings)
        results[name] = r
        if r.status != "racing":
            continue
        if r.finished is True:
            crossing_now.append((name, r.measure.value))
        else:
            racers.append(_racer(game, course, r, b, float(obs.frame.get("camera_field_gradient") or 0.0)))

    # First Round Ranking: all tokens on the start gate stand equally far from the
    # finish; their weights alone decide.
    first_round = bool(racers) and not memory.started and len(racers) == len(boats) and all(
        located[r.name][1].on_start_gate and located[r.name][1].zone == 0 and located[r.name][2] is None
        for r in racers)
    # When Equidistant: tokens in their start-gate spaces (on the gate, no card under
    # them) are equally far in every round, not only the first.
    on_gate = {r.name for r in racers if located[r.name][1].on_start_gate and r.zone == 0
               and located[r.name][2] is None}
    ordering = order_racers(course, racers, all_equal=first_round, on_gate=on_gate)
    warnings += [f"{short_name(c.ahead)} and {short_name(c.behind)}: cannot tell which is ahead, so weight "
                 f"places them ({c.note})" for c in ordering.calls if c.verdict == CANNOT_TELL]
    warnings.extend(placement_warning(c) for c in ordering.calls if c.placement_band)
    crossing = _crossing_order(crossing_now, memory, warnings)
    return _places(game, course, cards, results, crossing, ordering, first_round, memory, warnings)


def _racer(game: TornadoGame, course: Course, r: BoatResult, b: PiecePose, camera_gradient: float) -> Racer:
    """What the ordering needs of a racing boat; with its measure one zone on when its
    crossing of its zone's exit line is too close to call (Judging Line Crossings)."""
    sigma, placement, shared = _sigma_toward_measure(course, r.zone_index, b)
    racer = Racer(r.name, game.weight(r.name), r.zone_index, r.measure, r.position, sigma, placement,
                  camera_mm=min(b.sigma_camera_mm, sigma) if camera_gradient > 0 else 0.0,
                  camera_gradient=camera_gradient, z_mm=b.z_mm, lineup_shared_mm=shared)
    x = r.exit_crossing
    if x is None:
        return racer
    doubt = (f"{r.name.split('/')[-1]}'s {x.basis} is within the measurement of the {x.line} "
             f"(margin {x.margin_mm:+.1f} mm, band {x.band:.1f} mm)")
    return replace(racer, next_zone=measure(course, r.zone_index + 1, r.position, b.sigma_mm), doubt=doubt)


def _locate_boats(course: Course, boats: list[PiecePose], cards: list[Card], memory: RaceMemory,
                  warnings: list[str]) -> dict[str, tuple[PiecePose, Location, StandingOn | None]]:
    """Each boat still in the race: its pose, its zone on the course, the card space under it."""
    covered = covered_spaces(cards)
    # Where each card lies, for the route evidence below.
    card_zone: dict[str, int] = {}
    for c in cards:
        loc = locate(course, c.centre)
        if loc.zone is not None:
            card_zone[c.name] = loc.zone
    located: dict[str, tuple[PiecePose, Location, StandingOn | None]] = {}
    for b in boats:
        if b.name in memory.eliminated:
            warnings.append(f"{b.name} was eliminated (Out of Bounds) but is still on the course; ignored")
            continue
        on = card_under(b, cards, covered)
        min_zone = memory.progress.get(b.name, 0)
        # A token ends its turn on its own front-most card (FAQ), so the furthest of
        # its own cards shows how far it has come, less one zone for the card's length.
        own = [card_zone[c.name] for c in cards if memory.card_owner(c) == b.name and c.name in card_zone]
        if own:
            min_zone = max(min_zone, max(own) - 1)
        located[b.name] = (b, locate(course, (b.x_mm, b.y_mm), min_zone=min_zone,
                                     start_evidence=_start_evidence(course, b, on, cards, memory)), on)
    return located


def _boat_result(game: TornadoGame, course: Course, b: PiecePose, loc: Location, on: StandingOn | None,
                 memory: RaceMemory, warnings: list[str]) -> BoatResult:
    """One boat, unranked yet: outside the course, ambiguous, or racing with its measure and finish call."""
    name, p = b.name, (b.x_mm, b.y_mm)
    base = dict(name=name, weight=game.weight(name), position=p, sigma_mm=b.sigma_mm, theta_deg=b.theta_deg,
                standing_on=f"{on.card.name} space {on.space.index + 1}" if on else None, how=loc.how)
    if loc.zone is None:
        if loc.outside:
            warnings.append(f"{name} at ({p[0]:.0f}, {p[1]:.0f}) mm lies {loc.how} of course "
                            f"{course.spec.id!r}: not ranked, the others are")
            return BoatResult(status="outside", rank=None, **base)
        names = tuple(course.zone_name(c) for c in loc.candidates)
        warnings.append(f"{name} at ({p[0]:.0f}, {p[1]:.0f}) mm could be in: {' / '.join(names)}; "
                        "this image and the history cannot tell, so it is not ranked")
        fin = TOO_CLOSE if course.finished_zone in loc.candidates else False
        return BoatResult(status="ambiguous", rank=None, finished=fin, candidates=names, **base)
    # Judging Line Crossings: the movement space touching the zone's exit line counts.
    zone, doubtful, crossing = zone_after_crossing(course, loc.zone, b, on, game.catalog)
    if zone != loc.zone:
        loc = Location(zone, (zone,), f"{loc.how}; its {crossing.basis} touches the {crossing.line}",
                       loc.on_start_gate)
        base["how"] = loc.how
    m = measure(course, loc.zone, p, _sigma_toward_measure(course, loc.zone, b)[0])
    fcall = None
    finished: bool | str = False
    if loc.zone >= len(course.zones) - 1:
        # Only a boat coming up the final straight can cross the finish line.
        fcall = finish_call(course, b, on, game.catalog)
        finished = fcall.crossed
        if loc.zone == course.finished_zone and fcall.crossed is False:
            warnings.append(f"{name} is past the finish line but beside its segment: crossing outside "
                            "the line does not count (Crossing the Finish Line)")
    if name in memory.crossed:
        finished = True
    zone_kind = "finish" if loc.zone == course.finished_zone else course.zones[loc.zone].kind
    return BoatResult(status="racing", rank=None, zone=course.zone_name(loc.zone), zone_index=loc.zone,
                      zone_kind=zone_kind, measure=m, finished=finished, finish=fcall,
                      exit_crossing=crossing if doubtful else None, **base)


def _sigma_toward_measure(course: Course, zone: int, b: PiecePose) -> tuple[float, float, float]:
    """(sigma, its placement term, the line-up's shared part of it, signed) of a boat's position in
    the direction its measure moves: a sticker stuck off along the boat counts there in full, one
    stuck off sideways hardly; the shared part is a shift along the boat's heading."""
    direction = measure_direction_deg(course, zone, (b.x_mm, b.y_mm))
    shared = b.placement_shared_mm * math.cos(math.radians(b.theta_deg - direction))
    return b.sigma_toward_mm(direction), b.placement_toward_mm(direction), shared


def _crossing_order(crossing_now: list[tuple[str, float]], memory: RaceMemory, warnings: list[str]) -> list[str]:
    """Final Rankings: places follow the crossing order. Boats crossing in the same
    Action Phase cross in turn order, which is this round's ranking."""
    earlier = [n for n in memory.crossed]
    new = [n for n, _ in crossing_now if n not in earlier]
    if len(new) > 1:
        if memory.last_ranking and all(n in memory.last_ranking for n in new):
            new.sort(key=memory.last_ranking.index)
        else:
            new.sort(key=lambda n: dict(crossing_now)[n])
            warnings.append(f"{', '.join(new)} crossed the finish line and no earlier state shows their turn "
                            "order: ordered by how far past the line they stand")
    return earlier + new


def _places(game: TornadoGame, course: Course, cards: list[Card], results: dict[str, BoatResult],
            crossing: list[str], ordering, first_round: bool, memory: RaceMemory, warnings: list[str]) -> RankResult:
    """The rank document: crossed boats first, then the racers in order, the unranked, the eliminated."""
    results = dict(results)
    ranked: list[BoatResult] = []
    rank = 0
    for name in crossing:
        rank += 1
        if name in results:
            r = results.pop(name)
            ranked.append(_with(r, rank=rank, status="finished", finished=True))
        else:
            ranked.append(BoatResult(name=name, rank=rank, weight=game.weight(name), status="finished earlier",
                                     finished=True, zone="finished", zone_kind="finish"))
    racing_order = list(ordering.order)
    for name in racing_order:
        rank += 1
        r = results.pop(name)
        ranked.append(_with(r, rank=rank, equidistant_with=ordering.equidistant.get(name, ())))
    unranked = list(results.values())
    n_total = len(ranked) + len(unranked) + len(memory.eliminated)
    eliminated = [BoatResult(name=n, rank=n_total, weight=game.weight(n), status="eliminated", zone=None)
                  for n in memory.eliminated]
    if unranked and racing_order:
        warnings.append("ranks leave out " + ", ".join(r.name for r in unranked) +
                        ": with them the places behind may shift")

    places = None if unranked else final_places(crossing, racing_order, list(memory.eliminated))
    # Ending the Game: once one boat is left racing after others crossed (or went
    # out), it takes the next place without crossing and the game is over.
    game_over = places is not None and bool(crossing or memory.eliminated) and n_total >= 2
    if game_over:
        ranked = [_with(r, status="placed without crossing") if r.status == "racing" else r for r in ranked]
    return RankResult(course_id=course.spec.id, boats=tuple(ranked + unranked + eliminated),
                      hand_size=MappingProxyType(hand_sizes(racing_order)) if not game_over else MappingProxyType({}),
                      calls=ordering.calls, pairs=ordering.pairs, first_round=first_round, game_over=game_over,
                      final_places=MappingProxyType(places) if game_over else None,
                      warnings=tuple(dict.fromkeys(warnings)), course=course, cards=tuple(cards))


def _start_evidence(course: Course, boat: PiecePose, on: StandingOn | None, cards: list[Card],
                    memory: RaceMemory) -> str | None:
    """Why a boat is provably still on its first stretch from the start gate, if it is."""
    if boat.name in memory.started and memory.progress.get(boat.name, 0) > 0:
        return None
    if on is None:
        if boat.name in memory.started or not is_on_start_gate(course, (boat.x_mm, boat.y_mm)):
            return None
        # A token starts on the gate (Determining Start Position) and only ever moves
        # onto racing cards (Player Token Movement): on the gate with no card under
        # it, it has not started.
        return "on the start gate with no racing card under it"
    card = on.card
    if memory.card_owner(card) != boat.name:
        return None
    # Coming Out the Starting Gate: the first card of a race starts at the gate. A
    # boat that came round the course would stand on a card laid onto an earlier
    # one of its own (cards must touch: Avoid Obstacles); this one has none behind it.
    rear = card.local_to_world((-card.length / 2, 0.0))
    behind_gate = course.start.signed(rear)
    gate_depth = course.start_depth_mm  # gate half-depth plus a boat half-length
    if not -gate_depth <= behind_gate <= gate_depth:
        return None
    poly = card.polygon()
    for other in cards:
        if other.name == card.name or memory.card_owner(other) != boat.name:
            continue
        if other.polygon().distance(poly) <= 3.0 and card.local(other.centre)[0] < 0:
            return None
    return "on its first racing card out of the start gate"


def _with(r: BoatResult, **kw) -> BoatResult:
    from dataclasses import replace
    return replace(r, **kw)


def format_weights(weights: Mapping[str, float]) -> str:
    """Weights as the text parse_weights reads back to the same values."""
    return ",".join(f"{name.split('/', 1)[-1]}={float(w)!r}" for name, w in weights.items())
