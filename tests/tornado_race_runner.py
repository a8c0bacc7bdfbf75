"""Replay the race session's stable observation files through the Tornado referee."""

from __future__ import annotations

import json
from pathlib import Path

from referee.observation import Observation


def replay_race(folder: Path) -> list[dict]:
    from referee.tornado.referee import TornadoReferee
    from referee.tornado.turnlog import TurnLog, advance
    from tests.test_tornado_race import positions

    where = positions()
    ref = TornadoReferee(str(folder / "course.json"))
    log, ranking, out = TurnLog(), [], []
    for f in sorted((folder / "stable").glob("*.observation.json")):
        doc = json.loads(f.read_text())
        obs = Observation.from_json(doc)
        log, rulings, warnings = advance(log, obs, ranking, list(ref.memory.crossed))
        ref.observe_stable(obs, doc["t"])
        res = ref.last_result
        ranking = [b.name for b in res.boats if b.rank is not None and b.status == "racing"]
        out.append({"position": where[doc["frame_file"]], "rulings": [r.to_json() for r in rulings],
                    "warnings": warnings, "finished": {b.name: b.finished for b in res.boats},
                    "game_over": res.game_over, "placed": [b.name for b in res.boats
                                                           if b.status == "placed without crossing"]})
    return out
