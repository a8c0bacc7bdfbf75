"""The camera's error as one field over the table (referee.camera_field, vision.camera_field):
evaluated at a boat, at its rival and at the line both are measured to, it moves all three alike,
so what a close call is uncertain by is what the field changes between them.

Truth: a camera moved by a rigid turn and shift of the table (which moves every reading alike,
worked out here without the code under test) leaves every pair's difference as it was; the
render's truth for the pairs of a hand-stuck table whose camera is uncertain."""

from __future__ import annotations

import math

import pytest

from referee.camera_field import CameraField
from referee.tornado.course import BoundaryLine
from referee.tornado.ranking import Measure, Racer, camera_field_difference


def _camera(turn_deg: float = 0.0, shift=(0.0, 0.0), tilt_deg: float = 0.0):
    """A 3x4 camera 900 mm over the table looking down (optionally tilted about its x axis), that
    sees the table turned by turn_deg about the origin and shifted by `shift` first."""
    f, cx, cy = 1400.0, 960.0, 540.0
    t, c, s = math.radians(tilt_deg), math.cos(math.radians(turn_deg)), math.sin(math.radians(turn_deg))
    R = [[1.0, 0.0, 0.0], [0.0, -math.cos(t), -math.sin(t)], [0.0, math.sin(t), -math.cos(t)]]
    move = [[c, -s, 0.0, shift[0]], [s, c, 0.0, shift[1]], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]]
    Rt = [R[i] + [[0.0, 0.0, 900.0][i]] for i in range(3)]
    K = [[f, 0.0, cx], [0.0, f, cy], [0.0, 0.0, 1.0]]
    KRt = [[sum(K[i][k] * Rt[k][j] for k in range(3)) for j in range(4)] for i in range(3)]
    return tuple(tuple(sum(KRt[i][k] * move[k][j] for k in range(4)) for j in range(4)) for i in range(3))


def _boat(name, x, y, camera_mm=0.5):
    return Racer(name, 4.0, 0, Measure("distance_mm", 0.0, 1.0), (x, y), 1.0, camera_mm=camera_mm,
                 camera_gradient=0.01, z_mm=5.0)


def _courses(field):
    from types import SimpleNamespace

    line = BoundaryLine(name="curve 1 entry", kind="ray", origin=(300.0, 0.0), along=(0.0, 1.0), forward=(1.0, 0.0),
                        half_length=math.inf, sigma0=0.3, s2=120.0, sigma2=0.3, heights_mm=(2.0, 0.3))
    straight = SimpleNamespace(zones=(SimpleNamespace(kind="straight", exit=line),), finished_zone=1, camera_field=field)
    curve = SimpleNamespace(zones=(SimpleNamespace(kind="curve", vertex=(300.0, 0.0), vertex_z_mm=2.0),),
                            finished_zone=1, camera_field=field)
    return straight, curve


def test_the_field_reads_a_point_where_the_moved_camera_sees_it():
    # a camera that sees the table shifted by (2, -1) mm reads every point 2 mm short in x, 1 mm over in y
    field = CameraField(_camera(), (_camera(shift=(2.0, -1.0)),))
    for x, y, z in ((0.0, 0.0, 0.0), (250.0, -120.0, 5.0), (-300.0, 200.0, 2.0)):
        (dx, dy), = field.shifts(x, y, z)
        assert dx == pytest.approx(-2.0, abs=1e-9) and dy == pytest.approx(1.0, abs=1e-9)
    # turned by 0.5 degree about the origin: a point 200 mm out moves 1.75 mm across its radius
    (dx, dy), = CameraField(_camera(), (_camera(turn_deg=0.5),)).shifts(200.0, 0.0, 0.0)
    assert dx == pytest.approx(200.0 * (math.cos(math.radians(0.5)) - 1.0), abs=1e-9)
    assert dy == pytest.approx(-200.0 * math.sin(math.radians(0.5)), abs=1e-9)


def test_a_turn_or_shift_of_the_whole_table_moves_boats_and_line_alike_and_cancels():
    # one standard deviation is a small move: a tenth of a degree, a few mm (linear, as the covariance is)
    rigid = CameraField(_camera(), (_camera(turn_deg=0.1), _camera(shift=(3.0, 1.0)), _camera(turn_deg=-0.05, shift=(0, 2))))
    straight, curve = _courses(rigid)
    a, b = _boat("a", 200.0, 40.0), _boat("b", 150.0, -60.0)
    # what is left is second order in the turn: (1 - cos 0.1 degree) over 100 mm, under 0.0002 mm
    assert camera_field_difference(straight, 0, a, b) < 2e-4
    assert camera_field_difference(curve, 0, a, b) < 2e-6  # radians
    # the turn alone moves each boat by 0.2-0.4 mm, and the bound it replaces counted 1.1 mm
    (dx, dy), = CameraField(_camera(), (_camera(turn_deg=0.1),)).shifts(*a.position, a.z_mm)
    assert math.hypot(dx, dy) > 0.3
    assert a.camera_gradient * math.dist(a.position, b.position) > 1.0


def test_a_tilted_camera_moves_them_apart_more_the_farther_apart_they_are():
    field = CameraField(_camera(tilt_deg=10.0), (_camera(tilt_deg=10.3),))
    straight, curve = _courses(field)
    a = _boat("a", 200.0, 0.0)
    near = camera_field_difference(straight, 0, a, _boat("b", 200.0, 30.0))
    far = camera_field_difference(straight, 0, a, _boat("b", 200.0, 120.0))
    assert 0.0 < near < far
    # a boat without a camera share, or a line the camera did not read (a nominal piece): no field
    assert camera_field_difference(straight, 0, a, _boat("b", 200.0, 30.0, camera_mm=0.0)) is None
    from dataclasses import replace
    from types import SimpleNamespace
    nominal = SimpleNamespace(zones=(SimpleNamespace(kind="straight", exit=replace(straight.zones[0].exit, heights_mm=None)),),
                              finished_zone=1, camera_field=field)
    assert camera_field_difference(nominal, 0, a, _boat("b", 200.0, 30.0)) is None


@pytest.mark.parametrize("bad", [None, {}, {"camera": [[1, 2, 3]], "moved": []}, {"camera": "x", "moved": [1]},
                                 {"camera": [[1, 0, 0, 0]] * 3, "moved": [[[float("nan")] * 4] * 3]},
                                 {"camera": [[1, 0, 0, 0]] * 3, "moved": []},
                                 {"camera": [[1, 0, 0, 0]] * 3, "moved": [[[1, 0, 0, 0]] * 3] * 8}])
def test_a_missing_or_malformed_field_is_none(bad):
    assert CameraField.from_frame({"camera_field": bad}) is None
    assert CameraField.from_frame({}) is None


@pytest.fixture(scope="module")
def hand_stuck_measured_straight():
    """Tuning table 1023 with its boats measured from one line-up photo: the hand-stuck course pieces
    leave the camera uncertain by about 0.9 mm at each boat, the same way at all of them."""
    from referee.tornado.standings import TornadoGame, assess
    from tests import tornado_oracle as oracle
    from tests.bench.handstuck import measured_close_call

    obs, truth = measured_close_call(1023)
    return assess(TornadoGame.make(truth["course"]), obs, nominal_fallback=True), oracle.true_boats(truth)[1]


def test_pairs_read_through_one_camera_are_called_within_the_field_difference(hand_stuck_measured_straight):
    got, true = hand_stuck_measured_straight
    by = {b.name: b for b in got.boats}
    pairs = [c for c in got.calls if c.kind == "distance_mm" and by[c.ahead].zone_index == by[c.behind].zone_index
             and true[c.ahead].zone == by[c.ahead].zone_index and true[c.behind].zone == by[c.behind].zone_index]
    assert len(pairs) >= 2
    for c in pairs:
        err = abs((by[c.ahead].measure.value - by[c.behind].measure.value)
                  - (true[c.ahead].measure - true[c.behind].measure))
        assert err < 3 * c.sigma, f"{c.ahead} / {c.behind}: off {err:.2f} mm, sigma {c.sigma:.2f}"
    # every boat is off by about the same 2 mm (the camera), yet the close pair is called, and right
    close = next(c for c in pairs if {c.ahead, c.behind} == {"tornado/boat-1", "tornado/boat-2"})
    assert close.verdict == "ahead" and true[close.ahead].measure < true[close.behind].measure
    assert all(abs(by[n].measure.value - true[n].measure) > 1.0 for n in (close.ahead, close.behind))


def _straight_course(field, camera_share: float):
    """One straight zone whose exit line's two points (sigma 0.3 and 0.5 mm) carry camera_share of
    their sigma as the camera's; boats at y = 40 and -60 are 100 mm apart along it."""
    from types import SimpleNamespace

    line = BoundaryLine(name="curve 1 entry", kind="ray", origin=(300.0, 0.0), along=(0.0, 1.0), forward=(1.0, 0.0),
                        half_length=math.inf, sigma0=0.3, s2=100.0, sigma2=0.5, heights_mm=(2.0, 0.3),
                        camera0=0.3 * camera_share, camera2=0.5 * camera_share)
    return SimpleNamespace(zones=(SimpleNamespace(kind="straight", exit=line),), finished_zone=1, camera_field=field)


def test_a_lines_camera_share_turns_it_with_the_field_not_on_its_own():
    from referee.tornado.ranking import _difference_sigma

    # by hand: sigma0 0.3 of which 0.18 the camera's leaves 0.24; sigma2 0.5 of which 0.3 leaves 0.4
    line = _straight_course(None, 0.6).zones[0].exit
    own, cam = line.direction_sigma_split()
    assert own == pytest.approx(math.hypot(0.24, 0.4) / 100.0) and cam == pytest.approx(math.hypot(0.18, 0.3) / 100.0)
    assert line.sigma_direction_rad == pytest.approx(math.hypot(0.3, 0.5) / 100.0)
    # a rigid turn and shift of the whole table moves boats and line alike: with the line's sigma all
    # the camera's, what is left of the pair is the boats' own sigma (1.0 less their 0.5 camera share)
    rigid = CameraField(_camera(), (_camera(turn_deg=0.1), _camera(shift=(3.0, 1.0))))
    a, b = _boat("a", 200.0, 40.0), _boat("b", 150.0, -60.0)
    assert _difference_sigma(_straight_course(rigid, 1.0), 0, a, b) == pytest.approx(math.sqrt(0.75 + 0.75), abs=1e-3)
    # the same line with no camera share tilts on its own: 100 mm times hypot(0.3, 0.5) / 100 mm
    assert _difference_sigma(_straight_course(rigid, 0.0), 0, a, b) == pytest.approx(
        math.sqrt(1.5 + math.hypot(0.3, 0.5) ** 2), abs=1e-3)
    # without a field the share cannot be told from the rest: the line's whole sigma stays
    assert _difference_sigma(_straight_course(None, 1.0), 0, a, b) == pytest.approx(
        _difference_sigma(_straight_course(None, 0.0), 0, a, b))


def test_a_markers_camera_share_moves_with_the_field_not_on_its_own():
    from types import SimpleNamespace

    from referee.tornado.ranking import _difference_sigma

    rigid = CameraField(_camera(), (_camera(turn_deg=0.1), _camera(shift=(3.0, 1.0))))
    a, b = _boat("a", 300.0, 100.0), _boat("b", 300.0, 200.0)  # 100 and 200 mm out from the marker

    def curve(share):
        return SimpleNamespace(zones=(SimpleNamespace(kind="curve", vertex=(300.0, 0.0), vertex_z_mm=2.0,
                                                      sigma_vertex=0.4, vertex_camera_mm=0.4 * share),),
                               finished_zone=1, camera_field=rigid)
    # by hand: the boats' own 0.866 mm turn them by 0.866/100 and 0.866/200 rad; the marker's whole 0.4 mm
    # is the camera's and moves with them
    own = math.degrees(math.hypot(math.sqrt(0.75) / 100.0, math.sqrt(0.75) / 200.0))
    assert _difference_sigma(curve(1.0), 0, a, b) == pytest.approx(own, rel=1e-3)
    # as its own, a shift across the rays turns them by 0.4 * (1/100 - 1/200)
    assert _difference_sigma(curve(0.0), 0, a, b) == pytest.approx(
        math.hypot(own, math.degrees(0.4 * (1 / 100.0 - 1 / 200.0))), rel=1e-3)
