"""View diagrams: referee.game.diagram() and the Kayak Chaos river diagram in its view."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace

from referee.game import Shape, diagram
from referee.kayak import actions as A
from referee.kayak.explain import explain
from referee.kayak.game import GAME as KAYAK
from referee.kayak.position import from_text
from referee.kayak.river import space_centre
from referee.kayak.rules import apply
from referee.kayak.tiles import DOUBLE, FINISH, ROCK, START, tile_book

BOOK = tile_book()


def _roles(d: dict) -> Counter:
    return Counter((s["kind"], s["role"]) for s in d["shapes"])


def test_diagram_carries_shapes_legend_caption_unit_and_box():
    shapes = [Shape("polygon", ((0, 0), (10, 0), (10, 10)), "zone-1", legend="zone"),
              Shape("circle", ((5, 5),), "player-1", radius_mm=2, legend="coach A"),
              Shape("polygon", ((20, 0), (30, 0), (30, 10)), "zone-2", legend="zone"),  # same words: one entry
              Shape("label", ((5, 12),), "info", text="a1")]
    d = diagram(shapes, ["turn 3", "A to move"], unit_mm=10, box=(-1, -2, 31, 13))
    assert d["shapes"] == [s.to_json() for s in shapes]
    assert d["legend"] == [{"role": "zone-1", "text": "zone"}, {"role": "player-1", "text": "coach A"}]
    assert d["caption"] == ["turn 3", "A to move"]
    assert d["unit_mm"] == 10.0 and d["box"] == [-1, -2, 31, 13]
    assert json.loads(json.dumps(d)) == d
    bare = diagram([], ())
    assert bare == {"shapes": [], "legend": [], "caption": []}


def _count_cells(pos, wanted: str) -> int:
    return sum(row.count(wanted) for rt in pos.tiles for row in BOOK.lying(rt))


def test_kayak_view_draws_tiles_cells_rocks_doubles_and_kayaks():
    pos = from_text("0A/4A/1Ar+1 1@2.2.1,2@1.0.2,3@0.1.1")
    state = replace(KAYAK.new_state({}), position=pos, turns=4)
    view = KAYAK.view(state).to_json()
    assert view["kind"] == "river" and view["data"]["text"] == pos.text()  # the existing keys stay
    d = view["data"]["diagram"]
    roles = _roles(d)
    tiles = len(pos.tiles)
    assert roles[("polygon", "water")] == tiles
    assert roles[("line", "grid")] == tiles * (BOOK.lanes - 1 + BOOK.rows - 1)
    assert roles[("polygon", "rock")] == _count_cells(pos, ROCK) > 0
    assert roles[("polygon", "double")] == _count_cells(pos, DOUBLE) // 2 > 0
    assert roles[("polygon", "start")] == _count_cells(pos, START) == BOOK.lanes
    assert roles[("polygon", "finish")] == _count_cells(pos, FINISH) == 0
    circles = [s for s in d["shapes"] if s["kind"] == "circle"]
    assert sorted(s["role"] for s in circles) == ["player-1", "player-2", "player-3"]
    for pawn, space in pos.kayaks:
        x, y = space_centre(BOOK, pos, space)
        disc = next(s for s in circles if s["role"] == f"player-{pawn}")
        assert disc["points"] == [[round(x, 2), round(y, 2)]]
    labels = {s["text"] for s in d["shapes"] if s["kind"] == "label"}
    assert {"0A Start", "4A", "1A turned", "1", "2", "3"} <= labels
    assert not any(s["kind"] == "arrow" for s in d["shapes"])  # no turn explained yet
    assert d["caption"][0] == "turn 4" and d["unit_mm"] == BOOK.space_mm
    assert {e["text"] for e in d["legend"]} >= {"water", "rock", "double space", "Start space", "kayak 1"}
    json.dumps(view)


def test_kayak_diagram_shows_each_action_of_the_last_turn_as_an_arrow():
    before = from_text("0A/4A/1A 1@0.1.1,2@0.1.3")
    mid = apply(before, A.Paddle(1, "down"), BOOK).position
    after = apply(mid, A.Swerve(1, "right"), BOOK).position
    verdict = explain(before, after, BOOK)
    assert verdict.legal
    state = replace(KAYAK.new_state({}), position=after, last=verdict, turns=1)
    d = KAYAK.view(state).to_json()["data"]["diagram"]
    arrows = [s for s in d["shapes"] if s["kind"] == "arrow"]
    assert arrows and all(s["role"] == "legal" for s in arrows)
    reading = verdict.readings[0]
    assert len(arrows) == len(reading.actions)  # one kayak moved by each action
    assert arrows[0]["points"][0] == [round(v, 2) for v in space_centre(BOOK, before, before.where(1))]
    assert arrows[-1]["points"][-1] == [round(v, 2) for v in space_centre(BOOK, after, after.where(1))]
    assert [s["text"] for s in d["shapes"] if s["kind"] == "label" and s["role"] == "legal"] == \
        [str(n) for n in range(1, len(arrows) + 1)]
    assert any(line.startswith("last turn: ") for line in d["caption"])


def test_kayak_diagram_draws_a_moved_tile_and_an_illegal_turn():
    before = from_text("0A/4A/1A 1@0.1.1")
    shifted = apply(before, A.WeatherShift(4, "left"), BOOK).position
    verdict = explain(before, shifted, BOOK)
    d = KAYAK.view(replace(KAYAK.new_state({}), position=shifted, last=verdict, turns=1)).to_json()["data"]["diagram"]
    arrows = [s for s in d["shapes"] if s["kind"] == "arrow"]
    length = BOOK.tile_length_mm
    assert [a["points"] for a in arrows] == [[[length, 0.0], [length, BOOK.space_mm]]]
    # a kayak that jumped four rows in one turn: illegal, drawn as an illegal arrow
    far = from_text("0A/4A/1A 1@1.1.1")
    wrong = explain(before, far, BOOK)
    assert not wrong.legal
    d = KAYAK.view(replace(KAYAK.new_state({}), position=far, last=wrong, turns=1)).to_json()["data"]["diagram"]
    arrows = [s for s in d["shapes"] if s["kind"] == "arrow"]
    assert arrows and all(s["role"] == "illegal" for s in arrows)
    assert arrows[-1]["points"][-1] == [round(v, 2) for v in space_centre(BOOK, far, far.where(1))]
    assert any("illegal" in line.lower() for line in d["caption"])


def test_kayak_view_before_any_river_has_an_empty_diagram_that_says_why():
    d = KAYAK.view(KAYAK.new_state({})).to_json()["data"]["diagram"]
    assert d["shapes"] == [] and d["caption"] == ["no river seen yet"]
    blocked = replace(KAYAK.new_state({}), cannot_tell="the Start tile is not in view")
    assert KAYAK.view(blocked).to_json()["data"]["diagram"]["caption"] == ["cannot tell: the Start tile is not in view"]


# --- Kang: the board diagram from the board view's data (referee/kang/diagram.py) ---------------

KANG_SQUARE_MM = 42.0
KANG_DATA = {  # the board view's data, as KangGame.view gives it
    "files": list("abcdef"), "rows": 6, "pending": "", "moves": ["A b0-b1-b2", "B c7-c6^-c5-c4"],
    "board": ["m.....", "......", "..l...", "..s...", ".m....", "......"],
    "start_zone": {"A": {"s": 2, "m": 1, "l": 2}, "B": {"s": 1, "m": 2, "l": 1}},
    "alfalfa": {"A": 1, "B": 0}, "to_move": "A", "no_score": {"A": True, "B": False}, "winner": None,
    "position": "m5/6/2l3/2s3/1m4/6 smll sml A 1-0 A",
    "last_move": {"notation": "c7-c6^-c5-c4xd1", "coach": "B", "path": ["c7", "c6", "c5", "c4"], "kick": "d1",
                  "exits": False},
    "illegal_on_board": False,
}


def test_kang_board_diagram_squares_zones_counts_turn_and_last_move():
    from referee.kang.diagram import board_diagram

    a = KANG_SQUARE_MM
    d = board_diagram(KANG_DATA, a)
    roles = _roles(d)
    assert roles[("polygon", "surface")] == 36 and roles[("line", "grid")] == 14
    labels = [s["text"] for s in d["shapes"] if s["kind"] == "label"]
    assert all(name in labels for name in "abcdef123456")
    # kangaroos: four on the board, plus one disc per size waiting in each start zone, sized by size
    on_board = [s for s in d["shapes"] if s["kind"] == "circle" and s["role"] == "piece" and " on " in s["text"]]
    assert sorted(s["text"].split()[0] for s in on_board) == ["large", "medium", "medium", "small"]
    radius = {s["text"].split()[0]: s["radius_mm"] for s in on_board}
    assert radius["small"] < radius["medium"] < radius["large"]
    assert {"×2", "×1"} <= set(labels) and labels.count("×2") == 3 and labels.count("×1") == 3
    assert roles[("polygon", "zone-1")] == 1 and roles[("polygon", "zone-2")] == 1
    to_move = [s for s in d["shapes"] if s["role"] == "highlight" and s["kind"] == "polygon"]
    assert len(to_move) == 1 and to_move[0]["text"] == "A to move"
    assert to_move[0]["points"][0][1] < -3 * a  # coach A's zone is south of the board
    assert "A · alfalfa 1 · may not score · to move" in labels and "B · alfalfa 0" in labels
    # the last move: an arrow through the centres of the squares it crossed, a kick, a jump marked
    path = next(s for s in d["shapes"] if s["kind"] == "arrow" and s["role"] == "path")
    c = -0.5 * a  # file c's centre x (files a-f centred on 0)
    assert path["points"][1:] == [[c, 2.5 * a], [c, 1.5 * a], [c, 0.5 * a]]
    assert path["points"][0][0] == c and path["points"][0][1] > 3 * a  # entered from B's start zone
    kick = next(s for s in d["shapes"] if s["kind"] == "arrow" and s["role"] == "highlight")
    assert kick["points"] == [[c, 0.5 * a], [0.5 * a, -2.5 * a]]
    jumps = [s for s in d["shapes"] if s["kind"] == "circle" and s["role"] == "highlight"]
    assert [j["points"] for j in jumps] == [[[c, 2.5 * a]]]
    assert d["caption"][:3] == ["A to move", "alfalfa: A 1, B 0", "last move: B c7-c6^-c5-c4xd1"]
    assert {e["text"] for e in d["legend"]} >= {"start zone A", "start zone B", "to move", "last move",
                                                 "kicked kangaroo", "jumped from here"}
    json.dumps(d)


def test_kang_board_diagram_before_a_board_and_at_the_end():
    from referee.kang.diagram import board_diagram

    empty = board_diagram({"files": list("abcdef"), "rows": 6, "pending": "a hand in view", "moves": [],
                           "illegal_on_board": False}, KANG_SQUARE_MM)
    assert not any(s["kind"] in ("circle", "arrow") for s in empty["shapes"])
    assert empty["caption"] == ["no board seen yet", "cannot tell: a hand in view"]
    won = board_diagram({**KANG_DATA, "winner": "B", "to_move": "A", "alfalfa": {"A": 1, "B": 3}}, KANG_SQUARE_MM)
    assert won["caption"][0] == "B wins with 3 alfalfa"
    assert not any(s["role"] == "highlight" and s["kind"] == "polygon" for s in won["shapes"])  # nobody to move


def test_kang_view_carries_its_board_diagram():
    from referee.kang.game import GAME as KANG, KangState
    from referee.kang.moves import legal_moves, push
    from referee.kang.position import Position

    start = Position.start()
    move = legal_moves(start)[0]
    after = push(start, move)
    view = KANG.view(KangState(position=after, last=move, last_coach="A")).to_json()
    assert view["kind"] == "board" and view["data"]["board"] == after.rows()  # the existing keys stay
    d = view["data"]["diagram"]
    roles = _roles(d)
    assert roles[("polygon", "surface")] == 36 and roles[("polygon", "zone-1")] == roles[("polygon", "zone-2")] == 1
    board_discs = [s for s in d["shapes"] if s["kind"] == "circle" and " on " in s.get("text", "")]
    assert len(board_discs) == 1  # one kangaroo has entered the board
    path = next(s for s in d["shapes"] if s["kind"] == "arrow" and s["role"] == "path")
    assert len(path["points"]) == len(move.path)
    assert d["caption"][0] == "B to move" and d["unit_mm"] == KANG.geometry.square_mm
