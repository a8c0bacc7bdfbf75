"""Every file argument of every `refcam` command, given a special file (issue 22):

  fifo      a named pipe (an open() for reading or writing blocks forever)
  zero      a symlink to /dev/zero (a read never ends)
  loop      a symlink loop
  sparse    a 300 MB sparse file (a size check must come before any read)

Each case must end within CASE_S seconds, exit 2 with one "refcam: error:" line and no traceback
(or exit 0 where the file is a legitimate output a regular file may stand in for). The cases run
in one process (`python -m tests.special_files REPORT.json [KIND ...]`) with an address-space
limit, so a reader without a limit fails with MemoryError instead of taking the machine, and the
process's peak resident memory is reported for the test to check.

FILE_ARGUMENTS names each argument once; tests/test_special_files.py checks that every argument
of every command is either here or in NOT_FILES, so a new file argument cannot be forgotten.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples"
STILL = SAMPLES / "tornado" / "001.jpg"
KANG_STILL = SAMPLES / "kang" / "004.jpg"
SESSION = SAMPLES / "sessions" / "kang"
KINDS = ("fifo", "zero", "loop", "sparse")
CASE_S = 5.0
SPARSE_BYTES = 300_000_000
ADDRESS_SPACE_BYTES = 1_600_000_000  # the interpreter with cv2 maps ~500 MB before reading anything

# argument -> (suffix of the special file's name, argv given the special path, the scratch folder and a
# stream URL, whether the argument is an output a regular file may stand in for)
FILE_ARGUMENTS = {
    "observe IMAGE": (".jpg", lambda f, d, u: ["observe", f], False),
    "observe --camera-file": (".json", lambda f, d, u: ["observe", STILL, "--camera-file", f], False),
    "observe --annotate": (".png", lambda f, d, u: ["observe", STILL, "--annotate", f], True),
    "rank IMAGE": (".jpg", lambda f, d, u: ["rank", f, "--course", "roundabout-river"], False),
    "rank --course": (".json", lambda f, d, u: ["rank", STILL, "--course", f], False),
    "rank --camera-file": (".json", lambda f, d, u: ["rank", STILL, "--course", "roundabout-river",
                                                     "--camera-file", f], False),
    "rank --history": (".json", lambda f, d, u: ["rank", STILL, "--course", "roundabout-river", "--history", f],
                       False),
    "rank --annotate": (".png", lambda f, d, u: ["rank", STILL, "--course", "roundabout-river", "--annotate", f],
                        True),
    "render SCENE": (".json", lambda f, d, u: ["render", f, d / "out.jpg"], False),
    "render OUT": (".jpg", lambda f, d, u: ["render", SAMPLES / "kang" / "000.scene.json", f], True),
    "render --truth": (".json", lambda f, d, u: ["render", SAMPLES / "kang" / "000.scene.json", d / "o.jpg",
                                                 "--truth", f], True),
    "calibrate --images": ("", lambda f, d, u: ["calibrate", "--images", f, "--out", d / "cam.json"], False),
    "calibrate --images DIR/view": (".png", lambda f, d, u: ["calibrate", "--images", f.parent, "--out",
                                                             d / "cam.json"], False),
    "calibrate --camera-file": (".json", lambda f, d, u: ["calibrate", "--images", d / "views", "--camera-file", f,
                                                          "--out", d / "cam.json"], False),
    "calibrate --out": (".json", lambda f, d, u: ["calibrate", "--images", d / "views", "--out", f], True),
    "calibrate --save-views": ("", lambda f, d, u: ["calibrate", "--camera", u, "--save-views", f, "--out",
                                                    d / "cam.json"], True),
    "record --out": ("", lambda f, d, u: ["record", "--camera", u, "--out", f, "--seconds", "1"], True),
    "record --camera-file": (".json", lambda f, d, u: ["record", "--camera", u, "--camera-file", f, "--out",
                                                       d / "rec", "--seconds", "1"], False),
    "replay DIR": ("", lambda f, d, u: ["replay", f, "--quick"], False),
    "replay DIR/manifest": (".jsonl", lambda f, d, u: ["replay", f.parent, "--quick"], False),
    "replay --camera-file": (".json", lambda f, d, u: ["replay", SESSION, "--camera-file", f], False),
    "replay --course": (".json", lambda f, d, u: ["replay", d / "session", "--game", "tornado", "--course", f],
                        False),
    "serve --replay": ("", lambda f, d, u: ["serve", "--replay", f, "--port", "1"], False),
    "serve --video": (".mp4", lambda f, d, u: ["serve", "--video", f, "--port", "1"], False),
    "serve --camera-file": (".json", lambda f, d, u: ["serve", "--replay", SESSION, "--camera-file", f, "--port",
                                                      "1"], False),
    "serve --course": (".json", lambda f, d, u: ["serve", "--replay", SESSION, "--game", "tornado", "--course", f,
                                                 "--port", "1"], False),
    "serve --record": ("", lambda f, d, u: ["serve", "--replay", SESSION, "--record", f, "--port", "1"], True),
    "measure IMAGES": (".jpg", lambda f, d, u: ["measure", "tornado-boats", f, "--out", d / "measured.json"], False),
    "measure --out": (".json", lambda f, d, u: ["measure", "tornado-boats", STILL, "--out", f], True),
    "markers --out": ("", lambda f, d, u: ["markers", "--game", "kang", "--out", f], True),
    "kang state IMAGE": (".jpg", lambda f, d, u: ["kang", "state", f], False),
    "kang check BEFORE (position)": (".json", lambda f, d, u: ["kang", "check", f, d / "start.json"], False),
    "kang check AFTER (image)": (".jpg", lambda f, d, u: ["kang", "check", KANG_STILL, f], False),
    "kang replay DIR": ("", lambda f, d, u: ["kang", "replay", f], False),
    "kang perft POSITION": (".json", lambda f, d, u: ["kang", "perft", f, "1"], False),
    "kayak state IMAGE": (".jpg", lambda f, d, u: ["kayak", "state", f], False),
    "kayak check BEFORE (text)": (".txt", lambda f, d, u: ["kayak", "check", f, "0A/1A -"], False),
    "kayak check AFTER (state)": (".json", lambda f, d, u: ["kayak", "check", "0A/1A -", f], False),
    "kayak replay DIR": ("", lambda f, d, u: ["kayak", "replay", f], False),
    "tornado check BEFORE": (".json", lambda f, d, u: ["tornado", "check", f, STILL], False),
    "--catalog": (".json", lambda f, d, u: ["kang", "perft", "start", "1", "--catalog", f], False),
    "REFCAM_CATALOG": (".json", lambda f, d, u: ["kang", "perft", "start", "1"], False),
    "--camera-file of kang state": (".json", lambda f, d, u: ["kang", "state", KANG_STILL, "--camera-file", f],
                                    False),
}
# arguments that name no file (checked by tests/test_special_files.py against the parser)
NOT_FILES = {"what", "--boats", "--game", "--paper", "--dpi", "--views", "--camera", "--weights", "--grand-prix", "--advanced",
             "--host", "--port", "--token", "--allow-host", "--detect", "--stable-s", "--seconds", "depth",
             "--json", "--quick", "--fast", "--loop", "--strict", "--assume-layout", "--charuco"}


def make_special(kind: str, path: Path) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "zero":
        os.symlink("/dev/zero", path)
    elif kind == "loop":
        os.symlink(path.name, path)
    elif kind == "sparse":
        with open(path, "wb") as fh:
            fh.truncate(SPARSE_BYTES)


def _scratch(folder: Path) -> None:
    (folder / "views").mkdir()
    shutil.copyfile(STILL, folder / "views" / "view-00.jpg")
    shutil.copytree(SESSION, folder / "session")
    (folder / "start.json").write_text(json.dumps({"board": ["......"] * 6}))


def _special_path(folder: Path, label: str, suffix: str) -> Path:
    """Where the special file goes: the argument itself, or a file inside a folder argument."""
    if label.endswith("DIR/view"):
        (folder / "specialviews").mkdir()
        return folder / "specialviews" / f"view-01{suffix}"
    if label.endswith("DIR/manifest"):
        shutil.copytree(SESSION, folder / "special-session")
        (folder / "special-session" / "manifest.jsonl").unlink()
        return folder / "special-session" / "manifest.jsonl"
    return folder / f"special{suffix}"


class CaseTimeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise CaseTimeout


def run_case(label: str, kind: str, stream_url: str) -> dict:
    from webui.cli import main

    suffix, argv_of, is_output = FILE_ARGUMENTS[label]
    with tempfile.TemporaryDirectory(prefix="refcam-special-") as tmp:
        folder = Path(tmp)
        _scratch(folder)
        special = _special_path(folder, label, suffix)
        make_special(kind, special)
        argv = [str(a) for a in argv_of(special, folder, stream_url)]
        env_before = os.environ.get("REFCAM_CATALOG")
        if label == "REFCAM_CATALOG":
            os.environ["REFCAM_CATALOG"] = str(special)
        out, err = io.StringIO(), io.StringIO()
        t0 = time.monotonic()
        signal.setitimer(signal.ITIMER_REAL, CASE_S)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = main(argv)
                except SystemExit as exc:
                    code = exc.code
        except CaseTimeout:
            code = "hang"
        except BaseException as exc:  # noqa: BLE001 - a traceback is the failure being looked for
            code = f"{type(exc).__name__}: {str(exc)[:200]}"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            seconds = time.monotonic() - t0
            if label == "REFCAM_CATALOG":
                _restore_catalog(env_before)
        from referee.catalog import use_catalog

        use_catalog(None)  # a --catalog that was accepted must not leak into the next case
    lines = err.getvalue().strip().splitlines()
    one_line = code == 2 and len(lines) >= 1 and lines[-1].startswith("refcam: error: ") and len(lines[-1]) <= 500 \
        and all(line.startswith("refcam: warning: ") for line in lines[:-1])
    ok = (one_line or (code == 0 and (is_output or kind == "sparse"))) and "Traceback" not in err.getvalue()
    return {"case": label, "kind": kind, "code": code, "seconds": round(seconds, 2), "ok": bool(ok),
            "stderr": (lines[-1] if lines else "")[:300]}


def _restore_catalog(value: str | None) -> None:
    if value is None:
        os.environ.pop("REFCAM_CATALOG", None)
    else:
        os.environ["REFCAM_CATALOG"] = value


def own_peak_rss_mb() -> float:
    """This process's peak resident memory since it started (VmHWM). Not ru_maxrss: Linux carries
    that over from the parent through fork and exec, so a child of a big test process looks big."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024.0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # pragma: no cover - not Linux


def main(argv: list[str]) -> int:
    report_path, kinds = Path(argv[0]), argv[1:] or list(KINDS)
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_BYTES, ADDRESS_SPACE_BYTES))
    signal.signal(signal.SIGALRM, _on_alarm)
    from tests.fault_server import FaultServer

    results = []
    with FaultServer(seconds=20) as faults:
        for kind in kinds:
            for label in FILE_ARGUMENTS:
                results.append(run_case(label, kind, faults.url("good")))
    peak_mb = own_peak_rss_mb()
    report_path.write_text(json.dumps({"peak_rss_mb": round(peak_mb, 1), "results": results}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
