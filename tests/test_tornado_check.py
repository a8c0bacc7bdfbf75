"""One turn judged from two observation files (`refcam tornado check BEFORE AFTER`):
a named test per rule of issue 11, each from files written as vision writes them."""

import json

import pytest

from tests.tornado_pieces import card_name, observation, pose

GATE = pose("tornado/start-gate", 0, 0)
TABLE = [pose(f"table/corner-{k}", x, y) for k, (x, y) in enumerate([(-100, -300), (700, -300), (700, 300),
                                                                        (-100, 300)], start=1)]


def run_check(tmp_path, before, after):
    """The check on two observation files; its JSON document."""
    from tests.tornado_check_runner import check_files

    a, b = tmp_path / "before.json", tmp_path / "after.json"
    a.write_text(json.dumps(before.to_json()))
    b.write_text(json.dumps(after.to_json()))
    return check_files(str(a), str(b))


def card(deck, kind, x, y, theta=0.0, nth=0):
    return pose(card_name(deck, kind, nth), x, y, theta)


def verdicts(doc, rule):
    return [r["verdict"] for r in doc["rulings"] if r["section"] == rule or r["rule"].endswith(rule)]


def test_method_3_first_card_must_leave_the_boats_gate_space(tmp_path):
    before = observation(GATE, pose("tornado/boat-1", 0, 50))
    ok = run_check(tmp_path, before, observation(GATE, card(1, "straight-3", 77, 50), pose("tornado/boat-1", 113, 50)))
    assert ok["broken"] == []
    bad = run_check(tmp_path, before, observation(GATE, card(1, "straight-3", 77, 20), pose("tornado/boat-1", 113, 20)))
    assert bad["broken"] == ["Tornado Splash, Racing Card Placement Methods, Method 3: Coming Out the Starting Gate"]


def _on_card(deck=1):
    first = card(deck, "straight-1", 77, 0)
    return first, pose(f"tornado/boat-{deck}", 77, 0)


def test_method_1_centre_lines_connect_edge_to_edge(tmp_path):
    first, boat = _on_card()
    before = observation(GATE, first, boat)
    good = run_check(tmp_path, before, observation(GATE, first, card(1, "straight-1", 187, 0, nth=1),
                                                  pose("tornado/boat-1", 187, 0)))
    assert good["broken"] == []
    off = run_check(tmp_path, before, observation(GATE, first, card(1, "straight-1", 187, 18, nth=1),
                                                 pose("tornado/boat-1", 187, 18)))
    assert off["broken"] == ["Tornado Splash, Racing Card Placement Methods, Method 1: Accelerate"]


def test_method_2_turn_only_along_a_diagonal_at_its_angle(tmp_path):
    import math

    first, boat = _on_card()
    before = observation(GATE, first, boat)
    h = 30.0
    cx, cy = 132 + 55 * math.cos(math.radians(h)), 55 * math.sin(math.radians(h))
    doc = run_check(tmp_path, before, observation(GATE, first, card(1, "straight-1", cx, cy, h, nth=1),
                                                  pose("tornado/boat-1", cx, cy, h)))
    assert doc["broken"] == ["Tornado Splash, Racing Card Placement Methods, Method 2: Curve"]


def test_avoid_obstacles_shift_only_around_an_obstacle(tmp_path):
    first, boat = _on_card()
    rival = pose("tornado/boat-2", 190, -8)
    before = observation(GATE, first, boat, rival)
    shifted = run_check(tmp_path, before, observation(GATE, first, rival, card(1, "straight-1", 187, 40, nth=1),
                                                      pose("tornado/boat-1", 187, 40)))
    assert shifted["broken"] == []
    too_far = run_check(tmp_path, before, observation(GATE, first, rival, card(1, "straight-1", 187, 64, nth=1),
                                                      pose("tornado/boat-1", 187, 64)))
    assert "Tornado Splash, Avoid Obstacles" in too_far["broken"]


def test_no_card_over_a_curve_marker(tmp_path):
    first, boat = _on_card()
    marker = pose("tornado/curve-marker-1", 200, 0)
    doc = run_check(tmp_path, observation(GATE, first, boat, marker),
                    observation(GATE, first, marker, card(1, "straight-1", 187, 0, nth=1), pose("tornado/boat-1", 187, 0)))
    assert "Tornado Splash, Avoid Obstacles" in doc["broken"]


def test_unavailable_placement_starts_from_the_token_any_direction(tmp_path):
    first, boat = _on_card()
    cover = card(2, "straight-1", 132, 0, 90)  # boat-2's card over the whole front edge
    before = observation(GATE, first, boat, cover)
    import math
    h = 60.0
    cx, cy = 77 + 55 * math.cos(math.radians(h)), 55 * math.sin(math.radians(h))
    nxt = card(1, "straight-1", cx, cy, h, nth=1)
    doc = run_check(tmp_path, before, observation(GATE, first, cover, nxt))
    assert doc["broken"] == [] and verdicts(doc, "Racing Card Placement Methods") == ["ok"]


def test_token_ends_on_its_front_most_card(tmp_path):
    first, boat = _on_card()
    before = observation(GATE, first, boat)
    doc = run_check(tmp_path, before, observation(GATE, first, card(1, "straight-1", 187, 0, nth=1),
                                                  card(1, "straight-1", 297, 0, nth=2), pose("tornado/boat-1", 187, 0)))
    assert "Tornado Splash, Moving Less Than 3 Spaces" in doc["broken"]


def test_boost_allows_four_spaces_once(tmp_path):
    first, boat = _on_card()
    up, down = pose("tornado/character-1", 0, -200, face="face-up"), pose("tornado/character-1", 0, -200, face="face-down")
    laid = [card(1, "straight-3", 187, 0), card(1, "straight-1", 297, 0, nth=1), pose("tornado/boat-1", 297, 0)]
    boosted = run_check(tmp_path, observation(GATE, first, boat, up), observation(GATE, first, down, *laid))
    assert boosted["broken"] == [] and "with its boost" in " ".join(r["summary"] for r in boosted["rulings"])
    plain = run_check(tmp_path, observation(GATE, first, boat, up), observation(GATE, first, up, *laid))
    assert plain["broken"] == ["Tornado Splash, Racing Card Limitation"]
    again = run_check(tmp_path, observation(GATE, first, boat, down), observation(GATE, first, up, *laid))
    assert "Tornado Splash, Boosting" in again["broken"]


def test_card_off_the_table_waits_for_the_token_then_eliminates(tmp_path):
    first, boat = _on_card()
    hanging = card(1, "straight-1", 187, 0, nth=1)
    table = [pose(f"table/corner-{k}", x, y) for k, (x, y) in
             enumerate([(-100, -300), (200, -300), (200, 300), (-100, 300)], start=1)]
    pending = run_check(tmp_path, observation(GATE, first, boat, *table), observation(GATE, first, boat, hanging, *table))
    assert pending["broken"] == [] and any("may still replace" in s for s in pending["cannot_tell"])
    out = run_check(tmp_path, observation(GATE, first, boat, *table),
                    observation(GATE, first, hanging, pose("tornado/boat-1", 187, 0), *table))
    assert "Tornado Splash, Out of Bounds" in out["broken"]


def test_card_replaced_before_the_token_moves_is_judged_afresh(tmp_path):
    first, boat = _on_card()
    import math
    wrong = card(1, "straight-1", 132 + 55 * math.cos(math.radians(20)), 55 * math.sin(math.radians(20)), 20, nth=1)
    right = card(1, "straight-1", 187, 0, nth=2)
    laid = run_check(tmp_path, observation(GATE, first, boat), observation(GATE, first, boat, wrong))
    assert laid["broken"] == ["Tornado Splash, Racing Card Placement Methods, Method 2: Curve"]
    fixed = run_check(tmp_path, observation(GATE, first, boat, wrong), observation(GATE, first, boat, right))
    assert fixed["broken"] == []


def test_turns_seen_together_are_each_legal_in_the_rounds_turn_order(tmp_path):
    # two boats each moved 1 space between the two tables: two turns seen together, each legal;
    # their order is the round's ranking, which matters only for finishing places
    f1, b1 = _on_card(1)
    f2 = card(2, "straight-1", 77, 80)
    b2 = pose("tornado/boat-2", 77, 80)
    after = observation(GATE, f1, f2, card(1, "straight-1", 187, 0, nth=1), card(2, "straight-1", 187, 80, nth=1),
                        pose("tornado/boat-1", 187, 0), pose("tornado/boat-2", 187, 80))
    doc = run_check(tmp_path, observation(GATE, f1, f2, b1, b2), after)
    assert doc["broken"] == [] and doc["cannot_tell"] == []
    assert any("seen together" in r["summary"] and r["verdict"] == "ok" for r in doc["rulings"])
    # both over the finish line between the two tables: which placed first cannot be told
    line = pose("tornado/finish-line", 200, 40, sigma=0.2)
    doc = run_check(tmp_path, observation(GATE, f1, f2, b1, b2, line), observation(*after.pieces, line))
    assert any(s.startswith("which of boat-1 and boat-2 crossed the finish line first") for s in doc["cannot_tell"])


def test_empty_deck_rearmost_card_comes_back_first(tmp_path):
    route = [card(1, "straight-1", 77 + 110 * i, 0, nth=i) for i in range(3)]
    boat = pose("tornado/boat-1", 297, 0)
    good = run_check(tmp_path, observation(GATE, *route, boat), observation(GATE, *route[1:], boat))
    assert good["broken"] == []
    bad = run_check(tmp_path, observation(GATE, *route, boat), observation(GATE, route[0], route[2], boat))
    assert bad["broken"] == ["Tornado Splash, When Your Deck is Empty"]


def test_hidden_boat_is_named(tmp_path):
    first, boat = _on_card()
    doc = run_check(tmp_path, observation(GATE, first, boat, pose("tornado/boat-6", 300, 100)),
                    observation(GATE, first, boat))
    assert "boat-6 not seen: under a hand?" in doc["warnings"]


@pytest.mark.parametrize("past,want", [(-6.0, False), (0.1, "too close to call"), (6.0, True)])
def test_finish_crossing_by_the_movement_space(tmp_path, past, want):
    finish_x = 400.0
    first, boat = _on_card()
    c = card(1, "straight-1", finish_x + past - 18, 0, nth=1)  # its one space's bracket is at +18
    doc = run_check(tmp_path, observation(GATE, first, boat, pose("tornado/finish-line", finish_x, 0, sigma=0.2)),
                    observation(GATE, first, c, pose("tornado/boat-1", c.x_mm, 0),
                                pose("tornado/finish-line", finish_x, 0, sigma=0.2)))
    assert doc["crossings"]["tornado/boat-1"]["crossed"] == want


# Player Token Placement (issue 21 item 6): a straight-1 card at x = 187 has its white bracket at
# 187 + 18 = 205 (catalog); a boat is 34 mm long, so its front is at x + 17. The token must lie
# wholly behind the bracket; the check and the live referee give one answer from one rule.
@pytest.mark.parametrize("boat_x, overlap", [(187, False), (188, False), (190, True), (193, True)])
def test_player_token_placement_same_answer_as_the_live_referee(tmp_path, boat_x, overlap):
    from referee.tornado.referee import TornadoReferee

    first, boat = _on_card()
    before = observation(GATE, first, boat)
    after = observation(GATE, first, card(1, "straight-1", 187, 0, nth=1), pose("tornado/boat-1", boat_x, 0))
    doc = run_check(tmp_path, before, after)
    assert verdicts(doc, "Player Token Placement") == ["violation" if overlap else "ok"]
    assert ("Tornado Splash, Player Token Placement" in doc["broken"]) is overlap
    live = TornadoReferee("tornado-circuit")
    live.observe_stable(before, 0.0)
    move = [r for r in live.observe_stable(after, 1.0) if r.kind == "move"]
    token = [v for v in move[0].details["violations"] if v["rule"] == "Tornado Splash, Player Token Placement"]
    assert (move[0].legal is False and len(token) == 1) if overlap else move[0].legal is True
    if overlap:
        assert f"by {boat_x + 17 - 205:.1f} mm" in token[0]["summary"]
