"""The placement guide after the sticker sheets: every component of every game has a
drawing (or, for a family of many alike cards, a drawing and its line in the id list), and
the sticker squares found on the rasterised page sit where the catalog places them, turned
the way it says, within 0.5 mm. No guide page holds a marker any detector can read (a
guide page on the table must not show every piece a second time)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from referee.catalog import DEFAULT_CATALOG_PATH, GAMES, default_catalog, use_catalog
from synth import printing
from synth.placement import MANY_PIECES

DPI = 300
MM_PER_PX = 25.4 / DPI


def rasterise(pdf_path, page: int) -> np.ndarray:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdf_path))
    try:
        return np.array(doc[page].render(scale=DPI / 72.0, grayscale=True).to_pil().convert("L"))
    finally:
        doc.close()


def page_text(pdf_path, page: int) -> str:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdf_path))
    try:
        return doc[page].get_textpage().get_text_range()
    finally:
        doc.close()


def detect_mm(gray: np.ndarray) -> dict[int, np.ndarray]:
    """Every marker OpenCV's detector reads on the page: id -> its (4, 2) corners in page mm."""
    import cv2

    d = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, default_catalog().dictionary))
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    corners, ids, _ = cv2.aruco.ArucoDetector(d, params).detectMarkers(gray)
    if ids is None:
        return {}
    # a pixel's centre lies half a pixel in from its top-left edge
    return {int(i): (c.reshape(4, 2) + 0.5) * MM_PER_PX for i, c in zip(ids.ravel(), corners)}


def drawn_square(gray: np.ndarray, near_mm, side_mm: float) -> tuple[np.ndarray, float, float]:
    """The drawn sticker square of side side_mm nearest near_mm on the page: (its centre in page
    mm, its side in mm, the angle of its top bar's direction, CCW from the page's +x, mod 360)."""
    import cv2

    ink = (gray < 100).astype(np.uint8)
    contours, _ = cv2.findContours(ink, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
    best = None
    for c in contours:
        (cx, cy), (w, h), _ = cv2.minAreaRect(c)
        side = (w + h) / 2 * MM_PER_PX
        if abs(w - h) * MM_PER_PX > 0.6 or abs(side - side_mm) > 0.6:
            continue
        centre = (np.array([cx, cy]) + 0.5) * MM_PER_PX
        gap = float(np.linalg.norm(centre - np.asarray(near_mm)))
        if best is None or gap < best[0]:
            best = (gap, centre, side)
    assert best is not None, f"no drawn {side_mm} mm square near {near_mm}"
    _, centre, side = best
    # the top bar: the darkest quarter strip inside the square says which edge is on top
    r = side / 2 / MM_PER_PX
    c = (centre / MM_PER_PX - 0.5)
    darkest = None
    for angle in (0, 90, 180, 270):  # CCW from the page's +x
        u = np.array([math.cos(math.radians(angle)), -math.sin(math.radians(angle))])  # image rows grow downward
        p = c + u * r * 0.88
        ink_there = 255 - float(gray[int(round(p[1])), int(round(p[0]))])
        if darkest is None or ink_there > darkest[0]:
            darkest = (ink_there, angle)
    return centre, side, float(darkest[1])


@pytest.fixture(scope="module")
def sheets(tmp_path_factory):
    out = tmp_path_factory.mktemp("guide")
    return {game: printing.write_game_sheet(game, out) for game in GAMES}


def test_every_component_of_every_game_has_a_page(sheets):
    catalog = default_catalog()
    for game, sheet in sheets.items():
        first = min(v.page for v in sheet.guide)
        assert first > max(s.page for s in sheet.stickers), "the guide follows the sheets"
        text = " ".join(page_text(sheet.path, p) for p in range(first, sheet.pages))
        drawn = {v.piece for v in sheet.guide}
        for piece in catalog.pieces(game) + catalog.pieces("table"):
            many = len(catalog.pieces(family=piece.family)) > MANY_PIECES
            if many:  # drawn once for the family; each card on the id list with its ids
                line = f"{piece.name.split('/')[-1]}"
                assert line in text, piece.name
                assert all(f"{s.slot} {s.marker_id}" in text for s in piece.stickers), piece.name
            else:
                assert piece.name in drawn and piece.name in text, piece.name
                views = [v for v in sheet.guide if v.piece == piece.name]
                assert {i for v in views for i in v.stickers} == set(piece.marker_ids), piece.name


CHECKED = [("kayak", "kayak/tile-0", "A"), ("kayak", "kayak/tile-3", "B"), ("tornado", "tornado/start-gate", None),
           ("tornado", "tornado/boat-1", None), ("tornado", "tornado/curve-card-2", "right-turn"),
           ("tornado", "tornado/card-1-01", None), ("kang", "kang/board", None), ("kang", "kang/small-1", "back"),
           ("kang", "table/corner-3", None)]


@pytest.mark.parametrize("game, piece, face", CHECKED)
def test_drawn_stickers_sit_at_the_catalog_offsets(sheets, game, piece, face):
    catalog = default_catalog()
    sheet = sheets[game]
    view = next(v for v in sheet.guide if v.piece == piece and v.face == face)
    gray = rasterise(sheet.path, view.page)
    ox, oy = view.origin_mm
    centres = {}
    for marker_id in view.stickers:
        st = catalog.sticker(marker_id)
        expected = (ox + st.x_mm * view.scale, oy - st.y_mm * view.scale)
        centre, side, top_deg = drawn_square(gray, expected, st.size_mm * view.scale)
        # page -> component frame: +x to the right, +y up the page, at the drawing's scale
        x_mm, y_mm = (centre[0] - ox) / view.scale, (oy - centre[1]) / view.scale
        assert math.hypot(x_mm - st.x_mm, y_mm - st.y_mm) < 0.5 / view.scale, (marker_id, x_mm, y_mm, st)
        assert abs(side - st.size_mm * view.scale) < 0.5
        # the top bar sits on the sticker's +y side: 90 degrees CCW from its +x (rot_deg)
        assert abs((top_deg - (st.rot_deg + 90) + 180) % 360 - 180) < 1.0, (marker_id, top_deg, st.rot_deg)
        centres[marker_id] = centre
    if len(view.stickers) > 1 and view.scale == 1.0:  # true scale: measure the spacing directly
        a, b = (centres[i] for i in list(view.stickers)[:2])
        sa, sb = (catalog.sticker(i) for i in list(view.stickers)[:2])
        assert abs(np.linalg.norm(a - b) - math.hypot(sa.x_mm - sb.x_mm, sa.y_mm - sb.y_mm)) < 0.5


@pytest.mark.parametrize("game", GAMES)
def test_no_guide_page_holds_a_readable_marker(sheets, game):
    """Before issue 20 the Tornado guide pages alone held 47 decodable markers, some at reduced scale."""
    import cv2

    from vision import detect

    catalog = default_catalog()
    sheet = sheets[game]
    first = min(v.page for v in sheet.guide)
    assert detect_mm(rasterise(sheet.path, 0)), "the sticker sheets themselves still read (the check can see markers)"
    for page in range(first, sheet.pages):
        gray = rasterise(sheet.path, page)
        assert detect_mm(gray) == {}, (game, page)
        found = detect.detect_all(cv2.cvtColor(gray, cv2.COLOR_GRAY2BGR), catalog)
        assert not found.detections and not found.unknown_ids, (game, page, found.unknown_ids)


def test_small_components_are_true_scale_and_big_ones_carry_a_scale(sheets):
    scales = {v.piece: v.scale for s in sheets.values() for v in s.guide}
    assert scales["tornado/boat-1"] == scales["kayak/tile-0"] == scales["tornado/card-1-01"] == 1.0
    assert scales["kang/board"] < 1.0 and scales["tornado/course-tool-1"] < 1.0
    text = page_text(sheets["kang"].path, next(v.page for v in sheets["kang"].guide if v.piece == "kang/board"))
    assert "= 50 mm (drawn at 1:" in text


def test_an_edited_catalog_moves_and_turns_the_drawn_sticker(tmp_path):
    """A user's copy with the start gate's left sticker turned a quarter and moved: the guide follows."""
    data = json.loads(DEFAULT_CATALOG_PATH.read_text())
    gate = next(f for f in data["families"] if f["family"] == "tornado/gate")
    gate["slots"]["left"] = {"xy_mm": [5, 140], "rot_deg": 90}
    path = tmp_path / "my.json"
    path.write_text(json.dumps(data))
    use_catalog(path)
    try:
        sheet = printing.write_game_sheet("tornado", tmp_path)
        view = next(v for v in sheet.guide if v.piece == "tornado/start-gate")
        ox, oy = view.origin_mm
        near = (ox + 5 * view.scale, oy - 140 * view.scale)
        centre, _, top_deg = drawn_square(rasterise(sheet.path, view.page), near, 30 * view.scale)
        assert math.hypot((centre[0] - ox) / view.scale - 5, (oy - centre[1]) / view.scale - 140) < 0.5 / view.scale
        assert abs((top_deg - 180 + 180) % 360 - 180) < 1.0  # +x now points up the page, so its top bar left
    finally:
        use_catalog(None)


def test_a_face_is_named_once_in_the_caption():
    from synth.placement import face_words

    assert face_words("face-up") == ", face up" and face_words("face-down") == ", face down"
    assert face_words(None) == "" and face_words("left") == ", face left"
