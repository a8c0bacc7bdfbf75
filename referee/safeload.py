"""One safe way to read every JSON and session file refcam is handed.

A file from a user (a camera file, a scene, an observation, a course, a session
manifest, a catalog) may be huge, nested a hundred thousand levels deep, hold NaN,
Infinity or a 400-digit number, a NUL inside a path, or be a symlink loop or a
folder. Each of those used to end in a traceback (RecursionError, OverflowError,
TypeError) far from the file; here each ends in one line naming the file, raised as
the caller's own RefcamError subclass.

Reading (regular files only: a FIFO, a device such as /dev/zero, a folder or a symlink loop is one line):
    regular_file(path, what, ...)                      -> Path (checked, not opened)
    read_bytes(path, what, error=..., max_bytes=...)  -> bytes
    read_text(path, what, ...)                         -> str (UTF-8)
    load_json(path, what, ...)                         -> the parsed value
    parse_json(text, source, ...)                      -> the parsed value
    parse_json_lines(text, source, ...)                -> [(line number, value or None)]

Writing (a new or regular file in an existing folder; whole or not at all; a full disk names the file):
    output_path(path, what, ...) -> Path;  write_bytes(path, data, what, ...);  write_text(path, text, what, ...)

Typed fields (each raises `error` with a message quoting the field):
    mapping(value, what), number(value, what, lo=, hi=), integer(value, what, lo=, hi=),
    numbers(value, n, what, lo=, hi=), text(value, what, max_len=), optional(doc, key, check, ...)

Pure Python: no numpy, no cv2, so referee/, vision/, calibration/ and webui/ can all use it.
"""

from __future__ import annotations

import errno
import itertools
import json
import math
import operator
import os
import re
import stat
from pathlib import Path
from typing import Any, Callable

from referee.errors import InvalidInputError

MAX_JSON_BYTES = 32_000_000  # a session manifest of a long evening is a few MB
MAX_JSON_DEPTH = 64  # the deepest legitimate file (a catalog) nests 6 levels
MAX_INT_DIGITS = 18  # larger integers lose precision as floats; nothing refcam reads needs them
MAX_TEXT_CHARS = 4096

_STRING = re.compile(r'"[^"]*"')  # once escapes are gone a string is quote, non-quotes, quote
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_AS_STEPS = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")  # opening 2, closing 0: depth = sum - count


def _raise(error: type[Exception], message: str) -> None:
    raise error(message)


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n} bytes"


# --- files ---------------------------------------------------------------------------------
def _kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    for test, name in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a regular file"


def _check_name(name, what: str, error: type[Exception]) -> None:
    if isinstance(name, str) and "\x00" in name:
        _raise(error, f"{what} name {show(name)} holds a NUL character")
    if isinstance(name, bytes) and b"\x00" in name:
        _raise(error, f"{what} name {show(name.decode('utf-8', 'replace'))} holds a NUL character")


def regular_file(path: str | os.PathLike, what: str = "file", error: type[Exception] = InvalidInputError,
                 max_bytes: int | None = None) -> Path:
    """The path of an existing regular file (through symlinks), else one line saying what it is:
    missing, a folder, a symlink loop, a FIFO (which would block an open forever), a device
    (/dev/zero never ends), or larger than max_bytes. Nothing is opened."""
    name = os.fspath(path)
    _check_name(name, what, error)
    path = Path(name)
    try:
        st = os.stat(path)
    except (OSError, ValueError) as exc:  # ValueError: a name too odd for the OS
        _raise(error, _failure(exc, what, path, "read"))
    if stat.S_ISDIR(st.st_mode):
        _raise(error, f"{what} {path} is a folder, not a file")
    if not stat.S_ISREG(st.st_mode):
        _raise(error, f"{what} {path} is {_kind(st.st_mode)}, not a regular file")
    if max_bytes is not None and st.st_size > max_bytes:
        _raise(error, f"{what} {path} is {_size(st.st_size)}; refcam reads at most {_size(max_bytes)}")
    return path


def read_bytes(path: str | os.PathLike, what: str = "file", error: type[Exception] = InvalidInputError,
               max_bytes: int | None = MAX_JSON_BYTES) -> bytes:
    """The bytes of a regular file, or one line: missing, a folder, a symlink loop, a FIFO or a
    device, too big, unreadable. The file is opened without blocking (a FIFO swapped in after the
    check cannot hang the read) and read to at most max_bytes + 1 bytes."""
    path = regular_file(path, what, error, max_bytes)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
        with open(fd, "rb", closefd=True) as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):  # swapped between the check and the open
                _raise(error, f"{what} {path} is not a regular file")
            if max_bytes is None:
                return fh.read()
            size = os.fstat(fh.fileno()).st_size
            if size > max_bytes:
                _raise(error, f"{what} {path} is {_size(size)}; refcam reads at most {_size(max_bytes)}")
            data = fh.read(max_bytes + 1)
            if len(data) > max_bytes:  # a file that grew while being read
                _raise(error, f"{what} {path} is larger than {_size(max_bytes)}")
            return data
    except error:
        raise
    except (OSError, ValueError) as exc:  # the file went between the check and the open, or cannot be read
        _raise(error, _failure(exc, what, path, "read"))
    raise AssertionError("unreachable")  # pragma: no cover


def _failure(exc: BaseException, what: str, path: Path, verb: str) -> str:
    """One line for an OSError (or a ValueError for an odd name) met reading or writing path."""
    if isinstance(exc, FileNotFoundError) and verb == "read":
        return f"no such {what}: {path}"
    if isinstance(exc, IsADirectoryError):
        return f"{what} {path} is a folder, not a file"
    if isinstance(exc, OSError) and exc.errno == errno.ELOOP:
        return f"{what} {path} is a symlink loop"
    return f"cannot {verb} {what} {path}: {getattr(exc, 'strerror', None) or exc}"


# --- writing -------------------------------------------------------------------------------
def output_path(path: str | os.PathLike, what: str = "output file",
                error: type[Exception] = InvalidInputError) -> Path:
    """A path refcam may write a file to: in an existing folder, and either new or a regular file
    (a FIFO would block the write forever, a device swallow it). One line otherwise."""
    name = os.fspath(path)
    _check_name(name, what, error)
    path = Path(name)
    folder = path.parent if str(path.parent) else Path(".")
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except (OSError, ValueError) as exc:
        _raise(error, _failure(exc, what, path, "write"))
    if st is not None and not stat.S_ISREG(st.st_mode):
        _raise(error, f"{what} {path} is {_kind(st.st_mode)}; refcam writes only regular files")
    if st is None and os.path.islink(path):
        _raise(error, f"{what} {path} is a symlink to nowhere; refcam does not write through it")
    if not folder.is_dir():
        _raise(error, f"cannot write {what} {path}: folder {folder} does not exist")
    return path


def write_bytes(path: str | os.PathLike, data: bytes, what: str = "output file",
                error: type[Exception] = InvalidInputError) -> Path:
    """Write a whole file or nothing: into a temporary file beside it, then renamed over it. A full
    disk or a write error is one line naming the file, and an older file of that name is kept."""
    path = output_path(path, what, error)
    try:
        replace_whole(path, data, path.with_name(f".{path.name}.refcam-{os.getpid()}.tmp"))
    except OSError as exc:
        _raise(error, _failure(exc, what, path, "write"))
    return path


def replace_whole(path: Path, data: bytes, tmp: Path) -> None:
    """data into tmp, on the disk (fsync), then renamed over path: a crash or a full disk leaves
    path as it was, never half written. Raises OSError naming tmp or path; tmp is removed."""
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise OSError(exc.errno, exc.strerror or str(exc), str(exc.filename or tmp)) from None


def write_text(path: str | os.PathLike, text: str, what: str = "output file",
               error: type[Exception] = InvalidInputError) -> Path:
    return write_bytes(path, text.encode("utf-8"), what, error)


def read_text(path: str | os.PathLike, what: str = "file", error: type[Exception] = InvalidInputError,
              max_bytes: int | None = MAX_JSON_BYTES) -> str:
    data = read_bytes(path, what, error, max_bytes)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        _raise(error, f"{what} {path} is not text (not UTF-8)")
    raise AssertionError("unreachable")  # pragma: no cover


def load_json(path: str | os.PathLike, what: str = "JSON file", error: type[Exception] = InvalidInputError,
              max_bytes: int = MAX_JSON_BYTES, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Read and parse a JSON file within the limits; every failure is one line of `error`."""
    data = read_bytes(path, what, error, max_bytes)
    return parse_json(data, f"{what} {path}", error, max_bytes=max_bytes, max_depth=max_depth)


# --- parsing -------------------------------------------------------------------------------
def json_depth_exceeds(text: str, max_depth: int) -> bool:
    """True when brackets nest deeper than max_depth, in time linear in the text whatever it holds.

    Escapes go first: escaped backslashes (pairs, left to right, as JSON reads them), then escaped
    quotes, so no quote inside a string is left; then strings (quote to quote, which can no longer
    backtrack: a string full of escaped quotes once cost the square of its length here), then
    everything but brackets. The depth is then one running sum over the brackets (each opening +1,
    each closing -1), done by C iterators."""
    unescaped = text.replace("\\\\", "").replace('\\"', "")
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", unescaped))
    if len(brackets) <= max_depth:
        return False
    steps = brackets.encode("ascii").translate(_AS_STEPS)  # 2 or 0 per bracket
    depths = map(operator.sub, itertools.accumulate(steps), itertools.count(1))  # opened - closed
    return max(depths) > max_depth


def parse_json(text: str | bytes, source: str = "JSON", error: type[Exception] = InvalidInputError,
               max_bytes: int = MAX_JSON_BYTES, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """json.loads within limits: size, nesting depth, finite numbers of sane magnitude."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8-sig")
        except UnicodeDecodeError:
            _raise(error, f"{source} is not JSON (not even text)")
    if len(text) > max_bytes:
        _raise(error, f"{source} is larger than {_size(max_bytes)}")
    if len(text) > 2 * max_depth and json_depth_exceeds(text, max_depth):  # shorter text cannot nest deeper
        _raise(error, f"{source} nests deeper than {max_depth} levels")

    try:
        return _DECODER.decode(text)
    except _BadNumber as exc:
        _raise(error, f"{source} {exc}")
    except json.JSONDecodeError as exc:
        _raise(error, f"{source} is not JSON (line {exc.lineno}: {exc.msg})")
    except RecursionError:  # unbalanced input the depth scan could not fold: still one line
        _raise(error, f"{source} nests deeper than {max_depth} levels")
    raise AssertionError("unreachable")  # pragma: no cover


class _BadNumber(ValueError):
    """A number refcam does not read; its text completes "<source> ..."."""


def _bad_constant(name: str):
    raise _BadNumber(f"holds {name}; refcam reads finite numbers only")


def _checked_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise _BadNumber(f"holds a {len(digits.lstrip('-'))}-digit integer; "
                         f"refcam reads at most {MAX_INT_DIGITS} digits")
    return int(digits)


def _checked_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise _BadNumber(f"holds {literal[:20]}{'...' if len(literal) > 20 else ''}, beyond the range of a number")
    return value


# one decoder for every parse (json.loads with hooks built a new one a call: a fifth of a manifest's time)
_DECODER = json.JSONDecoder(parse_constant=_bad_constant, parse_int=_checked_int, parse_float=_checked_float)


def parse_json_lines(text: str, source: str = "JSON lines", error: type[Exception] = InvalidInputError,
                     max_depth: int = MAX_JSON_DEPTH) -> list[tuple[int, Any]]:
    """Each non-blank line parsed on its own: (1-based line number, value). A line that is not
    JSON within the limits raises `error` (one line), except the last line, which gives (n, None):
    the caller decides whether a torn last line (a recording cut off by a crash) is tolerable."""
    out: list[tuple[int, Any]] = []
    lines = text.splitlines()
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            out.append((n, parse_json(line, f"{source} line {n}", error, max_depth=max_depth)))
        except error:
            if n != len(lines):
                raise
            out.append((n, None))  # the torn last line of a recording cut off by a crash
    return out


# --- messages ------------------------------------------------------------------------------
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # C0, DEL and C1: ESC[2J would clear the user's terminal
_NAMED_CONTROL = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: str) -> str:
    """text with every control character written out (\\n, \\r, \\t or \\xNN): a name quoted in a
    message may hold a line break or a terminal escape, and the message stays one plain line."""
    return _CONTROL.sub(lambda m: _NAMED_CONTROL.get(m.group(), f"\\x{ord(m.group()):02x}"), text)


# --- typed fields --------------------------------------------------------------------------
def show(value: Any) -> str:
    """A JSON value for a one-line message, cut to 60 characters."""
    try:
        shown = json.dumps(value)
    except (TypeError, ValueError):
        shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def mapping(value: Any, what: str, error: type[Exception] = InvalidInputError) -> dict:
    if not isinstance(value, dict):
        _raise(error, f"{what} must be a JSON object, got {show(value)}")
    return value


def number(value: Any, what: str, error: type[Exception] = InvalidInputError, lo: float | None = None,
           hi: float | None = None, lo_open: bool = False) -> float:
    """A finite JSON number (not a bool, not a string) within [lo, hi] (or (lo, hi] with lo_open)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        _raise(error, f"{what} must be a number, got {show(value)}")
    try:
        out = float(value)
    except OverflowError:
        _raise(error, f"{what} is beyond the range of a number")
    if not math.isfinite(out):
        _raise(error, f"{what} must be a finite number, got {show(value)}")
    if lo is not None and (out < lo or (lo_open and out == lo)):
        _raise(error, f"{what} must be {'above' if lo_open else 'at least'} {lo:g}, got {show(value)}")
    if hi is not None and out > hi:
        _raise(error, f"{what} must be at most {hi:g}, got {show(value)}")
    return out


def integer(value: Any, what: str, error: type[Exception] = InvalidInputError, lo: int | None = None,
            hi: int | None = None) -> int:
    """A whole JSON number (3 or 3.0) within [lo, hi]."""
    out = number(value, what, error, lo, hi)
    if out != int(out):
        _raise(error, f"{what} must be a whole number, got {show(value)}")
    return int(out)


def numbers(value: Any, n: int | tuple[int, ...], what: str, error: type[Exception] = InvalidInputError,
            lo: float | None = None, hi: float | None = None) -> list[float]:
    """A list of n finite numbers (n may be a tuple of allowed lengths), each within [lo, hi]."""
    lengths = (n,) if isinstance(n, int) else tuple(n)
    if not isinstance(value, (list, tuple)) or len(value) not in lengths:
        count = " or ".join(str(k) for k in lengths)
        _raise(error, f"{what} must be a list of {count} numbers, got {show(value)}")
    return [number(v, f"{what}[{i}]", error, lo, hi) for i, v in enumerate(value)]


def text(value: Any, what: str, error: type[Exception] = InvalidInputError, max_len: int = MAX_TEXT_CHARS,
         allow_empty: bool = False) -> str:
    """A JSON string without NUL characters, at most max_len characters."""
    if not isinstance(value, str):
        _raise(error, f"{what} must be text, got {show(value)}")
    if "\x00" in value:
        _raise(error, f"{what} holds a NUL character: {show(value)}")
    if len(value) > max_len:
        _raise(error, f"{what} is {len(value)} characters long; at most {max_len}")
    if not value and not allow_empty:
        _raise(error, f"{what} is empty")
    return value


def optional(doc: dict, key: str, check: Callable[..., Any], what: str, *args, default: Any = None,
             **kwargs) -> Any:
    """doc[key] through check(value, what, *args, **kwargs), or default when absent or null."""
    value = doc.get(key)
    if value is None:
        return default
    return check(value, what, *args, **kwargs)
