"""`refcam observe IMAGE [IMAGE ...] [--camera-file F] [--game G] [--json] [--annotate OUT.png]`.

Pieces found in one image, poses in the game frame (mm) with their uncertainty. Several photos
of one still table (or a folder of them) are registered and fused first (vision/fusion.py).
"""

from __future__ import annotations

from referee.catalog import GAMES  # the sticker catalog's games (vision needs their stickers)

import json

from webui.catalog_option import add_catalog_option


def register(subparsers) -> None:
    p = subparsers.add_parser("observe", help="pieces found in one image, poses in the game frame",
                              description="Find refcam's stickers in IMAGE and print every piece's pose in the game "
                                          "frame (mm, degrees) with its standard uncertainty sigma.")
    p.add_argument("image", nargs="+", metavar="IMAGE",
                   help="photo of the table (JPEG or PNG); several photos of the same still table, or a folder of "
                        "them, are fused into one less noisy picture first")
    p.add_argument("--camera-file", metavar="F", help="camera file from `refcam calibrate` (without it refcam estimates the "
                                         "focal length from the stickers and promises less)")
    p.add_argument("--game", choices=GAMES, help="game (default: inferred from the stickers)")
    p.add_argument("--json", action="store_true", help="print the observation as one JSON document (SPEC section 4)")
    p.add_argument("--annotate", metavar="OUT.png", help="also write the image with each piece's outline, name and "
                                                         "sigma drawn")
    add_catalog_option(p)
    p.set_defaults(run=run)


def _with_needed_pieces(image, camera, obs):
    """obs with the pieces the game needs at its start (expected_pieces_of a new game: a start
    zone's tokens, ...) read again where they should be, the places seen empty, and a warning
    naming each one still not read, with its sticker's size in px and what would fix it
    (vision/reread.py). A game that needs settings to start, or expects nothing, leaves obs as is."""
    from referee.errors import RefcamError
    from referee.game import expected_pieces_of
    from referee.registry import get_game
    from vision.pipeline import observe

    if obs.game is None:
        return obs
    try:
        game = get_game(obs.game)
        expected = expected_pieces_of(game, game.new_state({}))
    except (RefcamError, KeyError, TypeError, ValueError):
        return obs  # e.g. a game whose start needs a course: nothing known to expect
    if not expected:
        return obs
    return observe(image, camera, game=obs.game, expected=expected)


def run(args) -> int:
    from pathlib import Path

    from referee import safeload
    from referee.errors import InvalidInputError
    from vision.imageio import load_image
    from vision.pipeline import observe
    from referee.paths import refuse_overwriting_inputs

    annotate_to = None
    if args.annotate:
        annotate_to = Path(args.annotate)
        if annotate_to.suffix.lower() not in (".png", ".jpg", ".jpeg"):
            raise InvalidInputError(f"--annotate {args.annotate!r}: use a .png or .jpg file name")
        if not annotate_to.parent.is_dir():
            raise InvalidInputError(f"--annotate {args.annotate!r}: folder {str(annotate_to.parent)!r} does not exist")
        safeload.output_path(annotate_to, "--annotate")  # a FIFO or a device is refused before any work
        refuse_overwriting_inputs("--annotate", annotate_to,
                                  [("the image", i) for i in args.image] + [("the camera file", args.camera_file)])
    camera = None
    if args.camera_file:
        from calibration.camera import CameraModel
        camera = CameraModel.load(args.camera_file)
    if len(args.image) == 1 and not Path(args.image[0]).is_dir():
        image = load_image(args.image[0])
        if camera is not None:
            h, w = image.shape[:2]
            camera.check_image_size(w, h, source=f"camera file {args.camera_file}")
        obs = observe(image, camera, game=args.game)
        obs = _with_needed_pieces(image, camera, obs)
    else:
        from webui.tools import observe_photos

        obs, image = observe_photos(args.image, camera, args.game)
    if annotate_to is not None:
        import cv2

        from vision.annotate import draw_observation
        ok, buf = cv2.imencode(annotate_to.suffix.lower(), draw_observation(image, obs, camera))
        if not ok:
            raise InvalidInputError(f"--annotate {args.annotate!r}: could not encode the image")
        safeload.write_bytes(annotate_to, buf.tobytes(), "--annotate")  # a full disk names the file
    if args.json:
        print(json.dumps(obs.to_json()))
        return 0
    print(format_table(obs))
    if annotate_to is not None:
        print(f"annotated image: {annotate_to}")
    return 0


def observe_verdict(obs) -> str:
    """The first line a player reads: how many pieces were read, in which frame, and which
    needed pieces were not (their warnings below say why and what would fix it)."""
    from referee.observation import not_read_piece

    missing = [name for name in map(not_read_piece, obs.warnings) if name]
    frame = obs.frame or {}
    where = "in the game frame" if frame.get("game_frame") else "not in the game frame (its anchor is not in view)"
    text = f"Read: {len(obs.pieces)} piece{'s' * (len(obs.pieces) != 1)} {where}"
    if missing:
        text += f"; not read: {', '.join(missing)} (see the warnings)"
    return text + "."


def format_table(obs) -> str:
    """A readable table: name, x, y, theta, sigma (and its two terms: the picture's measurement
    and the stickers' placement), size px, face; then the frame and warnings."""
    frame = obs.frame or {}
    anchor = frame.get("anchor") or frame.get("kind", "?")
    fusion = obs.extra.get("fusion")
    lines = [observe_verdict(obs),
             f"game: {obs.game or '?'}   frame: {anchor}"
             + ("" if frame.get("game_frame") else " (not the game frame)")
             + f"   camera file: {'yes' if frame.get('camera_file') else 'no'}"]
    if fusion:
        lines.append(f"fused {fusion['frames']} photos ({fusion['method']}): noise {fusion['noise_single']:.1f} -> "
                     f"{fusion['noise_fused']:.1f} grey levels; read only in the fused picture: "
                     f"{', '.join(fusion['fused_only']) or 'none'}")
    header = (f"{'piece':<24} {'x mm':>9} {'y mm':>9} {'theta':>8} {'sigma mm':>9} {'measure':>8} {'placing':>8} "
              f"{'size px':>8}  face")
    lines += [header, "-" * len(header)]
    for p in obs.pieces:
        placing = max(p.placement_sigma_mm, p.placement_sigma_along_mm)
        lines.append(f"{p.name:<24} {p.x_mm:9.2f} {p.y_mm:9.2f} {p.theta_deg:8.2f} {p.sigma_mm:9.2f} "
                     f"{p.measure_sigma_mm:8.2f} {placing:8.2f} {p.size_px:8.1f}  {p.face or '-'}"
                     + (f"  ({p.source})" if p.source else ""))
    if obs.unknown_markers:
        lines.append(f"unknown markers: {', '.join(str(i) for i in obs.unknown_markers)}")
    for w in obs.warnings:
        lines.append(f"warning: {w}")
    if obs.seen_empty:
        lines.append(f"seen empty (the place in view, nothing there): {', '.join(obs.seen_empty)}")
    return "\n".join(lines)
