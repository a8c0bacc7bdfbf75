"""Printable sticker sheets (PDF at true scale) and per-marker PNGs, built from the catalog.

Markers are drawn as vector paths (one filled path per marker, the union of its black
cells), so a printer at 100% reproduces the catalog size exactly. Each page carries a
50 mm scale bar so the user can check that the printer did not rescale.
"""

from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import cv2
import numpy as np

from referee import safeload
from referee.catalog import GAMES, Catalog, StickerSpec, default_catalog
from referee.errors import InvalidInputError

from .pdfpage import (MARGIN_MM, draw_cells, draw_scale_bar, fit_font, footer_top, new_pdf, paper_size,
                      start_page)
from .placement import add_placement_guide

PNG_DPI = 600
CELL_GAP_MM = 2.5
CAPTION_LINE_MM = 2.4
CAPTION_FONT_PT = 5.5
CUT_LINE_MM = 0.1
CUT_GREY = 150
GAME_TITLES = {"kang": "Kang", "kayak": "Kayak Chaos", "tornado": "Tornado Splash"}


MAX_OUT_DEPTH = 256  # folders in an output path (Linux's PATH_MAX of 4096 bytes allows about 2,000)


class OutputFolderError(InvalidInputError):
    """The output folder cannot be created or written."""


def save_whole(path: Path, data: bytes, what: str) -> Path:
    """data written to path whole or not at all (a temporary file renamed into place): a full disk
    names the file and leaves the older file of that name, or none, never a truncated one."""
    return safeload.write_bytes(path, bytes(data), what, OutputFolderError)


def png_bytes(pixels: np.ndarray, dpi: int) -> bytes:
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG", dpi=(dpi, dpi))
    return buffer.getvalue()


def prepare_out_dir(path: str | os.PathLike) -> Path:
    """Create the folder if needed and prove it is writable, or raise a one-line error."""
    out = Path(path)
    if len(out.parts) > MAX_OUT_DEPTH:  # pathlib's mkdir recurses once a level: 2,000 levels overflowed
        raise OutputFolderError(f"cannot write to output folder {safeload.show(str(out))}: it is {len(out.parts)} "
                                f"folders deep; refcam makes at most {MAX_OUT_DEPTH}")
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".refcam-write-test-"):
            pass
    except FileExistsError:
        raise OutputFolderError(f"cannot write to output folder {str(out)!r}: a file of that name exists") from None
    except (OSError, RecursionError) as exc:
        raise OutputFolderError(f"cannot write to output folder {str(out)!r}: "
                                f"{getattr(exc, 'strerror', None) or exc}") from None
    return out


def stickers_for_game(game: str, catalog: Catalog | None = None) -> list[StickerSpec]:
    """Table corners (shared by every game) then the game's stickers, grouped by family in
    catalog order and by id within a family."""
    catalog = catalog or default_catalog()
    if game not in GAMES:
        raise InvalidInputError(f"unknown game {game!r} (choose one of: {', '.join(GAMES)})")
    out: list[StickerSpec] = []
    for fam in catalog.data["families"]:
        if fam["game"] not in ("table", game):
            continue
        group = [s for p in catalog.pieces(family=fam["family"]) for s in p.stickers]
        out.extend(sorted(group, key=lambda s: s.marker_id))
    table_first = sorted(out, key=lambda s: 0 if catalog.piece(s.piece).game == "table" else 1)
    return table_first


def sticker_caption(st: StickerSpec, catalog: Catalog | None = None) -> tuple[str, str]:
    """Two caption lines: the piece name, then the slot (where a piece has several) and the id."""
    catalog = catalog or default_catalog()
    piece = catalog.piece(st.piece)
    label = piece.attrs.get("label")
    if len(piece.stickers) > 1:
        second = f"{st.slot} {st.marker_id}"
    elif label:
        second = f"{label} {st.marker_id}"
    else:
        second = f"id {st.marker_id}"
    return st.piece, second


def quiet_zone_mm(size_mm: float, catalog: Catalog | None = None) -> float:
    catalog = catalog or default_catalog()
    return size_mm * max(catalog.quiet_zone_fraction, 1.0 / 7.0)


def marker_cells(dictionary_name: str, marker_id: int, border_bits: int = 1) -> np.ndarray:
    """(n, n) bool, True = black cell, for the marker including its black border."""
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, dictionary_name))
    n = dictionary.markerSize + 2 * border_bits
    img = cv2.aruco.generateImageMarker(dictionary, int(marker_id), n, borderBits=border_bits)
    return img < 128


def marker_png(dictionary_name: str, marker_id: int, size_mm: float, quiet_mm: float, dpi: int = PNG_DPI) -> np.ndarray:
    """(H, W) uint8 picture of one sticker at `dpi`: black square plus white quiet zone.
    Cell edges fall on rounded pixel boundaries, so the square is size_mm to within one pixel."""
    cells = marker_cells(dictionary_name, marker_id)
    n = cells.shape[0]
    side_px = int(round(size_mm / 25.4 * dpi))
    edges = np.round(np.arange(n + 1) * side_px / n).astype(int)
    index = np.searchsorted(edges, np.arange(side_px), side="right") - 1
    square = np.where(cells[np.ix_(index, index)], 0, 255).astype(np.uint8)
    pad = int(math.ceil(quiet_mm / 25.4 * dpi))
    return cv2.copyMakeBorder(square, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=255)


def png_name(st: StickerSpec) -> str:
    return f"{st.marker_id}-{st.piece.replace('/', '-')}.png"


def write_marker_pngs(stickers: Sequence[StickerSpec], out_dir: Path, dpi: int = PNG_DPI,
                      catalog: Catalog | None = None) -> list[Path]:
    catalog = catalog or default_catalog()
    png_dir = prepare_out_dir(Path(out_dir) / "png")
    paths = []
    for st in stickers:
        pixels = marker_png(catalog.dictionary, st.marker_id, st.size_mm, quiet_zone_mm(st.size_mm, catalog), dpi)
        path = png_dir / png_name(st)
        paths.append(save_whole(path, png_bytes(pixels, dpi), "marker PNG"))
    return paths


# --- PDF drawing ---------------------------------------------------------------------------

@dataclass
class PlacedSticker:
    """Where a sticker's black square landed (page index from 0, mm from the page's top-left)."""

    marker_id: int
    page: int
    x_mm: float
    y_mm: float
    size_mm: float


@dataclass
class SheetResult:
    game: str
    paper: str
    path: Path
    pages: int
    stickers: list[PlacedSticker] = field(default_factory=list)
    guide: list = field(default_factory=list)  # synth.placement.PlacedView, one per drawing

    def to_json(self) -> dict:
        return {"game": self.game, "paper": self.paper, "pdf": str(self.path), "pages": self.pages,
                "stickers": len(self.stickers), "ids": [s.marker_id for s in self.stickers],
                "guide_first_page": min((v.page for v in self.guide), default=None),
                "guide_drawings": len(self.guide)}


def _family_heading(catalog: Catalog, st: StickerSpec, count: int) -> str:
    piece = catalog.piece(st.piece)
    fam = catalog.family(piece.family)
    optional = " (optional)" if "optional" in fam.get("description", "").lower() else ""
    return f"{piece.family}{optional}: {count} stickers, black square {st.size_mm:g} mm"


def _draw_sticker(pdf, catalog: Catalog, st: StickerSpec, x: float, y: float, q: float) -> None:
    """Cut line, quiet zone, black square and caption; (x, y) = the cut line's top-left."""
    outer = st.size_mm + 2 * q
    pdf.set_draw_color(CUT_GREY, CUT_GREY, CUT_GREY)
    pdf.set_line_width(CUT_LINE_MM)
    pdf.rect(x, y, outer, outer, style="D")
    draw_cells(pdf, x + q, y + q, st.size_mm, marker_cells(catalog.dictionary, st.marker_id))
    pdf.set_text_color(0, 0, 0)
    for i, line in enumerate(sticker_caption(st, catalog)):
        fit_font(pdf, line, outer + CELL_GAP_MM - 0.5, CAPTION_FONT_PT)
        pdf.set_xy(x - CELL_GAP_MM / 2, y + outer + 0.3 + i * CAPTION_LINE_MM)
        pdf.cell(outer + CELL_GAP_MM, CAPTION_LINE_MM, line, align="C")


def build_game_pdf(game: str, paper: str = "a4", catalog: Catalog | None = None):
    """The sticker sheet of one game: returns (fpdf.FPDF, [PlacedSticker])."""
    catalog = catalog or default_catalog()
    stickers = stickers_for_game(game, catalog)
    page_w, _ = paper_size(paper)
    pdf = new_pdf(paper)
    title = f"refcam stickers - {GAME_TITLES[game]} ({game}) - {paper.upper() if paper == 'a4' else paper.title()}"
    subtitle = (f"Print at 100% / actual size (no 'fit to page'). ArUco {catalog.dictionary}, "
                f"sticker protocol v1. Cut along the grey lines; keep the white border around each black square.")
    placed: list[PlacedSticker] = []
    bottom = footer_top(paper) - 3.0
    right = page_w - MARGIN_MM

    groups: list[list[StickerSpec]] = []
    for st in stickers:
        fam = catalog.piece(st.piece).family
        if groups and catalog.piece(groups[-1][0].piece).family == fam:
            groups[-1].append(st)
        else:
            groups.append([st])

    pdf.set_title(title)
    y = start_page(pdf, paper, title, subtitle)
    for group in groups:
        q = quiet_zone_mm(group[0].size_mm, catalog)
        outer = group[0].size_mm + 2 * q
        row_h = outer + 2 * CAPTION_LINE_MM + 1.0 + CELL_GAP_MM
        heading_h = 5.0
        if y + heading_h + row_h > bottom:
            y = start_page(pdf, paper, title, subtitle)
        pdf.set_font("Helvetica", style="B", size=8)
        pdf.set_text_color(0, 0, 0)
        pdf.set_xy(MARGIN_MM, y)
        pdf.cell(0, 4, _family_heading(catalog, group[0], len(group)))
        y += heading_h
        x = MARGIN_MM + CELL_GAP_MM / 2
        for st in group:
            if x + outer > right:
                x = MARGIN_MM + CELL_GAP_MM / 2
                y += row_h
            if y + row_h > bottom:
                y = start_page(pdf, paper, title, subtitle)
                x = MARGIN_MM + CELL_GAP_MM / 2
            _draw_sticker(pdf, catalog, st, x, y, q)
            placed.append(PlacedSticker(st.marker_id, pdf.page - 1, x + q, y + q, st.size_mm))
            x += outer + CELL_GAP_MM
        y += row_h + 1.0

    _draw_id_list(pdf, paper, catalog, stickers, title)
    pdf.placement_guide = add_placement_guide(pdf, game, paper, catalog, title)  # pages after the sheets
    return pdf, placed


def _draw_id_list(pdf, paper: str, catalog: Catalog, stickers: Sequence[StickerSpec], title: str) -> None:
    """Final page(s): every id on this sheet with the piece and slot it belongs to."""
    page_w, _ = paper_size(paper)
    columns = 3
    col_w = (page_w - 2 * MARGIN_MM) / columns
    line_h = 3.4
    bottom = footer_top(paper) - 3.0
    rows = sorted(stickers, key=lambda s: s.marker_id)
    i = 0
    while i < len(rows):
        y0 = start_page(pdf, paper, title, "Every id on this sheet and the piece it belongs to "
                         "(ids never change meaning; sizes are the black square).")
        y0 += 1.0
        per_col = int((bottom - y0) // line_h)
        for col in range(columns):
            for r in range(per_col):
                if i >= len(rows):
                    break
                st = rows[i]
                pdf.set_font("Helvetica", size=6.5)
                pdf.set_xy(MARGIN_MM + col * col_w, y0 + r * line_h)
                pdf.cell(9, line_h, str(st.marker_id), align="R")
                piece = catalog.piece(st.piece)
                slot = st.slot if len(piece.stickers) > 1 else piece.attrs.get("label", "")
                pdf.cell(col_w - 9, line_h, f"  {st.piece}  {slot}  {st.size_mm:g} mm")
                i += 1


def write_game_sheet(game: str, out_dir: Path, paper: str = "a4", catalog: Catalog | None = None) -> SheetResult:
    pdf, placed = build_game_pdf(game, paper, catalog)
    path = Path(out_dir) / f"refcam-stickers-{game}-{paper}.pdf"
    save_whole(path, pdf.output(), "sticker sheet")
    return SheetResult(game=game, paper=paper, path=path, pages=pdf.pages_count, stickers=placed,
                       guide=pdf.placement_guide)


# --- the ChArUco calibration board -----------------------------------------------------

def build_charuco_pdf(paper: str = "a4", catalog: Catalog | None = None):
    """One page with the catalog's ChArUco board at true size; returns (FPDF, (x, y) of its top-left mm)."""
    from calibration.charuco import board_black_squares, board_size_mm, board_spec, charuco_board

    catalog = catalog or default_catalog()
    spec = board_spec(catalog)
    board = charuco_board(catalog)
    page_w, page_h = paper_size(paper)
    w_mm, h_mm = board_size_mm(board)
    pdf = new_pdf(paper)
    pdf.add_page()
    pdf.set_title("refcam ChArUco calibration board")
    title = (f"refcam ChArUco calibration board - {spec['squares_x']} x {spec['squares_y']} squares of "
             f"{spec['square_mm']:g} mm, markers {spec['marker_mm']:g} mm, {spec['dictionary']}")
    subtitle = ("Print at 100% / actual size, glue flat on card. Then: refcam calibrate --camera N "
                "(or --images DIR) with 12+ views tilted in different directions.")
    # the board nearly fills Letter height: header and scale bar use the narrower margins
    pdf.set_font("Helvetica", style="B", size=9)
    pdf.set_xy(MARGIN_MM, 5.0)
    pdf.cell(0, 4, title)
    pdf.set_font("Helvetica", size=7)
    pdf.set_xy(MARGIN_MM, 9.5)
    pdf.cell(0, 4, subtitle)
    x0 = (page_w - w_mm) / 2
    y0 = 15.5
    if y0 + h_mm + 8.0 > page_h:
        raise InvalidInputError(f"the ChArUco board ({w_mm:g} x {h_mm:g} mm) does not fit on {paper} paper")
    sq = board.getSquareLength()
    pdf.set_fill_color(0, 0, 0)
    from fpdf.enums import PathPaintRule

    with pdf.new_path(paint_rule=PathPaintRule.FILL_NONZERO) as path:
        path.style.fill_color = "#000000"
        path.style.stroke_color = None
        for col, row in board_black_squares(board):
            path.rectangle(x0 + col * sq, y0 + row * sq, sq, sq)
    dictionary = board.getDictionary()
    for marker_id, corners in zip(board.getIds().ravel(), board.getObjPoints()):
        corners = np.asarray(corners)[:, :2]
        mx, my = corners.min(axis=0)
        side = float(board.getMarkerLength())
        n = dictionary.markerSize + 2
        cells = cv2.aruco.generateImageMarker(dictionary, int(marker_id), n, borderBits=1) < 128
        draw_cells(pdf, x0 + float(mx), y0 + float(my), side, cells)
    bar_y = y0 + h_mm + 3.0
    draw_scale_bar(pdf, x0, bar_y)
    return pdf, (x0, y0)


def charuco_png(dpi: int = PNG_DPI, margin_mm: float = 10.0, catalog: Catalog | None = None) -> np.ndarray:
    """(H, W) uint8 board picture at `dpi` with a white margin."""
    from calibration.charuco import board_size_mm, charuco_board

    board = charuco_board(catalog)
    w_mm, h_mm = board_size_mm(board)
    margin = int(round(margin_mm / 25.4 * dpi))
    size = (int(round(w_mm / 25.4 * dpi)) + 2 * margin, int(round(h_mm / 25.4 * dpi)) + 2 * margin)
    return board.generateImage(size, marginSize=margin, borderBits=1)


def write_charuco(out_dir: Path, paper: str = "a4", dpi: int = PNG_DPI) -> dict:
    pdf, _ = build_charuco_pdf(paper)
    pdf_path = save_whole(Path(out_dir) / f"refcam-charuco-{paper}.pdf", pdf.output(), "ChArUco sheet")
    png_path = save_whole(Path(out_dir) / "refcam-charuco.png", png_bytes(charuco_png(dpi), dpi), "ChArUco PNG")
    return {"pdf": str(pdf_path), "png": str(png_path), "png_dpi": dpi, "paper": paper}
