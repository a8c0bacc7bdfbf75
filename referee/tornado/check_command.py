"""`refcam tornado check BEFORE AFTER`: one Tornado Splash turn judged from two images or
two observation files (referee/tornado/check.py), each broken rule cited."""

from __future__ import annotations

import argparse
import json

from referee.game import Command, Tools


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("before", metavar="BEFORE", help="the table before the turn: a photo or an observation JSON file")
    p.add_argument("after", metavar="AFTER", help="the table after the turn: a photo or an observation JSON file")
    p.add_argument("--camera-file", default=None, metavar="F", help="camera file from `refcam calibrate`")
    p.add_argument("--json", action="store_true", help="print the rulings as one JSON document")


def run(args: argparse.Namespace, tools: Tools) -> int:
    from .check import NOT_JUDGED_WITHOUT_HISTORY, check_turn

    before = tools.observe_path(args.before, args.camera_file, "tornado")
    after = tools.observe_path(args.after, args.camera_file, "tornado")
    report = check_turn(before, after)
    doc = report.to_json()
    doc["warnings"] = list(before.warnings) + list(after.warnings) + doc["warnings"]
    doc["not_judged"] = list(NOT_JUDGED_WITHOUT_HISTORY)
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        print(format_report(doc))
    return 0


def format_report(doc: dict) -> str:
    movers = ", ".join(m.split("/")[-1] for m in doc["movers"]) or "none"
    lines = [doc["headline"]]
    if doc.get("breaches"):
        lines.append(f"{len(doc['breaches'])} more: " + " ".join(doc["breaches"]))
    lines.append(f"Tornado Splash turn check: tokens moved: {movers}")
    for r in doc["rulings"]:
        mark = {"ok": "LEGAL  ", "violation": "ILLEGAL", "cannot tell": "CANNOT TELL"}.get(r["verdict"], r["verdict"])
        lines.append(f"{mark}  {r['boat'].split('/')[-1]}: {r['summary']}  [{r['rule']}]")
    for boat, c in doc.get("crossings", {}).items():
        lines.append(f"finish: {boat.split('/')[-1]} crossed={c['crossed']} (margin {c['margin_mm']:+.1f} mm, "
                     f"band {c['band']:.1f} mm, {c['basis']})")
    lines += [f"broken: {b}" for b in doc["broken"]] or ["broken: no rule"]
    lines += [f"warning: {w}" for w in doc["warnings"]]
    lines += [f"not judged without history: {r}" for r in doc.get("not_judged", ())]
    return "\n".join(lines)


CHECK = Command(name="check", help="judge one Tornado Splash turn from two images or observation files",
                add_arguments=add_arguments, run=run)
