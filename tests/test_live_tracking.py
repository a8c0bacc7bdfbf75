"""Stable-state tracker on synthetic Observation sequences (no images)."""

import random

from referee.observation import Observation, PiecePose
from vision.tracking import IN_PLAY, STABLE, StableStateTracker, TrackerSettings

FPS = 10.0


def pose(name, x, y, theta=0.0, sigma=0.5):
    return PiecePose(name=name, marker_ids=(200,), x_mm=x, y_mm=y, theta_deg=theta, z_mm=5.0,
                     sigma_mm=sigma, sigma_theta_deg=0.5)


def obs(*poses):
    return Observation(pieces=tuple(poses), game="tornado")


def run(tracker, frames, t0=0.0):
    """Feed a list of Observations at FPS; return (updates, stable states emitted)."""
    updates, states = [], []
    for i, o in enumerate(frames):
        u = tracker.update(o, t0 + i / FPS)
        updates.append(u)
        if u.new_stable is not None:
            states.append(u.new_stable)
    return updates, states


def still(n, *poses):
    return [obs(*poses) for _ in range(n)]


def test_still_table_gives_one_stable_state_after_the_calm_time():
    tr = StableStateTracker(TrackerSettings(stable_s=0.5))
    updates, states = run(tr, still(20, pose("tornado/boat-1", 10, 20), pose("tornado/boat-2", 50, 0)))
    assert len(states) == 1
    assert set(states[0].names()) == {"tornado/boat-1", "tornado/boat-2"}
    first_stable = next(i for i, u in enumerate(updates) if u.status == STABLE)
    # 3 frames to confirm the pieces, then 0.5 s of calm
    assert first_stable == 2 + 5
    assert all(u.status == IN_PLAY for u in updates[:first_stable])


def test_jitter_within_sigma_gives_no_new_state():
    rng = random.Random(1)
    tr = StableStateTracker()
    frames = [obs(pose("tornado/boat-1", 100 + rng.gauss(0, 0.5), 40 + rng.gauss(0, 0.5), rng.gauss(0, 0.5)))
              for _ in range(100)]
    updates, states = run(tr, frames)
    assert len(states) == 1
    assert abs(states[0].pieces[0].x_mm - 100) < 0.5  # averaged over the calm period
    assert sum(u.status == STABLE for u in updates) > 80


def test_flicker_neither_creates_nor_destroys_pieces():
    tr = StableStateTracker()
    a = pose("tornado/boat-1", 0, 0)
    ghost = pose("tornado/boat-6", 300, 300)
    frames = still(10, a)
    frames += [obs(a, ghost), obs(a, ghost)]  # a false detection for two frames
    frames += still(3, a)
    frames += [obs(), obs()]  # the real piece drops out for two frames
    frames += still(10, a)
    updates, states = run(tr, frames)
    assert len(states) == 1
    assert states[0].names() == ["tornado/boat-1"]
    assert all("tornado/boat-6" not in [p.name for p in u.pieces] for u in updates)
    # the two-frame drop-out does not even interrupt the stable status
    assert all(u.status == STABLE for u in updates[12:])


def test_no_state_is_ruled_while_a_new_piece_is_being_confirmed():
    tr = StableStateTracker(TrackerSettings(min_hits=3))
    a, b = pose("tornado/boat-1", 0, 0), pose("tornado/boat-2", 80, 0)
    frames = still(6, a) + still(12, a, b)
    # boat-1 is confirmed at frame 2, its calm time runs out at frame 7, while boat-2 (seen from
    # frame 6) is still being confirmed: the first state ruled holds both
    _, states = run(tr, frames)
    assert [s.names() for s in states] == [["tornado/boat-1", "tornado/boat-2"]]


def test_piece_hidden_under_a_hand_is_remembered_and_not_ruled():
    tr = StableStateTracker()
    a, b = pose("tornado/boat-1", 0, 0), pose("tornado/boat-2", 80, 0)
    frames = still(10, a, b) + still(8, a) + still(10, a, b)  # b hidden for 0.8 s, then back in place
    updates, states = run(tr, frames)
    assert len(states) == 1
    hidden_updates = [u for u in updates[13:18]]
    assert all(u.status == IN_PLAY and u.hidden == ("tornado/boat-2",) for u in hidden_updates)
    assert all("tornado/boat-2" in [p.name for p in u.pieces] for u in hidden_updates)
    assert updates[-1].status == STABLE


def test_piece_moved_under_a_hand_gives_one_new_state():
    tr = StableStateTracker()
    a, b = pose("tornado/boat-1", 0, 0), pose("tornado/boat-2", 80, 0)
    b2 = pose("tornado/boat-2", 140, 30, theta=20)
    frames = still(10, a, b) + still(6, a) + still(12, a, b2)
    _, states = run(tr, frames)
    assert len(states) == 2
    moved = states[1].piece("tornado/boat-2")
    assert abs(moved.x_mm - 140) < 1e-6 and abs(moved.theta_deg - 20) < 1e-6


def test_piece_taken_away_leaves_after_forget_time():
    tr = StableStateTracker(TrackerSettings(forget_s=1.0))
    a, b = pose("tornado/boat-1", 0, 0), pose("tornado/boat-2", 80, 0)
    updates, states = run(tr, still(10, a, b) + still(30, a))
    assert [s.names() for s in states] == [["tornado/boat-1", "tornado/boat-2"], ["tornado/boat-1"]]
    left_at = next(i for i, u in enumerate(updates) if "left" in u.reason)
    assert left_at == 10 + 10  # missing for 1.0 s


def test_slow_drift_is_motion_until_it_stops_then_one_new_state():
    tr = StableStateTracker()
    frames = still(10, pose("tornado/boat-1", 0, 0))
    frames += [obs(pose("tornado/boat-1", 0.8 * i, 0)) for i in range(1, 51)]  # 40 mm over 5 s
    frames += still(10, pose("tornado/boat-1", 40, 0))
    updates, states = run(tr, frames)
    assert len(states) == 2
    assert abs(states[1].pieces[0].x_mm - 40) < 1.0
    # while drifting the table never stays calm long enough
    assert all(u.status == IN_PLAY for u in updates[15:60])


def test_real_move_gives_in_play_then_the_new_state():
    tr = StableStateTracker()
    a = pose("tornado/boat-1", 0, 0)
    frames = still(10, a)
    frames += [obs(pose("tornado/boat-1", 20 * i, 5 * i, 3 * i)) for i in range(1, 6)]
    frames += still(10, pose("tornado/boat-1", 100, 25, 15))
    updates, states = run(tr, frames)
    assert len(states) == 2
    assert updates[11].status == IN_PLAY
    assert updates[-1].status == STABLE
    p = states[1].pieces[0]
    assert (round(p.x_mm), round(p.y_mm), round(p.theta_deg)) == (100, 25, 15)


def test_wide_sigma_widens_the_tolerance():
    tr = StableStateTracker()
    frames = still(10, pose("tornado/boat-1", 0, 0, sigma=4.0))
    frames += still(10, pose("tornado/boat-1", 12, 0, sigma=4.0))  # 12 mm < 3 + 3 * 4
    _, states = run(tr, frames)
    assert len(states) == 1


def test_reset_forgets_everything():
    tr = StableStateTracker()
    run(tr, still(10, pose("tornado/boat-1", 0, 0)))
    tr.reset()
    _, states = run(tr, still(10, pose("tornado/boat-1", 0, 0)), t0=5.0)
    assert len(states) == 1
