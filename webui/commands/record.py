"""`refcam record`: write a camera's frames to a session folder (crash-safe, vision.session)."""

from __future__ import annotations

from referee.catalog import GAMES  # the sticker catalog's games (vision needs their stickers)

import argparse
import sys
import time

from webui.catalog_option import add_catalog_option


def register(subparsers) -> None:
    p = subparsers.add_parser("record", help="record a camera to a session folder for `refcam replay`",
                              description="Record frames and their timestamps; a recording cut off by a crash "
                                          "replays up to its last whole frame.")
    p.add_argument("--camera", required=True, metavar="N|URL",
                   help="webcam index (0 = the first camera) or a phone's / IP camera's stream URL "
                        "(http://PHONE:8080/video for MJPEG, rtsp://...)")
    p.add_argument("--out", required=True, metavar="DIR", help="a new session folder")
    p.add_argument("--seconds", type=float, metavar="S", help="stop after S seconds (default: until Ctrl-C)")
    p.add_argument("--game", choices=GAMES, help="the game on the table (kept in the header)")
    p.add_argument("--camera-file", metavar="F", help="camera file to keep with the session (camera.json)")
    p.add_argument("--json", action="store_true", help="print a JSON summary on stdout")
    add_catalog_option(p)
    p.set_defaults(run=run)


def record_frames(source, writer, seconds: float | None = None, quality: int = 95) -> int:
    """Encode and append every frame of source to writer until seconds have passed; returns the count.

    seconds is a deadline on this computer's clock, whatever the camera does: a timer closes the
    source then, which ends the iteration even while no frame comes (a camera that went silent
    or lies forever used to keep `record --seconds 10` running without end)."""
    import threading

    import cv2

    timer = None
    if seconds is not None:
        timer = threading.Timer(seconds, source.close)
        timer.daemon = True
        timer.start()
    t_start = None
    try:
        for t, image in source:
            if t_start is None:
                t_start = t
            if seconds is not None and t - t_start > seconds:
                break
            ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
            if ok:
                writer.add_encoded(buf.tobytes(), t - t_start)
    finally:
        if timer is not None:
            timer.cancel()
    return writer.count


def run(args: argparse.Namespace) -> int:
    import json

    from calibration.camera import CameraModel
    from referee.errors import InvalidInputError
    from vision.session import SessionWriter
    from vision.stream import open_camera_source

    if args.seconds is not None and not args.seconds > 0:
        raise InvalidInputError(f"--seconds {args.seconds} must be a positive number")
    if args.camera_file:
        CameraModel.load(args.camera_file)
    source = open_camera_source(args.camera)  # a missing camera fails here, before any folder is made
    try:
        writer = SessionWriter(args.out, game=args.game, camera_file=args.camera_file, source=source.info.name,
                               fps=source.info.fps)
    except BaseException:
        source.close()
        raise
    print(f"refcam: recording {source.info.name} to {args.out} (Ctrl-C to stop)", file=sys.stderr, flush=True)
    t0 = time.monotonic()
    try:
        record_frames(source, writer, args.seconds)
    except KeyboardInterrupt:
        pass
    finally:
        source.close()
        writer.close()
    summary = {"out": str(args.out), "frames": writer.count, "seconds": round(time.monotonic() - t0, 2),
               "warnings": source.warnings}
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"refcam: recorded {writer.count} frames in {summary['seconds']} s to {args.out}", file=sys.stderr)
    return 0
