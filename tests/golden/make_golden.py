"""Write the golden files that pin refcam's rulings (issue: one seam for three games).

    python -m tests.golden.make_golden        # rewrite tests/golden/*.json

* ``replay-<game>.json``: `refcam replay --json` on each bundled session;
* ``rank-tornado-NNN.json``: `refcam rank --json` on each bundled Tornado still, with its
  course, the boats in play (``--boats``, from the scene) and ``--assume-layout``.

Rewrite them only for a change that is meant to change rulings, and say so in the commit.
``tests/test_golden.py`` compares against them; what it treats as volatile is documented there.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden"
SESSIONS = ("kang", "kayak", "tornado")


def run_cli(argv: list[str]) -> object:
    """`refcam ARGV` in this process; its JSON output."""
    from webui.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    if code != 0:
        raise RuntimeError(f"refcam {' '.join(argv)} exited {code}: {err.getvalue().strip()}")
    return json.loads(out.getvalue())


def replay_argv(game: str) -> list[str]:
    return ["replay", str(REPO / "samples" / "sessions" / game), "--json"]


def tornado_stills() -> list[dict]:
    index = json.loads((REPO / "samples" / "index.json").read_text())
    return [s for s in index["stills"] if s["game"] == "tornado"]


def rank_argv(still: dict) -> list[str]:
    """`refcam rank` as the players at that table would run it: their course and the boats in
    play (the scene's boats, whether or not a hand hides one)."""
    image = REPO / "samples" / still["image"]
    camera = image.with_suffix(".camera.json")
    truth = json.loads((REPO / "samples" / still["truth"]).read_text())
    boats = sorted(p["name"].split("/")[-1] for p in truth["pieces"] if p["name"].startswith("tornado/boat-"))
    return ["rank", str(image), "--course", still["course"], "--camera-file", str(camera),
            "--boats", ",".join(boats), "--assume-layout", "--json"]


def golden_cases() -> list[tuple[str, list[str]]]:
    """(golden file name, argv) for every pinned run."""
    cases = [(f"replay-{g}.json", replay_argv(g)) for g in SESSIONS]
    for still in tornado_stills():
        stem = Path(still["image"]).stem
        cases.append((f"rank-tornado-{stem}.json", rank_argv(still)))
    return cases


# Goldens pin rulings a person has checked, not how hard a search worked for them: these
# keys (search statistics) are left out of the files and out of the comparison.
NOT_RULINGS = frozenset({"positions_searched"})


def pinned(doc):
    """The document without NOT_RULINGS keys, at any depth."""
    if isinstance(doc, dict):
        return {k: pinned(v) for k, v in doc.items() if k not in NOT_RULINGS}
    if isinstance(doc, list):
        return [pinned(v) for v in doc]
    return doc


def main() -> int:
    for name, argv in golden_cases():
        doc = pinned(run_cli(argv))
        (GOLDEN / name).write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
        print(name, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
