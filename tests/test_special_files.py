"""Every command's file arguments with a FIFO, /dev/zero, a symlink loop and a 300 MB sparse file
(issue 22): one line and exit 2 (or 0 for an output a regular file may stand in for) within 5 s,
the whole walk under 600 MB of resident memory and an address-space limit (tests/special_files.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import special_files

REPO = Path(__file__).resolve().parents[1]
# read by one shared loader whatever the command (each is walked on several commands above):
SHARED_LOADERS = {"--catalog": "webui.catalog_option / referee.catalog.use_catalog",
                  "--camera-file": "calibration.camera.CameraModel.load via referee.safeload"}
POSITIONAL_LABELS = {"image": "IMAGE", "scene": "SCENE", "out": "OUT", "session": "DIR", "folder": "DIR",
                     "before": "BEFORE", "after": "AFTER", "position": "POSITION"}


def _leaf_commands() -> dict[str, list]:
    from webui.cli import build_parser

    out: dict[str, list] = {}

    def walk(parser, prefix):
        for action in parser._actions:
            if action.dest in ("command", "game_command") and action.choices:
                for name, sub in action.choices.items():
                    walk(sub, prefix + [name])
                return
        out[" ".join(prefix)] = [a for a in parser._actions if a.dest != "help"]

    walk(build_parser(), [])
    return out


def test_every_file_argument_of_every_command_is_walked():
    labels = list(special_files.FILE_ARGUMENTS)
    missing = []
    for command, actions in _leaf_commands().items():
        for action in actions:
            name = action.option_strings[0] if action.option_strings else action.dest
            if name in special_files.NOT_FILES or action.nargs == 0 or name in SHARED_LOADERS:
                continue
            shown = name if action.option_strings else POSITIONAL_LABELS.get(name, name.upper())
            if not any(label.startswith(f"{command} {shown}") for label in labels):
                missing.append(f"{command} {shown}")
    # tornado check AFTER is read by the same loader as its BEFORE
    missing = [m for m in missing if m != "tornado check AFTER"]
    assert not missing, f"file arguments not walked by tests/special_files.py: {missing}"


@pytest.fixture(scope="module")
def walk(tmp_path_factory) -> dict:
    report = tmp_path_factory.mktemp("special") / "report.json"
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MALLOC_ARENA_MAX="2")
    env.pop("REFCAM_CATALOG", None)
    proc = subprocess.run([sys.executable, "-m", "tests.special_files", str(report)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(report.read_text())


@pytest.mark.parametrize("kind", special_files.KINDS)
def test_special_files_end_in_one_line_quickly(walk, kind):
    results = [r for r in walk["results"] if r["kind"] == kind]
    assert len(results) == len(special_files.FILE_ARGUMENTS)
    bad = [r for r in results if not r["ok"] or r["seconds"] >= special_files.CASE_S]
    assert not bad, json.dumps(bad, indent=1)
    if kind != "sparse":  # nothing refcam writes or reads may be one of these: every case is refused
        assert all(r["code"] == 2 for r in results), [r["case"] for r in results if r["code"] != 2]


def test_the_walk_stays_under_600_mb(walk):
    assert walk["peak_rss_mb"] < 600, walk["peak_rss_mb"]
