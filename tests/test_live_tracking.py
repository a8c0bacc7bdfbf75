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
    # still from their first sighting for 0.5 s: 5 frames at 10 fps (confirming a piece seen still
    # is no change of the table, so the calm counts from frame 0)
    assert first_stable == 4
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
    frames = still(3, a) + still(12, a, b)
    # boat-1 is confirmed at frame 2 and held still since frame 0 at frame 4, while boat-2 (seen
    # from frame 3) is still being confirmed: the first state ruled holds both
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


# ------------------------------------------- short holds at 4 fps: a quick player, a slow camera
WEBCAM_FPS = 4.0


def run_at(tracker, frames, fps=WEBCAM_FPS):
    """Feed Observations at fps; return (updates, (frame index, state) of each state emitted)."""
    out, states = [], []
    for i, o in enumerate(frames):
        u = tracker.update(o, i / fps)
        out.append(u)
        if u.new_stable is not None:
            states.append((i, u.new_stable))
    return out, states


def game_of_turns(hold: int, hand_frames: int, turns: int = 6):
    """Three boats; each turn one moves 60 mm: `hand_frames` frames of a hand over it (not seen),
    then the new position still for `hold` frames. Returns (frames, the positions in order)."""
    where = {"tornado/boat-1": (0.0, 0.0), "tornado/boat-2": (100.0, 0.0), "tornado/boat-3": (200.0, 0.0)}
    table = lambda: [pose(n, x, y) for n, (x, y) in sorted(where.items())]  # noqa: E731
    frames, positions = still(6, *table()), [dict(where)]
    for k in range(turns):
        mover = sorted(where)[k % 3]
        frames += [obs(*[p for p in table() if p.name != mover])] * hand_frames
        where[mover] = (where[mover][0], where[mover][1] + 60.0)
        frames += still(hold, *table())
        positions.append(dict(where))
    return frames, positions


def _xy(state):
    return {p.name: (round(p.x_mm), round(p.y_mm)) for p in state.pieces}


def _rounded(positions):
    return [{n: (round(x), round(y)) for n, (x, y) in p.items()} for p in positions]


def test_a_position_still_for_2_frames_at_4_fps_is_a_stable_state():
    """0.5 s of real time: the first and last still frames are 0.25 s apart. Every position of the
    game is handed out once, on its second still frame, after one or two frames of a hand."""
    for hand in (1, 2):
        frames, positions = game_of_turns(hold=2, hand_frames=hand)
        _, states = run_at(StableStateTracker(TrackerSettings(stable_s=0.5)), frames)
        assert [_xy(s) for _, s in states] == _rounded(positions), hand
        turn_ends = [6 + (hand + 2) * (k + 1) - 1 for k in range(6)]  # each turn's second still frame
        assert [i for i, _ in states][1:] == turn_ends


def test_3_and_4_frame_holds_give_the_same_states():
    for hold in (3, 4):
        frames, positions = game_of_turns(hold=hold, hand_frames=2)
        _, states = run_at(StableStateTracker(TrackerSettings(stable_s=0.5)), frames)
        assert [_xy(s) for _, s in states] == _rounded(positions), hold


def test_a_1_frame_hold_is_never_handed_out_on_a_frame_with_a_hand():
    """One still frame between hands: the state may be missed (the game searches merged turns),
    but never handed out on the next frame, where a hand is over a piece."""
    frames, positions = game_of_turns(hold=1, hand_frames=1)
    updates, states = run_at(StableStateTracker(TrackerSettings(stable_s=0.5)), frames)
    assert [_xy(s) for _, s in states] == _rounded(positions[:1])
    assert all(u.status == IN_PLAY for u in updates[7:])


def test_a_hand_over_another_piece_in_the_hold_delays_the_state_until_it_is_seen():
    """boat-2 moved, then a hand hides boat-3 in both still frames: boat-3 may be being taken, so
    nothing is handed out until a frame sees it again, in place."""
    a, b, c = pose("tornado/boat-1", 0, 0), pose("tornado/boat-2", 100, 0), pose("tornado/boat-3", 200, 0)
    b2 = pose("tornado/boat-2", 100, 60)
    frames = still(6, a, b, c) + [obs(a, c)] + still(2, a, b2) + still(2, a, b2, c)
    updates, states = run_at(StableStateTracker(TrackerSettings(stable_s=0.5)), frames)
    assert [i for i, _ in states] == [1, 9]  # not at 8 (boat-3 under a hand): at 9, where it is seen
    assert _xy(states[1][1])["tornado/boat-3"] == (200, 0)
    assert updates[8].status == IN_PLAY


def test_a_piece_put_down_with_the_move_is_ruled_after_its_hold_not_its_confirmation():
    """A tile laid with a move, then 3 still frames: the state comes on the second still frame.
    (Confirming the tile after 3 sightings used to restart the calm period at the third frame, so
    a position still for 3 frames was never ruled when the next hand came at once.)"""
    a, b = pose("kayak/pawn-1", 0, 0), pose("kayak/pawn-2", 100, 0)
    tile = pose("kayak/tile-5", 300, 0)
    a2 = pose("kayak/pawn-1", 0, 60)
    for hold in (2, 3):
        frames = still(6, a, b) + [obs(b)] + still(hold, a2, b, tile) + [obs(a2)] * 2
        _, states = run_at(StableStateTracker(TrackerSettings(stable_s=0.5)), frames)
        assert [(i, sorted(_xy(s))) for i, s in states][1:] == [(8, ["kayak/pawn-1", "kayak/pawn-2", "kayak/tile-5"])]


def test_the_hold_counts_the_frames_times_not_their_number():
    """The same 0.5 s at 10 fps is 5 frames: 2 or 4 still frames are no hold there."""
    tr = StableStateTracker(TrackerSettings(stable_s=0.5))
    a, a2 = pose("tornado/boat-1", 0, 0), pose("tornado/boat-1", 0, 60)
    frames = still(10, a) + still(4, a2) + [obs()] * 3 + still(5, a2)
    updates, states = run(tr, frames)
    assert len(states) == 2 and all(u.status == IN_PLAY for u in updates[10:14])
    assert updates[-1].status == STABLE and updates[-2].status == IN_PLAY
