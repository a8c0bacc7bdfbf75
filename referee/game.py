"""The one seam between a game and everything that shows it.

Each game lives in its own folder under ``referee/`` and exposes one object that
satisfies :class:`Game`. The command line, the live engine, the page and the
explanation pictures use only what is declared here; they never name a game.
(After OpenSpiel: game facts apart from the state; after python-chess: small frozen
values and a small legality surface.)

Data flows one way::

    frame -> vision -> Observation -> Game.step(state, observation, t)
          -> Step(state', rulings) -> Game.view(state') / Game.shapes(...) -> CLI, page
    players -> Declaration (what the camera cannot see) -> Game.declare(state, d, t) -> Step

Everything here is plain Python: no cv2, no flask.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence, runtime_checkable

from .observation import Observation
from .rulings import Ruling

Point = tuple[float, float]


@dataclass(frozen=True)
class RuleRef:
    """A rule citation as a value: which game's rulebook, which section.

    ``str(ref)`` is the form the rulings log shows, e.g. "Tornado Splash, Ranking Phase".
    """

    game: str  # game id, e.g. "tornado"
    section: str  # the rulebook section, e.g. "Ranking Phase"
    title: str = ""  # the game's title for display; the id when empty

    def __str__(self) -> str:
        return f"{self.title or self.game}, {self.section}"

    def to_json(self) -> dict:
        return {"game": self.game, "section": self.section, "text": str(self)}


@dataclass(frozen=True)
class Option:
    """One declared game setting (course, boat weights, advanced rules, ...).

    The `serve` / `replay` flags (``--<name>``) and the page's settings form are both
    generated from these. ``parse`` turns the text a user typed into the value and raises
    a RefcamError quoting the text when it is wrong; ``format`` prints a value back so
    that ``parse(format(v)) == v``.
    """

    name: str
    help: str
    parse: Callable[[str], Any]
    default: Any = None
    format: Callable[[Any], str] = str
    choices: tuple[str, ...] = ()  # offered as a list on the page when not empty
    metavar: str = "VALUE"

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def to_json(self, value: Any = None) -> dict:
        shown = self.default if value is None else value
        return {"name": self.name, "help": self.help, "choices": list(self.choices),
                "value": None if shown is None else self.format(shown)}


@dataclass(frozen=True)
class Shape:
    """Something to draw, in game-frame millimetres, for the overlay and the pictures.

    kind: "line", "polyline", "polygon", "arrow" (from the first point to the last),
    "circle" (centre = points[0], radius_mm), or "label" (text anchored at points[0]).
    role: what the shape means, which also picks its colour and its legend entry:
    e.g. "zone", "boundary", "finish", "piece", "path", "legal", "illegal", "uncertain",
    "highlight", "info". z_mm: the height of the plane the points lie in.
    """

    kind: str
    points: tuple[Point, ...]
    role: str = "info"
    text: str = ""
    radius_mm: float = 0.0
    z_mm: float = 0.0
    legend: str = ""  # the legend's words for this role; empty: not in the legend

    def to_json(self) -> dict:
        d = {"kind": self.kind, "points": [[round(x, 2), round(y, 2)] for x, y in self.points],
             "role": self.role}
        for key in ("text", "legend"):
            if getattr(self, key):
                d[key] = getattr(self, key)
        if self.radius_mm:
            d["radius_mm"] = self.radius_mm
        if self.z_mm:
            d["z_mm"] = self.z_mm
        return d


def diagram(shapes: Iterable[Shape], caption: Iterable[str] = (), unit_mm: float = 0.0,
            box: tuple[float, float, float, float] | None = None) -> dict:
    """A view's drawing for the page, as plain JSON under ``View.data["diagram"]``.

    The shapes are in the game's own diagram coordinates (mm, y up); the page draws them in
    order (later on top) and styles each by its role. ``legend``: (role, words) for each
    shape that declares legend words, first seen first, once per words. ``caption``: lines
    shown under the drawing. ``unit_mm``: the size of the game's typical feature (a square,
    a space), from which the page sizes its lettering; the page guesses when 0. ``box``:
    (x0, y0, x1, y1) to show; the page fits the shapes when None.
    """
    shapes = tuple(shapes)
    legend: dict[str, str] = {}
    for s in shapes:
        if s.legend and s.legend not in legend:
            legend[s.legend] = s.role
    out: dict[str, Any] = {"shapes": [s.to_json() for s in shapes],
                           "legend": [{"role": role, "text": words} for words, role in legend.items()],
                           "caption": [str(line) for line in caption]}
    if unit_mm:
        out["unit_mm"] = float(unit_mm)
    if box is not None:
        out["box"] = [round(float(v), 2) for v in box]
    return out


@dataclass(frozen=True)
class Offer:
    """A next step the page offers as one button: applying ``settings`` (option name ->
    text, as typed into the settings form) to the game being played, e.g. the next race of a
    Grand Prix with the totals kept. ``hint`` says what pressing it does."""

    label: str
    settings: Mapping[str, str]
    hint: str = ""

    def to_json(self) -> dict:
        return {"label": self.label, "settings": dict(self.settings), "hint": self.hint}


@dataclass(frozen=True)
class View:
    """The state as the page shows it: ``kind`` says how ("ranking", "board", "river",
    "pieces", ...), ``data`` is plain JSON for that kind; ``offers``: buttons for what
    the players may do next."""

    kind: str
    data: Mapping[str, Any]
    title: str = ""
    offers: tuple[Offer, ...] = ()

    def to_json(self) -> dict:
        out = {"kind": self.kind, "title": self.title, "data": dict(self.data)}
        if self.offers:
            out["offers"] = [o.to_json() for o in self.offers]
        return out


@dataclass(frozen=True)
class Explanation:
    """The picture that explains a ruling ("Settle it"): shapes drawn over the frame,
    and a panel of text beside them. ``focus``: the game-frame box (x0, y0, x1, y1, mm)
    worth enlarging; ``measures``: the JSON document behind the picture."""

    title: str
    shapes: tuple[Shape, ...]
    lines: tuple[str, ...] = ()
    focus: tuple[float, float, float, float] | None = None
    measures: Mapping[str, Any] = field(default_factory=dict)


# What players may tell the referee that the camera cannot see ("players declare").
ACCEPT_ILLEGAL = "accept-illegal"  # players accept an illegal turn as played (referee/pending.py)
_KIND = re.compile(r"[a-z][a-z0-9-]{0,39}")
_SUBJECT = re.compile(r"[^\s=@]{1,64}")
_DECLARATION = re.compile(r"(?P<kind>\S+)(?:\s+(?P<subject>[^\s=@]+))?(?:\s*=\s*(?P<value>[^@]*?))?"
                          r"(?:\s*@\s*(?P<t>\S+))?")


@dataclass(frozen=True)
class Declarable:
    """One event the players may declare now because the camera cannot see it (a pass, a card
    played from the hand, a vote): the page offers one control per declarable. ``subjects``:
    whom it may be about ("boat-3", "pawn-2", "A"; empty: about nobody in particular);
    ``values``: the values to choose from, ``value_help``: what to type when the value is free
    text (both empty: the declaration takes no value)."""

    kind: str
    label: str
    subjects: tuple[str, ...] = ()
    rule: RuleRef | None = None
    hint: str = ""
    values: tuple[str, ...] = ()
    value_help: str = ""

    def to_json(self) -> dict:
        return {"kind": self.kind, "label": self.label, "subjects": list(self.subjects),
                "rule": None if self.rule is None else str(self.rule), "hint": self.hint,
                "values": list(self.values), "value_help": self.value_help}


@dataclass(frozen=True)
class Declaration:
    """What the players declared, as a value: ``kind`` (a Declarable's), about ``subject``, with
    ``value``, at game time ``t`` (s). Its text form, ``kind [subject] [= value] [@ t]``, e.g.
    "pass boat-3 @ 12.5" or "gate-order = boat-3,boat-1", reads back with ``parse``."""

    kind: str
    subject: str = ""
    value: str = ""
    t: float = 0.0

    def __post_init__(self):
        from .errors import InvalidInputError

        where = f"declaration {self.kind!r}"
        if not isinstance(self.kind, str) or not _KIND.fullmatch(self.kind):
            raise InvalidInputError(f"{where}: a kind is a lower-case word such as 'pass' or 'life-ring'")
        if not isinstance(self.subject, str) or (self.subject and not _SUBJECT.fullmatch(self.subject)):
            raise InvalidInputError(f"{where}: subject {self.subject!r} must be one name without spaces, '=' or '@'")
        if not isinstance(self.value, str) or len(self.value) > 200 or any(c in self.value for c in "@\n\r") \
                or self.value != self.value.strip():
            raise InvalidInputError(f"{where}: value {self.value!r} must be one line of at most 200 characters "
                                    "without '@' or spaces around it")
        if isinstance(self.t, bool) or not isinstance(self.t, (int, float)) or not math.isfinite(self.t):
            raise InvalidInputError(f"{where}: time {self.t!r} must be a number of seconds")
        object.__setattr__(self, "t", float(self.t))

    def __str__(self) -> str:
        text = self.kind + (f" {self.subject}" if self.subject else "") + (f" = {self.value}" if self.value else "")
        return text + (f" @ {self.t!r}" if self.t else "")

    @classmethod
    def parse(cls, text: str) -> "Declaration":
        """The declaration a text names (its ``str``); refused with the text quoted."""
        from .errors import InvalidInputError

        m = _DECLARATION.fullmatch(text.strip()) if isinstance(text, str) else None
        if m is None:
            raise InvalidInputError(f"declaration {str(text)[:80]!r} is not 'kind [subject] [= value] [@ seconds]', "
                                    "e.g. 'pass boat-3'")
        try:
            t = float(m["t"]) if m["t"] is not None else 0.0
        except ValueError:
            raise InvalidInputError(f"declaration {text!r}: time {m['t']!r} is not a number of seconds") from None
        try:
            return cls(m["kind"], m["subject"] or "", (m["value"] or "").strip(), t)
        except InvalidInputError as exc:
            raise InvalidInputError(f"declaration {text!r}: {str(exc).split(': ', 1)[-1]}") from None

    def to_json(self) -> dict:
        return {"kind": self.kind, "subject": self.subject, "value": self.value, "t": self.t}

    @classmethod
    def from_json(cls, data: Any) -> "Declaration":
        """A declaration from JSON (the page, a recorded session); refused with the input quoted."""
        import json

        from .errors import InvalidInputError

        shown = json.dumps(data, default=str)[:120]
        if not isinstance(data, dict):
            raise InvalidInputError(f"declaration {shown} must be an object such as "
                                    '{"kind": "pass", "subject": "boat-3"}')
        unknown = sorted(set(data) - {"kind", "subject", "value", "t"})
        if unknown or "kind" not in data:
            what = f"has no field {unknown[0]!r}" if unknown else "needs a \"kind\""
            raise InvalidInputError(f"declaration {shown} {what} (fields: kind, subject, value, t)")
        try:
            return cls(data["kind"], data.get("subject", "") or "", data.get("value", "") or "", data.get("t", 0.0))
        except InvalidInputError as exc:
            raise InvalidInputError(f"declaration {shown}: {str(exc).split(': ', 1)[-1]}") from None


def check_declaration(game: "Game", state: Any, declaration: Declaration) -> Declarable:
    """The declarable a declaration answers; refused (one line) when the game offers no such
    kind now, or the subject or value is not among those offered."""
    from .errors import InvalidInputError

    offered = {d.kind: d for d in game.declarables(state)}
    found = offered.get(declaration.kind)
    if found is None:
        now = ", ".join(offered) or "nothing"
        raise InvalidInputError(f"{game.title}: {declaration.kind!r} cannot be declared now (players may declare: {now})")
    if found.subjects and declaration.subject not in found.subjects:
        raise InvalidInputError(f"{declaration}: {found.label} names one of {', '.join(found.subjects)}, "
                                f"not {declaration.subject or 'nobody'!r}")
    if not found.subjects and declaration.subject:
        raise InvalidInputError(f"{declaration}: {found.label} is about nobody in particular")
    if found.values and declaration.value not in found.values:
        raise InvalidInputError(f"{declaration}: the value is one of {', '.join(found.values)}")
    if not found.values and not found.value_help and declaration.value:
        raise InvalidInputError(f"{declaration}: {found.label} takes no value")
    if found.value_help and not declaration.value:
        raise InvalidInputError(f"{declaration}: give a value ({found.value_help})")
    return found


def declared_ruling(game_id: str, declaration: Declaration, t: float, summary: str, rule: Any = None,
                    legal: bool | None = None, details: Mapping[str, Any] | None = None) -> Ruling:
    """A declaration as it goes into the rulings log at time t: kind "declared", like a ruling
    (legal: None when it is simply taken, False when the rules refuse what was declared)."""
    return Ruling(t, game_id, "declared", summary, legal, rule,
                  {"declaration": dataclasses.replace(declaration, t=t).to_json(), **dict(details or {})})


@dataclass(frozen=True)
class Step:
    """What one stable observation did: the new state and the rulings it caused."""

    state: Any
    rulings: tuple[Ruling, ...] = ()


class Tools(Protocol):
    """What the command line lends a game's own commands (they live in the game's folder
    but must not import cv2): observation from an image or an observation file, a
    recorded session's stable states, and drawing an explanation onto an image."""

    def observe_path(self, path: str, camera_file: str | None, game: str | None) -> Observation: ...

    def observe_photos(self, paths: list[str], camera_file: str | None, game: str | None) -> Observation:
        """Several photos of one still table (or a folder of them) fused into one observation
        (one photo, or an observation file: as observe_path)."""

    def stable_observations(self, folder: str, camera_file: str | None,
                            game: str | None) -> Iterable[tuple[float, Observation]]:
        """A recorded session's stable states, (t in s, observation), oldest first; the
        session's own camera file when camera_file is None."""

    def draw_explanation(self, explanation: Explanation, image_path: str | None, observation: Observation,
                         out_path: str, camera_file: str | None) -> str | None:
        """Write the picture (PNG/JPEG by suffix); without an image (or a mapping onto it)
        it is drawn on a top-down schematic, and the note saying so is returned."""


@dataclass(frozen=True)
class Command:
    """A game's own command: ``refcam <game> <name>``, or ``refcam <name>`` when top_level."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, Tools], int]
    top_level: bool = False


@dataclass(frozen=True)
class Measurement:
    """A game's way to measure a copy's sticker placement with the camera:
    ``refcam measure <name> IMAGE... --out CATALOG``. ``measure(observations, catalog)`` gets
    (label, Observation) per photo and the base catalog and returns {"catalog": the measured
    catalog data, "lines": what to print, "json": the --json document}; a photo it cannot use
    raises a RefcamError. A game offers these from an optional ``measurements()`` method."""

    name: str
    help: str
    measure: Callable[[Sequence[tuple[str, Observation]], Any], dict]


@dataclass(frozen=True)
class ExpectedPiece:
    """Where the game's state says a piece it needs should be, for vision to look again where
    the piece was not read (a re-read at its place, vision/reread.py). Game-frame mm, like a
    PiecePose; ``sigma_mm``: how far from there it may stand (its last reading's sigma, grown
    by what may have moved it since)."""

    name: str
    x_mm: float
    y_mm: float
    theta_deg: float = 0.0
    sigma_mm: float = 5.0

    def to_json(self) -> dict:
        return {"name": self.name, "x_mm": round(self.x_mm, 2), "y_mm": round(self.y_mm, 2),
                "theta_deg": round(self.theta_deg, 2), "sigma_mm": round(self.sigma_mm, 2)}


def expected_pieces_of(game: Any, state: Any) -> tuple[ExpectedPiece, ...]:
    """The pieces the game needs now and where they should be (``expected_pieces(state)`` is
    optional on the seam; a game without it expects nothing)."""
    offer = getattr(game, "expected_pieces", None)
    return tuple(offer(state)) if callable(offer) else ()


def measurements_of(game: Any) -> tuple[Measurement, ...]:
    """The game's Measurements (``measurements()`` is optional on the seam)."""
    offer = getattr(game, "measurements", None)
    return tuple(offer()) if callable(offer) else ()


@runtime_checkable
class Game(Protocol):
    """A game behind the seam. ``step`` is pure: it never changes the state it is given.
    Optional: ``measurements()``, the game's Measurements (see measurements_of), and
    ``expected_pieces(state)``, where the pieces it needs should be (see expected_pieces_of)."""

    id: str  # "tornado", "kang", "kayak", ...
    title: str  # "Tornado Splash"
    options: tuple[Option, ...]

    def new_state(self, settings: Mapping[str, Any]) -> Any:
        """The state before anything is seen, for these (already parsed) settings."""

    def step(self, state: Any, observation: Observation, t: float) -> Step:
        """Rule on the transition to a new stable observation seen at time t (s)."""

    def view(self, state: Any) -> View:
        """The state for the page."""

    def shapes(self, state: Any, observation: Observation | None) -> tuple[Shape, ...]:
        """What to draw over the live view for this state (game-frame mm)."""

    def explain(self, state: Any, observation: Observation) -> Explanation | None:
        """The explanation picture for this state and observation; None where the game has none."""

    def commands(self) -> Sequence[Command]:
        """The game's own commands (may be empty)."""

    def declarables(self, state: Any) -> tuple[Declarable, ...]:
        """What the players may declare now that the camera cannot see (may be empty)."""

    def declare(self, state: Any, declaration: Declaration, t: float) -> Step:
        """Take the players' declaration at time t: the new state and its "declared" ruling
        (and any it leads to). Refused (RefcamError, one line) when it is not offered now."""


def parse_settings(game: Game, texts: Mapping[str, str | None]) -> dict[str, Any]:
    """Declared options from user text (flags or the page's form): unknown names are refused,
    missing ones take their defaults."""
    from .errors import InvalidInputError

    known = {o.name: o for o in game.options}
    unknown = sorted(set(texts) - set(known))
    if unknown:
        raise InvalidInputError(f"{game.title} has no setting {unknown[0]!r} (settings: {', '.join(known) or 'none'})")
    out: dict[str, Any] = {}
    for name, option in known.items():
        text = texts.get(name)
        out[name] = option.default if text is None or text == "" else option.parse(text)
    return out
