"""What the live engine tells the page about a ruling: whether nothing was judged (the contract's
cannot_tell), and which pieces an illegal ruling names, outlined on the video where they stand."""

from __future__ import annotations

import math

from referee.observation import PiecePose
from referee.rulings import Ruling
from tests.live_helpers import frame_image, move_script, scripted_observe, write_session
from vision.sources import SessionSource
from webui.live import LiveEngine, LiveSettings, offending_outlines, offending_pieces


def _ruling(legal, pieces=None, kind="move", summary="Illegal: small-1 jumped twice (Gameplay)."):
    return Ruling(t=1.0, game="kang", kind=kind, summary=summary, legal=legal,
                  details={} if pieces is None else {"pieces": pieces})


def test_the_offending_pieces_are_those_the_illegal_rulings_name():
    rulings = [_ruling(True, ["kang/small-2"]), _ruling(False, ["kang/small-1", "kang/large-1"]),
               _ruling(None, ["kang/large-1", "kang/medium-1"], kind="violation"), _ruling(False)]
    assert offending_pieces(rulings) == ("kang/small-1", "kang/large-1", "kang/medium-1")
    assert offending_pieces([_ruling(True, ["kang/small-2"])]) == ()


def test_an_offending_piece_is_outlined_just_outside_its_footprint_where_it_stands():
    pose = PiecePose(name="kang/small-1", marker_ids=(), x_mm=40.0, y_mm=-20.0, theta_deg=30.0, z_mm=5.0,
                     sigma_mm=0.5)
    other = PiecePose(name="kang/large-1", marker_ids=(), x_mm=0.0, y_mm=0.0, theta_deg=0.0, z_mm=5.0, sigma_mm=0.5)
    (shape,) = offending_outlines(("kang/small-1", "kang/gone"), (pose, other))
    assert shape.kind == "polygon" and shape.role == "illegal"
    distances = [math.hypot(x - pose.x_mm, y - pose.y_mm) for x, y in shape.points]
    from referee.catalog import default_catalog, footprint_polygon

    reach = max(math.hypot(x, y) for x, y in footprint_polygon(default_catalog().piece(pose.name).footprint, 16))
    assert min(distances) > reach - 1e-6 and max(distances) < reach + 4.0 + 1e-6  # 4 mm outside, all round
    assert offending_outlines((), (pose,)) == ()


class _Ruled:
    """The real game, but every step also rules the newest state illegal, naming small-1."""

    def __init__(self, game):
        self._game = game

    def __getattr__(self, name):
        return getattr(self._game, name)

    def step(self, state, observation, t):
        from dataclasses import replace

        step = self._game.step(state, observation, t)
        return replace(step, rulings=tuple(step.rulings) + (_ruling(False, ["kang/small-1"]),))


def test_the_page_hears_cannot_tell_and_sees_the_offending_piece_outlined(tmp_path, monkeypatch):
    from webui import overlay

    drawn = []
    real = overlay.render_overlay

    def render_overlay(image, obs, pieces, hidden, status, mapping, shapes=()):
        drawn.append(shapes)  # what each frame of the video was drawn with
        return real(image, obs, pieces, hidden, status, mapping, shapes)

    monkeypatch.setattr(overlay, "render_overlay", render_overlay)
    engine = LiveEngine(SessionSource(write_session(tmp_path / "s", 30), realtime=False),
                        scripted_observe(move_script("kang")), LiveSettings(game="kang"))
    engine.game = _Ruled(engine.game)
    events = engine.events.subscribe()
    engine.frames.subscribe()  # a page watching: every frame is drawn
    for i in range(30):
        engine.process(i / 10.0, frame_image(i))
    rulings = []
    while (ev := events.get(timeout=0)) is not None:
        if ev["type"] == "ruling":
            rulings.append(ev)
    assert any(ev["cannot_tell"] for ev in rulings if ev["ruling"]["summary"].lower().startswith("cannot tell"))
    assert all(ev["cannot_tell"] is False for ev in rulings if ev["ruling"]["legal"] is False)
    outlined = [s for s in drawn[-1] if s.role == "illegal"]
    assert len(outlined) == 1
    x, y = (sum(c) / len(outlined[0].points) for c in zip(*outlined[0].points))
    assert math.hypot(x - 60, y + 100) < 2.0  # around small-1 where it stands after its move
    engine.stop()
