"""`refcam markers`: printable sticker sheets (PDF at true scale + one PNG per marker),
or the ChArUco calibration board with --charuco."""

from __future__ import annotations

from referee.catalog import GAMES  # the sticker catalog's games (vision needs their stickers)

import json

GAME_CHOICES = GAMES + ("all",)
PAPER_CHOICES = ("a4", "letter")


def register(subparsers) -> None:
    p = subparsers.add_parser("markers", help="print sticker sheets (PDF at true scale) and marker PNGs",
                              description="Write printable sticker sheets for a game (one PDF per game, "
                                          "table corners included in each) and one PNG per marker, or the "
                                          "ChArUco calibration board with --charuco.")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--game", choices=GAME_CHOICES, help="which game's stickers (all = one PDF per game)")
    what.add_argument("--charuco", action="store_true", help="the ChArUco calibration board instead")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (created if missing)")
    p.add_argument("--paper", choices=PAPER_CHOICES, default="a4", help="paper size (default a4)")
    p.add_argument("--dpi", type=int, default=None, help="PNG resolution (default 600)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(run=run)


def run(args) -> int:
    from referee.catalog import GAMES
    from referee.errors import InvalidInputError
    from vision import printing

    dpi = printing.PNG_DPI if args.dpi is None else args.dpi
    if not 72 <= dpi <= 2400:
        raise InvalidInputError(f"--dpi {dpi} is out of range (72-2400)")
    out = printing.prepare_out_dir(args.out)
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
            print(f"{s.game}: {s.path} ({s.pages} pages, {len(s.stickers)} stickers)")
        print(f"{len(pngs)} marker PNGs at {dpi} dpi in {out / 'png'}")
        print("Print at 100% / actual size and check the 50 mm scale bar with a ruler.")
    return 0
