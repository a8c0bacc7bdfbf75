"""`refcam measure WHAT IMAGE [IMAGE...] --out CATALOG`: a copy's sticker placement measured by
the camera (SPEC section 4). WHAT comes from the games' optional ``measurements()``
(referee/game.py Measurement); this module only reads the photos, writes the catalog and
prints, naming no game."""

from __future__ import annotations

import json
from pathlib import Path

from referee.errors import InvalidInputError
from referee.game import measurements_of
from referee.registry import games
from webui.catalog_option import add_catalog_option


def _offered():
    return {m.name: (game.id, m) for game in games() for m in measurements_of(game)}


def register(subparsers) -> None:
    offered = _offered()
    p = subparsers.add_parser(
        "measure", help="measure your copy's sticker placement with the camera; writes a catalog",
        description="Measure where the stickers of your copy sit, from photos, and write a catalog with those "
                    "placements and their sigma (use it with --catalog on every command). "
                    + " ".join(f"{name}: {m.help}." for name, (_, m) in sorted(offered.items())))
    p.add_argument("what", metavar="WHAT", choices=sorted(offered),
                   help="what to measure: " + ", ".join(sorted(offered)))
    p.add_argument("images", nargs="+", metavar="IMAGE", help="the photos (repeat photos average)")
    p.add_argument("--out", required=True, metavar="CATALOG", help="the measured catalog to write (JSON)")
    p.add_argument("--camera-file", default=None, metavar="F", help="camera file from `refcam calibrate`")
    p.add_argument("--json", action="store_true", help="print the measurements as one JSON document")
    add_catalog_option(p)  # the base: its placements are measured from and kept for everything else
    p.set_defaults(run=run)


def run(args) -> int:
    from referee.catalog import default_catalog
    from referee import safeload
    from referee.paths import refuse_overwriting_inputs
    from webui.tools import CliTools

    out = Path(args.out)
    if out.suffix.lower() != ".json":
        raise InvalidInputError(f"--out {args.out!r}: the measured catalog is a .json file")
    if not out.parent.is_dir():
        raise InvalidInputError(f"--out {args.out!r}: folder {str(out.parent)!r} does not exist")
    safeload.output_path(out, "--out")  # a FIFO or a device is refused before any work
    # the base catalog may be the output: the measured copy holds all of it, updated
    refuse_overwriting_inputs("--out", out, [("a photo", i) for i in args.images]
                              + [("the camera file", args.camera_file)])
    game_id, measurement = _offered()[args.what]
    tools = CliTools()
    observations = [(Path(i).name, tools.observe_path(i, args.camera_file, game_id)) for i in args.images]
    got = measurement.measure(observations, default_catalog())
    safeload.write_text(out, json.dumps(got["catalog"], indent=2) + "\n", "measured catalog")  # whole or not at all
    if args.json:
        print(json.dumps(dict(got["json"], catalog=str(out))))
    else:
        print("\n".join(got["lines"]))
        print(f"wrote {out}: use it with --catalog {out} on every command")
    return 0
