"""A ranking that never contradicts its own reasons, with the numbers behind each call.

Rulebook, Ranking Phase / When Equidistant; SPEC section 3. Two boats are
equidistant when their measures differ by less than the band, 2 sigma of the
difference (the shared line error cancels in it). Equidistant boats go by weight,
lighter first. Equidistance is not transitive (A ~ B and B ~ C while A is
confidently ahead of C), so refcam fixes one grouping and holds to it:

    GROUPING: take the boats in measured order, front first. A group starts with the
    front-most boat not yet grouped and takes in each next boat that is equidistant
    with every boat already in the group; the first boat that is not starts the next
    group. Within a group the lower weight goes first (then the measure); groups keep
    their measured order.

So every pair inside a group is equidistant and weight decides it, and every boat of
a later group is measured behind every boat of an earlier one, so no confident call is
ever overturned. Tokens standing in their start-gate spaces are equidistant by the
rules in every round (When Equidistant: "this happens at the start of every race"):
their pairs carry Delta 0 and weight decides, whatever the millimetres say.

Each adjacent pair of the final order gets a record with Delta, sigma_Delta, the band
and the reason that put them in that order, so anyone can check the call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from .ranking import BAND_SIGMAS, CANNOT_TELL, EQUIDISTANT, Call, Racer

GROUPING_RULE = ("boats in measured order, front first; a group takes each next boat equidistant with every boat "
                 "already in it; lower weight first within a group; groups keep their measured order")
START_GATE = "start gate"


@dataclass(frozen=True)
class PairRecord:
    """One adjacent pair of the ranking: ``ahead`` is placed just before ``behind``.

    delta: the measured difference (behind - ahead, in ``kind`` units: mm or degrees;
    zones apart for boats in different zones); sigma_delta: its standard uncertainty;
    band: BAND_SIGMAS * sigma_delta; verdict: "ahead" (|delta| >= band), EQUIDISTANT,
    "start gate" (equal by the rules), "zone", or CANNOT_TELL (a line crossing within the
    measurement: no confident order, weight places them); reason: the words that justify the order.
    """

    ahead: str
    behind: str
    verdict: str
    delta: float
    sigma_delta: float
    band: float
    kind: str
    reason: str

    def to_json(self) -> dict:
        return {"ahead": self.ahead, "behind": self.behind, "verdict": self.verdict, "delta": round(self.delta, 3),
                "sigma_delta": round(self.sigma_delta, 3), "band": round(self.band, 3), "kind": self.kind,
                "reason": self.reason}

    def line(self) -> str:
        """One short line for the picture's panel (readable on a phone: about 50 characters)."""
        a, b = self.ahead.split("/")[-1].replace("boat-", "B"), self.behind.split("/")[-1].replace("boat-", "B")
        short = {"ahead": "clear", EQUIDISTANT: "equal: by weight", START_GATE: "gate: by weight",
                 CANNOT_TELL: "cannot tell: by weight",
                 "zone": "zone nearer finish", "group order": "next group"}.get(self.verdict, self.verdict)
        if self.kind in ("zone", START_GATE) or self.verdict == CANNOT_TELL:
            return f"{a}>{b} {short}"
        unit = "mm" if self.kind == "distance_mm" else "deg"
        return f"{a}>{b} D{self.delta:+.1f}{unit} sD{self.sigma_delta:.1f} band{self.band:.1f} {short}"


def gate_call(a: str, b: str) -> Call:
    """When Equidistant: two tokens in their start-gate spaces stand equally far, by the rules."""
    return Call(a, b, EQUIDISTANT, 0.0, 0.0, START_GATE)


def measured_key(r: Racer) -> tuple:
    """Measured order: the zone nearer the finish first, then the smaller measure."""
    return (-r.zone, r.measure.value, r.name)


def group_equidistant(order: Sequence[str], equidistant: Callable[[str, str], bool]) -> list[list[str]]:
    """GROUPING (module docstring) over boats already in measured order."""
    groups: list[list[str]] = []
    for name in order:
        if groups and all(equidistant(name, other) for other in groups[-1]):
            groups[-1].append(name)
        else:
            groups.append([name])
    return groups


def consistent_order(racers: Sequence[Racer], calls: Mapping[frozenset, Call]) -> tuple[list[str], list[list[str]]]:
    """The ranking of ``racers`` by GROUPING, from their pairwise calls."""
    by_name = {r.name: r for r in racers}
    measured = [r.name for r in sorted(racers, key=measured_key)]

    def equi(a: str, b: str) -> bool:  # no confident order between them
        return calls[frozenset((a, b))].verdict in (EQUIDISTANT, CANNOT_TELL)

    groups = group_equidistant(measured, equi)
    order = []
    for grp in groups:
        order.extend(sorted(grp, key=lambda n: (by_name[n].weight, measured.index(n))))
    return order, groups


def pair_records(order: Sequence[str], groups: Sequence[Sequence[str]], calls: Mapping[frozenset, Call],
                 weights: Mapping[str, float]) -> list[PairRecord]:
    """A record for each adjacent pair of the final order, with the reason for it."""
    group_of = {n: i for i, grp in enumerate(groups) for n in grp}
    out = []
    for a, b in zip(order, order[1:]):
        c = calls[frozenset((a, b))]
        sign = 1.0 if c.ahead == a else -1.0
        delta = sign * c.delta
        band = BAND_SIGMAS * c.sigma
        wa, wb = weights.get(a), weights.get(b)
        if c.kind == START_GATE:
            verdict, reason = START_GATE, f"both in their start-gate spaces, equal by the rules: weight {wa:g} before {wb:g}"
        elif group_of[a] == group_of[b] and c.verdict == CANNOT_TELL:
            verdict, reason = CANNOT_TELL, f"{CANNOT_TELL}: {c.note}; weight {wa:g} before {wb:g}"
        elif group_of[a] == group_of[b]:
            verdict, reason = EQUIDISTANT, f"{EQUIDISTANT} (|D| < band): weight {wa:g} before {wb:g}"
        elif c.verdict == "zone":
            verdict, reason = "zone", f"{a.split('/')[-1]}'s zone is nearer the finish"
            if c.note:
                reason += f" ({c.note})"
        elif c.verdict in (EQUIDISTANT, CANNOT_TELL):
            # b's group began with a boat that is not equidistant with some boat of a's group
            head = groups[group_of[b]][0]
            apart = next(n for n in groups[group_of[a]]
                         if calls[frozenset((n, head))].verdict not in (EQUIDISTANT, CANNOT_TELL))
            verdict = "group order"
            short = [n.split("/")[-1] for n in (a, head, apart)]
            reason = (f"{EQUIDISTANT} with {short[0]}, but in the next group: " +
                      (f"{short[1]} is" if head != b else "it is") + f" confidently behind {short[2]} (grouping rule)")
        else:
            verdict, reason = "ahead", "ahead by more than the band" + (f" ({c.note})" if c.note else "")
        out.append(PairRecord(a, b, verdict, delta, c.sigma, band, c.kind or "zone", reason))
    return out
