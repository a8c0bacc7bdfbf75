"""The grouping of equidistant boats and the pair-difference records (referee/tornado/pairs.py)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.tornado.pairs import START_GATE, consistent_order, gate_call, pair_records
from referee.tornado.ranking import BAND_SIGMAS, EQUIDISTANT, Call, Measure, Racer, within_band


def racer(name, weight, value, sigma, zone=0):
    return Racer(f"tornado/{name}", weight, zone, Measure("distance_mm", value, sigma), (0.0, value), sigma)


def calls_for(racers):
    out = {}
    for i, a in enumerate(racers):
        for b in racers[i + 1:]:
            delta = a.measure.value - b.measure.value
            sigma = (a.measure.sigma ** 2 + b.measure.sigma ** 2) ** 0.5
            first, second = (a, b) if delta <= 0 else (b, a)
            verdict = EQUIDISTANT if within_band(delta, sigma, 0.0) else "ahead"
            out[frozenset((a.name, b.name))] = Call(first.name, second.name, verdict, abs(delta), sigma, "distance_mm")
    return out


def test_chain_of_equidistant_boats_never_contradicts_its_reasons():
    # The still that prompted this: boat-1 (weight 1) and boat-3 (weight 3) equidistant,
    # boat-2 confidently ahead of boat-1 but not of boat-3.
    rs = [racer("boat-2", 2, 100.0, 1.0), racer("boat-3", 3, 102.5, 1.0), racer("boat-1", 1, 105.0, 1.0)]
    calls = calls_for(rs)
    order, groups = consistent_order(rs, calls)
    assert groups == [["tornado/boat-2", "tornado/boat-3"], ["tornado/boat-1"]]
    assert order == ["tornado/boat-2", "tornado/boat-3", "tornado/boat-1"]
    pairs = pair_records(order, groups, calls, {r.name: r.weight for r in rs})
    assert [p.verdict for p in pairs] == [EQUIDISTANT, "group order"]
    assert "it is confidently behind boat-2" in pairs[1].reason
    assert pairs[1].delta == 2.5 and round(pairs[1].band, 6) == round(BAND_SIGMAS * 2 ** 0.5, 6)


def test_gate_tokens_are_equal_in_every_round_weight_decides():
    rs = [racer("boat-4", 4, 10.0, 0.5), racer("boat-2", 2, 40.0, 0.5)]
    calls = {frozenset((rs[0].name, rs[1].name)): gate_call(rs[0].name, rs[1].name)}
    order, groups = consistent_order(rs, calls)
    assert order == ["tornado/boat-2", "tornado/boat-4"]
    (pair,) = pair_records(order, groups, calls, {"tornado/boat-4": 4, "tornado/boat-2": 2})
    assert pair.verdict == START_GATE and pair.delta == 0.0


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 30), st.floats(0.2, 3.0), st.integers(1, 6)), min_size=2, max_size=6))
def test_any_field_ranks_consistently(items):
    rs = [racer(f"boat-{i + 1}", w, v, s) for i, (v, s, w) in enumerate(items)]
    calls = calls_for(rs)
    order, groups = consistent_order(rs, calls)
    pos = {n: i for i, n in enumerate(order)}
    for c in calls.values():  # a confident call is never overturned
        if c.verdict == "ahead":
            assert pos[c.ahead] < pos[c.behind]
    weights = {r.name: r.weight for r in rs}
    for p in pair_records(order, groups, calls, weights):  # each stated reason holds
        if p.verdict == EQUIDISTANT:
            assert abs(p.delta) < p.band and weights[p.ahead] <= weights[p.behind]
        if p.verdict == "ahead":
            assert p.delta >= p.band
