"""`refcam observe` names each piece the game needs that it did not read, with its sticker's size in
px and what would fix it, and never makes it out of a place holding another piece's sticker."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from referee.game import ExpectedPiece
from referee.registry import get_game

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "kang"


def test_observe_names_a_needed_piece_it_cannot_read(monkeypatch):
    from webui import cli

    if not (SAMPLE / "004.jpg").exists():
        pytest.skip("bundled Kang sample not generated")
    kang = get_game("kang")
    # alfalfa-2 is not on this table; the game "needs" it where kang/medium-2 stands (another id there)
    wanted = (ExpectedPiece("kang/alfalfa-2", -17.80, 21.46, 0.0, 2.0),)
    monkeypatch.setattr(type(kang), "expected_pieces", lambda self, state: wanted, raising=False)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(["observe", str(SAMPLE / "004.jpg"), "--camera-file", str(SAMPLE / "004.camera.json")])
    text = out.getvalue()
    assert code == 0
    first, table = text.split("\n", 1)
    assert first.startswith("Read: ") and "not read: kang/alfalfa-2" in first  # the verdict names it first
    assert "kang/alfalfa-2 " not in table.split("warning:")[0]  # not in the table of pieces
    assert "warning: needed piece kang/alfalfa-2 not read: another piece's sticker is where it should be" in text
    assert "seen empty" not in text
