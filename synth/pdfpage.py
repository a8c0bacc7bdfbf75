"""The page of every printed sheet: paper sizes, margins, the title lines, the 50 mm scale bar
and filled cell grids (vector paths, true scale). Sticker sheets (printing.py) and the
placement guide (placement.py) both lay out their pages on it."""

from __future__ import annotations

import numpy as np

from referee.errors import InvalidInputError

PAPERS = {"a4": (210.0, 297.0), "letter": (215.9, 279.4)}  # (w, h) mm, portrait
MARGIN_MM = 10.0
SCALE_BAR_MM = 50.0
SCALE_BAR_HEIGHT_MM = 3.0


def paper_size(paper: str) -> tuple[float, float]:
    try:
        return PAPERS[paper]
    except KeyError:
        raise InvalidInputError(f"unknown paper {paper!r} (choose one of: {', '.join(PAPERS)})") from None


# --- what goes on a game's sheet ---------------------------------------------------------

def new_pdf(paper: str):
    from fpdf import FPDF

    w, h = paper_size(paper)
    pdf = FPDF(unit="mm", format=(w, h))
    pdf.set_auto_page_break(False)
    pdf.set_margins(MARGIN_MM, MARGIN_MM, MARGIN_MM)
    pdf.set_creator("refcam")
    return pdf


def draw_cells(pdf, x: float, y: float, size_mm: float, cells: np.ndarray, height_mm: float | None = None) -> None:
    """Draw the black cells of an (n, n) grid as one filled vector path (rows of runs, united),
    top-left at (x, y) mm, size_mm wide (and height_mm high when not square)."""
    from fpdf.enums import PathPaintRule

    n = cells.shape[0]
    cell = size_mm / n
    cell_h = (height_mm if height_mm is not None else size_mm) / n
    with pdf.new_path(paint_rule=PathPaintRule.FILL_NONZERO) as path:
        path.style.fill_color = "#000000"
        path.style.stroke_color = None
        for r in range(n):
            c = 0
            while c < n:
                if not cells[r, c]:
                    c += 1
                    continue
                start = c
                while c < n and cells[r, c]:
                    c += 1
                path.rectangle(x + start * cell, y + r * cell_h, (c - start) * cell, cell_h)


def fit_font(pdf, text: str, width: float, size_pt: float, min_pt: float = 3.5) -> float:
    pdf.set_font("Helvetica", size=size_pt)
    while size_pt > min_pt and pdf.get_string_width(text) > width:
        size_pt -= 0.25
        pdf.set_font("Helvetica", size=size_pt)
    return size_pt


def draw_header(pdf, title: str, subtitle: str) -> float:
    """Title lines at the top margin; returns the y (mm) where the body may start."""
    pdf.set_text_color(0, 0, 0)
    pdf.set_font("Helvetica", style="B", size=11)
    pdf.set_xy(MARGIN_MM, MARGIN_MM - 4)
    pdf.cell(0, 5, title)
    pdf.set_font("Helvetica", size=7.5)
    pdf.set_xy(MARGIN_MM, MARGIN_MM + 1)
    pdf.cell(0, 4, subtitle)
    return MARGIN_MM + 7.5


def draw_scale_bar(pdf, x: float, y: float) -> None:
    """A 50 mm solid bar with its label, top-left corner at (x, y) mm."""
    draw_cells(pdf, x, y, SCALE_BAR_MM, np.ones((1, 1), dtype=bool), height_mm=SCALE_BAR_HEIGHT_MM)
    pdf.set_font("Helvetica", size=7)
    pdf.set_text_color(0, 0, 0)
    pdf.set_xy(x + SCALE_BAR_MM + 2.5, y - 0.5)
    pdf.cell(0, 4, "<- this bar must measure exactly 50 mm; if not, reprint at 100% / actual size")


def footer_top(paper: str) -> float:
    """y (mm) of the scale bar; the body must end above it."""
    return paper_size(paper)[1] - MARGIN_MM - SCALE_BAR_HEIGHT_MM + 2.0


def start_page(pdf, paper: str, title: str, subtitle: str) -> float:
    pdf.add_page()
    top = draw_header(pdf, title, subtitle)
    draw_scale_bar(pdf, MARGIN_MM, footer_top(paper))
    return top
