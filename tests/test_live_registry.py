"""Which referee rules which game, the state-only referee, and boat weights from the command line."""

import pytest

from referee.errors import RefcamError
from referee.observation import Observation
from referee.registry import NO_ENGINE, StateOnlyReferee, kang_square, make_referee, parse_weights

from tests.live_helpers import pose


@pytest.mark.parametrize("x, y, square", [(-100, -100, "a1"), (100, 100, "f6"), (-20, -101, "c1"),
                                          (19, 61, "d5"), (0, -193, "start zone A"), (0, 193, "start zone B"),
                                          (150, 0, "off the grid")])
def test_kang_squares_follow_the_spec_naming(x, y, square):
    assert kang_square(x, y) == square


def test_state_only_referee_reports_appear_move_leave_without_judging():
    ref = StateOnlyReferee("kang")
    first = ref.observe_stable(Observation(pieces=(pose("kang/small-1", 0, -193), pose("kang/large-1", 100, -193))), 1.0)
    assert [r.summary for r in first] == ["kang/large-1 appeared at start zone A (100, -193) mm",
                                          "kang/small-1 appeared at start zone A (0, -193) mm"]
    jitter = ref.observe_stable(Observation(pieces=(pose("kang/small-1", 1, -192), pose("kang/large-1", 100, -193))), 2.0)
    assert jitter == []
    later = ref.observe_stable(Observation(pieces=(pose("kang/small-1", -20, -101),)), 3.0)
    assert [r.summary for r in later] == ["kang/small-1 moved from start zone A (1, -192) mm to c1 (-20, -101) mm",
                                          "kang/large-1 left start zone A (100, -193) mm"]
    assert all(r.legal is None and NO_ENGINE in r.rule for r in first + later)
    assert later[0].details["distance_mm"] == pytest.approx(93.5, abs=0.1)
    state = ref.state_json()
    assert state["note"] == NO_ENGINE and [p["where"] for p in state["pieces"]] == ["c1 (-20, -101) mm"]


def test_registry_picks_the_rules_engine_where_there_is_one():
    kang = make_referee("kang")
    tornado = make_referee("tornado", course="splashway", weights={"tornado/boat-1": 3.0})
    assert tornado.game == "tornado" and kang.game == "kang"
    # the weights given must reach whichever referee rules Tornado (not only when it is one class)
    assert tornado.state_json()["weights"]["tornado/boat-1"] == 3.0
    with pytest.raises(RefcamError, match="chess"):
        make_referee("chess")


def test_boat_weights():
    assert parse_weights("boat-1=3, tornado/boat-2=1.5,") == {"tornado/boat-1": 3.0, "tornado/boat-2": 1.5}
    assert parse_weights(None) == {} and parse_weights("") == {}
    for bad, needle in (("boat-1", "NAME=NUMBER"), ("boat-9=1", "boat-9"), ("boat-1=x", "'x' of boat-1 .* is not a number"),
                        ("boat-1=-2", ">= 0"), ("boat-1=nan", "finite"), ("boat-1=3,tornado/boat-1=4", "two weights")):
        with pytest.raises(RefcamError, match=needle):
            parse_weights(bad)
