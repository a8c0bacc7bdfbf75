"""Property test: random courses (the four course files jittered, and random custom
courses) with random boats; the referee's zones, measures and ranking are compared
with a direct computation from the known truth (tests/test_tornado_scenes.py, which
does not use referee.tornado's geometry).

Every piece is moved by at most half its stated sigma, so the true value always
lies within the reported uncertainty: no confident call may be wrong, exact ties
must come out "equidistant within measurement" (then the lighter boat first), and
"equidistant" may only be said when the true margin is below 4 sigma.
"""

from __future__ import annotations

import json
import math
import random

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from referee.tornado.course_spec import COURSES_DIR, parse_course
from referee.tornado.ranking import EQUIDISTANT
from referee.tornado.standings import TornadoGame, assess
from tests.test_tornado_scenes import (TruthCourse, boat_pose, course_from_layout, course_pieces, observation,
                                       random_course, sample_in_zone, self_clearance_ok, true_measure)

COURSE_FILES = ["tornado-circuit", "splashway", "roundabout-river", "raindrop-road"]
BOUNDARY_CLEARANCE_MM = 40.0
FINISH_OVERRUN_MM = 144.0  # catalog card length + boat length (referee's reach past the finish line)


def _too_close_to_edges(tc: TruthCourse, k: int, p, u: float) -> bool:
    z = tc.zones[k]
    fx, fy, fth = tc.finish
    f = (math.cos(math.radians(fth)), math.sin(math.radians(fth)))
    d = (p[0] - fx) * f[0] + (p[1] - fy) * f[1]
    lat = -(p[0] - fx) * f[1] + (p[1] - fy) * f[0]
    if -60.0 <= d <= FINISH_OVERRUN_MM + 40.0 and abs(lat) <= 340.0:
        return True  # where a just-finished boat could stand (or its footprint touch the line)
    if z.kind == "straight":
        length = math.hypot(z.b[0] - z.a[0], z.b[1] - z.a[1])
        if u * length < (60.0 if k == 0 else BOUNDARY_CLEARANCE_MM) or (1 - u) * length < BOUNDARY_CLEARANCE_MM:
            return True
    else:
        rho = math.hypot(p[0] - z.vertex[0], p[1] - z.vertex[1])
        if rho * math.radians(min(u, 1 - u) * z.sweep) < BOUNDARY_CLEARANCE_MM or rho < 90:
            return True
    return False


def _place_boats(tc: TruthCourse, rng: random.Random, n: int):
    """Boats with their true zone and measure; some pairs exactly tied."""
    boats = []
    tries = 0
    while len(boats) < n and tries < 400:
        tries += 1
        if boats and rng.random() < 0.3:
            k, u, _lat, _p, _m = rng.choice(boats)  # an exact tie: same zone and measure, elsewhere across
            lat = rng.uniform(-110, 110)
        else:
            k, u, lat = rng.randrange(len(tc.zones)), rng.uniform(0.02, 0.98), rng.uniform(-110, 110)
        p = sample_in_zone(tc, k, rng, u, lat)
        if _too_close_to_edges(tc, k, p, u):
            continue
        m = true_measure(tc.zones[k], p)
        clash = False
        for (k2, _u2, _l2, p2, m2) in boats:
            if math.dist(p, p2) < 40.0:
                clash = True  # two tokens cannot stand on one spot
            elif k2 == k and m2 != m and abs(m2 - m) < (30.0 if tc.zones[k].kind == "straight" else 8.0):
                clash = True  # keep untied boats clearly apart so the expected order is certain
        if not clash:
            boats.append((k, u, lat, p, m))
    return boats


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(which=st.sampled_from(COURSE_FILES + ["custom"] * 2), seed=st.integers(0, 2**32 - 1),
       sigma=st.sampled_from([0.3, 1.0, 2.5]), n_boats=st.integers(2, 6))
def test_ranking_matches_direct_computation(which, seed, sigma, n_boats):
    rng = random.Random(seed)
    if which == "custom":
        tc = random_course(rng)
        assume(self_clearance_ok(tc))
    else:
        tc = course_from_layout(json.loads((COURSES_DIR / f"{which}.json").read_text()))
    spec = parse_course(tc.doc, which)
    placed = _place_boats(tc, rng, n_boats)
    assume(len(placed) >= 2)
    names = [f"tornado/boat-{i}" for i in rng.sample(range(1, 7), len(placed))]
    weights = {nm: w for nm, w in zip(names, rng.sample(range(1, 7), len(placed)))}
    pieces = course_pieces(tc, rng, sigma, jitter=sigma / 2)
    truth = {}
    for nm, (k, u, lat, p, m) in zip(names, placed):
        pieces.append(boat_pose(nm, p, rng.uniform(-180, 180), sigma, rng, jitter=sigma / 2))
        truth[nm] = (k, m)
    rng.shuffle(pieces)
    game = TornadoGame.make(spec, weights)
    result = assess(game, observation(pieces))

    by = {b.name: b for b in result.boats}
    for nm, (k, m) in truth.items():
        b = by[nm]
        assert b.zone_index == k, f"{nm} true zone {k}, referee {b.zone_index} ({b.how})"
        assert b.measure.sigma > 0
        assert abs(b.measure.value - m) <= 1.5 * b.measure.sigma, (nm, b.measure, m)
        assert b.zone_kind == tc.zones[k].kind

    for c in result.calls:
        (ka, ma), (kb, mb) = truth[c.ahead], truth[c.behind]
        sa, sb = by[c.ahead].measure.sigma, by[c.behind].measure.sigma
        if c.verdict == EQUIDISTANT:
            assert ka == kb and abs(ma - mb) < 4 * math.hypot(sa, sb), c
        else:  # a confident call is never wrong
            assert (ka > kb) or (ka == kb and ma < mb), c
        if ka == kb and ma == mb:
            assert c.verdict == EQUIDISTANT, c

    # the direct computation: zone nearer the finish first, then the smaller measure,
    # exact ties by the lower weight (When Equidistant)
    expected = sorted(truth, key=lambda nm: (-truth[nm][0], truth[nm][1], weights[nm]))
    assert result.ranking() == expected
    assert set(result.hand_size) == set(expected)
    assert result.hand_size[expected[0]] == 4 and result.hand_size[expected[-1]] == 6
