"""Kayak Chaos rules engine: the data-driven case table and a seeded random playout."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from referee.kayak import actions as A
from referee.kayak.errors import IllegalActionError, KayakError, NeedsNewTileError
from referee.kayak.explain import explain
from referee.kayak.playout import play_game
from referee.kayak.position import from_text, rule_breaches, to_text, validate, winners
from referee.kayak.rules import apply, check_turn, is_legal
from referee.kayak.tiles import ROCK, RiverTile, tile_book
from tests.kayak_tools import findable

CASES = json.loads((Path(__file__).parent / "data" / "kayak_cases.json").read_text())["cases"]
BOOK = tile_book()


def _supply(texts):
    return tuple(from_text(f"0A/{t} -").tiles[1] for t in texts or ())


def test_case_table_covers_every_rulebook_section():
    sections = {c["rulebook"] for c in CASES}
    for needed in ("Turns", "The River", "Double Spaces", "Rocks", "Paddle Cards", "Double Paddle Cards",
                   "Swerve Cards", "Double Swerve Cards", "Weather Shift Cards", "Tip the Kayak Cards",
                   "Whirlpool Cards", "Life Ring Cards", "Pushing Kayaks", "Game End", "Advanced Rules"):
        assert needed in sections, needed
    assert len(CASES) >= 30


@pytest.mark.parametrize("case", [c for c in CASES if c["kind"] == "apply"], ids=lambda c: c["name"])
def test_apply_case(case):
    pos = from_text(case["position"])
    action = A.parse(case["action"])
    assert A.parse(A.words(action)) == action
    supply = _supply(case.get("supply"))
    if "expect_illegal" in case:
        with pytest.raises(IllegalActionError) as err:
            apply(pos, action, BOOK, supply)
        assert err.value.rule.section == case["expect_illegal"], str(err.value)
        assert not is_legal(pos, action, BOOK, supply)
    elif "expect_new_tile_by" in case:
        with pytest.raises(NeedsNewTileError) as err:
            apply(pos, action, BOOK, supply)
        assert err.value.placer == case["expect_new_tile_by"]
    else:
        out = apply(pos, action, BOOK, supply)
        assert to_text(out.position) == case["expect_after"]
        assert winners(out.position, BOOK) == ([case["expect_winner"]] if "expect_winner" in case else [])


@pytest.mark.parametrize("case", [c for c in CASES if c["kind"] == "turn"], ids=lambda c: c["name"])
def test_turn_case(case):
    broken = check_turn(tuple(A.parse(a) for a in case["actions"]), case["advanced"])
    assert sorted({s for s, _ in broken}) == case["expect_broken"]


@pytest.mark.parametrize("case", [c for c in CASES if c["kind"] == "explain"], ids=lambda c: c["name"])
def test_explain_case(case):
    before, after = from_text(case["before"]), from_text(case["after"]) if " " in case["after"] else None
    if after is None:
        after = from_text(case["after"] + " -")
    cards = Counter(case.get("cards", [])) or None
    got = explain(before, after, BOOK, advanced=case["advanced"], cards=cards)
    readings = [[A.words(a) for a in r.actions] for r in got.readings]
    for want in case.get("expect_readings_include", []):
        assert want in readings, (want, readings)
    for unwanted in case.get("expect_readings_exclude", []):
        assert unwanted not in readings
    if "expect_illegal" in case:
        assert not got.legal
        assert {s for r in got.readings for s, _ in r.breaches} >= set(case["expect_illegal"]), got.summary()
    else:
        assert got.legal, got.summary()


@pytest.mark.parametrize("case", [c for c in CASES if c["kind"] == "state"], ids=lambda c: c["name"])
def test_bad_state_case(case):
    text = case["position"] if " " in case["position"] else case["position"] + " -"
    with pytest.raises(KayakError) as err:
        from_text(text)
    assert case["expect_error"] in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("case", [c for c in CASES if c["kind"] == "breach"], ids=lambda c: c["name"])
def test_position_breach_case(case):
    """A position that breaks a rule but could lie on the table parses, and names the rule."""
    pos = from_text(case["position"] if " " in case["position"] else case["position"] + " -")
    assert [s for s, _ in rule_breaches(pos, BOOK)] == ([case["expect_breach"]] if case["expect_breach"] else [])


def test_random_playout_1000_games():
    """OpenSpiel-style: 1,000 seeded games; invariants at every action, explain at every turn."""
    turns = found = 0
    for seed in range(1000):
        tiles_in_play = None
        for turn in play_game(seed, max_turns=4, book=BOOK, advanced=seed % 2 == 1):
            for pos in turn.positions:
                validate(pos, BOOK)  # a position: never two kayaks on one space
                assert rule_breaches(pos, BOOK) == (), (seed, to_text(pos))  # and one that breaks no rule
                spaces = [s for _, s in pos.kayaks]
                assert len(spaces) == len(set(spaces))
                assert all(BOOK.cell(pos.tiles[s.index], s.row, s.lane) != ROCK for s in spaces)
                assert from_text(to_text(pos)) == pos
                numbers = sorted(rt.tile for rt in pos.tiles)
                assert len(numbers) == len(set(numbers))
                if tiles_in_play is not None:  # tiles are conserved: only ever added at the end
                    assert set(tiles_in_play) <= set(numbers)
                tiles_in_play = numbers
            if turn.before == turn.after:
                continue
            turns += 1
            got = explain(turn.before, turn.after, BOOK, advanced=seed % 2 == 1)
            assert got.legal, (seed, to_text(turn.before), turn.actions, got.summary())
            if findable(turn):
                played = tuple(a for a in turn.actions if a.kind != "discard")
                assert played in [r.actions for r in got.readings], (seed, to_text(turn.before), played)
                found += 1
    assert turns > 2000 and found > turns // 2


def test_text_form_round_trips_random_rivers():
    rng = random.Random(7)
    for _ in range(200):
        tiles = [RiverTile(0, rng.choice("AB"))]
        for t in rng.sample(range(1, 7), rng.randint(0, 6)):
            tiles.append(RiverTile(t, rng.choice("AB"), rng.choice((0, 180)), tiles[-1].shift + rng.choice((-1, 0, 1))))
        text = "/".join(__import__("referee.kayak.position", fromlist=["tile_token"]).tile_token(rt) for rt in tiles) + " -"
        assert to_text(from_text(text)) == text


def test_catalog_has_every_tile_side_marked_as_defaults():
    from referee.catalog import default_catalog

    catalog = default_catalog()
    family = catalog.family("kayak/tile")
    assert family["layouts_are_defaults"] is True and "edit" in family["layout_note"]
    assert sorted(BOOK.layouts) == [(t, s) for t in range(8) for s in "AB"]
    assert BOOK.start == 0 and BOOK.finish == 7
    for (tile, side), rows in BOOK.layouts.items():
        assert len(rows) == BOOK.rows and all(len(r) == BOOK.lanes for r in rows)
    assert all(set(BOOK.layouts[(0, s)][0]) == {"S"} for s in "AB")
    assert all(set(BOOK.layouts[(7, s)][-1]) == {"F"} for s in "AB")


def test_catalog_edit_changes_the_rocks(tmp_path):
    """Layouts are read from the catalog, not from code: an edited copy moves a rock."""
    from referee.catalog import DEFAULT_CATALOG_PATH, Catalog
    from referee.kayak.tiles import TileBook

    data = json.loads(DEFAULT_CATALOG_PATH.read_text())
    family = next(f for f in data["families"] if f["family"] == "kayak/tile")
    family["pieces"][0]["layout"]["A"][2] = "R...."
    edited = TileBook(Catalog(data, "edited"))
    assert edited.cell(RiverTile(0, "A"), 2, 0) == ROCK and edited.cell(RiverTile(0, "A"), 2, 2) != ROCK
    assert [s for s, _ in rule_breaches(from_text("0A 1@0.2.0", edited), edited)] == ["Rocks"]
    assert rule_breaches(from_text("0A 1@0.2.0"), BOOK) == ()
