"""`refcam serve`: the live page (waitress in front of the Flask app)."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path

from referee.errors import InvalidInputError, RefcamError
from webui.catalog_option import add_catalog_option
from webui.game_flags import add_game_arguments
from webui.replays import default_detect

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
MAX_REQUEST_BYTES = 1024 * 1024  # waitress refuses bigger bodies before Flask reads them (the API takes 64 kB)
MAX_REQUEST_HEADER_BYTES = 64 * 1024  # waitress answers 431 past it (its default is 256 kB)
SWITCH_INTERVAL_S = 0.0005  # how soon a waiting thread gets the GIL (Python's default: 5 ms); see run()


def register(subparsers) -> None:
    p = subparsers.add_parser("serve", help="the live web page: camera or replay in, rulings out",
                              description="Serve the live referee page. With no source it replays the bundled "
                                          "sample session in a loop.")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--camera", metavar="N|URL",
                     help="webcam index (0 = the first camera) or a phone's / IP camera's stream URL "
                          "(http://PHONE:8080/video, rtsp://...)")
    src.add_argument("--replay", metavar="DIR", help="replay a recorded session folder")
    src.add_argument("--video", metavar="FILE", help="replay a video file")
    add_game_arguments(p, "the game on the table (default: the source's, else the first game)")
    p.add_argument("--camera-file", metavar="F", help="camera file from `refcam calibrate`")
    p.add_argument("--host", default=DEFAULT_HOST,
                   help=f"address to bind (default {DEFAULT_HOST}: this computer only; 0.0.0.0: phones on your "
                        f"network too, with an access token for changes)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    p.add_argument("--token", metavar="T",
                   help="access token for changes from the page (default: $REFCAM_TOKEN, else a new one at each "
                        "start when --host reaches beyond this computer; printed in the page's address)")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                   help="another host name the page answers to (e.g. a name in your local DNS); repeatable")
    p.add_argument("--record", metavar="DIR", help="also record the frames to a new session folder")
    p.add_argument("--fast", action="store_true",
                   help="replay as fast as possible, not in real time (either way every frame is ruled)")
    p.add_argument("--loop", action="store_true", help="replay the session or video again and again")
    p.add_argument("--quick", action="store_true",
                   help="skip the detector's second look at small stickers (for slow computers)")
    p.add_argument("--detect", choices=("follow", "regions", "whole"), default=None,
                   help="between frames where something moves (searched whole), follow the stickers "
                        "(fast), detect in the regions around them (the same corners as whole frames) or "
                        "search every frame whole (default: follow for a camera; for a replay, as "
                        "`refcam replay` does, so the page gives its rulings)")
    p.add_argument("--stable-s", type=float, default=0.5, metavar="S",
                   help="seconds the table must stay still before a ruling (default 0.5)")
    p.add_argument("--json", action="store_true",
                   help="once listening, print one JSON document (url, game, source) on stdout")
    add_catalog_option(p)
    p.set_defaults(run=run)


def bundled_sessions_dir() -> Path:
    import webui

    return Path(webui.__file__).resolve().parents[1] / "samples" / "sessions"


def bundled_session(game: str | None) -> Path:
    from referee.registry import game_ids

    root = bundled_sessions_dir()
    folder = root / (game or game_ids()[0])
    if not (folder / "manifest.jsonl").is_file():
        raise InvalidInputError(f"no bundled sample session at {folder}; give a source: --camera N, "
                                f"--replay DIR or --video FILE")
    return folder


def build_engine_config(args: argparse.Namespace, stderr=sys.stderr) -> dict:
    """Open everything the page needs (source, camera file, recorder); raises RefcamError on bad input."""
    from calibration.camera import CameraModel
    from referee.registry import game_ids, get_game
    from vision.session import SessionWriter
    from vision.sources import SessionSource
    from vision.stream import open_source
    from vision.tracking import TrackerSettings
    from webui.game_flags import option_texts, settings_for

    from vision.stream import parse_camera

    options = option_texts(args)
    if args.camera is not None:
        args.camera = parse_camera(args.camera)  # an index or a stream URL; anything else in one line
    if args.game:  # refuse bad settings before a camera or a recording is opened
        settings_for(get_game(args.game), options)
    if args.stable_s is not None and not (0.0 <= args.stable_s <= 30.0):
        raise InvalidInputError(f"--stable-s {args.stable_s} must be between 0 and 30 seconds")
    refuse_what_replay_refuses(args)
    camera = CameraModel.load(args.camera_file) if args.camera_file else None
    if args.camera is None and args.replay is None and args.video is None:
        source = SessionSource(bundled_session(args.game), realtime=not args.fast, loop=True)
    else:
        source = open_source(camera=args.camera, replay=args.replay, video=args.video, fast=args.fast,
                             loop=args.loop)
    game = args.game or source.info.game or game_ids()[0]
    try:
        if isinstance(source, SessionSource):  # a session's own settings (its course.json), as replay takes them
            from webui.commands.replay import session_options

            options, notes = session_options(source.session.folder, get_game(game), source.session.header, options)
            for note in notes:
                print(f"refcam serve: {note}", file=stderr)
        settings_for(get_game(game), options)  # refuse bad settings before serving
        if camera is None and source.info.camera_file is not None:
            camera = CameraModel.load(source.info.camera_file)
        if camera is not None and source.info.frame_size is not None:
            # a camera file for another resolution would spoil every frame: refuse it now
            camera.check_image_size(*source.info.frame_size, source=f"camera file {args.camera_file or source.info.camera_file}")
    except BaseException:
        source.close()
        raise
    recorder = None
    if args.record:
        try:
            recorder = SessionWriter(args.record, game=game, source=source.info.name, fps=source.info.fps,
                                     camera_file=args.camera_file or source.info.camera_file)
        except BaseException:  # a refused folder must not leave the camera held
            source.close()
            raise
    return {"SOURCE": source, "GAME": game, "OPTIONS": options, "CAMERA": camera, "ACCESS": access_policy(args),
            "RECORDER": recorder, "TRACKER": TrackerSettings(stable_s=args.stable_s), "START_ENGINE": False,
            "THOROUGH": not args.quick, "DETECT": getattr(args, "detect", None) or default_detect(source.info.kind),
            "PIPELINED": True}  # drawing and JPEG encoding on a second thread (webui.live.FrameDrawer)


# the first bytes of the still-picture formats a camera or phone writes
STILL_PICTURE_MAGIC = ((b"\xff\xd8\xff", "a JPEG picture"), (b"\x89PNG\r\n\x1a\n", "a PNG picture"),
                       (b"GIF8", "a GIF picture"), (b"BM", "a BMP picture"), (b"II*\x00", "a TIFF picture"),
                       (b"MM\x00*", "a TIFF picture"))


def refuse_what_replay_refuses(args: argparse.Namespace) -> None:
    """The same refusals as `refcam replay`, before anything is opened: a --game whose pieces are
    not in the recorded session, and a still picture given as --video (one line, exit 2)."""
    if args.replay and args.game:
        from webui.commands.replay import check_pieces_game

        check_pieces_game(args.replay, args.game)
    if args.video:
        from referee import safeload
        from vision.sources import SourceError

        if Path(args.video).is_dir():
            return  # the video source says a folder goes to --replay
        path = safeload.regular_file(args.video, "video file", SourceError)  # a FIFO would block the open
        try:
            with open(path, "rb") as fh:
                head = fh.read(16)
        except OSError:
            return  # the video source says what is wrong with the path
        what = next((words for magic, words in STILL_PICTURE_MAGIC if head.startswith(magic)), None)
        if what is None and head[:4] == b"RIFF" and head[8:12] == b"WEBP":
            what = "a WebP picture"
        if what:
            raise InvalidInputError(f"--video {args.video}: this is {what}, not a video; serve takes a video file "
                                    "(or --replay DIR); for one picture use refcam rank or refcam observe")


def page_url(host: str, port: int) -> str:
    """The address to open in a browser on this computer (an IPv6 host goes in brackets), no token."""
    from webui.access import AccessPolicy, page_urls

    return page_urls(AccessPolicy(bind_host=host, token=None, allowed_hosts=frozenset()), port)[0]


def access_policy(args: argparse.Namespace):
    """Who may change the page (webui.access): the token from --token or $REFCAM_TOKEN, else made now."""
    from webui.access import make_policy, resolve_token

    return make_policy(args.host, resolve_token(args.token), tuple(args.allow_host or ()))


def make_server(app, host: str, port: int):
    """waitress in front of the app: a worker per open stream (capped by the app, webui.app.MAX_STREAMS)
    plus PAGE_WORKERS for the page and the API, so open streams never starve them."""
    from webui.app import PAGE_WORKERS
    from webui.lan_guard import create_guarded_server

    # waitress flushes each write at once (send_bytes defaults to 1 byte), so an event goes out as
    # soon as it is yielded; a slow client's backlog is bounded per stream, and the LAN limits
    # (connections per address, slow requests, clients that do not read) are webui.lan_guard's.
    return create_guarded_server(app, host=host, port=port, threads=int(app.config["MAX_STREAMS"]) + PAGE_WORKERS,
                                 connection_limit=200, max_request_header_size=MAX_REQUEST_HEADER_BYTES,
                                 max_request_body_size=MAX_REQUEST_BYTES, ident="refcam")


def check_host(host: str) -> None:
    """Refuse a --host that does not resolve, before any source or recording is opened."""
    import socket

    try:
        ok = bool(host) and bool(socket.getaddrinfo(host, None, type=socket.SOCK_STREAM))
    except (socket.gaierror, UnicodeError):
        ok = False
    if not ok:
        raise InvalidInputError(f"--host {host!r} is not an address this computer can listen on "
                                f"(e.g. 127.0.0.1, or 0.0.0.0 for every network)")


def shutdown(engine, server) -> None:
    """Stop in order: the engine ends every open stream, the workers finish, then the sockets close."""
    import logging

    engine.stop()
    logging.getLogger("waitress").setLevel(logging.ERROR)  # no "threads still running" chatter
    try:
        server.task_dispatcher.shutdown(cancel_pending=True, timeout=3)
    finally:
        server.close()


def announce(args, app, engine, source, port: int, stderr=None) -> tuple[str, list[str]]:
    """Say where the page is: this computer's URL, and beyond loopback every LAN URL with the
    access token, each also as a QR code for a phone's camera. Returns (url, phone urls)."""
    from webui.phone import beyond_loopback, page_urls, qr_terminal

    stderr = stderr or sys.stderr
    app.config.update(BIND_HOST=args.host, BIND_PORT=port)
    token = app.config.get("ACCESS_TOKEN")  # beyond loopback always; on loopback when --token gave one
    url = page_url(args.host, port) + (f"?token={token}" if token else "")
    phones = page_urls(args.host, port, token) if beyond_loopback(args.host) else []
    if beyond_loopback(args.host):
        print(f"refcam: warning: listening on {args.host}: the page is reachable by other computers on the network; "
              f"changing settings or settling needs the access token in these addresses", file=stderr)
        for phone in phones:
            print(f"refcam: for phones, scan this QR code or type {phone}\n{qr_terminal(phone)}", file=stderr)
        if not phones:
            print("refcam: warning: this computer has no network address a phone could reach", file=stderr)
    where = f"open {phones[0]} on your network, or {url} on this computer" if phones else f"open {url}"
    print(f"refcam: {engine.game.id} referee on {source.info.name}: {where}  (Ctrl-C to stop)",
          file=stderr, flush=True)
    return url, phones


def run(args: argparse.Namespace) -> int:
    if not (0 < args.port < 65536):
        raise InvalidInputError(f"--port {args.port} is not a port number (1-65535)")
    check_host(args.host)
    config = build_engine_config(args)
    source = config["SOURCE"]
    try:
        from webui.app import create_app

        # one token (webui.access): the guard checks it, the printed addresses and QR codes carry it
        config["ACCESS_TOKEN"] = config["ACCESS"].token
        app = create_app(config)
        engine = app.extensions["refcam_engine"]
        try:
            server = make_server(app, args.host, args.port)
        except ValueError:  # waitress: the host did not resolve
            raise InvalidInputError(f"--host {args.host!r} is not an address of this computer") from None
        except OSError as exc:
            if exc.errno in (98, 48, 10048):  # EADDRINUSE on Linux, macOS, Windows
                raise RefcamError(f"port {args.port} on {args.host} is already in use "
                                  f"(another refcam? choose one with --port)") from None
            raise RefcamError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
    except BaseException:
        source.close()
        if config.get("RECORDER") is not None:
            config["RECORDER"].close()
        raise
    def _terminate(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # one stop is enough
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        # End the open streams first, so waitress's own shutdown finds its workers free.
        engine.frames.close()
        engine.events.close()
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGINT, _terminate)
    # the engine thread computes in Python most of the time; every tab's stream thread waits for
    # the GIL in turn to send an event, by default up to 5 ms each (tests/bench/live.py: ~20 ms of
    # the frame-to-ruling latency with 5 tabs). Hand the GIL over sooner.
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    try:
        engine.start()
        url, phones = announce(args, app, engine, source, int(server.effective_port))
        if args.json:
            print(json.dumps({"url": url, "phone_urls": phones, "host": args.host, "port": int(server.effective_port),
                              "game": engine.game.id, "source": source.info.name,
                              "record": str(args.record) if args.record else None}), flush=True)
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        shutdown(engine, server)
    if args.record:
        print(f"refcam: recorded {config['RECORDER'].count} frames to {args.record}", file=sys.stderr)
    return 0
