"""The live Tornado Splash referee: keeps the race history across stable states.

Implements the GameReferee protocol (referee/rulings.py). Fixed facts (course,
weights) live in a frozen TornadoGame; everything that changes (zones reached,
crossings, rounds, boosts, eliminations, violations) lives here and is copied by
clone().
"""

from __future__ import annotations

import copy
import math

from shapely.geometry import Polygon

from referee.catalog import Catalog
from referee.errors import RefcamError
from referee.observation import Observation, PiecePose
from referee.rulings import Ruling

from . import geometry as g
from .cards import RULE_BOOST, Violation, card_from_pose, check_turn, table_polygon
from .course import START_GATE, CourseSpec
from .finish import TOO_CLOSE
from .rounds import RoundTracker
from .standings import RaceMemory, RankResult, TornadoGame, assess, boats_in

CHARACTER_PREFIX = "tornado/character-"
RULE_RANKING = "Tornado Splash, Ranking Phase"
RULE_FINISH = "Tornado Splash, Crossing the Finish Line"
RULE_END = "Tornado Splash, Ending the Game"
# A boat has moved when its position changed by more than this many sigma (and 5 mm).
MOVE_SIGMAS, MOVE_FLOOR_MM = 4.0, 5.0


def _moved(a: PiecePose, b: PiecePose) -> bool:
    return g.dist((a.x_mm, a.y_mm), (b.x_mm, b.y_mm)) > max(MOVE_FLOOR_MM, MOVE_SIGMAS * math.hypot(a.sigma_mm, b.sigma_mm))


class TornadoReferee:
    """Rules on successive stable states of one Tornado Splash race."""

    game = "tornado"

    def __init__(self, course: str | CourseSpec | None = None, weights=None, catalog: Catalog | None = None,
                 characters: dict[str, str] | None = None, nominal_fallback: bool = True):
        self.facts = TornadoGame.make(course, weights, catalog)
        # The live camera may frame only part of the course: by default pieces out
        # of view come from the course file's layout (with a warning); `refcam rank`
        # turns this off and names the missing pieces instead.
        self.nominal_fallback = nominal_fallback
        # Player Setup: each player picks a character and a boat; by default
        # character k goes with boat k, and a flip seen during one boat's move is
        # credited to that boat.
        self.characters = dict(characters or {})
        self.memory = RaceMemory()
        self.rounds = RoundTracker()
        self.last_poses: dict[str, PiecePose] = {}
        self.card_poses: dict[str, PiecePose] = {}
        self.character_faces: dict[str, str] = {}
        self.boosts: dict[str, dict] = {}  # boat -> {"t": ..., "round": ...}
        self.violations: list[tuple[float, Violation]] = []
        self.last_result: RankResult | None = None
        self.game_over_announced = False
        self.table_warned = False
        self.t = 0.0

    # ------------------------------------------------------------------ queries
    def assess(self, obs: Observation) -> RankResult:
        """The standings of an observation given the history so far (does not record it)."""
        return assess(self.facts, obs, self.memory, nominal_fallback=self.nominal_fallback)

    def clone(self) -> "TornadoReferee":
        other = copy.copy(self)
        other.memory = self.memory.clone()
        other.rounds = self.rounds.clone()
        other.last_poses = dict(self.last_poses)
        other.card_poses = dict(self.card_poses)
        other.character_faces = dict(self.character_faces)
        other.boosts = {k: dict(v) for k, v in self.boosts.items()}
        other.violations = list(self.violations)
        return other

    def state_json(self) -> dict:
        res = self.last_result.to_json() if self.last_result else {"ranking": [], "hand_size": {}, "warnings": []}
        res.update({
            "course": self.facts.course.id, "t": self.t, "round": self.rounds.round,
            "turn_order": list(self.rounds.turn_order), "turns_taken": list(self.rounds.acted),
            "crossed": list(self.memory.crossed), "eliminated": list(self.memory.eliminated),
            "boosts": {k: dict(v) for k, v in self.boosts.items()},
            "violations": [dict(v.to_json(), t=t) for t, v in self.violations],
            "weights": dict(self.facts.weights),
        })
        return res

    # ------------------------------------------------------------------ updates
    def observe_stable(self, observation: Observation, t: float) -> list[Ruling]:
        self.t = t
        try:
            result = self.assess(observation)
        except RefcamError as exc:
            return [Ruling(t, self.game, "warning", str(exc))]
        rulings: list[Ruling] = []
        boats = {b.name: b for b in boats_in(observation)}
        movers = [n for n, p in boats.items() if n in self.last_poses and _moved(self.last_poses[n], p)]
        for n in boats:
            if n not in self.memory.seen_boats:
                self.memory.seen_boats.append(n)

        # Action Phase: turns follow the round's ranking.
        if not self.rounds.turn_order:
            self.rounds.start(self.memory.last_ranking or self._racing(result))
        round_before = self.rounds.round
        self.rounds.on_moves(movers, self.memory.last_ranking or self._racing(result))
        if self.rounds.round != round_before:
            order = ", ".join(_short(n) for n in self.rounds.turn_order)
            rulings.append(Ruling(t, self.game, "state", f"round {self.rounds.round} begins; turn order from the "
                                  f"ranking: {order}", rule="Tornado Splash, Game Flow",
                                  details={"round": self.rounds.round, "turn_order": list(self.rounds.turn_order)}))

        rulings += self._character_cards(observation, movers, t)
        rulings += self._new_cards(observation, boats, t)

        # Crossing the Finish Line / Final Rankings.
        for b in result.boats:
            if b.finished is True and b.name not in self.memory.crossed and b.status != "finished earlier":
                self.memory.crossed.append(b.name)
                place = self.memory.crossed.index(b.name) + 1
                why = b.finish.basis if b.finish else "recorded"
                rulings.append(Ruling(t, self.game, "finish", f"{_short(b.name)} crossed the finish line: place {place}",
                                      rule=RULE_FINISH, details={"boat": b.name, "place": place, "basis": why,
                                                                 "finish": b.finish.to_json() if b.finish else None}))
            elif b.finished == TOO_CLOSE and b.finish is not None:
                rulings.append(Ruling(t, self.game, "finish", f"{_short(b.name)} at the finish line: too close to call",
                                      rule=RULE_FINISH, details={"boat": b.name, "finish": b.finish.to_json()}))
            if b.zone_index is not None and b.status in ("racing", "finished"):
                self.memory.progress[b.name] = max(self.memory.progress.get(b.name, 0), b.zone_index)
            if b.standing_on or (b.zone_index or 0) > 0 or b.name in movers:
                self.memory.started.add(b.name)

        # Re-assess when the history just changed what this image proves.
        result = self.assess(observation)
        ranking = self._racing(result)
        # Ranking Phase: announce the ranking at each new round, and whenever it changes.
        if self.last_result is None or self.rounds.round != round_before or \
                [b.name for b in self.last_result.boats if b.rank] != [b.name for b in result.boats if b.rank]:
            rulings.append(Ruling(t, self.game, "ranking", _ranking_summary(result), rule=RULE_RANKING,
                                  details=result.to_json()))
        for w in result.warnings:
            if self.last_result is None or w not in self.last_result.warnings:
                rulings.append(Ruling(t, self.game, "warning", w))
        if result.game_over and not self.game_over_announced:
            self.game_over_announced = True
            places = ", ".join(f"{p}. {_short(n)}" for n, p in sorted(result.final_places.items(), key=lambda kv: kv[1]))
            rulings.append(Ruling(t, self.game, "state", f"race over: {places}", rule=RULE_END,
                                  details={"final_places": dict(result.final_places)}))
        self.memory.last_ranking = ranking
        self.last_poses.update(boats)
        self.last_result = result
        return rulings

    @staticmethod
    def _racing(result: RankResult) -> list[str]:
        return [b.name for b in result.boats if b.rank is not None and b.status == "racing"]

    def _character_cards(self, obs: Observation, movers: list[str], t: float) -> list[Ruling]:
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
                boat = self.characters.get(p.name) or (movers[0] if len(movers) == 1 else f"tornado/boat-{number}")
                self.characters.setdefault(p.name, boat)
                if before is None and not movers:
                    # already face down when first seen: the boost was used before we watched
                    self.boosts.setdefault(boat, {"t": None, "round": None, "character": p.name})
                    out.append(Ruling(t, self.game, "state", f"{_short(boat)} has already used its boost "
                                      f"({p.name} is face down)", rule=RULE_BOOST,
                                      details={"boat": boat, "character": p.name}))
                elif boat in self.boosts:
                    out.append(self._violation(t, Violation(boat, RULE_BOOST, f"{_short(boat)} boosts a second time")))
                else:
                    self.boosts[boat] = {"t": t, "round": self.rounds.round, "character": p.name}
                    out.append(Ruling(t, self.game, "move", f"{_short(boat)} uses its boost: up to 4 spaces this turn",
                                      legal=True, rule=RULE_BOOST, details={"boat": boat, "character": p.name}))
        return out

    def _new_cards(self, obs: Observation, boats: dict[str, PiecePose], t: float) -> list[Ruling]:
        """Check the racing cards laid since the last stable state, per boat (its own deck)."""
        catalog = self.facts.catalog
        now = [p for p in obs.pieces if p.name.startswith("tornado/card-")]
        new = [p for p in now if p.name not in self.card_poses]
        old_cards = [card_from_pose(p, catalog) for p in now if p.name in self.card_poses]
        first_state = not self.card_poses and not self.last_poses
        for p in now:
            self.card_poses[p.name] = p
        if not new or first_state:
            for p in new:
                self.memory.card_order.append(p.name)
            return []
        table = table_polygon(obs)
        gate = obs.piece(START_GATE)
        gate_outline = None
        if gate is not None:
            spec = catalog.piece(START_GATE)
            gate_outline = Polygon([g.to_world((gate.x_mm, gate.y_mm), gate.theta_deg, q)
                                    for q in spec.footprint_polygon()])
        out = []
        by_boat: dict[str, list] = {}
        for p in new:
            c = card_from_pose(p, catalog)
            by_boat.setdefault(c.boat, []).append(c)
        for boat, cards in by_boat.items():
            before = self.last_poses.get(boat)
            after = boats.get(boat, before)
            if before is None or after is None:
                for c in cards:
                    self.memory.card_order.append(c.name)
                continue
            cards.sort(key=lambda c: g.dist(c.centre, (before.x_mm, before.y_mm)))
            boosted = self.boosts.get(boat, {}).get("round") == self.rounds.round
            found = check_turn(boat, before, after, gate, old_cards, cards, boosted=boosted, table=table,
                               gate_outline=gate_outline, catalog=catalog)
            for c in cards:
                self.memory.card_order.append(c.name)
            old_cards += cards
            for v in found:
                out.append(self._violation(t, v))
                if v.eliminates and boat not in self.memory.eliminated:
                    self.memory.eliminated.append(boat)
                    out.append(Ruling(t, self.game, "state", f"{_short(boat)} is out of the race (Out of Bounds)",
                                      rule=v.rule, details={"boat": boat}))
        if table is None and new and not self.table_warned:
            self.table_warned = True
            out.append(Ruling(t, self.game, "warning", "table corners (stickers 0-3) not all in view: cannot check "
                                                       "cards hanging off the table (Out of Bounds)"))
        return out

    def _violation(self, t: float, v: Violation) -> Ruling:
        self.violations.append((t, v))
        return Ruling(t, self.game, "violation", v.summary, legal=False, rule=v.rule, details=v.to_json())


def _short(name: str) -> str:
    return name.split("/", 1)[-1]


def _ranking_summary(result: RankResult) -> str:
    parts = []
    for b in result.boats:
        if b.rank is None:
            continue
        s = f"{b.rank}. {_short(b.name)}"
        if b.equidistant_with:
            s += " (equidistant within measurement with " + ", ".join(_short(n) for n in b.equidistant_with) + ")"
        parts.append(s)
    return "ranking: " + "; ".join(parts) if parts else "ranking: no boat ranked"
