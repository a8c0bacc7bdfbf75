"""Replay the race session's stable observation files through the Tornado Splash Game
(referee/tornado/game.py: new_state, step, view), as the live page and `refcam replay` do
after the vision step."""

from __future__ import annotations

import json
import re
from pathlib import Path

from referee.observation import Observation


def _boat_of(r: dict) -> str | None:
    d = r.get("details") or {}
    name = d.get("boat") or d.get("piece")
    if isinstance(name, str) and name.startswith("tornado/boat-"):
        return name
    m = re.search(r"boat-\d", r["summary"])
    return f"tornado/{m.group(0)}" if m else None


def normalise(r: dict) -> dict:
    """A rulings-log entry as the race test reads it: boat, section, legal, verdict, summary."""
    rule = r.get("rule") or ""
    section = rule.split(", ", 1)[1] if rule.startswith("Tornado Splash, ") else rule
    verdict = {True: "ok", False: "violation"}.get(r.get("legal"), (r.get("details") or {}).get("verdict", "note"))
    return {"boat": _boat_of(r), "section": section, "legal": r.get("legal"), "verdict": verdict,
            "summary": r["summary"], "kind": r["kind"]}


def play_on(state, observation: Observation, t: float):
    """The race's step as the script plays it: it plays on from its illegal turns, so the
    players accept each one (referee/pending.py) and what follows from it is recorded then."""
    from referee.game import Step
    from referee.tornado.game import GAME
    from referee.tornado.pending import accept_illegal_turn

    step = GAME.step(state, observation, t)
    if not any(r.kind == "pending" for r in step.rulings):
        return step
    accepted = accept_illegal_turn(step.state, t)
    return Step(accepted.state, step.rulings + accepted.rulings)


def positions(folder: Path) -> dict[str, int]:
    """Each stable frame's file name -> its position in the scripted race (the session's truth.jsonl)."""
    out = {}
    for line in (folder / "truth.jsonl").read_text().splitlines():
        d = json.loads(line)
        out[Path(d["frame"]).name] = d["position"]
    return out


def replay_race(folder: Path) -> list[dict]:
    from referee.game import parse_settings
    from referee.tornado.game import GAME

    where = positions(folder)
    state = GAME.new_state(parse_settings(GAME, {"course": str(folder / "course.json")}))
    out = []
    for f in sorted((folder / "stable").glob("*.observation.json")):
        doc = json.loads(f.read_text())
        step = play_on(state, Observation.from_json(doc), doc["t"])
        state = step.state
        view = GAME.view(state).data
        rulings = [normalise(r.to_json()) for r in step.rulings]
        out.append({"position": where[doc["frame_file"]], "rulings": rulings,
                    "warnings": [r["summary"] for r in rulings if r["kind"] == "warning"],
                    "finished": {b["name"]: b.get("finished") for b in view["ranking"]},
                    "game_over": view.get("game_over"),
                    "placed": [b["name"] for b in view["ranking"] if b.get("status") == "placed without crossing"]})
    return out
