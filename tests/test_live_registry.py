"""Which game rules which table, the state-only game, and boat weights from the command line."""

import pytest

from referee.board_squares import square_name
from referee.errors import RefcamError
from referee.observation import Observation
from referee.registry import get_game
from referee.state_only import NO_ENGINE, StateOnlyGame
from referee.tornado.standings import parse_weights

from tests.live_helpers import pose


@pytest.mark.parametrize("x, y, square", [(-100, -100, "a1"), (100, 100, "f6"), (-20, -101, "c1"),
                                          (19, 61, "d5"), (0, -193, "start zone A"), (0, 193, "start zone B"),
                                          (150, 0, "off the grid")])
def test_kang_squares_follow_the_spec_naming(x, y, square):
    assert square_name("kang", x, y) == square


def test_state_only_game_reports_appear_move_leave_without_judging():
    game = StateOnlyGame("kang", "Kang")  # what a game without a rules engine gets
    state = game.new_state({})
    first = game.step(state, Observation(pieces=(pose("kang/small-1", 0, -193), pose("kang/large-1", 100, -193))), 1.0)
    assert [r.summary for r in first.rulings] == ["kang/large-1 appeared at start zone A (100, -193) mm",
                                                  "kang/small-1 appeared at start zone A (0, -193) mm"]
    jitter = game.step(first.state, Observation(pieces=(pose("kang/small-1", 1, -192),
                                                        pose("kang/large-1", 100, -193))), 2.0)
    assert jitter.rulings == ()
    later = game.step(jitter.state, Observation(pieces=(pose("kang/small-1", -20, -101),)), 3.0)
    assert [r.summary for r in later.rulings] == ["kang/small-1 moved from start zone A (1, -192) mm to c1 (-20, -101) mm",
                                                  "kang/large-1 left start zone A (100, -193) mm"]
    assert all(r.legal is None and NO_ENGINE in r.rule for r in first.rulings + later.rulings)
    assert later.rulings[0].details["distance_mm"] == pytest.approx(93.5, abs=0.1)
    view = game.view(later.state)
    assert view.kind == "pieces"
    assert view.data["note"] == NO_ENGINE and [p["where"] for p in view.data["pieces"]] == ["c1 (-20, -101) mm"]


def test_registry_gives_each_game_its_settings():
    kang = get_game("kang")
    tornado = get_game("tornado")
    assert tornado.id == "tornado" and kang.id == "kang"
    state = tornado.new_state({"course": "splashway", "weights": {"tornado/boat-1": 3.0}})
    assert tornado.view(state).data["weights"]["tornado/boat-1"] == 3.0
    with pytest.raises(RefcamError, match="chess"):
        get_game("chess")


def test_boat_weights():
    assert parse_weights("boat-1=3, tornado/boat-2=1.5,") == {"tornado/boat-1": 3.0, "tornado/boat-2": 1.5}
    assert parse_weights(None) == {} and parse_weights("") == {}
    for bad, needle in (("boat-1", "NAME=NUMBER"), ("boat-9=1", "boat-9"), ("boat-1=x", "'x' of boat-1 .* is not a number"),
                        ("boat-1=-2", ">= 0"), ("boat-1=nan", "finite"), ("boat-1=3,tornado/boat-1=4", "two weights")):
        with pytest.raises(RefcamError, match=needle):
            parse_weights(bad)
