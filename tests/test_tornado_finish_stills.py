"""Stills at the finish line (samples/tornado-finish): crossings called by the front
bracket of the movement space, with "too close to call" inside the band; no wrong call."""

import json
from pathlib import Path

import pytest

from tests.test_cli_bad_input import run_cli

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data" / "tornado"
FINISH = REPO / "samples" / "tornado-finish"


@pytest.mark.parametrize("index", range(3))
def test_finish_crossings_match_the_truth_or_say_too_close(index, capsys):
    code, out, err = run_cli(capsys, ["rank", DATA / f"finish-{index:03d}.observation.json", "--course", "splashway",
                                      "--json"])
    assert code == 0, err
    doc = json.loads(out)
    truth = json.loads((FINISH / f"{index:03d}.scene.json").read_text())["tags"]["finish_truth"]
    calls = {b["name"]: b["finished"] for b in doc["ranking"]}
    for boat, t in truth.items():
        past = t["front_bracket_past_mm"]
        if abs(past) < 0.1:
            assert calls[boat] == "too close to call", (boat, past, calls[boat])
        else:
            assert calls[boat] is (past > 0), (boat, past, calls[boat])


def test_a_too_close_crossing_is_among_the_stills():
    truths = [json.loads((FINISH / f"{i:03d}.scene.json").read_text())["tags"]["finish_truth"] for i in range(3)]
    assert sum(abs(t["front_bracket_past_mm"]) < 0.1 for tr in truths for t in tr.values()) >= 2
