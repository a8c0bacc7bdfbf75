"""`--catalog FILE`: a user's edited catalog is checked against the sticker protocol and,
once accepted, is the catalog every part of the command reads."""

from __future__ import annotations

import json

import pytest

from referee import catalog as catalog_module
from referee.catalog import DEFAULT_CATALOG_PATH, default_catalog, load_user_catalog, use_catalog
from referee.errors import CatalogError
from webui.cli import main


@pytest.fixture(autouse=True)
def packaged_catalog_afterwards():
    yield
    use_catalog(None)


def edited(tmp_path, change) -> str:
    data = json.loads(DEFAULT_CATALOG_PATH.read_text())
    change(data)
    path = tmp_path / "my-catalog.json"
    path.write_text(json.dumps(data))
    return str(path)


def family(data, name):
    return next(f for f in data["families"] if f["family"] == name)


def run_cli(capsys, argv):
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_the_packaged_catalog_passes_its_own_checks():
    assert len(list(load_user_catalog(DEFAULT_CATALOG_PATH).stickers())) == len(list(default_catalog().stickers()))


def test_measured_sizes_placements_and_layouts_are_accepted(tmp_path):
    def measure(data):
        family(data, "tornado/boat")["sticker_mm"] = 14
        family(data, "kayak/tile")["slots"]["A-upstream"]["xy_mm"] = [-60.5, 1.0]
        family(data, "kayak/tile")["pieces"][1]["layout"]["A"][2] = "R...R"
        family(data, "tornado/racing-card")["pieces"][0]["kind"] = "straight-3"
    cat = use_catalog(edited(tmp_path, measure))
    assert default_catalog() is cat
    assert cat.sticker(200).size_mm == 14
    assert cat.piece("kayak/tile-0").sticker("A-upstream").x_mm == -60.5
    assert cat.piece("tornado/card-1-01").attrs["kind"] == "straight-3"
    use_catalog(None)
    assert default_catalog().sticker(200).size_mm == 16


@pytest.mark.parametrize("change, message", [
    (lambda d: family(d, "tornado/boat")["pieces"][0]["ids"].update(main=299), "id 200 .* missing"),
    (lambda d: family(d, "tornado/gate")["pieces"][0]["ids"].update(left=261, right=260),
     "id 260 names tornado/start-gate right"),
    (lambda d: d.update(dictionary="DICT_4X4_1000"), "dictionary"),
    (lambda d: family(d, "kang/kangaroo").update(sticker_mm="16 mm"), "kang/kangaroo sticker_mm must be"),
    (lambda d: family(d, "tornado/gate")["slots"]["left"].update(xy_mm=[0]), "xy_mm must be two numbers"),
    (lambda d: family(d, "kayak/tile")["pieces"][0]["layout"]["A"].__setitem__(1, "..X.."), "row 2"),
    (lambda d: family(d, "tornado/racing-card")["pieces"][3].update(kind="zigzag"), "zigzag"),
    (lambda d: family(d, "kayak/action-card")["pieces"][0].update(kind="jetpack"), "jetpack"),
    (lambda d: family(d, "kayak/tile")["pieces"][0].update(layout=["SSSSS"]), "malformed|layout"),
])
def test_protocol_breaches_are_refused_in_one_line(tmp_path, change, message):
    path = edited(tmp_path, change)
    before = default_catalog()
    with pytest.raises(CatalogError, match=message) as info:
        use_catalog(path)
    assert "\n" not in str(info.value) and path in str(info.value)
    assert default_catalog() is before


def test_markers_prints_the_users_sticker_size(tmp_path, capsys):
    path = edited(tmp_path, lambda d: family(d, "tornado/boat").update(sticker_mm=13))
    code, out, _ = run_cli(capsys, ["markers", "--game", "tornado", "--out", tmp_path / "s", "--json",
                                    "--catalog", path])
    assert code == 0, out
    from synth import printing
    boat = [s for s in printing.stickers_for_game("tornado") if s.marker_id == 200][0]
    assert boat.size_mm == 13 and catalog_module.default_catalog().source == path


@pytest.mark.parametrize("command", [["markers", "--game", "kang", "--out", "OUT"], ["observe", "img.jpg"],
                                     ["render", "s.json", "o.jpg"], ["calibrate", "--images", "d", "--out", "c.json"],
                                     ["record", "--camera", "0", "--out", "OUT"]])
def test_every_command_refuses_a_bad_catalog_before_doing_anything(tmp_path, capsys, command):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    argv = [str(tmp_path / "out") if a == "OUT" else a for a in command] + ["--catalog", bad]
    code, out, err = run_cli(capsys, argv)
    assert code == 2 and out == ""
    assert err.startswith("refcam: error: argument --catalog: ") and err.count("\n") == 1 and "is not JSON" in err
    assert not (tmp_path / "out").exists()
