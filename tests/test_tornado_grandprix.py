"""Grand Prix Mode: three races, points and totals; a race result with two boats in one place is refused."""

import pytest

from referee.errors import InvalidInputError
from referee.tornado.rounds import GrandPrix, check_race_result


def test_grand_prix_totals_over_three_races():
    gp = GrandPrix()
    gp.add_race({"tornado/boat-1": 1, "tornado/boat-2": 2, "tornado/boat-3": 3, "tornado/boat-4": 4})
    gp.add_race({"tornado/boat-2": 1, "tornado/boat-1": 2, "tornado/boat-3": 3, "tornado/boat-4": 4})
    gp.add_race({"tornado/boat-3": 1, "tornado/boat-1": 2, "tornado/boat-2": 3, "tornado/boat-4": 4})
    assert gp.totals() == {"tornado/boat-1": 11, "tornado/boat-2": 10, "tornado/boat-3": 9, "tornado/boat-4": 0}
    assert gp.over and gp.leaders() == ["tornado/boat-1"]


def test_two_boats_in_one_place_is_refused():
    gp = GrandPrix()
    with pytest.raises(InvalidInputError, match="boat-1 and tornado/boat-2 both in place 1"):
        gp.add_race({"tornado/boat-1": 1, "tornado/boat-2": 1, "tornado/boat-3": 3})
    assert gp.races == []


def test_eliminated_boats_share_last_place():
    check_race_result({"a": 1, "b": 2, "c": 4, "d": 4}, eliminated=("c", "d"))
    with pytest.raises(InvalidInputError):
        check_race_result({"a": 1, "b": 2, "c": 4, "d": 4}, eliminated=("c",))
