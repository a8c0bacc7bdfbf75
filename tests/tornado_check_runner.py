"""How the tests run `tornado check` on two observation files."""

import json

from referee.observation import Observation
from referee.tornado.check import check_turn


def check_files(before: str, after: str) -> dict:
    load = [Observation.from_json(json.loads(open(p).read())) for p in (before, after)]
    return check_turn(*load).to_json()
