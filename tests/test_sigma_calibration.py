"""Sigma right, not only safe (issue 13): on a small fixed set of rendered tables, clean and
under a camera's tone curve, 2 sigma must cover >= 90 % of the per-axis errors and 0.5 sigma
hold no more than ~75 % of them (a Gaussian puts 38 % there). A sigma doubled (a blanket
margin) or halved (overconfident) fails one side: checked when this test was written.

`make bench-robust` measures the same per condition at scale (and flags > 70 %).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

from tests.bench import robust
from tests.bench.accuracy import camera_of
from tests.bench.vision_scenes import BUILDERS
from vision import pipeline

SCENES = (("tornado", 4301), ("kayak", 4302), ("tornado", 4303), ("kayak", 4304))
CONDITIONS = ("clean", "tone sRGB-like")
COVER_2SIGMA_MIN = 0.90
WITHIN_HALF_SIGMA_MAX = 0.75


@lru_cache(maxsize=None)
def _render(game: str, seed: int):
    from synth.render import render_scene
    return render_scene(BUILDERS[game](np.random.default_rng(seed), "1080p"), apply_jpeg=False)


@lru_cache(maxsize=None)
def _z(condition: str) -> np.ndarray:
    """|error| / sigma per axis of every piece but the frame anchor, over SCENES."""
    zs = []
    for game, seed in SCENES:
        image, truth = _render(game, seed)
        obs = pipeline.observe(robust.jpeg(robust.degrade(image, condition)), camera_of(truth), game=game)
        assert obs.frame["game_frame"]
        tr = {p["name"]: p for p in truth["pieces"]}
        for p in obs.pieces:
            if p.name != obs.frame["anchor"]:
                # renders stick every sticker exactly: the measurement's own term (without the placement tolerance)
                sigma = p.measure_sigma_mm
                zs += [abs(p.x_mm - tr[p.name]["x_mm"]) / sigma, abs(p.y_mm - tr[p.name]["y_mm"]) / sigma]
    return np.array(zs)


@pytest.mark.parametrize("condition", CONDITIONS)
def test_two_sigma_covers(condition):
    z = _z(condition)
    assert len(z) >= 60
    assert (z <= 2).mean() >= COVER_2SIGMA_MIN, f"{condition}: only {100 * (z <= 2).mean():.0f} % within 2 sigma"


@pytest.mark.parametrize("condition", CONDITIONS)
def test_sigma_is_not_a_blanket_margin(condition):
    z = _z(condition)
    share = (z <= 0.5).mean()
    assert share <= WITHIN_HALF_SIGMA_MAX, f"{condition}: {100 * share:.0f} % of errors within 0.5 sigma: inflated"
