"""`refcam rank` on ordinary photos (issue 11): the layout fallback by default (`--strict`
for the old refusal), the course identified when not given, the pair-difference numbers
behind every call, hidden boats named, and the course checked before the history."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.tornado.ranking import EQUIDISTANT
from tests.test_cli_bad_input import assert_one_line_error, run_cli

REPO = Path(__file__).resolve().parents[1]
STILLS = REPO / "samples" / "tornado"
DATA = REPO / "tests" / "data" / "tornado"


def course_of(index: int) -> str:
    return json.loads((STILLS / f"{index:03d}.scene.json").read_text())["course"]


@pytest.mark.slow
@pytest.mark.parametrize("index", range(15))
def test_rank_ranks_every_bundled_still_given_only_its_course(index, capsys):
    code, out, err = run_cli(capsys, ["rank", STILLS / f"{index:03d}.jpg", "--course", course_of(index), "--json"])
    assert code == 0, err
    doc = json.loads(out)
    assert doc["ranking"] and all(b["rank"] is not None for b in doc["ranking"]), doc["ranking"]
    assert len(doc["pairs"]) == len(doc["ranking"]) - 1
    # the boats in play are not given: completeness is claimed only with all six boats in view
    assert doc["complete"] is (True if len(doc["ranking"]) == 6 else None)
    # given them (the scene's boats), the ranking is complete exactly when every one is ranked
    truth = json.loads((STILLS / f"{index:03d}.truth.json").read_text())
    boats = sorted(p["name"] for p in truth["pieces"] if p["name"].startswith("tornado/boat-"))
    code, out, err = run_cli(capsys, ["rank", STILLS / f"{index:03d}.jpg", "--course", course_of(index),
                                      "--boats", ",".join(boats), "--json"])
    doc = json.loads(out)
    ranked = {b["name"] for b in doc["ranking"] if b["rank"] is not None}
    assert doc["complete"] is (ranked == set(boats)), (ranked, boats)
    for hidden in sorted(set(boats) - ranked):
        assert f"{hidden.split('/')[-1]} not seen: under a hand?" in doc["warnings"]


@pytest.mark.parametrize("index", range(15))
def test_pairs_carry_delta_sigma_band_and_never_contradict_their_reason(index, capsys):
    code, out, err = run_cli(capsys, ["rank", DATA / f"still-{index:03d}.observation.json", "--course",
                                      course_of(index), "--json"])
    assert code == 0, err
    doc = json.loads(out)
    names = [b["name"] for b in doc["ranking"] if b["status"] == "racing"]
    weight = {b["name"]: b["weight"] for b in doc["ranking"]}
    assert [(p["ahead"], p["behind"]) for p in doc["pairs"]] == list(zip(names, names[1:]))
    assert "grouping" in doc and "measured order" in doc["grouping"]
    for p in doc["pairs"]:
        assert {"delta", "sigma_delta", "band", "reason"} <= set(p)
        if p["verdict"] == EQUIDISTANT:
            assert abs(p["delta"]) < p["band"] and weight[p["ahead"]] <= weight[p["behind"]]
        elif p["verdict"] == "ahead":
            assert p["delta"] >= p["band"]


def test_layout_fallback_is_the_default_and_names_each_piece(capsys):
    code, out, _ = run_cli(capsys, ["rank", DATA / "still-003.observation.json", "--course", "tornado-circuit",
                                    "--json"])
    doc = json.loads(out)
    assert code == 0
    layout = [w for w in doc["warnings"] if "from the course file" in w]
    assert any("curve 1" in w and "+-15 mm" in w for w in layout) and any("curve 2" in w for w in layout)


def test_strict_refuses_pieces_out_of_view(capsys):
    code, _, err = run_cli(capsys, ["rank", DATA / "still-003.observation.json", "--course", "tornado-circuit",
                                    "--strict"])
    assert_one_line_error(code, err, "needs pieces not found", "curve-marker-2")


def test_hidden_boat_under_a_hand_is_never_a_complete_ranking(capsys):
    """Issue 21 (commands item 4): still 007 shows boat-1 only, boat-6 is under a hand."""
    code, out, err = run_cli(capsys, ["rank", STILLS / "007.jpg", "--course", "tornado-circuit", "--json"])
    doc = json.loads(out)
    assert code == 0 and doc["complete"] is None and any("boats in play are not known" in w for w in doc["warnings"])
    code, out, err = run_cli(capsys, ["rank", STILLS / "007.jpg", "--course", "tornado-circuit", "--boats", "1,6",
                                      "--json"])
    doc = json.loads(out)
    assert code == 0 and doc["complete"] is False and "boat-6 not seen: under a hand?" in doc["warnings"]
    code, _, err = run_cli(capsys, ["rank", STILLS / "007.jpg", "--course", "tornado-circuit", "--boats", "1,9"])
    assert_one_line_error(code, err, "boats '1,9'", "'9' is not a boat")


def test_hidden_boat_seen_in_the_history_is_named_and_the_ranking_incomplete(capsys, tmp_path):
    now = json.loads((DATA / "still-001.observation.json").read_text())
    before = json.loads(json.dumps(now))
    now["pieces"] = [p for p in now["pieces"] if p["name"] != "tornado/boat-6"]
    a, b = tmp_path / "before.json", tmp_path / "now.json"
    a.write_text(json.dumps(before))
    b.write_text(json.dumps(now))
    code, out, err = run_cli(capsys, ["rank", b, "--course", "roundabout-river", "--history", a, "--json"])
    doc = json.loads(out)
    assert code == 0, err
    assert "boat-6 not seen: under a hand?" in doc["warnings"] and doc["complete"] is False


def test_course_is_checked_before_the_history_is_read(capsys, monkeypatch):
    import referee.tornado.commands as rank

    def never(*a, **k):
        raise AssertionError("the history was read before the course was checked")

    monkeypatch.setattr(rank, "_history_states", never)
    code, _, err = run_cli(capsys, ["rank", DATA / "still-003.observation.json", "--course", "tornado-circuit",
                                    "--strict", "--history", REPO / "samples" / "sessions" / "tornado"])
    assert_one_line_error(code, err, "needs pieces not found")


def test_history_of_a_session_shows_progress_and_names_a_hidden_boat(capsys, monkeypatch, tmp_path):
    """--history on a recorded session: progress on stderr while it is read; boat-1, seen in
    the history but under a hand in the photo ranked, is named and the ranking incomplete."""
    import webui.tools as tools
    from referee.observation import Observation

    race = REPO / "samples" / "sessions" / "tornado-race"
    files = sorted((race / "stable").glob("*.observation.json"))

    def stable(self, folder, camera_file, game):  # the session's stable states, without the vision step
        for f in files[:12]:
            doc = json.loads(f.read_text())
            yield doc["t"], Observation.from_json(doc)

    monkeypatch.setattr(tools.CliTools, "stable_observations", stable)
    code, out, err = run_cli(capsys, ["rank", files[12], "--course", race / "course.json", "--history", race,
                                      "--json"])
    assert code == 0, err
    assert "refcam: reading history tornado-race: stable state 12" in err
    doc = json.loads(out)
    assert "boat-1 not seen: under a hand?" in doc["warnings"] and doc["complete"] is False


def test_tokens_in_their_gate_spaces_are_equal_in_every_round_weight_decides(capsys, tmp_path):
    """When Equidistant: boat-4 stands 8 mm further forward in its gate space than boat-2,
    and boat-1 is already out on a card (not the first round): still boat-2 (lighter) first."""
    from referee.tornado.course_spec import load_course
    from referee.tornado.layout import layout_observation
    from tests.tornado_pieces import card_name, pose

    spec = load_course("tornado-circuit")
    obs = layout_observation(spec, {"tornado/boat-2": (0.0, 60.0, 0.0), "tornado/boat-4": (8.0, -60.0, 0.0),
                                    "tornado/boat-1": (113.0, 0.0, 0.0)},
                             extra=[pose(card_name(1, "straight-3"), 77.0, 0.0)])
    path = tmp_path / "gate.json"
    path.write_text(json.dumps(obs.to_json()))
    code, out, err = run_cli(capsys, ["rank", path, "--course", "tornado-circuit", "--json"])
    assert code == 0, err
    doc = json.loads(out)
    assert doc["first_round"] is False
    names = [b["name"] for b in doc["ranking"]]
    assert names.index("tornado/boat-2") < names.index("tornado/boat-4")
    gate = [p for p in doc["pairs"] if {p["ahead"], p["behind"]} == {"tornado/boat-2", "tornado/boat-4"}]
    assert gate and gate[0]["verdict"] == "start gate" and gate[0]["delta"] == 0.0


def test_photo_finish_panel_fits_a_phone_and_keeps_every_warning():
    """The explanation's panel lines are at most PANEL_WIDTH characters (a 390 px screen),
    warnings wrap instead of being cut, the pair numbers are there, and the focus is the
    boats in question, not the whole course."""
    from referee.game import parse_settings
    from referee.observation import Observation
    from referee.tornado.game import GAME
    from referee.tornado.picture import PANEL_WIDTH

    obs = Observation.from_json(json.loads((DATA / "still-003.observation.json").read_text()))
    state = GAME.new_state(parse_settings(GAME, {"course": "tornado-circuit"}))
    ex = GAME.explain(state, obs)
    assert all(len(line) <= PANEL_WIDTH for line in ex.lines)
    text = " ".join(ex.lines)
    assert "B3>B6 D+1.3deg" in text.replace("  ", " ") or any(line.startswith("B3>B6") for line in ex.lines)
    assert "from the course file" in " ".join(line.strip() for line in ex.lines)
    x0, y0, x1, y1 = ex.focus
    assert x1 - x0 < 800 and y1 - y0 < 800


def test_a_course_that_does_not_fit_is_refused_naming_what_contradicts_it(capsys):
    """Issue 21 (commands item 2): still 001 is Roundabout River (a right-turn curve at marker 1,
    opening 180 deg); Splashway turns left there through 90 deg, so ranking on it is refused."""
    code, _, err = run_cli(capsys, ["rank", STILLS / "001.jpg", "--course", "splashway"])
    line = assert_one_line_error(code, err, "--course 'splashway' does not fit the pieces in view",
                                 "curve-card-1 at marker 1 shows its right-turn face", "fit roundabout-river")
    assert "Traceback" not in line
    code, out, err = run_cli(capsys, ["rank", STILLS / "001.jpg", "--course", "roundabout-river", "--json"])
    assert code == 0, err


def test_replay_takes_the_sessions_own_course_file(tmp_path):
    from referee.tornado.game import GAME
    from webui.commands.replay import session_options

    (tmp_path / "course.json").write_text("{}")
    options, notes = session_options(tmp_path, GAME, {}, {})
    assert options["course"] == str(tmp_path / "course.json") and notes == [
        "--course not given: the session's own course.json is used"]
    given, notes = session_options(tmp_path, GAME, {}, {"course": "splashway"})  # the command line wins
    assert given["course"] == "splashway" and notes == []
    (tmp_path / "course.json").unlink()
    options, _ = session_options(tmp_path, GAME, {"course": "tornado-circuit"}, {})  # else the header's
    assert options["course"] == "tornado-circuit"
