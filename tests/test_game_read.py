"""Needed pieces in whole games through a webcam: a piece vision did not read is named with what
limits it, a first-pass read dropped in the deciding frames is brought back by the stream's
re-read, and a place truly empty is never made into a piece."""

from __future__ import annotations

from dataclasses import replace

from referee.kayak.game import GAME as KAYAK
from referee.rulings import cannot_tell
from tests.kayak_tools import SAMPLES, FakeTools
from vision.pipeline import not_read_warnings


def _kayak_tables():
    """The bundled Kayak Chaos session's stable tables from its truth: the first river, then turn 1."""
    tables = [(t, o) for t, o in FakeTools().stable_observations(str(SAMPLES / "sessions" / "kayak"), None, "kayak")
              if not o.warnings]
    return tables[0], tables[1]


def test_a_kayak_not_read_is_named_with_what_limits_it_not_taken_for_a_hand():
    (t0, first), (t1, turn) = _kayak_tables()
    state = KAYAK.step(KAYAK.new_state({"advanced": False}), first, t0).state
    # turn 1 moves pawn-2; pawn-3, still at its place, is not read, and vision says why
    unread = replace(turn, pieces=tuple(p for p in turn.pieces if p.name != "kayak/pawn-3"),
                     warnings=tuple(not_read_warnings([("kayak/pawn-3", 21.0, "")])))
    assert "a hand" in unread.warnings[0]  # the advice mentions a hand: it is no hand in view
    rulings = KAYAK.step(state, unread, t1).rulings
    assert len(rulings) == 1 and cannot_tell(rulings[0])
    summary = rulings[0].summary
    assert summary.startswith("Cannot tell: kayak/pawn-3 was not read")
    assert "about 21 px wide" in summary and "in view" not in summary


def test_a_hand_in_view_still_stops_the_kayak_ruling():
    (t0, first), (t1, turn) = _kayak_tables()
    state = KAYAK.step(KAYAK.new_state({"advanced": False}), first, t0).state
    rulings = KAYAK.step(state, replace(turn, warnings=("a hand is in view",)), t1).rulings
    assert len(rulings) == 1 and rulings[0].summary.startswith("Cannot tell: a hand or an object is in view")
