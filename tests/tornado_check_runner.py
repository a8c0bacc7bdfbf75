"""How the tests run `refcam tornado check BEFORE AFTER` on two observation files: the
real command line, in this process."""

from __future__ import annotations

import contextlib
import io
import json


def check_files(before: str, after: str) -> dict:
    from webui.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["tornado", "check", before, after, "--json"])
    assert code == 0, err.getvalue()
    return json.loads(out.getvalue())
