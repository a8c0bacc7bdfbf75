"""Course identification from the pieces in view (referee/tornado/identify.py)."""

import json
from pathlib import Path

import pytest

from referee.observation import Observation
from referee.tornado.errors import CourseNotIdentifiedError
from referee.tornado.identify import choose_course, identify_course
from tests.tornado_pieces import observation, pose

DATA = Path(__file__).parent / "data" / "tornado"
SAMPLES = Path(__file__).parents[1] / "samples" / "tornado"


@pytest.mark.parametrize("index", range(15))
def test_each_bundled_still_fits_exactly_its_own_course(index):
    obs = Observation.from_json(json.loads((DATA / f"still-{index:03d}.observation.json").read_text()))
    truth = json.loads((SAMPLES / f"{index:03d}.scene.json").read_text())["course"]
    spec, why = choose_course(obs)
    assert spec.id == truth and "fit only" in why


def test_nothing_but_boats_lists_every_course_and_asks():
    obs = observation(pose("tornado/boat-1", 0, 0), pose("tornado/boat-2", 50, 0))
    with pytest.raises(CourseNotIdentifiedError, match="fit 4 courses: .*pass --course"):
        choose_course(obs)


def test_marker_face_and_opening_rule_courses_out():
    # marker 1 with two right-turn curve cards opening 180 deg: roundabout river, not raindrop road
    obs = observation(pose("tornado/curve-marker-1", 500, 0), pose("tornado/curve-card-1", 500, 0, 90, face="right-turn"),
                      pose("tornado/curve-card-4", 500, 0, -90, face="right-turn"))
    fits = {f.course: f for f in identify_course(obs)}
    assert [c for c, f in fits.items() if f.fits] == ["roundabout-river"]
    assert "opens 180 deg" in fits["raindrop-road"].against[0]
    assert "left there" in fits["splashway"].against[0]


def test_marker_not_in_a_course_rules_it_out():
    fits = {f.course: f for f in identify_course(observation(pose("tornado/curve-marker-3", 0, 0)))}
    assert [c for c, f in fits.items() if f.fits] == ["raindrop-road"]
    assert "uses markers 1" in fits["roundabout-river"].against[0]
