"""Recorded sessions: a folder of frames plus a manifest of timestamps.

Layout of a session folder::

    manifest.jsonl     line 1: header {"refcam_session": 1, "game": ..., "fps": ..., ...}
                       then one line per frame: {"frame": "frames/000000.jpg", "t": 0.0}
    frames/            the images (JPEG or PNG)
    camera.json        optional camera file (SPEC section 4)
    truth.jsonl        optional (rendered samples): one line per frame with its exact truth
    declarations.jsonl optional: what the players declared (referee.game.Declaration JSON, one a
                       line, with "t" the time of the frame it followed); `refcam replay` replays them

A frame is written to a temporary name and renamed before its manifest line is
appended and flushed, so a recording cut off by a crash or ``kill -9`` replays up
to its last whole frame; a torn last manifest line is ignored.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterator

from referee import safeload
from referee.errors import InvalidInputError

MANIFEST = "manifest.jsonl"
DECLARATIONS = "declarations.jsonl"
FORMAT_VERSION = 1
MAX_FPS = 1000.0
MAX_SESSION_S = 1e7  # about 116 days
# a manifest's time stepping back more than this many frame periods, and at least this many
# seconds, is a clock that restarted, not lines out of order (vision.session._clock_restarts)
CLOCK_RESTART_PERIODS = 8
CLOCK_RESTART_MIN_S = 2.0


class SessionError(InvalidInputError):
    """A session folder that cannot be replayed."""


@dataclass(frozen=True)
class FrameEntry:
    index: int
    t: float  # seconds from the start of the session
    path: Path


@dataclass(frozen=True)
class Session:
    folder: Path
    header: dict
    frames: tuple[FrameEntry, ...]
    warnings: tuple[str, ...] = ()

    @property
    def game(self) -> str | None:
        return self.header.get("game")

    @property
    def camera_file(self) -> Path | None:
        p = self.folder / "camera.json"
        return p if p.exists() else None

    def declarations(self) -> list[dict]:
        """What the players declared during the recording, oldest first: JSON objects with a
        "t" (s); refused with the line named when one is not an object with a time."""
        p = self.folder / DECLARATIONS
        if not p.exists():
            return []
        text = safeload.read_text(p, "declarations file", SessionError)
        out = []
        for n, value in safeload.parse_json_lines(text, f"declarations file {p}", SessionError):
            where = f"declarations file {p} line {n}"
            if value is None:  # a torn last line: the recording was cut off while writing it
                continue
            value = safeload.mapping(value, where, SessionError)
            if "t" not in value:
                raise SessionError(f"{where} has no \"t\": {safeload.show(value)}")
            safeload.number(value["t"], f"{where}: t", SessionError, lo=-MAX_SESSION_S, hi=MAX_SESSION_S)
            out.append(value)
        return sorted(out, key=lambda v: v["t"])

    def truth(self) -> list[dict] | None:
        """Per-frame truth lines of a rendered session, if present."""
        p = self.folder / "truth.jsonl"
        if not p.exists():
            return None
        text = safeload.read_text(p, "truth file", SessionError)
        return [value for _, value in safeload.parse_json_lines(text, f"truth file {p}", SessionError)]


def read_session(folder: str | os.PathLike) -> Session:
    """Read a session folder; a missing frame file is skipped with a warning."""
    folder = Path(folder)
    if not folder.is_dir():
        there = os.path.lexists(folder)
        raise SessionError(f"session folder {folder} " + ("is not a folder (a file, a FIFO, a device or a broken "
                                                          "link)" if there else "does not exist"))
    manifest = folder / MANIFEST
    if not manifest.exists() and not manifest.is_symlink():
        raise SessionError(f"session folder {folder} has no readable {MANIFEST}")
    text = safeload.read_text(manifest, "manifest", SessionError)
    lines = safeload.parse_json_lines(text, f"manifest {manifest}", SessionError)
    if not lines:
        raise SessionError(f"manifest {manifest} is empty")
    n, header = lines[0]
    if header is None:  # a manifest of one line that is not JSON: say why
        safeload.parse_json(text.splitlines()[n - 1], f"manifest {manifest} line {n}", SessionError)
    if n != 1 or not isinstance(header, dict) or "refcam_session" not in header:
        raise SessionError(f"manifest {manifest} line 1 is not a refcam session header")
    _check_header(header, f"manifest {manifest} line 1")
    frames: list[FrameEntry] = []
    warnings: list[str] = []
    root = folder.resolve()
    inside_dirs: dict[str, bool] = {}  # a frame folder resolved once, not once a line
    listed: dict[str, frozenset[str] | None] = {}  # a frame folder's names, listed once
    for n, entry in lines[1:]:
        if entry is None:  # torn last line after a crash
            warnings.append(f"manifest line {n} is incomplete (recording cut off); ignored")
            continue
        rel, t = _frame_line(entry, f"manifest {manifest} line {n}")
        if ".." not in rel.split("/") and not _listed(folder, rel, listed):
            warnings.append(f"frame {rel} is missing; skipped")
            continue
        path = folder / rel
        problem = _frame_problem(path, root, inside_dirs)
        if problem:
            warnings.append(f"frame {rel} {problem}; skipped")
            continue
        frames.append(FrameEntry(index=len(frames), t=t, path=path))
    frames = _in_time_order(frames, warnings)
    return Session(folder=folder, header=header, frames=tuple(frames), warnings=tuple(warnings))


def _listed(folder: Path, rel: str, listed: dict[str, frozenset[str] | None]) -> bool:
    """Whether rel's name is in its folder's listing, read once a folder: a missing frame is known
    without a system call. True when the folder cannot be listed (the full check then decides)."""
    head, name = os.path.split(rel)
    if head not in listed:
        try:
            listed[head] = frozenset(os.listdir(os.path.join(folder, head)))
        except (FileNotFoundError, NotADirectoryError):
            listed[head] = frozenset()
        except (OSError, ValueError):
            listed[head] = None
    names = listed[head]
    return names is None or name in names


def _frame_problem(path: Path, root: Path, inside_dirs: dict[str, bool]) -> str | None:
    """Why a manifest's frame cannot be read (a symlink loop, outside the session folder: a shared
    session must not read the user's files; missing), or None. A frame's folder is resolved once
    (a 200,000-line manifest took 19 s resolving each path); a symlink or a ".." on its own."""
    try:
        if ".." in path.parts or os.path.islink(path):
            inside = path.resolve().is_relative_to(root)
        else:
            key = str(path.parent)
            if key not in inside_dirs:
                inside_dirs[key] = path.parent.resolve().is_relative_to(root)
            inside = inside_dirs[key]
    except (OSError, RuntimeError):  # a symlink loop (RuntimeError before Python 3.13)
        return "is a symlink loop"
    if not inside:
        return "lies outside the session folder"
    if not path.is_file():
        return "is missing"
    return None


def _in_time_order(frames: list[FrameEntry], warnings: list[str]) -> list[FrameEntry]:
    """The frames once each, in time order. A manifest line repeated (the same frame at the same
    time) is one frame; lines out of time order (a clock that stepped back, lines appended late)
    are put in order, since the tracker's calm time is measured between frames; frames sharing a
    time keep the manifest's order. Each repair is said once, so the replay is not silently
    different from the recording."""
    seen: set[tuple[Path, float]] = set()
    once: list[FrameEntry] = []
    repeated = 0
    for entry in frames:
        key = (entry.path, entry.t)
        if key in seen:
            repeated += 1
            continue
        seen.add(key)
        once.append(entry)
    if repeated:
        warnings.append(f"{repeated} manifest line(s) repeat a frame already listed at the same time; "
                        f"each frame is replayed once")
    once = _clock_restarts(once, warnings)
    late = sum(1 for a, b in zip(once, once[1:]) if b.t < a.t)
    if late:
        warnings.append(f"{late} frame(s) are listed before an earlier time; replayed in time order")
    ordered = sorted(once, key=lambda e: e.t)  # stable: frames of one time keep the manifest's order
    shared = sum(1 for a, b in zip(ordered, ordered[1:]) if b.t == a.t)
    if shared:
        warnings.append(f"{shared} frame(s) share their time with the frame before; replayed in manifest order")
    return [replace(e, index=k) for k, e in enumerate(ordered)]


def _clock_restarts(frames: list[FrameEntry], warnings: list[str]) -> list[FrameEntry]:
    """A manifest whose times step far back (a recording resumed with its clock from zero, two
    recordings appended) lists its frames in the order they were taken: sorting by time would
    interleave two moments of the game. A step back of more than CLOCK_RESTART_PERIODS frame
    periods (and at least CLOCK_RESTART_MIN_S) starts a new stretch, replayed one period after
    the frame before it; smaller steps are lines out of order, sorted by the caller."""
    steps = sorted(b.t - a.t for a, b in zip(frames, frames[1:]) if b.t > a.t)
    period = steps[len(steps) // 2] if steps else 0.25
    limit = max(CLOCK_RESTART_MIN_S, CLOCK_RESTART_PERIODS * period)
    out: list[FrameEntry] = []
    offset, latest = 0.0, None
    for entry in frames:
        t = entry.t + offset
        if latest is not None and t < latest - limit:
            warnings.append(f"the clock goes back {latest - t:.2f} s at frame {entry.path.name} (a recording "
                            f"resumed?): the frames from it are replayed after the ones before it")
            offset += latest + period - t
            t = latest + period
        latest = t if latest is None else max(latest, t)
        out.append(replace(entry, t=t))
    return out


def _check_header(header: dict, where: str) -> None:
    """The header fields refcam uses: a game name and the frame rate, typed and in range."""
    safeload.optional(header, "game", safeload.text, f"{where}: game", SessionError, max_len=64)
    safeload.optional(header, "fps", safeload.number, f"{where}: fps", SessionError, lo=0, hi=MAX_FPS, lo_open=True)


def _frame_line(entry, where: str) -> tuple[str, float]:
    """(relative frame path, t) of one manifest line, or one line saying what is wrong with it."""
    entry = safeload.mapping(entry, where, SessionError)
    if "frame" not in entry or "t" not in entry:
        raise SessionError(f"{where} needs \"frame\" and \"t\", got {safeload.show(entry)}")
    rel = safeload.text(entry["frame"], f"{where}: frame", SessionError, max_len=1024)
    if os.path.isabs(rel):
        raise SessionError(f"{where}: frame {rel!r} must be a path inside the session folder")
    t = safeload.number(entry["t"], f"{where}: t", SessionError, lo=-MAX_SESSION_S, hi=MAX_SESSION_S)
    return rel, t


class SessionWriter:
    """Append frames to a session folder crash-safely."""

    def __init__(self, folder: str | os.PathLike, game: str | None = None,
                 camera_file: str | os.PathLike | None = None, **header):
        """camera_file: the source's camera file, kept in the recording as camera.json so a
        replay measures with the lens it was recorded through."""
        self.folder = Path(folder)
        try:
            if (os.path.lexists(self.folder) or self.folder.exists()) and not self.folder.is_dir():
                raise SessionError(f"{self.folder} exists and is not a folder (a FIFO, a device, a file or a "
                                   f"broken link); choose a new folder")
            if (self.folder / MANIFEST).exists():
                raise SessionError(f"{self.folder} already holds a session; choose a new folder")
            if self.folder.is_dir() and any(self.folder.iterdir()):  # frames/ could overwrite the user's files
                raise SessionError(f"{self.folder} already exists and is not empty; choose a new folder")
            (self.folder / "frames").mkdir(parents=True, exist_ok=True)
            self._manifest = open(self.folder / MANIFEST, "a", encoding="utf-8")
        except OSError as exc:
            raise SessionError(f"cannot write session folder {self.folder}: {exc.strerror or exc}") from None
        head = {"refcam_session": FORMAT_VERSION, "game": game, "created": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        head.update(header)
        self._append(head)
        self.count = 0
        if camera_file is not None:
            try:
                self.keep_camera_file(camera_file)
            except SessionError:
                self.close()
                raise

    def keep_camera_file(self, path: str | os.PathLike) -> None:
        """Copy a camera file into the session as camera.json."""
        try:
            shutil.copyfile(path, self.folder / "camera.json")
        except OSError as exc:
            raise SessionError(f"cannot copy camera file {path} into {self.folder}: {exc.strerror or exc}") from None

    def _append(self, obj: dict) -> None:
        self._manifest.write(json.dumps(obj) + "\n")
        self._manifest.flush()
        os.fsync(self._manifest.fileno())

    def add_encoded(self, data: bytes, t: float, ext: str = ".jpg") -> Path:
        """Add one already-encoded frame taken t seconds after the start."""
        rel = f"frames/{self.count:06d}{ext}"
        final = self.folder / rel
        tmp = final.with_suffix(final.suffix + ".part")
        safeload.replace_whole(final, data, tmp)  # an OSError names the file (the CLI and the page say which)
        try:
            self._append({"frame": rel, "t": round(float(t), 4)})
        except OSError as exc:  # a full disk: say which file could not be written
            raise OSError(exc.errno, exc.strerror or str(exc), str(self.folder / MANIFEST)) from None
        self.count += 1
        return final

    def add_declaration(self, declaration: dict) -> None:
        """Keep one declaration of the players (JSON with its time "t"), flushed at once."""
        with open(self.folder / DECLARATIONS, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(declaration) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def close(self) -> None:
        self._manifest.close()

    def __enter__(self) -> "SessionWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def iter_frames(session: Session) -> Iterator[FrameEntry]:
    yield from session.frames
