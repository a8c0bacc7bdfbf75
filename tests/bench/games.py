"""Whole games refereed to the end: how right refcam is, game by game.

    .venv/bin/python -m tests.bench.games [--games N] [--holds 4,2,1] [--copies clean,webcam]
                                          [--replays offline,page] [--tuning] [--quick] [--json]

Seeded random playouts of Kang, Kayak Chaos and a Tornado Splash race (synth/game_playouts.py)
are rendered as recorded sessions at 4 fps with a hand over the moving piece before each turn
and each new table still for ``hold`` frames (synth/game_sessions.py), clean and through the
webcam chain, then refereed two ways: offline (webui/commands/replay.py ``replay_session``, what
`refcam replay` runs) and as the page replays a session (webui/live.py LiveEngine fed by a
real-time SessionSource, as `refcam serve --replay` builds it). The rulings are matched to the
playout's truth (see ``match``) and counted per game.

Seeds: TUNING_SEEDS are for trying changes; REPORTING_SEEDS (disjoint) are the ones the figures
in docs/bench-games.md come from; the default run reports on the first of them per game.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from referee.rulings import Ruling, cannot_tell
from synth.game_playouts import GAMES, play
from synth.game_sessions import COPIES, HOLDS, read_truth, write_sessions

ROOT = Path(__file__).resolve().parents[2]
TUNING_SEEDS = {"kang": (101, 102, 103), "kayak": (101, 105, 106), "tornado": (101, 102, 103)}
REPORTING_SEEDS = {"kang": (201, 202, 203), "kayak": (201, 202, 204), "tornado": (201, 202, 203)}
QUICK_TURNS = 8  # --quick: the first turns of each game only (no winner to compare)
SEEN_TOGETHER_MAX = 3  # a ruling may explain the turns of up to this many turns back
READ_FROM_PX = 14.0  # a needed piece whose sticker shows this wide or wider must be read in every still period


# --- matching rulings to the truth ------------------------------------------------------------
@dataclass
class Outcome:
    legal_turns: int = 0
    right: int = 0  # ruled legal with the position the turn left
    ruled_illegal: int = 0  # legal turns ruled illegal
    wrong_position: int = 0  # ruled legal, but to a position the turn did not leave
    cannot_tell: int = 0
    missed: int = 0  # no ruling for the turn at all
    illegal_changes: int = 0
    flagged: int = 0
    passed_as_legal: int = 0
    take_backs: int = 0
    take_backs_seen: int = 0
    winner_right: bool | None = None
    score_right: bool | None = None
    ruled_winner: str | None = None
    ruled_score: str | None = None
    unmatched_rulings: int = 0  # turn rulings that counted for no turn (extra, late, or after the last turn)


def ruled_position(game: str, r: dict) -> str | None:
    """The position a turn ruling says the turn left, in the notation of the truth."""
    d = r.get("details") or {}
    if game in ("kang", "kayak"):
        return d.get("after") or None
    if game == "tornado" and d.get("boat") and d.get("to"):
        return f"{d['boat'].split('/')[-1]} {d['to']}"
    return None


def same_position(game: str, truth: str, ruled: str | None, legal: bool) -> bool:
    """Kang: an illegal table has no whose-turn or score of its own, so only its board and
    zones are compared; everything else compares whole."""
    if ruled is None:
        return False
    if game == "kang" and not legal:
        return truth.split()[:3] == ruled.split()[:3]
    return truth == ruled


def is_put_right(r: dict) -> bool:
    """referee/pending.py's ruling that an illegal turn was taken back or played over."""
    return r.get("kind") == "state" and "since_t" in (r.get("details") or {}) and \
        r.get("summary", "").lower().startswith("put right")


def turn_rulings(rulings: list[dict]) -> list[dict]:
    """The rulings that judge a turn: a verdict on a move, "cannot tell", or a take-back seen."""
    out = []
    for r in rulings:
        ruling = Ruling.from_json(r)
        if is_put_right(r) or cannot_tell(ruling) or (r.get("kind") in ("move", "violation")
                                                      and r.get("legal") is not None):
            out.append(dict(r, cannot_tell=cannot_tell(ruling)))
    return sorted(out, key=lambda r: r["t"])


def match(game: str, truth: list[dict], rulings: list[dict]) -> Outcome:
    """Count how each turn of the truth was ruled.

    A ruling counts for a turn by its position first: it must say the turn left exactly the
    position the truth says, come after the turn's hand appeared, and at the latest on the first
    hand frame of the turn SEEN_TOGETHER_MAX turns later (a table is ruled still on the frame
    after its calm, which may be that hand); each turn takes one ruling and each ruling one turn.
    Only then is its verdict compared: right means both the verdict and the position match.
    A legal verdict with a turn's position but later than that window counts for no turn.
    A ruling with no matching position (an illegal verdict, "cannot tell", a legal verdict to a
    wrong position) counts, in time order, for the latest turn still unjudged whose hand came
    before it (an illegal change: only until the next turn's hand, when it leaves the table).
    A take-back is seen only by a "put right" whose pending began between the
    illegal change's hand and the take-back's. A turn no ruling reaches is missed."""
    turns = [e for e in truth if e["kind"] in ("turn", "take-back")]
    starts = [e["hand_t"] for e in turns] + [float("inf")] * (SEEN_TOGETHER_MAX + 1)
    verdict: dict[int, str] = {}
    left = []
    for r in turn_rulings(rulings):
        pos = ruled_position(game, r)
        found = [k for k, e in enumerate(turns)
                 if k not in verdict and e["kind"] == "turn" and r.get("legal") is not None
                 and starts[k] <= r["t"] <= starts[k + SEEN_TOGETHER_MAX]
                 and same_position(game, e["position"], pos, e["legal"])]
        if found:
            verdict[found[-1]] = _by_position(turns[found[-1]], r)
        else:
            left.append(r)
    for r in left:
        waiting = [k for k, e in enumerate(turns) if k not in verdict and starts[k] <= r["t"]]
        if is_put_right(r):  # it counts only for the take-back of the illegal change it was pending on
            since = r["details"]["since_t"]
            waiting = [k for k in waiting if turns[k]["kind"] == "take-back" and starts[k - 1] <= since <= starts[k]]
            verdict.update({k: "take-back seen" for k in waiting[-1:]})
            continue
        # an illegal change is on the table only until the next hand: a ruling after that is not its flag
        waiting = [k for k in waiting if turns[k]["kind"] == "turn" and (turns[k]["legal"] or r["t"] <= starts[k + 1])]
        if r.get("legal") is True and any(same_position(game, turns[k]["position"], ruled_position(game, r), True)
                                          for k in waiting):
            continue  # a turn's right position, ruled too late to be that turn's: it stays missed
        if waiting:
            verdict[waiting[-1]] = _by_time(turns[waiting[-1]], r)
    out = Outcome(unmatched_rulings=len(turn_rulings(rulings)) - len(verdict))
    for k, e in enumerate(turns):
        _count(out, e, verdict.get(k, "missed"))
    return out


def _by_position(turn: dict, r: dict) -> str:
    if turn["legal"]:
        return "right" if r["legal"] is True else "ruled illegal"
    return "flagged" if r["legal"] is False else "passed as legal"


def _by_time(turn: dict, r: dict) -> str:
    if r["cannot_tell"]:
        return "cannot tell"
    if not turn["legal"]:
        return "flagged" if r.get("legal") is False else "passed as legal"
    if r.get("legal") is False:
        return "ruled illegal"
    return "wrong position" if r.get("legal") is True else "missed"


def _count(out: Outcome, turn: dict, how: str) -> None:
    if turn["kind"] == "take-back":
        out.take_backs += 1
        out.take_backs_seen += how == "take-back seen"
    elif not turn["legal"]:
        out.illegal_changes += 1
        out.flagged += how == "flagged"
        out.passed_as_legal += how == "passed as legal"
    else:
        out.legal_turns += 1
        field_of = {"right": "right", "ruled illegal": "ruled_illegal", "wrong position": "wrong_position",
                    "cannot tell": "cannot_tell", "missed": "missed"}[how]
        setattr(out, field_of, getattr(out, field_of) + 1)


def ruled_result(game: str, rulings: list[dict]) -> tuple[str | None, str | None]:
    """(winner, score) as the rulings left them: Kang from the last legal position's alfalfa,
    Kayak Chaos from its finish ruling (no score), Tornado from the final places."""
    import re

    if game == "kang":
        last = [r for r in rulings if r.get("legal") is True and ruled_position(game, r)]
        # a win named though the ways the game went disagree on the loser's alfalfa (no score then)
        won = [r for r in rulings if r.get("kind") == "state" and (r.get("details") or {}).get("winner")
               and (not last or r["t"] >= last[-1]["t"])]
        if won:
            return won[-1]["details"]["winner"], won[-1]["details"].get("score")
        if not last:
            return None, None
        score = ruled_position(game, last[-1]).split()[4]
        a, b = (int(v) for v in score.split("-"))
        return ("A" if a >= 3 else "B" if b >= 3 else None), score
    if game == "kayak":
        won = [re.search(r"pawn-\d+", r["summary"]) for r in rulings if r.get("kind") == "finish"]
        return (won[0].group(0) if won and won[0] else None), None
    places = [r["details"]["final_places"] for r in rulings if (r.get("details") or {}).get("final_places")]
    if not places:
        return None, None
    order = ",".join(b.split("/")[-1] for b, _ in sorted(places[-1].items(), key=lambda kv: kv[1]))
    return order.split(",")[0], order


def judge(game: str, folder: Path, rulings: list[dict], full_game: bool) -> Outcome:
    truth = read_truth(folder)
    out = match(game, truth, rulings)
    if full_game:
        last = [e for e in truth if e["kind"] in ("turn", "take-back")][-1]
        out.ruled_winner, out.ruled_score = ruled_result(game, rulings)
        out.winner_right = out.ruled_winner == last["winner"]
        out.score_right = None if last["score"] is None else out.ruled_score == last["score"]
    return out


# --- needed pieces read in the still periods --------------------------------------------------
@dataclass
class NeededReads:
    """For each still period of a session and each piece the game needs then whose sticker shows:
    was it read in the period's last frame (when all the period's looks are in)."""

    needed: int = 0  # (still period, needed piece) pairs with the sticker at READ_FROM_PX or more
    read: int = 0
    small_needed: int = 0  # ... with a smaller sticker (counted apart, not the criterion)
    small_read: int = 0
    misses: list = field(default_factory=list)  # "36.25 s kayak/pawn-2 21 px, read in 0 of 4 frames", >= READ_FROM_PX


def still_periods(lines: list[dict]) -> list[tuple[int, int]]:
    """(first, last) frame index of each run of still frames showing one table, in order."""
    out: list[tuple[int, int]] = []
    for n, line in enumerate(lines):
        if not line["stable"]:
            continue
        if out and out[-1][1] == n - 1 and lines[n - 1]["position"] == line["position"]:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return out


def truth_observation(game: str, pieces: list[dict]):
    """What a perfect camera would hand the referee for a table of the truth."""
    from referee.observation import Observation, PiecePose

    return Observation(tuple(PiecePose(p["name"], tuple(p.get("marker_ids", ())), p["x_mm"], p["y_mm"],
                                       p.get("theta_deg", 0.0), p.get("z_mm", 0.0), 0.5, face=p.get("face"))
                             for p in pieces), game=game)


def needed_pieces(game: str, folder: Path, lines: list[dict], periods) -> list[set[str]]:
    """The pieces the game needs in each still period (referee.game.expected_pieces_of), worked out
    by refereeing the truth's tables as a perfect camera would show them: those it needs before the
    table and after it, of the pieces on the table."""
    from referee.errors import RefcamError
    from referee.game import expected_pieces_of
    from referee.registry import get_game
    from vision.session import read_session
    from webui.commands.replay import session_options
    from webui.game_flags import settings_for

    rules = get_game(game)
    options, _ = session_options(folder, rules, read_session(folder).header, {})
    state = rules.new_state(settings_for(rules, options))
    out = []
    for first, last in periods:
        on_table = {p["name"] for p in lines[last]["pieces"]}
        needed = {e.name for e in expected_pieces_of(rules, state)}
        try:
            state = rules.step(state, truth_observation(game, lines[last]["pieces"]), lines[first]["t"]).state
        except RefcamError:
            pass  # the truth's table is ruled as the referee rules it; a table it refuses changes nothing
        out.append((needed | {e.name for e in expected_pieces_of(rules, state)}) & on_table)
    return out


def count_needed_reads(game: str, folder: Path, reads: list[list[str]] | None) -> NeededReads | None:
    """NeededReads of a session from the pieces the replay read in each frame (None: not recorded)."""
    lines = [json.loads(line) for line in (folder / "truth.jsonl").read_text().splitlines()]
    if reads is None or len(reads) != len(lines):
        return None
    periods = still_periods(lines)
    out = NeededReads()
    for (first, last), needed in zip(periods, needed_pieces(game, folder, lines, periods)):
        px = {p["name"]: p.get("sticker_px") for p in lines[last]["pieces"]}
        for name in sorted(needed):
            if px.get(name) is None:
                continue  # no sticker of it shows (under another piece): not the camera's to read
            got = name in reads[last]
            if px[name] >= READ_FROM_PX:
                out.needed += 1
                out.read += got
                if not got:
                    seen = sum(name in reads[n] for n in range(first, last + 1))
                    out.misses.append(f"{lines[last]['t']:.2f} s {name} {px[name]:.0f} px, read in {seen} of "
                                      f"{last - first + 1} frames")
            else:
                out.small_needed += 1
                out.small_read += got
    return out


# --- the two replays ---------------------------------------------------------------------------
def offline_rulings(folder: Path, inner=None, seen=None) -> tuple[list[dict], list[list[str]]]:
    """`refcam replay DIR --json`: every frame, as fast as the machine goes; and the pieces read in
    each frame (the observe `refcam replay` uses, or ``inner``, watched; ``seen`` is handed each
    frame's observation too)."""
    from webui.commands.replay import replay_session
    from webui.live import tracking_observe
    from webui.replays import default_detect

    inner = inner or tracking_observe(mode=default_detect("session"))
    reads: list[list[str]] = []

    def observe(image, camera, game, expected=()):
        try:
            obs = inner(image, camera, game, expected=expected)
        except BaseException:
            reads.append([])
            raise
        reads.append(sorted(p.name for p in obs.pieces))
        if seen is not None:
            seen(obs)
        return obs

    observe.takes_expected = True
    timeline, _ = replay_session(folder, observe=observe)
    return timeline, reads


def page_rulings(folder: Path, game: str) -> tuple[list[dict], int]:
    """The page's replay of a session, built by the page's own code as `refcam serve --replay DIR`
    builds it (webui/commands/serve.py build_engine_config, webui/app.py create_app) and run by
    its engine loop (LiveEngine.run, here on this thread) while a viewer is subscribed, so every
    frame is drawn as for an open page. Its rulings as the page receives them, and the frames
    its real-time source skipped."""
    import io

    from webui.app import create_app
    from webui.cli import build_parser
    from webui.commands.serve import build_engine_config

    args = build_parser().parse_args(["serve", "--replay", str(folder)])
    config = dict(build_engine_config(args, stderr=io.StringIO()), START_ENGINE=False)
    engine = create_app(config).extensions["refcam_engine"]
    if engine.game.id != game:
        raise SystemExit(f"bench-games: the page took {folder} for {engine.game.id}, not {game}")
    events = engine.events.subscribe()
    viewer = engine.frames.subscribe()
    rulings: list[dict] = []

    def watch() -> None:
        try:
            while not engine.done.is_set():
                viewer.get(timeout=0.2)
        except StopIteration:  # the engine closed its frames
            pass

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        engine.run()
    finally:
        engine.stop()
        watcher.join(timeout=2.0)
    while True:
        try:
            ev = events.get(timeout=0)
        except StopIteration:
            break
        if ev is None:
            break
        if ev["type"] == "ruling":
            rulings.append(ev["ruling"])
    return rulings, engine.source.frames_skipped


def replayed(folder: Path, game: str, replay: str, saved: bool) -> tuple[list[dict], int, list | None]:
    """The session's rulings by one replay, the frames it skipped and the pieces it read in each frame
    (offline only), kept beside it (rulings-<replay>.json); saved: the ones kept by an earlier run,
    to count again without replaying."""
    kept = folder / f"rulings-{replay}.json"
    if saved:
        doc = json.loads(kept.read_text())
        if not isinstance(doc, dict):
            return doc, 0, None
        return doc["rulings"], doc["frames_skipped"], doc.get("reads")
    skipped, reads = 0, None
    if replay == "offline":
        rulings, reads = offline_rulings(folder)
    else:
        rulings, skipped = page_rulings(folder, game)
    kept.write_text(json.dumps({"rulings": rulings, "frames_skipped": skipped, "reads": reads}, indent=1))
    return rulings, skipped, reads


# --- the run -----------------------------------------------------------------------------------
@dataclass
class Row:
    game: str
    seed: int
    copy: str
    hold: int
    replay: str
    turns: int
    outcome: Outcome
    frames: int = 0
    frames_skipped: int = 0
    seconds: float = 0.0
    needed_reads: NeededReads | None = None


def run_game(game: str, seed: int, args, out_dir: Path, log) -> list[Row]:
    played = play(game, seed, "full")
    if args.quick:
        played.turns = played.turns[:QUICK_TURNS]
    t0 = time.monotonic()
    if args.judge_only or args.no_render:
        folders = {(c, h): out_dir / f"{game}-{seed}-{c}-h{h}" for c in args.copies for h in args.holds}
    else:
        folders = write_sessions(played, out_dir, holds=args.holds, copies=args.copies)
        log(f"{game} seed {seed}: {len(played.turns)} turns rendered as {len(folders)} sessions "
            f"in {time.monotonic() - t0:.0f} s")
    rows = []
    for (copy, hold), folder in folders.items():
        frames = sum(1 for _ in (folder / "frames").iterdir())
        for replay in args.replays:
            t1 = time.monotonic()
            rulings, skipped, reads = replayed(folder, game, replay, args.judge_only)
            outcome = judge(game, folder, rulings, full_game=not args.quick)
            needed = count_needed_reads(game, folder, reads)
            rows.append(Row(game, seed, copy, hold, replay, len(played.turns), outcome, frames, skipped,
                            time.monotonic() - t1, needed))
            log(f"  {copy:6s} hold {hold} {replay:7s}: {line_of(outcome)} ({time.monotonic() - t1:.0f} s)")
            if needed is not None:
                log(f"    {reads_line(needed)}" + "".join(f"\n      missed: {m}" for m in needed.misses))
    return rows


def reads_line(n: NeededReads) -> str:
    return (f"needed pieces read in still periods, >= {READ_FROM_PX:.0f} px: {n.read} of {n.needed}"
            f" (under {READ_FROM_PX:.0f} px: {n.small_read} of {n.small_needed})")


def line_of(o: Outcome) -> str:
    winner = {True: "right", False: "wrong", None: "-"}[o.winner_right]
    return (f"{o.right}/{o.legal_turns} right, {o.ruled_illegal} ruled illegal, {o.wrong_position} wrong position, "
            f"{o.cannot_tell} cannot tell, {o.missed} missed; illegal flagged {o.flagged}/{o.illegal_changes}, "
            f"take-backs {o.take_backs_seen}/{o.take_backs}; winner {winner}")


COLUMNS = ("game", "seed", "copy", "hold", "replay", "legal turns", "right", "ruled illegal", "wrong pos",
           "cannot tell", "missed", "illegal flagged", "take-backs seen", "winner", "score", "frames skipped")


def _yes(v) -> str:
    return {True: "right", False: "wrong", None: "-"}[v]


def table(rows: list[Row]) -> str:
    """A markdown table: one line per game, copy, hold and replay, then totals."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for r in rows:
        o = r.outcome
        winner = _yes(o.winner_right) + (f" ({o.ruled_winner})" if o.winner_right is False else "")
        score = _yes(o.score_right) + (f" ({o.ruled_score})" if o.score_right is False else "")
        cells = (r.game, r.seed, r.copy, r.hold, r.replay, o.legal_turns, o.right, o.ruled_illegal, o.wrong_position,
                 o.cannot_tell, o.missed, f"{o.flagged}/{o.illegal_changes}", f"{o.take_backs_seen}/{o.take_backs}",
                 winner, score, f"{r.frames_skipped}/{r.frames}" if r.replay == "page" else "-")
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    groups: dict[tuple, list[Row]] = {}
    for r in rows:
        groups.setdefault((r.copy, r.hold, r.replay), []).append(r)
    for (copy, hold, replay), rs in groups.items():
        total = lambda name: sum(getattr(r.outcome, name) for r in rs)  # noqa: E731
        winners = [r.outcome.winner_right for r in rs if r.outcome.winner_right is not None]
        cells = ("all", "", copy, hold, replay, total("legal_turns"), total("right"), total("ruled_illegal"),
                 total("wrong_position"), total("cannot_tell"), total("missed"),
                 f"{total('flagged')}/{total('illegal_changes')}", f"{total('take_backs_seen')}/{total('take_backs')}",
                 f"{sum(winners)} of {len(winners)}" if winners else "-", "", "")
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


def reads_table(rows: list[Row]) -> str:
    """A markdown table of the needed pieces read in the still periods (offline replays), one line
    per game, copy and hold, then totals per copy and hold, then the misses."""
    rows = [r for r in rows if r.needed_reads is not None]
    if not rows:
        return ""
    lines = [f"| game | seed | copy | hold | needed pieces read in still periods, >= {READ_FROM_PX:.0f} px "
             f"| under {READ_FROM_PX:.0f} px |", "|---|---|---|---|---|---|"]
    totals: dict[tuple, list[int]] = {}
    for r in rows:
        n = r.needed_reads
        lines.append(f"| {r.game} | {r.seed} | {r.copy} | {r.hold} | {n.read} of {n.needed} | "
                     f"{n.small_read} of {n.small_needed} |")
        t = totals.setdefault((r.copy, r.hold), [0, 0, 0, 0])
        for k, v in enumerate((n.read, n.needed, n.small_read, n.small_needed)):
            t[k] += v
    for (copy, hold), t in totals.items():
        lines.append(f"| all | | {copy} | {hold} | {t[0]} of {t[1]} | {t[2]} of {t[3]} |")
    misses = [f"- {r.game} {r.seed} {r.copy} hold {r.hold}: {m}" for r in rows for m in r.needed_reads.misses]
    return "\n".join(lines + ([""] + misses if misses else []))


def _csv(text: str, cast=str) -> tuple:
    try:
        return tuple(cast(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list") from None


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=1, metavar="N", help="games per game kind (default 1, at most 3)")
    ap.add_argument("--only", type=lambda s: _csv(s), default=GAMES, help="kang,kayak,tornado (default all three)")
    ap.add_argument("--holds", type=lambda s: _csv(s, int), default=HOLDS, help="still frames a turn (default 4,2,1)")
    ap.add_argument("--copies", type=lambda s: _csv(s), default=COPIES, help="clean,webcam (default both)")
    ap.add_argument("--replays", type=lambda s: _csv(s), default=("offline", "page"),
                    help="offline,page (default both)")
    ap.add_argument("--tuning", action="store_true", help="play the tuning seeds, not the reporting ones")
    ap.add_argument("--seeds", type=lambda s: _csv(s, int), default=None,
                    help="play these seeds of each game instead (e.g. 202,203: tuning or reporting ones, say which)")
    ap.add_argument("--quick", action="store_true", help=f"only the first {QUICK_TURNS} turns of each game")
    ap.add_argument("--out", default=str(ROOT / "out" / "bench-games"), help="where the sessions are written")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--judge-only", action="store_true",
                    help="count again from the rulings an earlier run kept in --out (no rendering, no replay)")
    ap.add_argument("--no-render", action="store_true",
                    help="replay the sessions an earlier run wrote in --out (no rendering; e.g. to compare two codes)")
    args = ap.parse_args(argv)
    bad = [v for v in args.only if v not in GAMES] + [v for v in args.copies if v not in COPIES] + \
        [v for v in args.replays if v not in ("offline", "page")] + [str(h) for h in args.holds if not 1 <= h <= 30]
    if bad or not 1 <= args.games <= 3:
        ap.error(f"not understood: {', '.join(bad) or f'--games {args.games}'}")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    seeds = TUNING_SEEDS if args.tuning else REPORTING_SEEDS
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    log = (lambda m: print(m, file=sys.stderr, flush=True)) if args.json else (lambda m: print(m, flush=True))
    t0 = time.monotonic()
    rows: list[Row] = []
    for game in args.only:
        for seed in args.seeds or seeds[game][:args.games]:
            rows += run_game(game, seed, args, out_dir, log)
    took = time.monotonic() - t0
    figures = json.dumps({"seeds": list(args.seeds) if args.seeds else "tuning" if args.tuning else "reporting",
                          "seconds": round(took, 1),
                          "rows": [dict(asdict(r), outcome=asdict(r.outcome)) for r in rows]}, indent=1)
    (out_dir / "figures.json").write_text(figures + "\n")
    if args.json:
        print(figures)
    else:
        print()
        print(table(rows))
        print()
        print(reads_table(rows))
        which = f"seeds {','.join(map(str, args.seeds))}" if args.seeds else \
            "tuning seeds" if args.tuning else "reporting seeds"
        print(f"\n{which}, {took / 60:.1f} min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
