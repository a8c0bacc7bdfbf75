"""Turn rules (referee/tornado/turns.py): boost, move length, front-most card, out of
bounds while cards may be replaced, turn order, the empty deck, hidden boats."""

from referee.tornado.turns import (CANNOT_TELL, SECTION_BOOST, SECTION_EMPTY_DECK, SECTION_LESS, SECTION_LIMIT,
                                   SECTION_ORDER, SECTION_OUT, boost_call, front_card_call, hidden_boat_warnings,
                                   move_length_call, out_of_bounds_call, pickup_call, turn_order_call)


def test_boost_allows_four_spaces_once():
    boosting, problem = boost_call("face-up", "face-down", "tornado/boat-2")
    assert boosting and problem is None
    assert move_length_call("tornado/boat-2", 4, boosting).verdict == "ok"
    assert move_length_call("tornado/boat-2", 5, boosting).section == SECTION_BOOST
    used, _ = boost_call("face-down", "face-down", "tornado/boat-2")
    assert not used and move_length_call("tornado/boat-2", 4, used).section == SECTION_LIMIT


def test_character_card_turned_back_up_is_a_violation():
    _, problem = boost_call("face-down", "face-up", "tornado/boat-2")
    assert problem.verdict == "violation" and problem.section == SECTION_BOOST


def test_token_ends_on_its_front_most_card_no_more_cards_than_needed():
    route = ["tornado/card-1-01", "tornado/card-1-06", "tornado/card-1-11"]
    assert front_card_call("tornado/boat-1", route, "tornado/card-1-11").verdict == "ok"
    call = front_card_call("tornado/boat-1", route, "tornado/card-1-06")
    assert call.verdict == "violation" and call.section == SECTION_LESS and "card-1-11" in call.summary


def test_card_off_the_table_waits_until_the_token_moves():
    pending = out_of_bounds_call("tornado/boat-3", ["tornado/card-3-04"], token_moved=False)
    assert pending.verdict == CANNOT_TELL and pending.legal is None
    out = out_of_bounds_call("tornado/boat-3", ["tornado/card-3-04"], token_moved=True)
    assert out.verdict == "violation" and out.section == SECTION_OUT and "eliminated" in out.summary
    assert out_of_bounds_call("tornado/boat-3", [], token_moved=True).verdict == "ok"


def test_action_phase_in_ranking_order_with_passes_allowed():
    order = ["tornado/boat-2", "tornado/boat-1", "tornado/boat-3"]
    # boat-2 passes (0 spaces): boat-1 acting first is not yet out of order
    assert turn_order_call(order, [], ["tornado/boat-1"]).verdict == "ok"
    late = turn_order_call(order, ["tornado/boat-3"], ["tornado/boat-1"])
    assert late.verdict == "violation" and late.section == SECTION_ORDER and "boat-3" in late.summary


def test_turns_seen_together_are_ordered_by_the_rounds_ranking():
    # Action Phase: turns go down the ranking, so two boats' turns seen in one still table
    # took place in turn order: boat-2, then boat-1 (whatever order they are named in)
    order = ["tornado/boat-2", "tornado/boat-1", "tornado/boat-3"]
    call = turn_order_call(order, [], ["tornado/boat-1", "tornado/boat-2"])
    assert call.verdict == "ok" and call.summary.endswith("in this round's turn order: boat-2, then boat-1")


def test_empty_deck_rearmost_card_first():
    route = ["tornado/card-4-01", "tornado/card-4-07", "tornado/card-4-12"]
    assert pickup_call("tornado/boat-4", route, ["tornado/card-4-01"]).verdict == "ok"
    wrong = pickup_call("tornado/boat-4", route, ["tornado/card-4-12"])
    assert wrong.verdict == "violation" and wrong.section == SECTION_EMPTY_DECK and "card-4-01" in wrong.summary


def test_hidden_boat_is_named_not_dropped():
    out = hidden_boat_warnings(["tornado/boat-1", "tornado/boat-6"], ["tornado/boat-1"])
    assert out == ["boat-6 not seen: under a hand?"]
