"""Grand Prix Mode: three races, points and totals; a race result with two boats in one place is refused."""

import pytest

from referee.errors import InvalidInputError
from referee.tornado.rounds import GrandPrix, check_race_result


def test_grand_prix_totals_over_three_races():
    gp = GrandPrix()
    gp.add_race({"tornado/boat-1": 1, "tornado/boat-2": 2, "tornado/boat-3": 3, "tornado/boat-4": 4})
    gp.add_race({"tornado/boat-2": 1, "tornado/boat-1": 2, "tornado/boat-3": 3, "tornado/boat-4": 4})
    gp.add_race({"tornado/boat-3": 1, "tornado/boat-1": 2, "tornado/boat-2": 3, "tornado/boat-4": 4})
    assert gp.totals() == {"tornado/boat-1": 11, "tornado/boat-2": 10, "tornado/boat-3": 9, "tornado/boat-4": 0}
    assert gp.over and gp.leaders() == ["tornado/boat-1"]


def test_two_boats_in_one_place_is_refused():
    gp = GrandPrix()
    with pytest.raises(InvalidInputError, match="boat-1 and tornado/boat-2 both in place 1"):
        gp.add_race({"tornado/boat-1": 1, "tornado/boat-2": 1, "tornado/boat-3": 3})
    assert gp.races == []


def test_eliminated_boats_share_last_place():
    check_race_result({"a": 1, "b": 2, "c": 4, "d": 4}, eliminated=("c", "d"))
    with pytest.raises(InvalidInputError):
        check_race_result({"a": 1, "b": 2, "c": 4, "d": 4}, eliminated=("c",))


def test_grand_prix_setting_round_trips_and_next_race_keeps_totals():
    from referee.tornado.rounds import format_grand_prix, grand_prix_view, parse_grand_prix

    gp = parse_grand_prix("boat-2=1,boat-1=2,boat-3=3")
    assert gp.totals() == {"tornado/boat-2": 5, "tornado/boat-1": 3, "tornado/boat-3": 0}
    assert parse_grand_prix(format_grand_prix(gp)).races == gp.races
    view = grand_prix_view(gp, {"tornado/boat-1": 1, "tornado/boat-2": 2, "tornado/boat-3": 3})
    assert view["totals_after_this_race"] == {"tornado/boat-2": 8, "tornado/boat-1": 8, "tornado/boat-3": 0}
    assert parse_grand_prix(view["next_race_setting"]).totals() == view["totals_after_this_race"]


def test_grand_prix_setting_refuses_a_shared_place():
    from referee.tornado.rounds import parse_grand_prix

    with pytest.raises(InvalidInputError, match="both in place 1"):
        parse_grand_prix("boat-1=1,boat-2=1")


def test_live_race_view_offers_the_next_race_with_totals_kept():
    """The race session through the Game with Grand Prix Mode on: when the race ends, the
    view scores it and offers the setting for race 2 with the totals kept."""
    import json
    from pathlib import Path

    from referee.game import parse_settings
    from referee.observation import Observation
    from referee.tornado.game import GAME
    from tests.tornado_race_runner import play_on

    race = Path(__file__).resolve().parents[1] / "samples" / "sessions" / "tornado-race"
    if not (race / "stable").is_dir():
        pytest.skip("the race session is not generated (make samples)")
    state = GAME.new_state(parse_settings(GAME, {"course": str(race / "course.json"), "grand_prix": "new"}))
    for f in sorted((race / "stable").glob("*.observation.json")):
        doc = json.loads(f.read_text())
        state = play_on(state, Observation.from_json(doc), doc["t"]).state  # its illegal turns accepted
    gp = GAME.view(state).data["grand_prix"]
    assert gp["this_race"]["places"] == {"tornado/boat-2": 1, "tornado/boat-1": 2, "tornado/boat-3": 3}
    assert gp["totals_after_this_race"] == {"tornado/boat-2": 5, "tornado/boat-1": 3, "tornado/boat-3": 0}
    nxt = GAME.new_state(parse_settings(GAME, {"course": str(race / "course.json"),
                                               "grand_prix": gp["next_race_setting"]}))
    assert GAME.view(nxt).data["grand_prix"]["totals"] == gp["totals_after_this_race"]
    offer = GAME.view(state).to_json()["offers"][0]  # the page's button for race 2
    assert offer["label"] == "Start race 2 (totals kept)" and offer["settings"] == {"grand_prix": gp["next_race_setting"]}


def test_the_next_race_is_offered_as_a_button_the_page_server_accepts():
    """The view's offer carries the next race's setting; posting it as the page does starts race 2
    with the totals kept (the engine's options change, its game stays)."""
    from pathlib import Path

    from referee.game import parse_settings
    from referee.tornado.game import GAME, _next_race_offer
    from referee.tornado.rounds import grand_prix_view, parse_grand_prix
    from vision.sources import SessionSource
    from webui.app import create_app
    from webui.live import LiveEngine, LiveSettings, pipeline_observe

    state = GAME.new_state(parse_settings(GAME, {"grand_prix": "new"}))
    assert GAME.view(state).offers == ()  # nothing scored yet: nothing to offer
    view = grand_prix_view(parse_grand_prix("boat-2=1,boat-1=2,boat-3=3"),
                           {"tornado/boat-1": 1, "tornado/boat-2": 2, "tornado/boat-3": 3})
    offers = _next_race_offer(view)
    assert [o.label for o in offers] == ["Start race 3 (totals kept)"]
    expected = view["totals_after_this_race"]
    assert parse_grand_prix(offers[0].settings["grand_prix"]).totals() == expected
    folder = Path(__file__).resolve().parents[1] / "samples" / "sessions" / "tornado"
    if not (folder / "manifest.jsonl").exists():
        pytest.skip("samples/sessions/tornado is not rendered yet (make samples)")
    engine = LiveEngine(SessionSource(folder, realtime=False), pipeline_observe, LiveSettings(game="tornado"))
    client = create_app({"TESTING": True, "ENGINE": engine, "START_ENGINE": False}).test_client()
    r = client.post("/api/config", json={"game": "tornado", **offers[0].settings})
    assert r.status_code == 200 and r.get_json()["changed"], r.get_json()
    assert client.get("/api/state").get_json()["state"]["data"]["grand_prix"]["totals"] == expected
    engine.stop()
