"""Checks on the files a command writes, made before any work is done."""

from __future__ import annotations

import os
from pathlib import Path

from referee.errors import InvalidInputError


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """True when a and b name one file (through links, `./`, `..`); a missing file is compared by path."""
    pa, pb = Path(a), Path(b)
    try:
        return os.path.samefile(pa, pb)
    except OSError:  # one of them does not exist yet (or is a symlink loop)
        pass
    try:
        return pa.resolve() == pb.resolve()
    except (OSError, RuntimeError):  # a symlink loop (RuntimeError before Python 3.13): compare as written
        return pa.absolute() == pb.absolute()


def refuse_overwriting_inputs(option: str, out: str | os.PathLike | None,
                              inputs: list[tuple[str, str | os.PathLike | None]]) -> None:
    """Refuse an output path that names one of the command's inputs, so a slip of the
    tongue (`--annotate photo.jpg`) never destroys the user's own file.

    inputs: (description, path) pairs such as ("the image", "photo.jpg"); a None path was not given.
    """
    if not out:
        return
    for what, path in inputs:
        if path and same_file(out, path):
            raise InvalidInputError(f"{option} {str(out)!r} would overwrite {what} {str(path)!r}; "
                                    f"choose another file name")
