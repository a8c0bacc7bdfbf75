"""The sticker catalog: the one source of truth for ids, sizes, placements,
heights and footprints (SPEC section 2). Vision, referee and renderer all read it.

The data lives in ``referee/data/catalog.json``. A user's edited copy (their own
measurements of their copy of a game) is used with ``--catalog FILE`` on any command
(``use_catalog``) or by setting ``REFCAM_CATALOG``; it is checked against the sticker
protocol first (``load_user_catalog``). This module is pure Python so the referee can use
it without cv2.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from . import safeload
from .errors import CatalogError, UnknownNameError

DATA_DIR = Path(__file__).resolve().parent / "data"
DEFAULT_CATALOG_PATH = DATA_DIR / "catalog.json"
GAMES = ("kang", "kayak", "tornado")
CATALOG_ENV = "REFCAM_CATALOG"  # a user's catalog for every command, checked as --catalog is (use_catalog)


@dataclass(frozen=True)
class StickerSpec:
    """One printed sticker: where it sits on its piece and how high."""

    marker_id: int
    piece: str
    slot: str
    size_mm: float
    x_mm: float
    y_mm: float
    rot_deg: float
    top_z_mm: float
    face: str | None = None

    def corners_local(self) -> list[tuple[float, float]]:
        """The black square's corners in the piece frame, OpenCV order TL, TR, BR, BL.

        The marker's +x runs TL->TR and its +y runs BL->TL (SPEC section 1).
        """
        h = self.size_mm / 2.0
        c, s = math.cos(math.radians(self.rot_deg)), math.sin(math.radians(self.rot_deg))
        out = []
        for mx, my in ((-h, h), (h, h), (h, -h), (-h, -h)):
            out.append((self.x_mm + c * mx - s * my, self.y_mm + s * mx + c * my))
        return out


@dataclass(frozen=True)
class Placement:
    """How far a piece's pose, as its stickers give it, may lie from the piece itself because
    the stickers were stuck by hand (SPEC section 2, placement tolerance): standard
    uncertainties per axis across the piece's +x (sigma_mm), along it (sigma_along_mm) and of
    its heading (sigma_deg). ``measured``: `refcam measure` measured the along-heading part."""

    sigma_mm: float
    sigma_along_mm: float
    sigma_deg: float
    measured: bool = False
    # the part of sigma_along_mm that every piece measured in one line-up shares: where the start
    # gate's own hand-stuck stickers put the line they were all measured against
    shared_mm: float = 0.0

    @property
    def bound_mm(self) -> float:
        """The larger per-axis term: what an isotropic sigma must carry to hold in every direction."""
        return max(self.sigma_mm, self.sigma_along_mm)


NO_PLACEMENT = Placement(0.0, 0.0, 0.0)
PLACEMENT_KEYS = ("placement_sigma_mm", "placement_sigma_along_mm", "placement_sigma_deg")
SHARED_LINEUP_KEY = "shared_gate_sigma_mm"  # in a measured piece's "measured" record
# in the start gate's "measured" record (`refcam measure tornado-course`): its own stickers' offset across
# it and turn, measured, with their sigmas (what every line-up reading against it carries)
GATE_TERMS_KEY = "gate_terms"
GATE_TERMS = ("offset_mm", "offset_sigma_mm", "turn_deg", "turn_sigma_deg")
# in a boat's "measured" record (`refcam measure tornado-boats`): where it stood along the gate, its photos'
# own sigma, and the gate's terms already taken off it (offset_mm, turn_deg)
ALONG_GATE_KEY, READING_SIGMA_KEY, GATE_TAKEN_OFF_KEY = "along_gate_mm", "sigma_reading_mm", "gate_taken_off"
# piece-entry keys that are no game attribute: its ids, its stickers' own places and its placement tolerance
PIECE_OWN_KEYS = ("name", "ids", "slots", "measured") + PLACEMENT_KEYS


@dataclass(frozen=True)
class PieceSpec:
    """A physical piece: its stickers, footprint and any game attributes."""

    name: str
    family: str
    game: str
    flat: bool
    thickness_mm: float
    footprint: dict
    stickers: tuple[StickerSpec, ...]
    attrs: dict = field(default_factory=dict, hash=False, compare=False)
    placement: Placement = NO_PLACEMENT

    @property
    def marker_ids(self) -> tuple[int, ...]:
        return tuple(s.marker_id for s in self.stickers)

    def sticker(self, slot: str) -> StickerSpec:
        for s in self.stickers:
            if s.slot == slot:
                return s
        raise UnknownNameError(f"piece {self.name!r} has no sticker slot {slot!r}")

    def footprint_polygon(self, segments: int = 24) -> list[tuple[float, float]]:
        """Footprint outline in the piece frame (mm), counter-clockwise."""
        return footprint_polygon(self.footprint, segments)


def footprint_polygon(fp: dict, segments: int = 24) -> list[tuple[float, float]]:
    kind = fp.get("kind")
    cx, cy = fp.get("centre_mm", (0.0, 0.0))
    if kind == "rect":
        w, h = fp["size_mm"]
        return [(cx - w / 2, cy - h / 2), (cx + w / 2, cy - h / 2), (cx + w / 2, cy + h / 2), (cx - w / 2, cy + h / 2)]
    if kind == "circle":
        r = fp["diameter_mm"] / 2
        return [(cx + r * math.cos(2 * math.pi * i / segments), cy + r * math.sin(2 * math.pi * i / segments))
                for i in range(segments)]
    if kind == "rounded-rect":
        w, h = fp["size_mm"]
        r = min(fp.get("corner_radius_mm", 0.0), w / 2, h / 2)
        pts = []
        quarter = max(2, segments // 4)
        for (qx, qy, a0) in ((w / 2 - r, h / 2 - r, 0), (-w / 2 + r, h / 2 - r, 90),
                             (-w / 2 + r, -h / 2 + r, 180), (w / 2 - r, -h / 2 + r, 270)):
            for i in range(quarter + 1):
                a = math.radians(a0 + 90 * i / quarter)
                pts.append((cx + qx + r * math.cos(a), cy + qy + r * math.sin(a)))
        return pts
    if kind == "wedge":
        # apex at the origin, one edge along +x, opening toward +y (mirror for -y by the caller)
        r, op = fp["radius_mm"], fp["opening_deg"]
        pts = [(0.0, 0.0)]
        for i in range(segments + 1):
            a = math.radians(op * i / segments)
            pts.append((r * math.cos(a), r * math.sin(a)))
        return pts
    raise CatalogError(f"unknown footprint kind {kind!r}")


class Catalog:
    """Read-only view over the catalog data file."""

    def __init__(self, data: dict, source: str = "<memory>"):
        self.source = source
        self.data = data
        self._pieces: dict[str, PieceSpec] = {}
        self._stickers: dict[int, StickerSpec] = {}
        self._families: dict[str, dict] = {}
        if not isinstance(data, dict):
            raise CatalogError(f"catalog {source}: the document must be a JSON object")
        try:
            self._build()
        except (LookupError, TypeError, ValueError, AttributeError, OverflowError) as exc:
            if isinstance(exc, CatalogError):
                raise
            raise CatalogError(f"catalog {source}: malformed entry ({exc!r})") from None

    def _build(self) -> None:
        lo, hi = self.data.get("reserved_ids", [654, 999])
        for fam in self.data["families"]:
            fname = fam["family"]
            self._families[fname] = fam
            size = float(fam["sticker_mm"])
            if size <= 0:
                raise CatalogError(f"catalog {self.source}: family {fname!r} has sticker size {size} mm")
            for p in fam["pieces"]:
                stickers = []
                for slot, mid in p["ids"].items():
                    mid = int(mid)
                    if lo <= mid <= hi:
                        raise CatalogError(f"catalog {self.source}: id {mid} of {p['name']!r} is reserved")
                    if mid in self._stickers:
                        raise CatalogError(
                            f"catalog {self.source}: id {mid} used by both {self._stickers[mid].piece!r} and {p['name']!r}")
                    # a measured copy's own place for this piece, over the family's
                    sl = dict(fam["slots"][slot], **p.get("slots", {}).get(slot, {}))
                    st = StickerSpec(marker_id=mid, piece=p["name"], slot=slot, size_mm=size,
                                     x_mm=float(sl["xy_mm"][0]), y_mm=float(sl["xy_mm"][1]),
                                     rot_deg=float(sl.get("rot_deg", 0.0)), top_z_mm=float(fam["top_z_mm"]),
                                     face=sl.get("face"))
                    self._stickers[mid] = st
                    stickers.append(st)
                if p["name"] in self._pieces:
                    raise CatalogError(f"catalog {self.source}: piece {p['name']!r} listed twice")
                attrs = {k: v for k, v in p.items() if k not in PIECE_OWN_KEYS}
                self._pieces[p["name"]] = PieceSpec(
                    name=p["name"], family=fname, game=fam["game"], flat=bool(fam.get("flat", True)),
                    thickness_mm=float(fam.get("thickness_mm", fam["top_z_mm"])), footprint=fam["footprint"],
                    stickers=tuple(stickers), attrs=attrs, placement=self._placement(fam, p))

    def _placement(self, fam: dict, piece: dict) -> Placement:
        """The family's placement tolerance, or the piece's own where it declares one (a measured
        copy). A user's copy that predates the tolerance gets the packaged one (load_user_catalog)."""
        mm = float(piece.get("placement_sigma_mm", fam.get("placement_sigma_mm", 0.0)))
        deg = float(piece.get("placement_sigma_deg", fam.get("placement_sigma_deg", 0.0)))
        along = float(piece.get("placement_sigma_along_mm", mm))
        shared = self._shared_lineup_sigma(piece)
        for what, value in (("placement_sigma_mm", mm), ("placement_sigma_deg", deg),
                            ("placement_sigma_along_mm", along), (f"measured {SHARED_LINEUP_KEY}", shared)):
            if not math.isfinite(value) or value < 0:
                raise CatalogError(f"catalog {self.source}: {piece['name']} {what} must be a number of 0 or more, "
                                   f"not {value!r}")
        # the measured term is each piece's own reading; the line-up's shared part counts for it too
        return Placement(mm, math.hypot(along, shared), deg, measured="placement_sigma_along_mm" in piece,
                         shared_mm=shared)

    @staticmethod
    def _shared_lineup_sigma(piece: dict) -> float:
        """A measured piece's shared line-up term (its "measured" record, `refcam measure`); 0 without
        one. A user's copy has it checked on loading (_check_placement), with the other tolerances."""
        record = piece.get("measured")
        return float(record.get(SHARED_LINEUP_KEY, 0.0)) if isinstance(record, dict) else 0.0

    # --- loading -----------------------------------------------------------------
    @classmethod
    def load(cls, path: str | os.PathLike | None = None) -> "Catalog":
        path = Path(path or os.environ.get(CATALOG_ENV) or DEFAULT_CATALOG_PATH)
        return cls(read_catalog_json(path), str(path))

    # --- look-ups ----------------------------------------------------------------
    @property
    def dictionary(self) -> str:
        return self.data["dictionary"]

    @property
    def quiet_zone_fraction(self) -> float:
        return float(self.data.get("quiet_zone_fraction", 1 / 7))

    @property
    def charuco_board(self) -> dict:
        return self.data["charuco_board"]

    def game(self, game: str) -> dict:
        try:
            return self.data["games"][game]
        except KeyError:
            raise UnknownNameError(f"unknown game {game!r} (known: {', '.join(GAMES)})") from None

    def family(self, family: str) -> dict:
        try:
            return self._families[family]
        except KeyError:
            raise UnknownNameError(f"unknown component family {family!r}") from None

    def sticker(self, marker_id: int) -> StickerSpec | None:
        return self._stickers.get(int(marker_id))

    def stickers(self) -> Iterable[StickerSpec]:
        return self._stickers.values()

    def known_ids(self) -> frozenset[int]:
        return frozenset(self._stickers)

    def piece(self, name: str) -> PieceSpec:
        try:
            return self._pieces[name]
        except KeyError:
            raise UnknownNameError(f"unknown piece {name!r}") from None

    def has_piece(self, name: str) -> bool:
        return name in self._pieces

    def pieces(self, game: str | None = None, family: str | None = None) -> list[PieceSpec]:
        return [p for p in self._pieces.values()
                if (game is None or p.game == game) and (family is None or p.family == family)]

    def sticker_top_z(self, sticker: StickerSpec, resting_on: str | None = None) -> float:
        """Height of a sticker's surface; some pieces sit higher on a board (Kang tokens)."""
        on = self._families[self._pieces[sticker.piece].family].get("top_z_mm_on", {})
        if resting_on is not None and resting_on in on:
            return float(on[resting_on])
        return sticker.top_z_mm

    def heights_for(self, sticker: StickerSpec) -> list[float]:
        """Every height the sticker can have (default first)."""
        on = self._families[self._pieces[sticker.piece].family].get("top_z_mm_on", {})
        return [sticker.top_z_mm] + [float(z) for z in on.values()]

    def racing_card_kind(self, kind: str) -> dict:
        kinds = self._families["tornado/racing-card"]["kinds"]
        try:
            return kinds[kind]
        except KeyError:
            raise UnknownNameError(f"unknown racing-card kind {kind!r}") from None


def piece_entries(data: dict) -> dict[str, dict]:
    """Piece name -> its entry in catalog data (the dicts themselves: what `refcam measure` edits)."""
    return {p["name"]: p for fam in data["families"] for p in fam["pieces"]}


def read_catalog_json(path: Path) -> dict:
    data = safeload.load_json(path, "catalog", CatalogError)  # size, depth and number limits
    if not isinstance(data, dict):
        raise CatalogError(f"catalog {path} is not a catalog (a JSON object with families and games)")
    return data


@lru_cache(maxsize=4)
def _load_cached(path: str) -> Catalog:
    if Path(path) == DEFAULT_CATALOG_PATH:
        return Catalog.load(path)
    return load_user_catalog(path)


_active: Catalog | None = None  # set by use_catalog (--catalog FILE); wins over REFCAM_CATALOG


def default_catalog() -> Catalog:
    """The catalog in use: the one given with --catalog, else REFCAM_CATALOG, else the packaged file."""
    if _active is not None:
        return _active
    return _load_cached(str(os.environ.get(CATALOG_ENV) or DEFAULT_CATALOG_PATH))


def use_catalog(path: str | os.PathLike | None) -> Catalog:
    """Make a user's catalog file the one every part of this process reads (None: back to
    the default). The file is checked first; a bad file raises a one-line CatalogError and
    leaves the catalog in use unchanged."""
    global _active
    if path is None:
        _active = None
        return default_catalog()
    catalog = load_user_catalog(path)
    _active = catalog
    return catalog


# --- checking a user's catalog against the sticker protocol ------------------------------

LAYOUT_CHARS = frozenset(".RDSF")


def load_user_catalog(path: str | os.PathLike) -> Catalog:
    """Load an edited copy of the catalog and refuse, in one line, anything the sticker
    protocol fixes: the dictionary and which piece and slot each id names. Sizes,
    placements, heights, footprints, Kayak layouts and card kinds may differ."""
    where = f"catalog {path}"
    data = read_catalog_json(Path(path))
    try:
        _check_numbers(data, where)  # first: a typo in a number reads better than "malformed"
    except (LookupError, TypeError, ValueError, AttributeError) as exc:
        if isinstance(exc, CatalogError):
            raise
        raise CatalogError(f"{where}: malformed entry ({exc!r})") from None
    protocol = Catalog.load(DEFAULT_CATALOG_PATH)
    _fill_placement_defaults(data, protocol)
    catalog = Catalog(data, str(path))
    if catalog.dictionary != protocol.dictionary:
        raise CatalogError(f"{where}: dictionary {catalog.dictionary!r} is not the protocol's {protocol.dictionary!r}")
    for st in protocol.stickers():
        mine = catalog.sticker(st.marker_id)
        if mine is None:
            raise CatalogError(f"{where}: id {st.marker_id} ({st.piece} {st.slot}) is missing; "
                               f"ids are the sticker protocol and must all stay")
        if (mine.piece, mine.slot) != (st.piece, st.slot):
            raise CatalogError(f"{where}: id {st.marker_id} names {mine.piece} {mine.slot}, but in the sticker "
                               f"protocol it is {st.piece} {st.slot} (ids never change meaning)")
    for st in catalog.stickers():
        if protocol.sticker(st.marker_id) is None:
            raise CatalogError(f"{where}: id {st.marker_id} ({st.piece}) is not in the sticker protocol")
    _check_same_fields(data.get("games"), protocol.data["games"], "games", where)
    for piece in protocol.pieces():
        _check_same_fields(catalog.piece(piece.name).attrs, piece.attrs, f"piece {piece.name}", where)
    try:
        _check_kayak_layouts(catalog, where)
        _check_card_kinds(catalog, protocol, where)
    except (LookupError, TypeError, ValueError, AttributeError) as exc:
        if isinstance(exc, CatalogError):
            raise
        raise CatalogError(f"{where}: malformed entry ({exc!r})") from None
    return catalog


def _number(value, what: str, where: str, positive: bool = False) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or (positive and value <= 0) or (not positive and value < 0):
        need = "a positive number" if positive else "a number of 0 or more"
        raise CatalogError(f"{where}: {what} must be {need}, not {value!r}")
    return float(value)


def _check_numbers(data: dict, where: str) -> None:
    """Sizes and heights a printer and a ruler can produce; every placement a pair of numbers."""
    for fam in data["families"]:
        _check_texts(fam, "family", where)
        name = fam["family"]
        _number(fam["sticker_mm"], f"{name} sticker_mm", where, positive=True)
        _number(fam["top_z_mm"], f"{name} top_z_mm", where)
        for on, z in fam.get("top_z_mm_on", {}).items():
            _number(z, f"{name} top_z_mm_on {on}", where)
        _check_slots(fam["slots"], name, where)
        _check_placement(fam, name, where)
        for piece in fam["pieces"]:
            _check_texts(piece, f"{name} piece", where)
            _check_placement(piece, piece["name"], where)
            _check_slots(piece.get("slots", {}), piece["name"], where)
        fp = fam["footprint"]
        for key in ("size_mm", "diameter_mm", "radius_mm", "opening_deg", "corner_radius_mm"):
            for v in (fp[key] if isinstance(fp.get(key), list) else [fp[key]] if key in fp else []):
                _number(v, f"{name} footprint {key}", where, positive=key != "corner_radius_mm")
        footprint_polygon(fp)  # an unknown kind is refused here


CATALOG_TEXT_FIELDS = ("family", "game", "name", "description", "label")  # each, where present, is text


def _check_texts(entry, what: str, where: str) -> None:
    """The names and words of a family or a piece are text (a family that was an object, or a
    description that was a list, ended in a traceback far from the catalog)."""
    if not isinstance(entry, dict):
        raise CatalogError(f"{where}: a {what} must be an object, not {safeload.show(entry)}")
    for key in CATALOG_TEXT_FIELDS:
        if key in entry:
            safeload.text(entry[key], f"{where}: {what} {key}", CatalogError)


def _kind_of(value) -> str:
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    return {str: "text", dict: "an object", list: "a list"}.get(type(value), "null")


def _check_same_fields(mine, protocol, field: str, where: str) -> None:
    """Every field the packaged catalog has (games.kang.frame_anchor, a Kayak tile's number) is in the
    user's copy, of the same kind (a number stays a finite number, text stays text): a wrong one is
    named here in one line instead of failing later, deep in a game. Values may differ."""
    if _kind_of(mine) != _kind_of(protocol):
        raise CatalogError(f"{where}: {field} must be {_kind_of(protocol)}, not {safeload.show(mine)}")
    if isinstance(protocol, (int, float)) and not isinstance(protocol, bool) and not math.isfinite(mine):
        raise CatalogError(f"{where}: {field} must be a finite number, not {safeload.show(mine)}")
    if isinstance(protocol, dict):
        for key, value in protocol.items():
            if key not in mine:
                raise CatalogError(f"{where}: {field}.{key} is missing (the packaged catalog has it)")
            _check_same_fields(mine[key], value, f"{field}.{key}", where)


def _check_slots(slots: dict, name: str, where: str) -> None:
    if not isinstance(slots, dict):
        raise CatalogError(f"{where}: {name} slots must be an object of slot: {{xy_mm, rot_deg}}, not {slots!r}")
    for slot, sl in slots.items():
        xy = sl.get("xy_mm") if isinstance(sl, dict) else None
        if not (isinstance(xy, list) and len(xy) == 2):
            raise CatalogError(f"{where}: {name} slot {slot} xy_mm must be two numbers [x, y], not {xy!r}")
        for v in xy + [sl.get("rot_deg", 0.0)]:
            if not (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)):
                raise CatalogError(f"{where}: {name} slot {slot} has a placement that is not a number: {v!r}")


def _fill_placement_defaults(data: dict, protocol: Catalog) -> None:
    """A copy edited before families declared a placement tolerance gets the packaged one
    (a missing tolerance must not read as stickers stuck perfectly)."""
    for fam in data["families"]:
        try:
            packaged = protocol.family(fam["family"])
        except UnknownNameError:  # a family the protocol lacks is refused later, by its ids
            continue
        for key in ("placement_sigma_mm", "placement_sigma_deg"):
            if key not in fam and key in packaged:
                fam[key] = packaged[key]


def _check_placement(entry: dict, name: str, where: str) -> None:
    """A placement tolerance is a number of 0 or more, named by its field when it is not."""
    for key in PLACEMENT_KEYS:
        if key in entry:
            _number(entry[key], f"{name} {key}", where)
    record = entry.get("measured")
    if not isinstance(record, dict):
        return
    # the line-up's terms: an offset, a turn or a place may be negative, a sigma not
    for key in (SHARED_LINEUP_KEY, ALONG_GATE_KEY, READING_SIGMA_KEY):
        if key in record:
            _measured_number(record[key], f"{name} measured {key}", where, "sigma" in key)
    for group, keys in ((GATE_TERMS_KEY, GATE_TERMS), (GATE_TAKEN_OFF_KEY, ("offset_mm", "turn_deg"))):
        if record.get(group) is not None:
            terms = record[group] if isinstance(record[group], dict) else {}
            for key in keys:
                _measured_number(terms.get(key), f"{name} measured {group} {key}", where, "sigma" in key)


def _measured_number(value, what: str, where: str, sigma: bool) -> None:
    """A measured record's number: a sigma of 0 or more, any other a finite number."""
    if sigma:
        _number(value, what, where)
    elif not (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)):
        raise CatalogError(f"{where}: {what} must be a number, not {value!r}")


def _check_kayak_layouts(catalog: Catalog, where: str) -> None:
    grid = catalog.data["games"].get("kayak", {}).get("tile", {})
    lanes, rows = grid.get("lanes"), grid.get("rows")
    for piece in catalog.pieces(family="kayak/tile"):
        for side, layout in piece.attrs.get("layout", {}).items():
            if not isinstance(layout, list) or len(layout) != rows:
                raise CatalogError(f"{where}: {piece.name} side {side} layout must be a list of {rows} rows")
            for r, row in enumerate(layout):
                if not isinstance(row, str) or len(row) != lanes or not set(row) <= LAYOUT_CHARS:
                    raise CatalogError(f"{where}: {piece.name} side {side} row {r + 1} {row!r} must be {lanes} "
                                       f"characters from {''.join(sorted(LAYOUT_CHARS))}")


def _check_card_kinds(catalog: Catalog, protocol: Catalog, where: str) -> None:
    """Racing cards name a kind the catalog describes; Kayak action cards one of the rulebook's actions."""
    kinds = catalog.family("tornado/racing-card").get("kinds", {})
    for kind, spec in kinds.items():
        spaces = spec.get("spaces") if isinstance(spec, dict) else None
        if not isinstance(spaces, list) or not 1 <= len(spaces) <= 3:
            raise CatalogError(f"{where}: racing-card kind {kind!r} must list 1 to 3 spaces")
        for item in spaces + list(spec.get("diagonals", [])):
            for key, v in item.items():
                if not (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)):
                    raise CatalogError(f"{where}: racing-card kind {kind!r} {key} must be a number, not {v!r}")
    for piece in catalog.pieces(family="tornado/racing-card"):
        if piece.attrs.get("kind") not in kinds:
            raise CatalogError(f"{where}: {piece.name} has kind {piece.attrs.get('kind')!r}, which the catalog's "
                               f"racing-card kinds do not describe")
    actions = {p.attrs.get("kind") for p in protocol.pieces(family="kayak/action-card")}
    for piece in catalog.pieces(family="kayak/action-card"):
        if piece.attrs.get("kind") not in actions:
            raise CatalogError(f"{where}: {piece.name} has kind {piece.attrs.get('kind')!r}; Kayak Chaos action "
                               f"cards are one of {', '.join(sorted(actions))}")


def check_game(game: str, allow_all: bool = False) -> str:
    known = GAMES + (("all",) if allow_all else ())
    if game not in known:
        raise UnknownNameError(f"unknown game {game!r} (choose one of: {', '.join(known)})")
    return game


def json_ready(obj: Any) -> Any:
    """Round floats for stable, readable JSON output."""
    if isinstance(obj, float):
        return round(obj, 3)
    if isinstance(obj, dict):
        return {k: json_ready(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_ready(v) for v in obj]
    return obj
