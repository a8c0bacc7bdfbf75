"""Sticker sheets: true physical scale on the rasterised PDF, every id decodes to itself,
PNG metadata, the ChArUco page, and bad input through the CLI."""

from __future__ import annotations

import json
import os
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.catalog import default_catalog
from synth import pdfpage, printing
from webui.cli import main

RASTER_DPI = 300
MM_PER_PX = 25.4 / RASTER_DPI


def rasterise(pdf_path: Path, page: int, dpi: int = RASTER_DPI) -> np.ndarray:
    """(H, W) uint8 grey raster of one PDF page."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdf_path))
    try:
        pil = doc[page].render(scale=dpi / 72.0, grayscale=True).to_pil().convert("L")
    finally:
        doc.close()
    return np.array(pil)


def detect(gray: np.ndarray, dictionary: str | None = None):
    d = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, dictionary or default_catalog().dictionary))
    corners, ids, _ = cv2.aruco.ArucoDetector(d, cv2.aruco.DetectorParameters()).detectMarkers(gray)
    if ids is None:
        return {}
    return {int(i): c.reshape(4, 2) for i, c in zip(ids.ravel(), corners)}


def dark_extent_px(crop: np.ndarray) -> tuple[float, float]:
    """Width and height in pixels (sub-pixel) of the dark shape in a crop with a white frame:
    per column the darkest pixel's coverage (1 inside the square's solid border, a fraction
    on an anti-aliased edge), summed over columns; likewise rows."""
    dark = 1.0 - crop.astype(np.float64) / 255.0
    return float(dark.max(axis=0).sum()), float(dark.max(axis=1).sum())


@pytest.fixture(scope="module")
def sheets(tmp_path_factory):
    out = tmp_path_factory.mktemp("sheets")
    assert main(["markers", "--game", "all", "--out", str(out)]) == 0
    return out


def test_sticker_sizes_on_the_raster_are_true_scale(sheets):
    catalog = default_catalog()
    raster = rasterise(sheets / "refcam-stickers-kang-a4.pdf", 0)
    found = detect(raster)
    sizes_seen = {}
    for marker_id, corners in found.items():
        size_mm = catalog.sticker(marker_id).size_mm
        quiet_px = size_mm / 7 / MM_PER_PX
        x0, y0 = corners.min(axis=0) - quiet_px / 2
        x1, y1 = corners.max(axis=0) + quiet_px / 2
        crop = raster[int(y0):int(np.ceil(y1)), int(x0):int(np.ceil(x1))]
        w_px, h_px = dark_extent_px(crop)
        sizes_seen.setdefault(size_mm, []).extend([w_px * MM_PER_PX, h_px * MM_PER_PX])
    assert {16.0, 30.0, 40.0} <= set(sizes_seen)
    for size_mm, measured in sizes_seen.items():
        worst = max(abs(m - size_mm) for m in measured)
        assert worst <= 0.1, f"{size_mm} mm stickers measure {min(measured):.3f}-{max(measured):.3f} mm"


def test_scale_bar_is_50_mm_on_every_page_kind(sheets):
    for page in (0, 2):  # a sticker page and the id-list page
        raster = rasterise(sheets / "refcam-stickers-kang-a4.pdf", page)
        n, labels, stats, _ = cv2.connectedComponentsWithStats((raster < 128).astype(np.uint8))
        # the bar: a wide, 3 mm high solid component
        bars = [i for i in range(1, n) if stats[i, cv2.CC_STAT_WIDTH] > 40 / MM_PER_PX
                and 2 / MM_PER_PX < stats[i, cv2.CC_STAT_HEIGHT] < 4 / MM_PER_PX]
        assert len(bars) == 1, f"page {page}: {len(bars)} scale-bar candidates"
        x, y, w, h = stats[bars[0], :4]
        crop = raster[y - 3:y + h + 3, x - 3:x + w + 3]
        w_px, h_px = dark_extent_px(crop)
        assert abs(w_px * MM_PER_PX - 50.0) <= 0.1
        assert abs(h_px * MM_PER_PX - pdfpage.SCALE_BAR_HEIGHT_MM) <= 0.1


def test_every_id_on_a_page_decodes_to_itself(sheets):
    """One sticker page per game, rasterised: the decoded ids are exactly the ids placed there."""
    for game in ("kang", "kayak", "tornado"):
        _, placed = printing.build_game_pdf(game, "a4")
        page = 1 if game != "kang" else 0
        expected = {p.marker_id for p in placed if p.page == page}
        assert expected
        found = detect(rasterise(sheets / f"refcam-stickers-{game}-a4.pdf", page, dpi=150))
        assert set(found) == expected


def test_every_sheet_lists_every_id_and_includes_table_corners(sheets):
    catalog = default_catalog()
    for game in ("kang", "kayak", "tornado"):
        ids = {s.marker_id for s in printing.stickers_for_game(game)}
        assert {0, 1, 2, 3} <= ids
        assert ids == {s.marker_id for p in catalog.pieces() if p.game in (game, "table") for s in p.stickers}
        _, placed = printing.build_game_pdf(game, "a4")
        assert sorted(p.marker_id for p in placed) == sorted(ids)
    tornado_ids = {s.marker_id for s in printing.stickers_for_game("tornado")}
    assert len([i for i in tornado_ids if 300 <= i < 540]) == 240
    assert len([i for i in (s.marker_id for s in printing.stickers_for_game("kayak")) if 600 <= i <= 653]) == 54


def test_pngs_decode_and_carry_their_dpi(sheets):
    from PIL import Image

    catalog = default_catalog()
    pngs = sorted((sheets / "png").glob("*.png"))
    assert len(pngs) == len(catalog.known_ids())
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, catalog.dictionary))
    detector = cv2.aruco.ArucoDetector(dictionary, cv2.aruco.DetectorParameters())
    for path in pngs:
        marker_id = int(path.name.split("-", 1)[0])
        st = catalog.sticker(marker_id)
        assert path.name == f"{marker_id}-{st.piece.replace('/', '-')}.png"
        with Image.open(path) as im:
            dpi = im.info["dpi"]
            pixels = np.array(im.convert("L"))
        assert round(dpi[0]) == printing.PNG_DPI
        black = np.nonzero((pixels < 128).any(axis=0))[0]
        side_mm = (black[-1] - black[0] + 1) * 25.4 / printing.PNG_DPI
        assert abs(side_mm - st.size_mm) < 0.05
        assert black[0] * 25.4 / printing.PNG_DPI >= st.size_mm / 7 - 0.05  # quiet zone kept
        small = cv2.resize(pixels, None, fx=0.25, fy=0.25, interpolation=cv2.INTER_AREA)
        _, ids, _ = detector.detectMarkers(small)
        assert ids is not None and ids.ravel().tolist() == [marker_id], path.name


@pytest.mark.parametrize("paper", ["a4", "letter"])
def test_charuco_page_fits_and_is_detectable_at_true_scale(tmp_path, paper, capsys):
    from calibration.charuco import charuco_board, make_detector

    assert main(["markers", "--charuco", "--out", str(tmp_path), "--paper", paper, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)["charuco"]
    dpi = 150
    raster = rasterise(Path(info["pdf"]), 0, dpi=dpi)
    board = charuco_board()
    corners, ids, _, _ = make_detector(board).detectBoard(raster)
    assert ids is not None and len(ids) == 24
    pts = dict(zip(ids.ravel().tolist(), corners.reshape(-1, 2)))
    # corners 0..3 run along one row of the board, one 35 mm square apart
    steps = [np.linalg.norm(pts[i + 1] - pts[i]) * 25.4 / dpi for i in range(3)]
    assert all(abs(s - 35.0) < 0.15 for s in steps), steps
    page_w, page_h = pdfpage.PAPERS[paper]
    assert raster.shape[1] == pytest.approx(page_w / 25.4 * dpi, abs=1.5)
    assert (raster[-int(3 / 25.4 * dpi):] > 200).all()  # nothing printed in the last 3 mm
    png = cv2.imread(info["png"], cv2.IMREAD_GRAYSCALE)
    _, png_ids, _, _ = make_detector(board).detectBoard(cv2.resize(png, None, fx=0.2, fy=0.2,
                                                                  interpolation=cv2.INTER_AREA))
    assert png_ids is not None and len(png_ids) == 24


def test_json_output_lists_sheets(tmp_path, capsys):
    assert main(["markers", "--game", "kang", "--out", str(tmp_path), "--paper", "letter", "--json", "--dpi", "150"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [s["game"] for s in doc["sheets"]] == ["kang"]
    assert Path(doc["sheets"][0]["pdf"]).name == "refcam-stickers-kang-letter.pdf"
    assert doc["pngs"] == len(printing.stickers_for_game("kang")) == len(list((tmp_path / "png").glob("*.png")))


# --- bad input ------------------------------------------------------------------------

def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("refcam: error: ") and "Traceback" not in err, err
    return err


def test_unknown_game(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["markers", "--game", "chess", "--out", str(tmp_path)])
    assert exc.value.code == 2
    assert "'chess'" in _one_line_error(capsys)


def test_unknown_paper(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["markers", "--game", "kang", "--out", str(tmp_path), "--paper", "a3"])
    assert exc.value.code == 2
    assert "'a3'" in _one_line_error(capsys)


def test_neither_game_nor_charuco(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["markers", "--out", str(tmp_path)])
    assert exc.value.code == 2
    _one_line_error(capsys)


def test_out_folder_under_a_regular_file(tmp_path, capsys):
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    assert main(["markers", "--game", "kang", "--out", str(blocker / "sheets")]) == 2
    assert "sheets" in _one_line_error(capsys)
    assert main(["markers", "--charuco", "--out", str(blocker)]) == 2
    assert "afile" in _one_line_error(capsys)


def test_out_folder_not_writable(tmp_path, capsys):
    if os.geteuid() == 0:
        target = "/proc/refcam-cannot-write-here"  # root ignores mode bits; /proc refuses everyone
    else:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        target = str(ro)
    assert main(["markers", "--game", "kayak", "--out", target]) == 2
    assert "cannot write to output folder" in _one_line_error(capsys)
