"""The Tornado Splash referee: keeps the race history across stable states.

Fixed facts (course, weights) live in a frozen TornadoGame; everything that changes
(zones reached, crossings, rounds, turns, routes, boosts, eliminations, violations) is
held by a frozen TornadoState between stable states. A TornadoReferee is the worksheet
one step rules on: made from a state (copies), changed while ruling, turned back into a
new state (referee/tornado/game.py puts the pure step together).

Every stable state is ruled on per boat: each boat whose token moved gets one
"move" ruling (how many movement spaces along its own route, legal or not and
why), cards laid or picked up are "state" rulings, and the Ranking Phase of each
new round is a "ranking" ruling. Turns seen together in one stable state (the engine
missed the states between them) are judged one turn at a time: moves.py attributes the
new cards to the routes they continue, and sequences.py finds the turns, in turn order,
that explain a boat's move when it is more than one turn's.
"""

from __future__ import annotations

import copy
import dataclasses
import math

from shapely.geometry import Polygon

from referee.catalog import Catalog
from referee.errors import RefcamError
from referee import motion
from referee.observation import Observation, PiecePose
from referee.pending import TurnGuard
from referee.rulings import CANNOT_TELL, ILLEGAL, LEGAL, Ruling

from . import geometry as g
from .cards import (CARD_PREFIX, RULE_BOOST, RULE_LIMIT, RULE_OUT, RULE_PLACEMENT, RULE_TOKEN, RULE_TOUCHING,
                    RULE_TURN, Card, Violation, card_from_pose, card_under, cards_in, check_turn, covered_spaces,
                    table_polygon)
from .course_spec import START_GATE, CourseSpec
from .finish import TOO_CLOSE
from .moves import (BEFORE_ROUTE, Place, Routes, Tip, attribute, gate_point, index_of, place_on_route, route_order,
                    route_spaces)
from .sequences import MAX_TURNS, sequence_text, two_turn_splits
from .rounds import GrandPrix, RoundTracker, grand_prix_view
from .rules import headline, rule, short_name, whose
from .standings import RaceMemory, RankResult, TornadoGame, assess, boats_in, stack_order
from .turnlog import TurnLog, advance, as_rulings, declare_pass
from .turns import TurnCall, move_length_call, spaces_ahead_call
from .zones import is_on_start_gate

CHARACTER_PREFIX = "tornado/character-"
RULE_RANKING = rule("Ranking Phase")
RULE_FINISH = rule("Crossing the Finish Line")
RULE_END = rule("Ending the Game")
RULE_MOVEMENT = rule("Player Token Movement")
RULE_ACTION = rule("Action Phase")
RULE_PLACING = rule("Placing Racing Cards")
RULE_FINAL = rule("Final Rankings")
RULE_DECK_EMPTY = rule("When Your Deck is Empty")
RULE_FLOW = rule("Game Flow")
# Action Phase / Boosting: movement spaces a boat may move in its turn.
ALLOWANCE, BOOSTED_ALLOWANCE = 3, 4


@dataclasses.dataclass
class Turn:
    """One boat's current turn: where it began on the boat's route, spaces moved so far."""

    round: int
    start: Place
    prev_action_t: float  # the boat's last action before this turn (-inf: none)
    spaces: int = 0
    moved: bool = False
    last_action_t: float = 0.0


@dataclasses.dataclass
class _Action:
    """What one boat did between two stable states (before judging it)."""

    boat: str
    before: PiecePose | None
    after: PiecePose | None
    moved: bool
    chain: list[Card]
    tip: Tip
    before_place: Place | None = None
    after_place: Place | None = None
    new_turn: bool = False
    new_round: bool = False

    @property
    def spaces(self) -> int | None:
        if not self.moved:
            return 0
        if self.before_place and self.after_place and self.before_place.known and self.after_place.known:
            return self.after_place.index - self.before_place.index
        return None

    @property
    def acts(self) -> bool:
        """Laid cards or moved its token along its route (a nudge within its space is no action)."""
        return bool(self.chain) or (self.moved and self.spaces != 0)


@dataclasses.dataclass
class _SeenCards:
    """The racing cards of one stable state, sorted out before any judging."""

    now: dict[str, Card]  # every card in view, by name
    new: list[Card]  # laid since the last stable state
    old: dict[str, Card]  # seen before
    active: list[str]  # boats still racing
    tips: dict  # boat -> Tip: where its route ends
    again: list[Card]  # seen again after a hand hid them (not laid anew)
    chains: dict[str, list[Card]]  # boat -> the new cards continuing its route
    unassigned: list[Card]  # new cards that continue nobody's route
    stack: list[Card]  # every card, lowest first
    covered: set  # spaces covered by cards on top


# What a TornadoReferee changes in place while ruling on a stable state: copied on the
# way in and out of a TornadoState, so a state is never changed after it was made.
_CHANGEABLE = ("memory", "rounds", "routes", "turns", "last_poses", "characters", "character_faces", "boosts",
               "violations")
_STATE_FIELDS = _CHANGEABLE + ("facts", "nominal_fallback", "last_actor", "round_at_start", "last_pieces",
                               "card_poses", "last_result", "game_over_announced", "table_warned", "t",
                               "gate_depth_mm", "turnlog", "grand_prix", "guard", "declared_passes",
                               "declared", "votes")


@dataclasses.dataclass(frozen=True)
class TornadoState:
    """One race as a frozen value: the fixed facts and what the stable states so far proved.

    Made by TornadoReferee.to_state(); never changed afterwards (a step works on copies)."""

    facts: TornadoGame
    nominal_fallback: bool
    memory: RaceMemory
    rounds: RoundTracker
    routes: Routes
    turns: dict
    last_poses: dict
    characters: dict
    character_faces: dict
    boosts: dict
    violations: list
    last_actor: str | None
    round_at_start: int
    last_pieces: dict | None
    card_poses: dict
    last_result: RankResult | None
    game_over_announced: bool
    table_warned: bool
    t: float
    gate_depth_mm: float
    turnlog: TurnLog = TurnLog()  # issue 11's turn rules (turnlog.py), frozen itself
    grand_prix: GrandPrix | None = None  # Grand Prix Mode: the earlier races (never changed in place)
    # what the players declared (declare.py): the boats declared passed in the current round, which
    # the turn-order check counts as having taken their turn; and the race's other declarations
    # (start-gate order, majority votes, a named Grand Prix winner) as referee.game.Declaration values
    declared_passes: frozenset = frozenset()
    declared: tuple = ()
    # FAQ majority votes for the next Ranking Phase: groups of boats the players agreed share a
    # rank, each lightest first (declare.py); used once, by the round that begins next
    votes: tuple = ()
    guard: TurnGuard = TurnGuard()  # an illegal turn pending (referee/pending.py), set by the game step


class TornadoReferee:
    """Rules on successive stable states of one Tornado Splash race."""

    game = "tornado"

    def __init__(self, course: str | CourseSpec | None = None, weights=None, catalog: Catalog | None = None,
                 characters: dict[str, str] | None = None, nominal_fallback: bool = True, boats=()):
        self.facts = TornadoGame.make(course, weights, catalog)
        # The live camera may frame only part of the course: by default pieces out
        # of view come from the course file's layout (with a warning); `refcam rank`
        # turns this off and names the missing pieces instead.
        self.nominal_fallback = nominal_fallback
        # Player Setup: each player picks a character and a boat; by default
        # character k goes with boat k, and a flip seen during one boat's turn is
        # credited to that boat.
        self.characters = dict(characters or {})
        self.memory = RaceMemory()
        self.rounds = RoundTracker()
        self.routes = Routes()
        self.turns: dict[str, Turn] = {}
        self.last_actor: str | None = None
        self.acting_now: list[str] = []  # boats acting in the stable state being ruled on
        # boats whose change since the last legal state was seen as one turn on its own (game.seen_alone)
        self.seen_alone: frozenset = frozenset()
        self.two_turns: dict = {}  # boat -> its two turns seen together in this still table (_seen_together)
        self._split_routes: dict = {}  # boat -> its route spaces, where its two turns split (_two_turn_rulings)
        self.unsearched: dict = {}  # boat -> why its turns in this still table are more than are searched
        self.unread: tuple[str, ...] = ()  # cards not read in the stable state being ruled on (_keep_unread)
        self.round_at_start = 1
        self.last_poses: dict[str, PiecePose] = {}
        self.last_pieces: dict[str, PiecePose] | None = None  # every piece of the last stable state
        self.card_poses: dict[str, PiecePose] = {}
        self.character_faces: dict[str, str] = {}
        self.boosts: dict[str, dict] = {}  # boat -> {"t": ..., "round": ...}
        self.violations: list[tuple[float, Violation]] = []
        self.last_result: RankResult | None = None
        self.game_over_announced = False
        self.table_warned = False
        self.turnlog = TurnLog(in_play=tuple(boats))  # boats in play as the players set them
        self.guard = TurnGuard()  # kept as it is here: the game step sets it (referee/pending.py)
        self.declared_passes: frozenset = frozenset()  # declare.py: passes this round
        self.declared: tuple = ()  # declare.py: the race's other declarations
        self.votes: tuple = ()  # declare.py: majority votes for the next Ranking Phase
        self.grand_prix: GrandPrix | None = None
        self.t = 0.0
        gate = self.facts.catalog.family("tornado/gate")["footprint"]["size_mm"]
        self.gate_depth_mm = float(gate[0])

    # ------------------------------------------------------------------ queries
    def assess(self, obs: Observation) -> RankResult:
        """The standings of an observation given the history so far (does not record it)."""
        return assess(self.facts, obs, self.memory, nominal_fallback=self.nominal_fallback)

    @classmethod
    def from_state(cls, state: "TornadoState") -> "TornadoReferee":
        """A worksheet for one step: the state's values, the changeable ones copied so
        that ruling never changes the state it started from."""
        ref = cls.__new__(cls)
        for name in _STATE_FIELDS:
            value = getattr(state, name)
            setattr(ref, name, copy.deepcopy(value) if name in _CHANGEABLE else value)
        ref.acting_now = []
        ref.seen_alone = frozenset()
        ref.unread = ()
        ref.two_turns, ref.unsearched, ref._split_routes = {}, {}, {}
        return ref

    def to_state(self) -> "TornadoState":
        """The race so far as a frozen value (copied: this worksheet may go on ruling)."""
        return TornadoState(**{name: copy.deepcopy(getattr(self, name)) if name in _CHANGEABLE else getattr(self, name)
                               for name in _STATE_FIELDS})

    def state_json(self) -> dict:
        res = self.last_result.to_json() if self.last_result else {"ranking": [], "hand_size": {}, "warnings": []}
        res.update({
            "course": self.facts.course.id, "t": self.t, "round": self.rounds.round,
            "turn_order": list(self.rounds.turn_order), "turns_taken": list(self.rounds.acted),
            "crossed": list(self.memory.crossed), "eliminated": list(self.memory.eliminated),
            "boosts": {k: dict(v) for k, v in self.boosts.items()},
            "violations": [dict(v.to_json(), t=t) for t, v in self.violations],
            "weights": dict(self.facts.weights),
            "routes": {k: list(v) for k, v in self.routes.cards.items()},
            "decks": {str(d): b for d, b in sorted(self.routes.deck_owner.items())},
            "turn_spaces": {b: {"round": tr.round, "spaces": tr.spaces} for b, tr in self.turns.items()},
            "turn_rules": self.turnlog.to_json(),
            "ranking_incomplete": self.turnlog.incomplete,
        })
        res["violations"] += [dict(r.to_json(), t=self.t) for r in self.turnlog.standing]
        if self.grand_prix is not None:
            res["grand_prix"] = self._grand_prix_json()
        res["open_violations"] = [o.ruling.to_json() for o in self.turnlog.open]
        # Ranking Phase: a boat out of sight keeps its last stable position, flagged, unranked; the flag
        # says why when vision told it (else a hand over it is the likely cause, asked not claimed)
        for name in self.turnlog.hidden:
            p = self.turnlog.last_seen.get(name)
            if p is not None and all(b.get("name") != name for b in res["ranking"]):
                why = self.turnlog.why_hidden(name)
                entry = {"name": name, "rank": None, "status": "not seen",
                         "flag": "not read" if why else "under a hand?",
                         "position": {"x_mm": round(p.x_mm, 1), "y_mm": round(p.y_mm, 1),
                                      "sigma_mm": round(p.sigma_mm, 3)}}
                res["ranking"].append(dict(entry, why=why) if why else entry)
        return res

    def _grand_prix_json(self) -> dict:
        """Grand Prix Mode: points and totals; once this race is over, the setting for the
        next race (totals kept). A result with two boats in one place is refused, not scored."""
        result = self.last_result
        places = dict(result.final_places) if result is not None and result.game_over else None
        try:
            return grand_prix_view(self.grand_prix, places, list(self.memory.eliminated))
        except RefcamError as exc:
            view = grand_prix_view(self.grand_prix)
            view["refused"] = f"this race's result is not scored: {exc}"
            return view

    # ------------------------------------------------------------------ updates
    def observe_stable(self, observation: Observation, t: float) -> list[Ruling]:
        """Rule on a new stable state (changes this worksheet): cards seen and whose route
        they continue, what each boat did, whose turn and round it is, then judge each action."""
        self.t = t
        self.two_turns, self.unsearched = {}, {}
        observation, self.unread = self._keep_unread(observation)
        try:
            result = self.assess(observation)
        except RefcamError as exc:
            return [Ruling(t, self.game, "warning", str(exc))]
        boats = {b.name: b for b in boats_in(observation)}
        for n in boats:
            if n not in self.memory.seen_boats:
                self.memory.seen_boats.append(n)
        first_state = self.last_pieces is None
        seen = self._see_cards(observation, boats, result.course, first_state)
        found, turn_warnings = self._turn_rules(observation, t)
        if first_state:
            away = sorted(n for n, pose in boats.items() if result.course is not None
                          and not self._on_gate(result.course, pose))
            rulings = taken_up_mid_race(away, t, self.game) + self._character_cards(observation, [], t)
            rulings += self._finish_and_ranking(observation, result, [], t, first=True)
            self._remember(observation, boats)
            return rulings + as_rulings(found, turn_warnings, t, rule)

        rulings = self._piece_changes(observation, boats, seen.now, t)
        for c in seen.again:
            rulings.append(Ruling(t, self.game, "state", f"{short_name(c.name)} is seen again", rule=RULE_PLACING,
                                  details={"card": c.name, "boat": self.routes.owner(c.name)}))
        actions = self._actions(seen, boats, result.course)
        rulings += self._turns_and_rounds(observation, actions, t)
        if self.rounds.round != self.round_at_start:
            self.votes = ()  # the Ranking Phase the votes were for has begun
        rulings += self._character_cards(observation, [a.boat for a in actions if a.acts], t)
        # a boat that moved gets the turn rules' violations in its move ruling
        moved_now = {a.boat for a in actions if a.moved}
        folded = {b: [r for r in found if r.boat == b and r.verdict == "violation"] for b in moved_now}
        rulings += self._judge_all(observation, seen, actions, t, folded)
        turn_rulings = as_rulings([r for r in found if not (r.boat in moved_now and r.verdict == "violation")],
                                  turn_warnings, t, rule) + self._eliminations(t)
        movers = [a.boat for a in actions if a.moved]
        # a card replaced before its token moved was not picked up (FAQ): drop that note
        replaced = {c for r in turn_rulings if "withdrawn" in r.summary for c in r.details.get("cards", ())}
        rulings = [r for r in rulings if not (r.rule == RULE_DECK_EMPTY and r.details.get("card") in replaced)]
        rulings += turn_rulings
        rulings += self._finish_and_ranking(observation, result, movers, t)
        self._remember(observation, boats)
        return rulings

    def _keep_unread(self, observation: Observation) -> tuple[Observation, tuple[str, ...]]:
        """A racing card seen before and missing now was not read (a hand, a glare), unless
        vision looked at its place and saw it empty (Observation.seen_empty): it keeps its last
        reading, so no route loses a card it still has. Returns the observation with those
        cards put back, and their names (a ruling resting on one cannot tell)."""
        here = {p.name for p in observation.pieces}
        new = [c for c in cards_in(observation, self.facts.catalog) if c.name not in self.card_poses]
        kept = [p for n, p in self.card_poses.items() if n not in here and n not in observation.seen_empty
                and not _replaced(card_from_pose(p, self.facts.catalog), new)]
        if not kept:
            return observation, ()
        return dataclasses.replace(observation, pieces=observation.pieces + tuple(kept)), tuple(p.name for p in kept)

    def _turn_rules(self, observation: Observation, t: float) -> tuple[list, list[str]]:
        """Issue 11's rules over the whole turn (turnlog.py): placement methods, turn order,
        replacing cards until the token moves, out of bounds once it moved, the boost once,
        the empty deck, hidden boats. Returns its rulings (turnlog values) and warnings."""
        ranking = self._turn_order(self._racing(self.last_result)) if self.last_result is not None else []
        self.turnlog, found, warnings = advance(self.turnlog, observation, ranking, list(self.memory.crossed),
                                                owners=self.routes.deck_owner, card_order=self.memory.card_order)
        return found, warnings

    def _turn_order(self, ranking: list[str]) -> list[str]:
        """Ranking Phase with the FAQ on disagreements: boats the players' majority agreed
        share a rank go together, at the place of the first of them, lightest first (When
        Equidistant); the others keep their places in the camera's ranking."""
        order = list(ranking)
        for group in self.votes:
            members = [b for b in group if b in order]
            if len(members) < 2:
                continue
            at = min(order.index(b) for b in members)
            rest = [b for b in order if b not in members]
            order = rest[:at] + members + rest[at:]
        return order

    def _eliminations(self, t: float) -> list[Ruling]:
        """Out of Bounds: a boat the turn rules eliminated leaves the race."""
        out = []
        for boat in self.turnlog.eliminated:
            if boat not in self.memory.eliminated:
                self.memory.eliminated.append(boat)
                out.append(Ruling(t, self.game, "state", f"{short_name(boat)} is out of the race (Out of Bounds)",
                                  rule=RULE_OUT, details={"boat": boat}))
        return out

    # ------------------------------------------------------------------ stages of a stable state
    def _see_cards(self, observation: Observation, boats: dict[str, PiecePose], course,
                   first_state: bool) -> "_SeenCards":
        """The racing cards in view, and whose route each new card continues (moves.py), before any judging."""
        cards_now = {c.name: c for c in cards_in(observation, self.facts.catalog)}
        new_cards = [c for n, c in cards_now.items() if n not in self.card_poses]
        old_cards = {n: c for n, c in cards_now.items() if n in self.card_poses}
        active = [n for n in boats if n not in self.memory.eliminated and n not in self.memory.crossed]
        tips = self._tips(active, boats, old_cards, course)
        self._adopt_cards_stood_on(active, boats, old_cards if not first_state else cards_now, tips)
        # A card seen again after a drop-out (a hand over it) was not laid anew.
        seen_again = [c for c in new_cards if self.routes.owner(c.name) is not None]
        new_cards = [c for c in new_cards if self.routes.owner(c.name) is None]
        chains, unassigned = attribute(new_cards, {n: tips[n] for n in active}, self.routes, after=boats)
        for n, chain in chains.items():
            for c in chain:
                self.routes.add(n, c)
        self.memory.deck_owner = dict(self.routes.deck_owner)
        for c in [c for chain in chains.values() for c in chain] + unassigned + list(cards_now.values()):
            if c.name not in self.memory.card_order:
                self.memory.card_order.append(c.name)
        stack = stack_order(list(cards_now.values()), self.memory)
        return _SeenCards(cards_now, new_cards, old_cards, active, tips, seen_again, chains, unassigned, stack,
                          covered_spaces(stack))

    def _tips(self, active: list[str], boats: dict[str, PiecePose], old_cards: dict[str, Card], course) -> dict:
        """Where each boat's route ends: its last card, the start gate, or nowhere yet."""
        tips = {}
        for n in active:
            before = self.last_poses.get(n, boats[n])
            route = self.routes.route(n, old_cards)
            if route:
                tips[n] = Tip(card=route[-1])
            elif course is not None and is_on_start_gate(course, (before.x_mm, before.y_mm)):
                tips[n] = Tip(gate=gate_point(course.start, self.gate_depth_mm, before))
            else:
                tips[n] = Tip()
        return tips

    def _adopt_cards_stood_on(self, active: list[str], boats: dict[str, PiecePose], known: dict[str, Card],
                              tips: dict) -> None:
        """A boat without a route yet (refcam began watching mid-race) takes up the card it
        stood on, unless that card is someone else's, and with it the other cards of that deck
        on the table, in the order they continue each other (Placing Racing Cards: rear first)."""
        covered0 = covered_spaces(stack_order(list(known.values()), self.memory))
        for n in active:
            if self.routes.cards.get(n):
                continue
            on = card_under(self.last_poses.get(n, boats[n]), list(known.values()), covered0)
            if on is None or self.routes.deck_owner.get(on.card.deck) not in (None, n) or \
                    self.routes.owner(on.card.name) is not None:
                continue
            deck = [c for c in known.values() if c.deck == on.card.deck and self.routes.owner(c.name) is None]
            for c in route_order(deck):
                self.routes.add(n, c)
            tips[n] = Tip(card=self.routes.route(n, known)[-1])

    def _actions(self, seen: "_SeenCards", boats: dict[str, PiecePose], course) -> list[_Action]:
        """What each boat did: laid cards, moved its token (with where on its route, before and after)."""
        actions: list[_Action] = []
        all_cards = list(seen.now.values())
        for n in seen.active:
            before, after = self.last_poses.get(n), boats[n]
            moved = before is not None and motion.moved(before, after)
            chain = seen.chains.get(n, [])
            if not moved and not chain:
                continue
            a = _Action(n, before, after, moved, chain, seen.tips[n])
            route = self.routes.route(n, seen.now)
            if before is not None:
                a.before_place = place_on_route(before, route, seen.covered, all_cards, self._on_gate(course, before))
            a.after_place = place_on_route(after, route, seen.covered, all_cards, self._on_gate(course, after))
            actions.append(a)
        return actions

    def _turns_and_rounds(self, observation: Observation, actions: list[_Action], t: float) -> list[Ruling]:
        """Action Phase / Ending the Action Phase: a turn ends once the token has moved.

        A boat that has not moved its token yet is still in its turn (a slow player,
        even after others took theirs); one that moved goes on with its turn only
        by moving again at once without new cards. Otherwise it begins a new turn,
        and a second turn in a round means a new round has begun (sorts actions in place)."""
        rulings: list[Ruling] = []
        order = self.rounds.turn_order or self.memory.last_ranking
        round_before = self.round_at_start = self.rounds.round
        for a in actions:
            if not a.acts:
                continue
            turn = self.turns.get(a.boat)
            if a.boat not in self.rounds.acted or turn is None:
                a.new_turn = True
            elif not turn.moved:
                a.new_turn = False
            else:
                a.new_turn = self.last_actor != a.boat or bool(a.chain)
            a.new_round = a.new_turn and self.rounds.begins_round(a.boat, self._gone())
        actions.sort(key=lambda a: (a.new_turn, a.new_round, _index(order, a.boat)))
        for i, a in enumerate(actions):
            if not a.acts:
                continue
            if a.new_turn:
                if a.new_round and self.rounds.round == round_before:
                    rulings += self._begin_round(observation, [x for x in actions if x.new_round], t)
                    # the boats beginning the new round (the rest, as sorted) act in its turn order
                    actions[i:] = sorted(actions[i:], key=lambda x: _index(self.rounds.turn_order, x.boat))
                    a = actions[i]
                prev = self.turns.get(a.boat)
                self.turns[a.boat] = Turn(round=self.rounds.round, start=a.before_place or Place(None, why="unseen"),
                                          prev_action_t=prev.last_action_t if prev else -math.inf)
                self.rounds.begin_turn(a.boat, self.rounds.turn_order, self._gone())
            self.last_actor = a.boat
        return rulings

    def _judge_all(self, observation: Observation, seen: "_SeenCards", actions: list[_Action],
                   t: float, folded: dict | None = None) -> list[Ruling]:
        """Each boat's action judged against the table edge and the start gate; cards nobody laid."""
        rulings: list[Ruling] = []
        table = table_polygon(observation)
        gate = observation.piece(START_GATE)
        gate_outline = None
        if gate is not None:
            spec = self.facts.catalog.piece(START_GATE)
            gate_outline = Polygon([g.to_world((gate.x_mm, gate.y_mm), gate.theta_deg, q)
                                    for q in spec.footprint_polygon()])
        previous_cards = [c for c in seen.stack if c.name in seen.old]
        self.acting_now = [a.boat for a in actions if a.acts]
        for a in actions:
            rulings += self._judge(a, previous_cards, seen.now, seen.covered, table, gate_outline, t,
                                   (folded or {}).get(a.boat, ()))
        rulings = _mark_seen_together(rulings)
        for c in seen.unassigned:
            rulings.append(Ruling(t, self.game, "state", f"{short_name(c.name)} ({c.kind}) was laid; it continues no boat's "
                                  "route and its deck colour is nobody's yet, so whose card it is cannot be told",
                                  rule=RULE_PLACING, details={"card": c.name, "deck": c.deck, "kind": c.kind}))
        if table is None and seen.new and not self.table_warned:
            self.table_warned = True
            rulings.append(Ruling(t, self.game, "warning", "table corners (stickers 0-3) not all in view: cannot check "
                                                           "cards hanging off the table (Out of Bounds)"))
        return rulings

    # ------------------------------------------------------------------ parts
    @staticmethod
    def _on_gate(course, pose: PiecePose) -> bool:
        return course is not None and is_on_start_gate(course, (pose.x_mm, pose.y_mm))

    def _remember(self, observation: Observation, boats: dict[str, PiecePose]) -> None:
        self.last_poses.update(boats)
        self.last_pieces = {p.name: p for p in observation.pieces}
        self.card_poses = {p.name: p for p in observation.pieces if p.name.startswith(CARD_PREFIX)}

    def _allowance(self, boat: str) -> tuple[int, bool]:
        """Action Phase / Boosting: 3 spaces a turn, 4 on the turn the boost is used."""
        turn, boost = self.turns.get(boat), self.boosts.get(boat)
        boosted = bool(turn and boost and boost.get("t") is not None and boost["t"] > turn.prev_action_t)
        return (BOOSTED_ALLOWANCE if boosted else ALLOWANCE), boosted

    def _begin_round(self, observation: Observation, starters: list[_Action], t: float) -> list[Ruling]:
        """Ranking Phase of a new round: the ranking once the last round's turns were
        done, i.e. this state with the boats that begin the new round put back."""
        back = {a.boat: a.before for a in starters if a.before is not None}
        dropped = {c.name for a in starters for c in a.chain}
        pieces = tuple([back.get(p.name, p) for p in observation.pieces if p.name not in dropped])
        try:
            res = self.assess(dataclasses.replace(observation, pieces=pieces))
            ranking = self._turn_order(self._racing(res))
        except RefcamError:
            res, ranking = None, self._turn_order(list(self.memory.last_ranking))
        self.rounds.next_round(ranking)
        hands = dict(res.hand_size) if res is not None else {}
        summary = (_ranking_summary(res, self.rounds.round) if res is not None else headline(
            f"Round {self.rounds.round}", "; ".join(f"{i + 1}. {short_name(n)}" for i, n in enumerate(ranking)),
            RULE_RANKING))
        summary += " Turn order: " + ", ".join(short_name(n) for n in ranking) + "."
        summary += (" Hand sizes: " + ", ".join(f"{short_name(n)} {k}" for n, k in hands.items()) + ".") if hands else ""
        details = res.to_json() if res is not None else {}
        details.update(round=self.rounds.round, turn_order=list(ranking))
        return [Ruling(t, self.game, "ranking", summary, rule=RULE_RANKING, details=details)]

    def _piece_changes(self, observation: Observation, boats: dict[str, PiecePose], cards_now: dict[str, Card],
                       t: float) -> list[Ruling]:
        """Pieces that came or went since the last stable state (no legality)."""
        out = []
        now = {p.name: p for p in observation.pieces}
        before = self.last_pieces or {}
        for name, p in before.items():
            if name in now:
                continue
            if name.startswith(CARD_PREFIX):
                owner = self.routes.owner(name)
                whose = f" from {short_name(owner)}'s route" if owner else ""
                out.append(Ruling(t, self.game, "state", f"{short_name(name)} was picked up{whose}", rule=RULE_DECK_EMPTY,
                                  details={"card": name, "boat": owner}))
            elif name in self.memory.crossed:
                out.append(Ruling(t, self.game, "state", f"{short_name(name)} was taken off the course after crossing "
                                  "the finish line", rule=RULE_FINAL, details={"piece": name}))
            elif name in self.memory.eliminated:
                out.append(Ruling(t, self.game, "state", f"{short_name(name)} was taken off the course (eliminated)",
                                  rule=RULE_OUT, details={"piece": name}))
            else:
                out.append(Ruling(t, self.game, "state", f"{short_name(name)} is no longer seen", details={"piece": name}))
        for name, p in now.items():
            if name in before or name.startswith(CARD_PREFIX):
                continue  # new racing cards are reported with the boat that laid them
            out.append(Ruling(t, self.game, "state", f"{short_name(name)} appeared at ({p.x_mm:.0f}, {p.y_mm:.0f}) mm",
                              details={"piece": name}))
        for name, c in cards_now.items():
            old = before.get(name)
            if old is not None and motion.moved(old, c.pose):
                out.append(Ruling(t, self.game, "state", f"{short_name(name)} was shifted by "
                                  f"{g.dist((old.x_mm, old.y_mm), c.centre):.0f} mm", rule=RULE_PLACING,
                                  details={"card": name}))
        return out

    def _judge(self, a: _Action, previous_cards: list[Card], cards_now: dict[str, Card], covered: set,
               table: Polygon | None, gate_outline: Polygon | None, t: float, folded=()) -> list[Ruling]:
        """One boat's action: the cards it laid (state) and its move (move ruling)."""
        out: list[Ruling] = []
        boat = a.boat
        allowance, boosted = self._allowance(boat)
        turn = self.turns.get(boat)
        if turn is not None and a.acts:
            turn.last_action_t = t
        checked, violations = self._card_faults(a, previous_cards, cards_now, table, gate_outline, t, out)
        # Racing Card Limitation (and Boosting): the spaces on the boat's route ahead
        # of where its turn began, and the spaces it moved this turn, stay within 3 (4).
        seq = route_spaces(self.routes.route(boat, cards_now), covered)
        limit_rule = RULE_BOOST if boosted else RULE_LIMIT
        checked.append(limit_rule)
        over, ahead = self._limit_faults(a, turn, seq, boosted, violations)
        others = [n for n in self.acting_now if n != boat and boat not in self.seen_alone]
        if over and turn is not None and (others or self._closes_round(boat)):
            over = self._seen_together(a, turn, seq, allowance, others, over, t, out)
        violations += over
        if boat in self.two_turns or boat in self.unsearched:
            # the two-photo check (turnlog.py) knows no round: where the round's turn order lets this
            # boat's two turns lie in one table, its "too many spaces" is not a breach
            folded = [r for r in folded if rule(r.section) not in (RULE_MOVEMENT, RULE_LIMIT, RULE_BOOST)]
        # the turn rules' findings for this boat (turnlog.py) belong to its move; a rule this
        # step already found broken (the spaces of the turn) is not said a second time
        found = {v.rule for v in violations}
        violations += [Violation(boat, rule(r.section), r.summary, eliminates=r.section == RULE_OUT.section,
                                 cards=r.cards) for r in folded if rule(r.section) not in found]

        for v in violations:
            self.violations.append((t, v))
        eliminated = [v for v in violations if v.eliminates]
        if not a.moved:
            # Cards laid without moving the token yet: any faults are violations now.
            for v in violations:
                out.append(Ruling(t, self.game, "violation", headline(ILLEGAL, whose(boat, v.summary), v.rule), legal=False,
                                  rule=v.rule, details=dict(v.to_json(), pieces=[boat] + list(v.cards))))
        elif boat in self.unsearched and not violations:
            out.append(Ruling(t, self.game, "move", headline(CANNOT_TELL, self.unsearched[boat], RULE_LIMIT),
                              legal=None, rule=RULE_LIMIT,
                              details={"boat": boat, "action": "move", "spaces": None, "cannot_tell": True,
                                       "why_unknown": self.unsearched[boat], "pieces": [boat]}))
        elif boat in self.two_turns and not violations:
            out += self._two_turn_rulings(a, self.two_turns[boat], checked, allowance, t)
        else:
            out.append(self._move_ruling(a, a.spaces, violations, checked, allowance, boosted, seq, t))
        for v in eliminated[:1]:
            if boat not in self.memory.eliminated:
                self.memory.eliminated.append(boat)
                out.append(Ruling(t, self.game, "state", f"{short_name(boat)} is out of the race (Out of Bounds)",
                                  rule=v.rule, details={"boat": boat, "cards": list(v.cards)}))
        return out

    def _card_faults(self, a: _Action, previous_cards: list[Card], cards_now: dict[str, Card],
                     table: Polygon | None, gate_outline: Polygon | None, t: float,
                     out: list[Ruling]) -> tuple[list, list[Violation]]:
        """The rules checked and the faults of the cards laid and the token placed (cards.py);
        the cards laid are reported in ``out``."""
        boat = a.boat
        checked = [RULE_MOVEMENT, RULE_TOKEN]
        before = a.before or a.after
        if a.chain:
            names = ", ".join(f"{short_name(c.name)} ({c.kind})" for c in a.chain)
            out.append(Ruling(t, self.game, "state", f"{short_name(boat)} laid {names}", rule=RULE_PLACING,
                              details={"boat": boat, "cards": [c.name for c in a.chain],
                                       "deck": a.chain[0].deck}))
            checked += [RULE_PLACEMENT, RULE_TOUCHING, RULE_TURN, RULE_OUT]
            faults = check_turn(boat, before, a.after, None, previous_cards, a.chain, table=table,
                                gate_outline=gate_outline if a.tip.card is None and a.tip.gate else None,
                                catalog=self.facts.catalog, tip=a.tip.card, ordered=True, check_limit=False,
                                check_token=a.moved)
            # Where a card may go and Out of Bounds are judged over the whole turn by the
            # turn rules (turnlog.py: Placement Methods 1-3, Avoid Obstacles, and cards
            # replaceable until the token moves), not card by card here.
            return checked, [v for v in faults if v.rule not in (RULE_PLACEMENT, RULE_TOUCHING, RULE_TURN, RULE_OUT)]
        if a.moved:
            return checked, check_turn(boat, before, a.after, None, list(cards_now.values()), [], table=None,
                                       catalog=self.facts.catalog, check_limit=False, check_token=True)
        return checked, []

    def _limit_faults(self, a: _Action, turn: Turn | None, seq, boosted: bool,
                      violations: list[Violation]) -> tuple[list[Violation], int | None]:
        """Racing Card Limitation / Player Token Movement, by the rule functions `tornado check`
        uses too (turns.py): the spaces ahead on the route from where the turn began, and the
        spaces moved this turn. Returns the breaches (with the spaces ahead); counts the spaces
        moved this turn, and adds a move backwards to ``violations``."""
        boat = a.boat
        start_index = _resolve(turn.start, seq) if turn is not None else None
        over: list[Violation] = []
        ahead = None
        if a.chain and start_index is not None:
            ahead = len(seq) - 1 - start_index
            over += _violation_of(boat, spaces_ahead_call(boat, ahead, boosted, [c.name for c in a.chain]))
        spaces = a.spaces
        if a.moved and spaces is not None and turn is not None and a.acts:
            turn.spaces += spaces
            turn.moved = True
            if spaces < 0:
                violations.append(Violation(boat, RULE_MOVEMENT, f"{short_name(boat)} moved back {-spaces} movement "
                                            "spaces (tokens only move forward along their cards)"))
            over += _violation_of(boat, move_length_call(boat, turn.spaces, boosted))
        elif a.moved and turn is not None and a.acts:
            turn.moved = True
        return over, ahead

    def _closes_round(self, boat: str) -> bool:
        """Whether ``boat``, alone in this still table, took the last turn of its round (every
        other boat racing acted or passed): then its next turn may open the next round at once
        (Ending the Action Phase, then the Ranking Phase), so two of its turns can lie in one
        table with no other boat's between them. An illegal turn seen alone stays one turn."""
        if boat in self.seen_alone:
            return False
        done = set(self.rounds.acted) | set(self.rounds.passed) | set(self._gone()) | {boat}
        racing = set(self.last_poses) - set(self._gone())
        # a boat the ranking left out (its place not told) may still owe its turn: not the round's end
        return boat in self.rounds.acted and racing <= set(self.rounds.turn_order) and \
            all(n in done for n in self.rounds.turn_order)

    def _seen_together(self, a: _Action, turn: Turn, seq, allowance: int, others: list[str],
                       over: list[Violation], t: float, out: list[Ruling]) -> list[Violation]:
        """Too much for one turn, and other boats acted in this same still table: the engine
        missed tables, and two turns of this boat (rounds r and r+1) with the others' between
        them may explain it (sequences.py). A legal split of at most MAX_TURNS turns in all: the
        round moves on and the two turns are ruled (none broken, returned); none: the breaches
        stand, saying the nearest split."""
        start = _resolve(turn.start, seq)
        end = a.after_place.index if a.after_place is not None and a.after_place.known else None
        if start is None or end is None:
            return over
        splits, nearest = two_turn_splits([c.name for c, _ in seq], start, end, [c.name for c in a.chain],
                                          ALLOWANCE, allowance)
        if splits and len(others) + 2 > MAX_TURNS:
            # legal turns explain it, but more of them than are searched: nothing is judged
            self.unsearched[a.boat] = (f"{short_name(a.boat)} moved {splits[0].first + splits[0].second} movement "
                                       f"spaces, two turns' worth, while {len(others)} other boats acted: more than "
                                       f"{MAX_TURNS} turns lie in this still table")
            return []
        if not splits and others and end - start <= MAX_TURNS * ALLOWANCE + BOOSTED_ALLOWANCE - ALLOWANCE:
            # three turns of its own could hold the move; with the others' between, more turns than
            # are searched lie in this table, and a 0-space turn (Player Token Movement) leaves no
            # trace: no ground to call it illegal
            self.unsearched[a.boat] = (f"{short_name(a.boat)} moved {end - start} movement spaces, more than two "
                                       f"turns' worth, while {len(others)} other boat{'s' if len(others) > 1 else ''} "
                                       f"acted: more than {MAX_TURNS} turns lie in this still table")
            return []
        if not splits:
            if nearest is None:
                return over
            why = (f"; no sequence of at most {MAX_TURNS} turns explains it (nearest: two turns of "
                   f"{nearest.split.text()} spaces, {nearest.over} too many)")
            return [dataclasses.replace(over[0], summary=over[0].summary + why)] + over[1:]
        boat = a.boat
        self.two_turns[boat] = splits
        self._split_routes[boat] = seq
        turn.spaces = splits[0].second
        turn.start = Place(None, why="two turns seen together")
        if self.rounds.round == self.round_at_start:
            self.rounds.next_round(self.memory.last_ranking)
            out.append(Ruling(t, self.game, "state", headline(
                f"Round {self.rounds.round}", f"began unseen: {short_name(boat)} took its next turn in the same still "
                f"table as {', '.join(short_name(n) for n in others)}'s" if others else
                f"began unseen: {short_name(boat)} took the last turn of round {self.rounds.round - 1} and the first "
                f"of round {self.rounds.round} in one still table", RULE_FLOW), rule=RULE_FLOW,
                details={"round": self.rounds.round}))
        if boat not in self.rounds.acted:
            self.rounds.acted.append(boat)
        turn.round = self.rounds.round
        return []

    def _two_turn_rulings(self, a: _Action, splits: list, checked: list, allowance: int, t: float) -> list[Ruling]:
        """The two turns of a boat seen together, each its own ruling (its spaces; where the
        split is not seen, every way it may lie)."""
        boat = a.boat
        out = []
        ends = {self._split_place(a.boat, s.at) for s in splits}
        to_first = ends.pop() if len(ends) == 1 else None  # where the first turn ended, where the split is seen
        to_second = a.after_place.describe() if a.after_place is not None and a.after_place.known else None
        for k, options in ((1, sorted({s.first for s in splits})), (2, sorted({s.second for s in splits}))):
            spaces = options[0] if len(options) == 1 else None
            words = " or ".join(str(n) for n in options)
            what = (f"{short_name(boat)}'s {'first' if k == 1 else 'second'} turn moved {words} movement "
                    f"space{'s' if options != [1] else ''}")
            more = "" if len(splits) == 1 else f" The split is not seen: {', or '.join(s.text() for s in splits)}."
            details = {"boat": boat, "action": "move", "spaces": spaces, "spaces_options": options, "turn_of_two": k,
                       "to": to_first if k == 1 else to_second,
                       "spaces_in_both_turns": splits[0].first + splits[0].second,
                       "round": self.rounds.round - (2 - k), "allowance": allowance,
                       "checked": [str(r) for r in dict.fromkeys(checked)], "violations": [],
                       "cards_laid": [c.name for c in a.chain], "pieces": [boat] + [c.name for c in a.chain]}
            out.append(Ruling(t, self.game, "move", headline(LEGAL, what, RULE_MOVEMENT) + more, legal=True,
                              rule=RULE_MOVEMENT, details=details))
        return out

    def _split_place(self, boat: str, at: int) -> str:
        """The words for route index ``at`` of ``boat``'s route (where a first turn ended)."""
        card, space = self._split_routes[boat][at]
        return Place(at, card.name, space.index).describe()

    def _move_ruling(self, a: _Action, spaces: int | None, violations: list[Violation], checked: list[str],
                     allowance: int, boosted: bool, seq, t: float) -> Ruling:
        boat = a.boat
        turn = self.turns.get(boat)
        details = {"boat": boat, "action": "move", "spaces": spaces,
                   "from": a.before_place.describe() if a.before_place else None,
                   "to": a.after_place.describe() if a.after_place else None,
                   "cards_laid": [c.name for c in a.chain], "round": self.rounds.round,
                   "spaces_this_round": turn.spaces if turn else None, "allowance": allowance, "boosted": boosted,
                   "checked": [str(r) for r in dict.fromkeys(checked)], "violations": [v.to_json() for v in violations]}
        order_note = self._turn_order_note(boat)
        if order_note:
            details["turn_order"] = order_note
        if spaces is None:
            why = next((p.why for p in (a.before_place, a.after_place) if p is not None and not p.known and p.why),
                       "where it stood is unknown")
            what, where = f"{short_name(boat)} moved", ""
            details["why_unknown"] = why
        elif spaces == 0:
            what, where = f"{short_name(boat)} was shifted within {a.after_place.describe()}, 0 movement spaces", ""
        else:
            lo, hi = sorted((a.before_place.index, a.after_place.index))
            over = list(dict.fromkeys(f"{short_name(c.name)} ({c.kind})" for c, _ in seq[lo + 1:hi + 1]))
            what = f"{short_name(boat)} moved {spaces} movement space{'s' if abs(spaces) != 1 else ''}"
            where = f" On {', '.join(over)}." + (" Boosted: up to 4." if boosted else "")
        details["pieces"] = [boat] + [c.name for c in a.chain]
        # a card behind where the move began (picked up from the rear, When Your Deck is Empty)
        # counts for nothing: only one the token stood on, passed or reached does
        begin = a.before_place.index if a.before_place is not None and a.before_place.known else None
        unread = list(dict.fromkeys(c.name for c, _ in seq[max(begin or 0, 0):] if c.name in self.unread))
        if unread:
            # the count along the route rests on a card vision did not read this time
            details.update(not_read=unread, cannot_tell=True, pieces=[boat] + unread)
            return Ruling(t, self.game, "move", headline(CANNOT_TELL, f"{short_name(unread[0])} was not read, and "
                                                         f"{what} along it", RULE_MOVEMENT) + where,
                          legal=None, rule=RULE_MOVEMENT, details=details)
        if violations:
            v = violations[0]
            details["pieces"] = list(dict.fromkeys([boat] + [c for x in violations for c in x.cards]))
            details["breaches"] = [headline(ILLEGAL, whose(boat, x.summary), x.rule) for x in violations[1:]]
            more = f" {len(violations) - 1} more breach{'es' if len(violations) > 2 else ''}." if len(violations) > 1 else ""
            return Ruling(t, self.game, "move", f"{headline(ILLEGAL, whose(boat, v.summary), v.rule)} {what}.{where}{more}",
                          legal=False, rule=v.rule, details=details)
        if spaces is None:
            return Ruling(t, self.game, "move", headline(CANNOT_TELL, f"{what}, but its movement spaces cannot be "
                                                         f"counted: {why}", RULE_MOVEMENT),
                          legal=None, rule=RULE_MOVEMENT, details=details)
        return Ruling(t, self.game, "move", f"{headline(LEGAL, what, RULE_MOVEMENT)}{where}", legal=True,
                      rule=RULE_MOVEMENT, details=details)

    def _gone(self) -> list[str]:
        """Boats no longer racing: crossed the finish line or eliminated."""
        return self.memory.crossed + self.memory.eliminated

    def declare_pass(self, boat: str) -> None:
        """The players say ``boat`` passes this round (Moving Less Than 3 Spaces): for the
        turn order it has taken its turn, in the round count and in the turn rules alike."""
        if boat not in self.rounds.passed:
            self.rounds.passed.append(boat)
        self.turnlog = declare_pass(self.turnlog, boat)

    def _turn_order_note(self, boat: str) -> str | None:
        """Action Phase: turns go down the round's ranking. A boat acting before higher-ranked
        boats that have not acted means those passed (a 0-space turn): noted, no violation.
        Acting after a lower-ranked boat is the turn rules' violation (turnlog.py)."""
        waiting = self.rounds.waiting_before(boat, self._gone())
        if not waiting:
            return None
        names = ", ".join(short_name(n) for n in waiting)
        return (f"moved before {names} (earlier in round {self.rounds.round}'s turn order), so {names} passed this "
                f"round ({RULE_ACTION})")

    def _finish_and_ranking(self, observation: Observation, result: RankResult, movers: list[str], t: float,
                            first: bool = False) -> list[Ruling]:
        rulings = []
        # Crossing the Finish Line / Final Rankings.
        for b in result.boats:
            if b.finished is True and b.name not in self.memory.crossed and b.status != "finished earlier":
                self.memory.crossed.append(b.name)
                place = self.memory.crossed.index(b.name) + 1
                why = b.finish.basis if b.finish else "recorded"
                rulings.append(Ruling(t, self.game, "finish", headline(
                                          "Crossed", f"{short_name(b.name)} crossed the finish line, place {place}",
                                          RULE_FINISH) + f" Basis: {why.replace('tornado/', '')}.",
                                      rule=RULE_FINISH, details={"boat": b.name, "pieces": [b.name], "crossed": True, "place": place,
                                                                 "basis": why,
                                                                 "finish": b.finish.to_json() if b.finish else None}))
            elif b.name in movers and b.finish is not None and b.finished in (TOO_CLOSE, False):
                if b.finished == TOO_CLOSE:
                    summary = headline(CANNOT_TELL, f"whether {short_name(b.name)} crossed the finish line: too close "
                                       "to call", RULE_FINISH)
                else:
                    summary = headline("Not crossed", f"{short_name(b.name)} has not crossed the finish line, "
                                       + (f"{-b.finish.margin_mm:.0f} mm short" if b.finish.margin_mm < 0 else
                                          "beside its segment"), RULE_FINISH)
                rulings.append(Ruling(t, self.game, "finish", summary, rule=RULE_FINISH,
                                      details={"boat": b.name, "pieces": [b.name], "crossed": b.finished,
                                               "finish": b.finish.to_json()}))
            if b.zone_index is not None and b.status in ("racing", "finished"):
                self.memory.progress[b.name] = max(self.memory.progress.get(b.name, 0), b.zone_index)
            if b.standing_on or (b.zone_index or 0) > 0 or b.name in movers:
                self.memory.started.add(b.name)

        # Re-assess when the history just changed what this image proves.
        result = self.assess(observation)
        ranking = self._racing(result)
        if not self.rounds.turn_order:
            self.rounds.start(ranking)
        # Ranking Phase at the start (round 1); afterwards whenever the standings change.
        if first:
            order = ", ".join(short_name(n) for n in ranking)
            said = _ranking_summary(result, 1) + (f" Turn order: {order}." if order else "")
            rulings.append(Ruling(t, self.game, "ranking", said, rule=RULE_RANKING,
                                  details=dict(result.to_json(), round=1, turn_order=ranking)))
        elif self.last_result is None or \
                [b.name for b in self.last_result.boats if b.rank] != [b.name for b in result.boats if b.rank]:
            rulings.append(Ruling(t, self.game, "ranking", _ranking_summary(result, self.rounds.round),
                                  rule=RULE_RANKING,
                                  details=dict(result.to_json(), round=self.rounds.round)))
        for w in result.warnings:
            if self.last_result is None or w not in self.last_result.warnings:
                rulings.append(Ruling(t, self.game, "warning", w))
        if result.game_over and not self.game_over_announced:
            self.game_over_announced = True
            places = ", ".join(f"{p}. {short_name(n)}" for n, p in sorted(result.final_places.items(), key=lambda kv: kv[1]))
            rulings.append(Ruling(t, self.game, "state", headline("Race over", places, RULE_END), rule=RULE_END,
                                  details={"final_places": dict(result.final_places)}))
        self.memory.last_ranking = ranking
        self.last_result = result
        return rulings

    @staticmethod
    def _racing(result: RankResult) -> list[str]:
        return [b.name for b in result.boats if b.rank is not None and b.status == "racing"]

    def _character_cards(self, obs: Observation, actors: list[str], t: float) -> list[Ruling]:
        """Boosting: flipping the character card face down uses the boost, once per game."""
        out = []
        for p in obs.pieces:
            if not p.name.startswith(CHARACTER_PREFIX):
                continue
            face = p.face or ("face-down" if any(220 <= m <= 225 for m in p.marker_ids) else "face-up")
            before = self.character_faces.get(p.name)
            self.character_faces[p.name] = face
            if face == before:
                continue
            number = p.name.rsplit("-", 1)[1]
            if face == "face-up" and before == "face-down":
                out.append(self._violation(t, Violation(self.characters.get(p.name, f"tornado/boat-{number}"),
                                                        RULE_BOOST, f"{p.name} was turned face up again after its boost")))
            elif face == "face-down":
                boat = self.characters.get(p.name) or (actors[0] if len(actors) == 1 else f"tornado/boat-{number}")
                self.characters.setdefault(p.name, boat)
                if before is None and not actors:
                    # already face down when first seen: the boost was used before we watched
                    self.boosts.setdefault(boat, {"t": None, "round": None, "character": p.name})
                    out.append(Ruling(t, self.game, "state", headline("Boost used", f"{short_name(boat)} used its "
                                      f"boost before refcam watched: {short_name(p.name)} is face down", RULE_BOOST),
                                      rule=RULE_BOOST,
                                      details={"boat": boat, "character": p.name}))
                elif boat in self.boosts:
                    out.append(self._violation(t, Violation(boat, RULE_BOOST, f"{short_name(boat)} boosts a second time")))
                else:
                    self.boosts[boat] = {"t": t, "round": self.rounds.round, "character": p.name}
                    out.append(Ruling(t, self.game, "move", headline(LEGAL, f"{short_name(boat)} uses its boost, up to "
                                                                     "4 spaces this turn", RULE_BOOST),
                                      legal=True, rule=RULE_BOOST,
                                      details={"boat": boat, "action": "boost", "character": p.name}))
        return out

    def _violation(self, t: float, v: Violation) -> Ruling:
        self.violations.append((t, v))
        return Ruling(t, self.game, "violation", headline(ILLEGAL, v.summary, v.rule), legal=False, rule=v.rule,
                      details=dict(v.to_json(), pieces=[v.boat] + list(v.cards)))


def _mark_seen_together(rulings: list[Ruling]) -> list[Ruling]:
    """Turns seen together (more than one turn in one still table): each move ruling gets its
    place in the sequence that explains the table (details seen_together, 1-based, and
    sequence): the boats' turns in this round's turn order, as the rulings come, then the
    second turns of boats that took two."""
    moves = [r for r in rulings if r.kind == "move" and r.details.get("action") == "move"]
    if len(moves) < 2:
        return rulings
    order = [r for r in moves if r.details.get("turn_of_two") != 2] + [r for r in moves
                                                                      if r.details.get("turn_of_two") == 2]
    turns = [f"{short_name(r.details['boat'])} ({_spaces_words(r)})" for r in order]
    text = sequence_text(turns)
    marked = {id(r): dataclasses.replace(r, summary=f"{r.summary} Seen together, turn {k} of {len(order)}: {text}.",
                                         details=dict(r.details, seen_together=k, sequence=turns))
              for k, r in enumerate(order, start=1)}
    return [marked.get(id(r), r) for r in rulings]


def _spaces_words(r: Ruling) -> str:
    options = r.details.get("spaces_options") or [r.details.get("spaces")]
    if options == [None]:
        return "spaces not counted"
    return " or ".join(str(n) for n in options) + (" space" if options == [1] else " spaces")


def _replaced(card: Card, new: list[Card]) -> bool:
    """FAQ (replacing cards before the token moves): a new card of the same deck lying over more
    than half of where a missing card lay took its place; a player's own card is laid on an
    earlier one of theirs only over part of it (a diagonal line covers the spaces after it)."""
    area = card.polygon().area
    return any(c.deck == card.deck and c.polygon().intersection(card.polygon()).area > area / 2 for c in new)


def _violation_of(boat: str, call: TurnCall) -> list[Violation]:
    """A turn rule's call (turns.py) as the referee's violation, when it is one."""
    if call.verdict != "violation":
        return []
    return [Violation(boat, rule(call.section), call.summary, cards=call.cards)]


def _index(order: list[str], boat: str) -> int:
    """A boat's place in a turn order; boats not in it come last."""
    return order.index(boat) if boat in order else len(order)


def _resolve(place: Place, seq) -> int | None:
    """A remembered place as an index into the route's current space sequence."""
    if place.index == BEFORE_ROUTE:
        return BEFORE_ROUTE
    if place.card is None:
        return None
    return index_of(seq, place.card, place.space)


def _ranking_summary(result: RankResult, round_no: int) -> str:
    """The Ranking Phase as a player reads it: "Round 2: 1. boat-2; 2. boat-1 (Ranking Phase)."
    Boats in their start-gate spaces are equal by the rules; others equal within the measurement."""
    parts = []
    for b in result.boats:
        if b.rank is None:
            continue
        s = f"{b.rank}. {short_name(b.name)}"
        if b.status in ("finished", "finished earlier"):
            s += " (finished)"
        if b.equidistant_with:
            s += " (" + "; ".join(f"{result.equal_words(b.name, n)} with {short_name(n)}"
                                  for n in b.equidistant_with) + ")"
        parts.append(s)
    return headline(f"Round {round_no}", "; ".join(parts) if parts else "no boat ranked", RULE_RANKING)


def taken_up_mid_race(boats_off_the_gate: list[str], t: float, game: str) -> list[Ruling]:
    """A first table with boats already off the start gate is a race under way (every race starts
    with the boats on the gate): say that play is taken up from it, so the turn order of its
    ranking (Ranking Phase) is read as the order from here, not as the race's first round."""
    if not boats_off_the_gate:
        return []
    names = ", ".join(short_name(n) for n in boats_off_the_gate)
    summary = (f"Taken up mid-race: {names} already off the start gate; the first table seen is where play "
               f"stands, and its ranking sets the turn order from here ({RULE_RANKING}).")
    return [Ruling(t, game, "state", summary, rule=str(RULE_RANKING),
                   details={"boats": list(boats_off_the_gate), "taken_up": True})]
