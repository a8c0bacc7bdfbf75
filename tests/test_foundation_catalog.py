"""The catalog data file holds every row of SPEC section 2, and its ids never collide."""

import json

import pytest

from referee.catalog import Catalog, DEFAULT_CATALOG_PATH, check_game, default_catalog
from referee.errors import CatalogError, UnknownNameError


@pytest.fixture(scope="module")
def catalog():
    return default_catalog()


# (id, piece, slot, size, centre in the piece frame, height) straight from SPEC section 2
SPEC_ROWS = [
    (0, "table/corner-1", "main", 40, (20, 20), 0),
    (3, "table/corner-4", "main", 40, (20, 20), 0),
    (10, "kang/board", "SW", 30, (-145, -145), 2),
    (12, "kang/board", "NE", 30, (145, 145), 2),
    (20, "kang/small-1", "front", 16, (0, 0), 2),
    (31, "kang/large-4", "front", 16, (0, 0), 2),
    (32, "kang/small-1", "back", 16, (0, 0), 2),
    (43, "kang/large-4", "back", 16, (0, 0), 2),
    (44, "kang/alfalfa-1", "main", 16, (0, 0), 2),
    (100, "kayak/tile-0", "A-upstream", 30, (-55, 0), 2),
    (107, "kayak/tile-1", "B-downstream", 30, (55, 0), 2),
    (131, "kayak/tile-7", "B-downstream", 30, (55, 0), 2),
    (140, "kayak/pawn-1", "main", 16, (0, 0), 15),
    (600, "kayak/card-01", "main", 20, (0, 0), 0.3),
    (653, "kayak/card-54", "main", 20, (0, 0), 0.3),
    (200, "tornado/boat-1", "main", 16, (0, 0), 5),
    (215, "tornado/character-6", "face-up", 20, (0, 0), 0.3),
    (225, "tornado/character-6", "face-down", 20, (0, 0), 0.3),
    (232, "tornado/curve-marker-3", "main", 20, (0, 0), 2),
    (240, "tornado/curve-card-1", "left-turn", 30, (120, 0), 0.3),
    (251, "tornado/curve-card-6", "right-turn", 30, (120, 0), 0.3),
    (260, "tornado/start-gate", "left", 30, (0, 150), 1),
    (263, "tornado/finish-line", "right", 30, (0, -150), 1),
    (267, "tornado/course-tool-2", "front", 30, (260, 0), 1),
    (300, "tornado/card-1-01", "rear", 16, (-41, 0), 0.3),
    (301, "tornado/card-1-01", "front", 16, (41, 0), 0.3),
    (300 + 40 * 5 + 2 * 19 + 1, "tornado/card-6-20", "front", 16, (41, 0), 0.3),
]


@pytest.mark.parametrize("marker_id,piece,slot,size,centre,height", SPEC_ROWS)
def test_spec_rows(catalog, marker_id, piece, slot, size, centre, height):
    s = catalog.sticker(marker_id)
    assert (s.piece, s.slot, s.size_mm, (s.x_mm, s.y_mm), s.top_z_mm) == (piece, slot, size, centre, height)


def test_id_ranges_are_complete_and_reserved_ids_unused(catalog):
    ids = catalog.known_ids()
    expected = set(range(0, 4)) | set(range(10, 14)) | set(range(20, 49)) | set(range(100, 132)) \
        | set(range(140, 144)) | set(range(600, 654)) | set(range(200, 206)) | set(range(210, 216)) \
        | set(range(220, 226)) | set(range(230, 233)) | set(range(240, 252)) | set(range(260, 268)) \
        | set(range(300, 540))
    assert ids == expected
    assert not any(654 <= i <= 999 for i in ids)


def test_kang_tokens_sit_higher_on_the_board(catalog):
    s = catalog.sticker(24)
    assert catalog.sticker_top_z(s) == 2
    assert catalog.sticker_top_z(s, resting_on="kang/board") == 4


def test_kayak_tile_id_formula(catalog):
    # SPEC: 100 + 4k + 2*side + end
    for k in range(8):
        for side_i, side in enumerate("AB"):
            for end_i, end in enumerate(("upstream", "downstream")):
                s = catalog.sticker(100 + 4 * k + 2 * side_i + end_i)
                assert (s.piece, s.slot) == (f"kayak/tile-{k}", f"{side}-{end}")


def test_kayak_layouts_are_well_formed(catalog):
    for piece in catalog.pieces(family="kayak/tile"):
        for side, rows in piece.attrs["layout"].items():
            assert len(rows) == 4 and all(len(r) == 5 and set(r) <= set(".RDSF") for r in rows), piece.name
            for lane in range(5):  # a double space is two rows long in one lane
                col = "".join(r[lane] for r in rows)
                assert col.count("D") % 2 == 0 and ("D" not in col or "DD" in col), (piece.name, side, lane)
    assert set(catalog.piece("kayak/tile-0").attrs["layout"]["A"][0]) == {"S"}
    assert set(catalog.piece("kayak/tile-7").attrs["layout"]["B"][3]) == {"F"}


def test_racing_card_kinds_fit_the_card(catalog):
    H = catalog.piece("tornado/card-1-01").footprint["size_mm"][0]
    for piece in catalog.pieces(family="tornado/racing-card"):
        kind = catalog.racing_card_kind(piece.attrs["kind"])
        assert 1 <= len(kind["spaces"]) <= 3
        for sp in kind["spaces"]:
            assert -H / 2 < sp["centre_x"] < sp["bracket_x"] <= H / 2


def test_sticker_corners_follow_opencv_order(catalog):
    tl, tr, br, bl = catalog.sticker(260).corners_local()
    assert tr[0] > tl[0] and tl[1] > bl[1] and br == (tr[0], bl[1])


def test_duplicate_id_is_refused():
    data = json.loads(DEFAULT_CATALOG_PATH.read_text())
    data["families"][0]["pieces"][1]["ids"]["main"] = 0
    with pytest.raises(CatalogError, match="id 0"):
        Catalog(data)


def test_negative_size_is_refused():
    data = json.loads(DEFAULT_CATALOG_PATH.read_text())
    data["families"][0]["sticker_mm"] = -4
    with pytest.raises(CatalogError, match="sticker size"):
        Catalog(data)


def test_unknown_names(catalog):
    with pytest.raises(UnknownNameError, match="kang/giant-1"):
        catalog.piece("kang/giant-1")
    with pytest.raises(UnknownNameError, match="chess"):
        check_game("chess")
    assert check_game("all", allow_all=True) == "all"


def test_unreadable_catalog(tmp_path):
    bad = tmp_path / "c.json"
    bad.write_text("{not json")
    with pytest.raises(CatalogError, match="not JSON"):
        Catalog.load(bad)
