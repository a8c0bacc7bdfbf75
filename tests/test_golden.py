"""Rulings pinned before the game seam refactor (tests/golden, written by tests.golden.make_golden).

What counts as the same:
* every key, list length, string and boolean is equal;
* numbers agree within 0.002 absolute (the documents round to 3 decimals, so a refactor
  that adds the same terms in another order may move the last digit) and 1e-4 relative;
* numbers inside summaries are compared the same way (the rest of the text is exact).
Not compared: search statistics (make_golden.NOT_RULINGS, e.g. ``positions_searched``), which
the files leave out: a golden pins rulings a person checked. A change meant to change rulings
rewrites the golden files (``python -m tests.golden.make_golden``) and says why in its commit.
"""

from __future__ import annotations

import json
import math
import re

import pytest

from tests.golden.make_golden import GOLDEN, NOT_RULINGS, golden_cases, run_cli

ABS_TOL, REL_TOL = 0.002, 1e-4
NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
VOLATILE_KEYS: frozenset[str] = NOT_RULINGS


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def differences(got, want, path: str = "$") -> list[str]:
    """Where two JSON documents differ beyond the tolerances above (empty: the same)."""
    if isinstance(want, bool) or want is None or isinstance(got, bool) or got is None:
        return [] if got == want else [f"{path}: {got!r} != {want!r}"]
    if isinstance(want, (int, float)) and isinstance(got, (int, float)):
        return [] if _close(float(got), float(want)) else [f"{path}: {got} != {want}"]
    if isinstance(want, str) and isinstance(got, str):
        return _text_differences(got, want, path)
    if isinstance(want, dict) and isinstance(got, dict):
        keys = (got.keys() | want.keys()) - VOLATILE_KEYS
        out = [f"{path}.{k}: missing" if k not in got else f"{path}.{k}: unexpected"
               for k in sorted(keys) if (k in got) != (k in want)]
        for k in sorted(keys & got.keys() & want.keys()):
            out += differences(got[k], want[k], f"{path}.{k}")
        return out
    if isinstance(want, list) and isinstance(got, list):
        if len(got) != len(want):
            return [f"{path}: {len(got)} items != {len(want)}"]
        return [d for i, (g, w) in enumerate(zip(got, want)) for d in differences(g, w, f"{path}[{i}]")]
    return [f"{path}: {type(got).__name__} != {type(want).__name__}"]


def _text_differences(got: str, want: str, path: str) -> list[str]:
    if NUMBER.sub("#", got) != NUMBER.sub("#", want):
        return [f"{path}: {got!r} != {want!r}"]
    pairs = zip(NUMBER.findall(got), NUMBER.findall(want))
    if all(_close(float(g), float(w)) for g, w in pairs):
        return []
    return [f"{path}: {got!r} != {want!r}"]


def test_comparator_notices_a_changed_ruling():
    want = {"rulings": [{"legal": True, "summary": "boat-1 ahead by 4.200 mm"}]}
    assert differences(want, want) == []
    assert differences({"rulings": [{"legal": False, "summary": "boat-1 ahead by 4.200 mm"}]}, want)
    assert differences({"rulings": [{"legal": True, "summary": "boat-1 ahead by 4.300 mm"}]}, want)
    assert differences({"rulings": [{"legal": True, "summary": "boat-2 ahead by 4.200 mm"}]}, want)
    assert differences({"rulings": []}, want)
    assert differences({"rulings": [{"legal": True, "summary": "boat-1 ahead by 4.2009 mm"}]}, want) == []
    # a search counter is no ruling: neither its value nor its presence is compared
    counted = {"rulings": [{"legal": True, "summary": "boat-1 ahead by 4.200 mm", "positions_searched": 1183}]}
    assert differences(counted, want) == []


@pytest.mark.slow
@pytest.mark.parametrize("name,argv", golden_cases(), ids=[n for n, _ in golden_cases()])
def test_rulings_match_golden(name, argv):
    want = json.loads((GOLDEN / name).read_text())
    got = json.loads(json.dumps(run_cli(argv)))
    diff = differences(got, want)
    assert not diff, f"{name} differs from its golden file in {len(diff)} places, first: {diff[:5]}"
