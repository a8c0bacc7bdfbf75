"""The placement guide: where each sticker goes on each component, drawn from the catalog.

One drawing per component and face, seen from above with the component's +x (forward) to
the right and +y up the page, at true scale whenever it fits on the paper (a component
larger than the page is drawn smaller, with a scale bar that says so). Each drawing shows
the component's outline (grey), its reference point (blue cross), every sticker as the
outline of its black square crossed through, with its id in words inside and a bar along
its top edge (the edge above the sticker's caption on the sheet), a red arrow for the
sticker's +x, the id above it, and a caption with the height of the sticker surface. The
markers themselves are never drawn: a guide page lying on the table would otherwise show
every piece twice, some at reduced scale (tests/test_placement_guide.py finds 0 markers). Families of many
identical cards get one drawing of the card and a list of every card's ids.

The pages follow the sticker sheets in each game's PDF (synth.printing.build_game_pdf);
``PlacedView`` records where each drawing landed, so tests can measure the raster.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from referee.catalog import Catalog, PieceSpec, StickerSpec, footprint_polygon

MANY_PIECES = 12  # a family with more pieces than this gets one drawing and an id list
LABEL_MM = 4.0  # room above a sticker for its id
ARROW_MM = 6.0  # the sticker's +x arrow, page mm
CAPTION_MM = 10.5  # three caption lines under a drawing
PAD_MM = 2.0
MIN_BOX_W_MM = 60.0
GUIDE_BLUE = (30, 90, 200)
GUIDE_RED = (210, 40, 40)
OUTLINE_GREY = 120
STICKER_LINE_MM = 0.35  # the outline of a sticker's black square
CROSS_GREY = 110
TOP_BAR_FRACTION = 0.12  # the bar along a drawn sticker's top edge, as a share of its side


@dataclass(frozen=True)
class GuideView:
    """One drawing: a piece (with one face up when its faces carry stickers at the same spot)."""

    piece: PieceSpec
    face: str | None
    stickers: tuple[StickerSpec, ...]
    family_pieces: tuple[PieceSpec, ...] = ()  # set when this drawing stands for a whole family


@dataclass
class PlacedView:
    """Where a drawing landed: page (from 0), the piece origin in page mm (from the top-left),
    the scale (page mm per component mm) and each sticker's drawn centre in page mm."""

    piece: str
    face: str | None
    page: int
    origin_mm: tuple[float, float]
    scale: float
    stickers: dict[int, tuple[float, float]] = field(default_factory=dict)


def _faces(piece: PieceSpec) -> list[tuple[str | None, tuple[StickerSpec, ...]]]:
    """Split a piece's stickers into faces: the catalog's face, else stickers sharing a spot
    (a two-sided token's front and back) go to separate drawings named by their slot."""
    if any(s.face for s in piece.stickers):
        faces: dict[str | None, list[StickerSpec]] = {}
        for s in piece.stickers:
            faces.setdefault(s.face, []).append(s)
        return [(f, tuple(v)) for f, v in faces.items()]
    groups: list[list[StickerSpec]] = []
    for s in piece.stickers:
        target = next((g for g in groups if all(not _overlap(s, o) for o in g)), None)
        if target is None:
            groups.append([s])
        else:
            target.append(s)
    if len(groups) == 1:
        return [(None, tuple(groups[0]))]
    return [("/".join(s.slot for s in g), tuple(g)) for g in groups]


def _overlap(a: StickerSpec, b: StickerSpec) -> bool:
    return math.hypot(a.x_mm - b.x_mm, a.y_mm - b.y_mm) < (a.size_mm + b.size_mm) / 2


def guide_views(game: str, catalog: Catalog) -> list[GuideView]:
    """Every drawing of a game's guide (table corners first), in catalog order."""
    views: list[GuideView] = []
    for fam in catalog.data["families"]:
        if fam["game"] not in ("table", game):
            continue
        pieces = catalog.pieces(family=fam["family"])
        if len(pieces) > MANY_PIECES:
            for face, stickers in _faces(pieces[0]):
                views.append(GuideView(pieces[0], face, stickers, family_pieces=tuple(pieces)))
            continue
        for piece in pieces:
            views.extend(GuideView(piece, face, stickers) for face, stickers in _faces(piece))
    return sorted(views, key=lambda v: 0 if v.piece.game == "table" else 1)


def outline(view: GuideView) -> list[tuple[float, float]]:
    """The footprint in the component frame; a curve card's wedge opens to +y on a top card's
    left-turn face and turning the card over mirrors it (catalog description)."""
    pts = footprint_polygon(view.piece.footprint, 48)
    if view.piece.footprint.get("kind") == "wedge":
        opens_left = (view.piece.attrs.get("type") == "top") == (view.face in (None, "left-turn"))
        if not opens_left:
            pts = [(x, -y) for x, y in pts]
    return pts


def _sticker_half_extent(st: StickerSpec, quiet_mm: float) -> float:
    """Half the side of the axis-aligned box around the rotated sticker (with its white border)."""
    a = math.radians(st.rot_deg)
    return (st.size_mm / 2 + quiet_mm) * (abs(math.cos(a)) + abs(math.sin(a)))


def bounds(view: GuideView, quiet: float) -> tuple[float, float, float, float]:
    """(xmin, ymin, xmax, ymax) of the outline, the origin and every sticker, component mm."""
    xs, ys = [0.0], [0.0]
    for x, y in outline(view):
        xs.append(x)
        ys.append(y)
    for st in view.stickers:
        h = _sticker_half_extent(st, quiet * st.size_mm)
        xs += [st.x_mm - h, st.x_mm + h]
        ys += [st.y_mm - h, st.y_mm + h]
        reach = st.size_mm / 2 + quiet * st.size_mm + ARROW_MM  # the +x arrow's tip (at true scale)
        xs.append(st.x_mm + reach * math.cos(math.radians(st.rot_deg)))
        ys.append(st.y_mm + reach * math.sin(math.radians(st.rot_deg)))
    return min(xs), min(ys), max(xs), max(ys)


def fit_scale(view: GuideView, quiet: float, avail_w: float, avail_h: float) -> float:
    """1 (true scale) when the drawing fits the page body, else the largest scale that does."""
    x0, y0, x1, y1 = bounds(view, quiet)
    room_w = avail_w - 2 * PAD_MM
    room_h = avail_h - CAPTION_MM - LABEL_MM - 2 * PAD_MM
    return min(1.0, room_w / max(x1 - x0, 1e-6), room_h / max(y1 - y0, 1e-6))


def box_size(view: GuideView, quiet: float, scale: float) -> tuple[float, float]:
    """(w, h) page mm taken by a drawing with its labels and caption."""
    x0, y0, x1, y1 = bounds(view, quiet)
    w = (x1 - x0) * scale + 2 * PAD_MM
    h = (y1 - y0) * scale + LABEL_MM + CAPTION_MM + 2 * PAD_MM
    return max(w, MIN_BOX_W_MM), h


def height_text(catalog: Catalog, st: StickerSpec) -> str:
    on = catalog.family(st.piece and catalog.piece(st.piece).family).get("top_z_mm_on", {})
    extra = "".join(f", {z:g} on {where.split('/')[-1]}" for where, z in on.items())
    return f"top at z {st.top_z_mm:g} mm{extra}"


# --- drawing ------------------------------------------------------------------------------

def _arrow(pdf, x0: float, y0: float, x1: float, y1: float, color: tuple[int, int, int], width: float = 0.35) -> None:
    pdf.set_draw_color(*color)
    pdf.set_line_width(width)
    pdf.line(x0, y0, x1, y1)
    a = math.atan2(y1 - y0, x1 - x0)
    for side in (-1, 1):
        head = a + math.pi + side * math.radians(28)
        pdf.line(x1, y1, x1 + 1.6 * math.cos(head), y1 + 1.6 * math.sin(head))


def _draw_sticker(pdf, catalog: Catalog, st: StickerSpec, cx: float, cy: float, scale: float, quiet: float,
                  label: str) -> None:
    """Where the sticker goes, drawn so that no detector can read it as a sticker (a guide page
    on the table must not add a second copy of every piece): its white border, the black
    square's outline crossed through, its id in words inside, a thick bar along the edge that
    is at the top on the printed sheet (where its caption reads upright below it), and the red
    +x arrow; all turned by rot_deg about its centre (counter-clockwise seen from above, as on
    the page). The id is written again above it."""
    d = st.size_mm * scale
    q = quiet * st.size_mm * scale
    left, top_edge = cx - d / 2, cy - d / 2
    with pdf.rotation(st.rot_deg, cx, cy):
        pdf.set_fill_color(255, 255, 255)
        pdf.set_draw_color(190, 190, 190)
        pdf.set_line_width(0.1)
        pdf.rect(left - q, top_edge - q, d + 2 * q, d + 2 * q, style="DF")
        pdf.set_draw_color(0, 0, 0)
        pdf.set_line_width(STICKER_LINE_MM)
        pdf.rect(left, top_edge, d, d, style="D")
        pdf.set_draw_color(CROSS_GREY, CROSS_GREY, CROSS_GREY)
        pdf.set_line_width(0.15)
        pdf.line(left, top_edge, left + d, top_edge + d)
        pdf.line(left, top_edge + d, left + d, top_edge)
        pdf.set_fill_color(0, 0, 0)
        pdf.rect(left, top_edge, d, TOP_BAR_FRACTION * d, style="F")  # the printed sticker's top edge
        pdf.set_text_color(0, 0, 0)
        size_pt = max(3.0, min(7.0, d * 0.55))
        pdf.set_font("Helvetica", style="B", size=size_pt)
        pdf.set_fill_color(255, 255, 255)
        text_h = size_pt * 0.42
        pdf.set_xy(left + 0.6, cy - text_h / 2)
        pdf.cell(d - 1.2, text_h, f"id {st.marker_id}", align="C", fill=True)
        start = cx + d / 2 + q + 0.4
        _arrow(pdf, start, cy, start + ARROW_MM - 0.4, cy, GUIDE_RED)
    top = cy - _sticker_half_extent(st, quiet * st.size_mm) * scale
    pdf.set_text_color(0, 0, 0)
    pdf.set_font("Helvetica", style="B", size=6.5)
    pdf.set_xy(cx - 15, top - LABEL_MM + 0.6)
    pdf.cell(30, LABEL_MM - 1.0, label, align="C")


def face_words(face: str | None) -> str:
    """", face up" for the catalog's "face-up" (the guide once printed "face face-up")."""
    return f", face {face.removeprefix('face-')}" if face else ""


def _caption(pdf, catalog: Catalog, view: GuideView, x: float, y: float, scale: float) -> None:
    from synth.printing import draw_cells
    import numpy as np

    st = view.stickers[0]
    name = view.piece.name
    if view.family_pieces:
        name = (f"{view.piece.family}: all {len(view.family_pieces)} alike, ids listed below "
                f"(ids drawn: {view.piece.name.split('/')[-1]}'s)")
    face = face_words(view.face)
    pdf.set_text_color(0, 0, 0)
    pdf.set_font("Helvetica", style="B", size=7)
    pdf.set_xy(x, y)
    pdf.cell(0, 3.2, name + face)
    pdf.set_font("Helvetica", size=6)
    pdf.set_xy(x, y + 3.4)
    pdf.cell(0, 3.0, f"{height_text(catalog, st)}; square {st.size_mm:g} mm")
    _arrow(pdf, x, y + 8.3, x + 8, y + 8.3, GUIDE_BLUE)
    pdf.set_xy(x + 9, y + 6.8)
    if scale >= 0.999:
        pdf.cell(0, 3.0, "forward (+x); true scale")
        return
    pdf.cell(18, 3.0, "forward (+x);")
    bar = 50.0 * scale
    bx = pdf.get_x()
    draw_cells(pdf, bx, y + 7.7, bar, np.ones((1, 1), dtype=bool), height_mm=1.2)
    pdf.set_xy(bx + bar + 1, y + 6.8)
    pdf.cell(0, 3.0, f"= 50 mm (drawn at 1:{1 / scale:.2g})")


def draw_view(pdf, catalog: Catalog, view: GuideView, x: float, y: float, scale: float, quiet: float) -> PlacedView:
    """One drawing with its caption, the box's top-left at (x, y) page mm."""
    x0, y0, x1, y1 = bounds(view, quiet)
    ox = x + PAD_MM + (-x0) * scale
    oy = y + LABEL_MM + PAD_MM + y1 * scale

    def page(px: float, py: float) -> tuple[float, float]:
        return ox + px * scale, oy - py * scale

    pdf.set_draw_color(OUTLINE_GREY, OUTLINE_GREY, OUTLINE_GREY)
    pdf.set_line_width(0.3)
    pdf.polygon([page(px, py) for px, py in outline(view)], style="D")
    pdf.set_draw_color(*GUIDE_BLUE)
    pdf.set_line_width(0.25)
    pdf.line(ox - 2.5, oy, ox + 2.5, oy)
    pdf.line(ox, oy - 2.5, ox, oy + 2.5)
    placed = PlacedView(view.piece.name, view.face, pdf.page - 1, (ox, oy), scale)
    several = len(view.stickers) > 1
    for st in view.stickers:
        cx, cy = page(st.x_mm, st.y_mm)
        if view.family_pieces:
            label = f"{st.slot} sticker" if several else "sticker"
        else:
            label = f"{st.marker_id} {st.slot}" if several else str(st.marker_id)
        _draw_sticker(pdf, catalog, st, cx, cy, scale, quiet, label)
        placed.stickers[st.marker_id] = (cx, cy)
    _caption(pdf, catalog, view, x + PAD_MM, y + LABEL_MM + PAD_MM + (y1 - y0) * scale + 1.5, scale)
    return placed


def _piece_line(piece: PieceSpec) -> str:
    what = " ".join(str(piece.attrs[k]) for k in ("kind", "type", "label") if k in piece.attrs)
    ids = ", ".join(f"{s.slot} {s.marker_id}" for s in piece.stickers)
    return f"{piece.name.split('/')[-1]}{' (' + what + ')' if what else ''}: {ids}"


class _Flow:
    """Shelf packing of drawings and list lines onto guide pages."""

    def __init__(self, pdf, paper: str, title: str):
        from synth.printing import MARGIN_MM, footer_top, paper_size

        self.pdf, self.paper, self.title = pdf, paper, title
        self.left = MARGIN_MM
        self.right = paper_size(paper)[0] - MARGIN_MM
        self.bottom = footer_top(paper) - 3.0
        self.x = self.y = self.row_h = 0.0
        self.top = 0.0
        self.new_page()

    def new_page(self) -> None:
        from synth.printing import _start_page

        self.top = _start_page(self.pdf, self.paper, self.title, GUIDE_SUBTITLE)
        self.x, self.y, self.row_h = self.left, self.top, 0.0

    @property
    def body(self) -> tuple[float, float]:
        return self.right - self.left, self.bottom - self.top

    def place(self, w: float, h: float) -> tuple[float, float]:
        """Top-left for a w x h box: on this row, the next row, or a new page."""
        if self.x + w > self.right + 1e-6:
            self.end_row()
        if self.y + h > self.bottom + 1e-6:
            self.new_page()
        at = (self.x, self.y)
        self.x += w
        self.row_h = max(self.row_h, h)
        return at

    def end_row(self) -> None:
        self.x = self.left
        self.y += self.row_h
        self.row_h = 0.0


GUIDE_SUBTITLE = ("Seen from above, forward (+x) to the right, blue + = reference point. Stick each sticker on its "
                  "crossed square, black bar = the edge above its caption on the sheet, red arrow = its +x.")


def _draw_id_list(flow: _Flow, pieces: tuple[PieceSpec, ...]) -> None:
    """Every piece of a many-card family with its ids, three columns, under its drawing."""
    pdf = flow.pdf
    flow.end_row()
    columns, line_h = 3, 3.2
    col_w = (flow.right - flow.left) / columns
    rows = [_piece_line(p) for p in pieces]
    i = 0
    while i < len(rows):
        per_col = int((flow.bottom - flow.y) // line_h)
        if per_col < 1:
            flow.new_page()
            continue
        per_col = min(per_col, math.ceil((len(rows) - i) / columns))  # balanced columns
        for col in range(columns):
            for r in range(per_col):
                if i >= len(rows):
                    break
                pdf.set_font("Helvetica", size=6)
                pdf.set_text_color(0, 0, 0)
                pdf.set_xy(flow.left + col * col_w, flow.y + r * line_h)
                pdf.cell(col_w, line_h, rows[i])
                i += 1
        flow.y += per_col * line_h + 2.0
        if i < len(rows):
            flow.new_page()


def add_placement_guide(pdf, game: str, paper: str, catalog: Catalog, title: str) -> list[PlacedView]:
    """Append a game's placement guide pages to its sticker-sheet PDF."""
    quiet = max(catalog.quiet_zone_fraction, 1.0 / 7.0)
    flow = _Flow(pdf, paper, title.replace("stickers", "sticker placement"))
    placed: list[PlacedView] = []
    views = guide_views(game, catalog)
    for i, view in enumerate(views):
        body_w, body_h = flow.body
        scale = fit_scale(view, quiet, body_w, body_h)
        if scale < 1.0:  # not true scale anyway: small enough for two to a page
            scale = fit_scale(view, quiet, body_w, body_h / 2)
        w, h = box_size(view, quiet, scale)
        x, y = flow.place(w, h)
        placed.append(draw_view(pdf, catalog, view, x, y, scale, quiet))
        last_of_family = i + 1 == len(views) or views[i + 1].piece.family != view.piece.family
        if view.family_pieces and last_of_family:
            _draw_id_list(flow, view.family_pieces)
    return placed
