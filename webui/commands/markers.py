"""`refcam markers`: printable sticker sheets (PDF at true scale + one PNG per marker),
or the ChArUco calibration board with --charuco."""

from __future__ import annotations

from referee.catalog import GAMES  # the sticker catalog's games (vision needs their stickers)

import json

from webui.catalog_option import add_catalog_option

GAME_CHOICES = GAMES + ("all",)
PAPER_CHOICES = ("a4", "letter")


def register(subparsers) -> None:
    p = subparsers.add_parser("markers", help="print sticker sheets (PDF at true scale) and marker PNGs",
                              description="Write printable sticker sheets for a game (one PDF per game, "
                                          "table corners included in each, followed by the placement guide: "
                                          "where each sticker goes on each component) and one PNG per marker, or "
                                          "the ChArUco calibration board with --charuco (or N synthetic photos "
                                          "of it with --views N).")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--game", choices=GAME_CHOICES, help="which game's stickers (all = one PDF per game)")
    what.add_argument("--charuco", action="store_true", help="the ChArUco calibration board instead")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (created if missing)")
    p.add_argument("--paper", choices=PAPER_CHOICES, default="a4", help="paper size (default a4)")
    p.add_argument("--dpi", type=int, default=None, help="PNG resolution (default 600)")
    p.add_argument("--views", type=int, metavar="N",
                   help="with --charuco: instead of the board, render N synthetic photos of it (and the camera "
                        "they were taken with) to try `refcam calibrate --images DIR` without a camera")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    add_catalog_option(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from referee.catalog import GAMES
    from referee.errors import InvalidInputError
    from synth import printing

    dpi = printing.PNG_DPI if args.dpi is None else args.dpi
    if not 72 <= dpi <= 2400:
        raise InvalidInputError(f"--dpi {dpi} is out of range (72-2400)")
    if args.views is not None and not args.charuco:
        raise InvalidInputError("--views goes with --charuco (synthetic photos of the calibration board)")
    out = printing.prepare_out_dir(args.out)
    if args.charuco and args.views is not None:
        return _write_synthetic_views(out, args.views, args.json)
    if args.charuco:
        info = printing.write_charuco(out, args.paper, dpi)
        if args.json:
            print(json.dumps({"charuco": info}))
        else:
            print(f"ChArUco board: {info['pdf']} (print at 100%), PNG {info['png']} at {dpi} dpi")
        return 0

    games = GAMES if args.game == "all" else (args.game,)
    sheets = []
    stickers = {}
    for game in games:
        sheets.append(printing.write_game_sheet(game, out, args.paper))
        for st in printing.stickers_for_game(game):
            stickers[st.marker_id] = st
    pngs = printing.write_marker_pngs(sorted(stickers.values(), key=lambda s: s.marker_id), out, dpi)
    if args.json:
        print(json.dumps({"paper": args.paper, "sheets": [s.to_json() for s in sheets],
                          "png_dir": str(out / "png"), "png_dpi": dpi, "pngs": len(pngs)}))
    else:
        for s in sheets:
            guide = s.to_json()["guide_first_page"]
            print(f"{s.game}: {s.path} ({s.pages} pages, {len(s.stickers)} stickers; where each sticker goes: "
                  f"the placement guide from page {guide + 1})")
        print(f"{len(pngs)} marker PNGs at {dpi} dpi in {out / 'png'}")
        print("Print at 100% / actual size and check the 50 mm scale bar with a ruler.")
    return 0


def _write_synthetic_views(out, views: int, as_json: bool) -> int:
    from calibration.charuco import MIN_VIEWS
    from calibration.synthetic import write_synthetic_views

    info = write_synthetic_views(out, views)
    if as_json:
        print(json.dumps({"charuco_views": info}))
        return 0
    w, h = info["image_size"]
    print(f"{len(info['views'])} synthetic photos of the ChArUco board ({w}x{h}) in {out}; the camera they were "
          f"rendered with: {info['truth_camera']}")
    if views < MIN_VIEWS:
        print(f"note: calibrate needs at least {MIN_VIEWS} views; these {views} will be refused")
    print(f"try: refcam calibrate --images {out} --out camera.json  (and compare with {info['truth_camera']})")
    return 0
