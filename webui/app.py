"""The live page: a Flask app factory (``create_app(config)``) around a LiveEngine.

Config keys (all optional except a source or an engine):
  ENGINE      a ready LiveEngine (tests)
  SOURCE      a vision.sources.FrameSource; OBSERVE: observe(image, camera, game) -> Observation
              (default vision.pipeline.observe); GAME, OPTIONS (the game's option texts by name),
              CAMERA, TRACKER, RECORDER, THOROUGH (default True: the detector's second look at small stickers),
              DETECT (how calm frames are searched: "follow" (default), "regions", "whole"; webui.live.tracking_observe)
  START_ENGINE  start the engine thread at once (default True)
  KEEPALIVE_S   seconds between keep-alive comments on idle streams (default 5)
  ACCESS        a webui.access.AccessPolicy; else one is made from BIND_HOST (default 127.0.0.1),
                TOKEN and ALLOWED_HOSTS (see webui.access, webui.http_guard)
  MAX_STREAMS   open MJPEG/event streams at most (default MAX_STREAMS); one more gets 503 + Retry-After

Routes: /  (the page), /stream.mjpg (MJPEG), /frame.jpg, /events (server-sent events),
/api/state, POST /api/config, POST /api/declare (what the players declare), POST /api/settle, /settle/<n>.png, /api/phone, /phone-qr.svg,
/api/archive (earlier games' rulings logs), /api/archive/<n>. Every change is guarded by webui.http_guard.
Nothing is written to disk here: settle pictures live in memory. The page knows no game:
its settings form comes from the game's declared options, its state panel from the view's kind.
"""

from __future__ import annotations

import collections
import json
import itertools
import threading

from flask import Flask, Response, abort, jsonify, render_template, request

from referee.errors import RefcamError
from webui.access import AccessPolicy, make_policy
from webui.http_guard import BodyError, StreamSlots, install_guard, one_line, read_json_body
from webui.live import LiveEngine, LiveSettings, jpeg_part, sse_message

MAX_STREAMS = 40  # 20 tabs (an MJPEG and an event stream each); serve adds PAGE_WORKERS threads beyond these
PAGE_WORKERS = 16  # server threads left for the page, the API and "Settle it" while every stream is open


def default_observe(thorough: bool = True, detect: str = "follow"):
    """The vision pipeline's observe (with its detections kept for the overlay), following the
    stickers from frame to frame unless told otherwise (webui.live.tracking_observe)."""
    from webui.live import tracking_observe

    return tracking_observe(thorough=thorough, mode=detect)


def _make_engine(app: Flask) -> LiveEngine:
    engine: LiveEngine | None = app.config.get("ENGINE")
    if engine is not None:
        return engine
    source = app.config.get("SOURCE")
    if source is None:
        raise RefcamError("the live page needs a frame source (SOURCE) or an engine (ENGINE)")
    settings = LiveSettings(game=app.config.get("GAME") or source.info.game,
                            options=dict(app.config.get("OPTIONS") or {}), camera=app.config.get("CAMERA"),
                            pipelined=bool(app.config.get("PIPELINED", False)))
    if app.config.get("TRACKER") is not None:
        settings.tracker = app.config["TRACKER"]
    observe = app.config.get("OBSERVE") or default_observe(bool(app.config.get("THOROUGH", True)),
                                                          app.config.get("DETECT", "follow"))
    return LiveEngine(source, observe, settings, recorder=app.config.get("RECORDER"))


def _access_policy(app: Flask) -> AccessPolicy:
    policy = app.config.get("ACCESS")
    if policy is None:
        policy = make_policy(app.config.get("BIND_HOST") or "127.0.0.1", app.config.get("TOKEN"),
                             tuple(app.config.get("ALLOWED_HOSTS") or ()))
    return policy


def create_app(test_config: dict | None = None) -> Flask:
    app = Flask(__name__)
    app.config.update(START_ENGINE=True, KEEPALIVE_S=5.0, SETTLE_KEEP=8, MAX_STREAMS=MAX_STREAMS)
    if test_config:
        app.config.update(test_config)
    install_guard(app, _access_policy(app))
    engine = _make_engine(app)
    app.extensions["refcam_engine"] = engine
    # the option texts given when refcam started: the page may set them back, but no other file paths
    started_with = dict(engine.live.options)
    _page_routes(app, engine)
    _stream_routes(app, engine)
    _config_routes(app, engine, started_with)
    _settle_routes(app, engine)
    _declare_routes(app, engine)
    from webui.phone import add_phone_routes

    add_phone_routes(app)  # phones at the table: /api/phone, /phone-qr.svg

    _archive_routes(app, engine)
    app.json.sort_keys = False
    if app.config["START_ENGINE"]:
        engine.start()
    return app


def _page_routes(app: Flask, engine: LiveEngine) -> None:
    @app.get("/")
    def index():
        return render_template("index.html", config=engine.config_json())

    @app.get("/healthz")
    def healthz():
        return jsonify(ok=True, frames=engine.frames_in, clients=engine.frames.clients + engine.events.clients)

    @app.get("/api/state")
    def api_state():
        return jsonify(config=engine.config_json(), state=engine.state_json(), status=engine.status_event(),
                       log=list(engine.log), archives=engine.archive_summaries(),
                       access=app.extensions["refcam_access"].to_json())


def _stream_routes(app: Flask, engine: LiveEngine) -> None:
    slots = StreamSlots(int(app.config["MAX_STREAMS"]))
    app.extensions["refcam_streams"] = slots

    @app.get("/frame.jpg")
    def frame():
        if engine.latest_jpeg is None:
            abort(503)
        return Response(engine.latest_jpeg, mimetype="image/jpeg", headers={"Cache-Control": "no-store"})

    @app.get("/stream.mjpg")
    def stream():
        keepalive = float(app.config["KEEPALIVE_S"])
        limit = request.args.get("frames", type=int)  # a bounded stream, for benchmarks

        def parts():
            sub = engine.frames.subscribe([engine.latest_jpeg] if engine.latest_jpeg else None)
            sent = 0
            try:
                while limit is None or sent < limit:
                    try:
                        jpeg = sub.get(timeout=keepalive)
                    except StopIteration:
                        return
                    if jpeg is None:
                        if engine.latest_jpeg is None:
                            continue
                        jpeg = engine.latest_jpeg  # resend: lets the server notice a closed client
                    yield jpeg_part(jpeg)
                    sent += 1
            finally:
                engine.frames.unsubscribe(sub)

        return slots.respond(lambda: Response(parts(), mimetype="multipart/x-mixed-replace; boundary=frame",
                                              headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"}))

    @app.get("/events")
    def events():
        keepalive = float(app.config["KEEPALIVE_S"])

        def stream_events():
            sub = engine.events.subscribe(engine.backlog())
            try:
                yield b"retry: 2000\n\n"
                while True:
                    try:
                        event = sub.get(timeout=keepalive)
                    except StopIteration:
                        return
                    yield b": keep-alive\n\n" if event is None else sse_message(event)
            finally:
                engine.events.unsubscribe(sub)

        return slots.respond(lambda: Response(stream_events(), mimetype="text/event-stream",
                                              headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"}))


def _option_texts(data: dict, game, started_with: dict[str, str]) -> dict[str, str]:
    """The form's (or a script's) option values as texts, each checked by the option that
    declares it; then one the chosen game does not declare is refused (ValueError says why)."""
    from webui.game_flags import all_options

    options = all_options()
    texts: dict[str, str] = {}
    for name, value in data.items():
        if name == "game":
            continue
        if name not in options:
            raise ValueError(f"no game has a setting {name!r} (settings: {', '.join(options)})")
        if isinstance(value, dict):  # {"boat-1": 3} from a script, as well as the form's "boat-1=3"
            value = ",".join(f"{k}={v}" for k, v in value.items())
        if value is not None and not isinstance(value, str):
            raise ValueError(f"{name} must be text, got {json.dumps(value)[:40]}")
        option, value = options[name], (value or "").strip()
        if option.choices and value and value not in option.choices and value != started_with.get(name):
            # a path typed into the page would let anyone who reaches it probe the server's files
            raise ValueError(f"unknown {name} {value!r}: the page takes {', '.join(option.choices)}; "
                             f"give your own with {option.flag} when starting refcam serve")
        if value:
            option.parse(value)
        texts[name] = value
    # an empty field means "the default", which a game without that setting has anyway
    undeclared = sorted(n for n in set(texts) - {o.name for o in game.options} if texts[n])
    if undeclared:
        raise ValueError(f"{game.title} has no setting {undeclared[0]!r}")
    declared = {o.name for o in game.options}
    return {n: v for n, v in texts.items() if n in declared}


def _config_routes(app: Flask, engine: LiveEngine, started_with: dict[str, str]) -> None:
    @app.post("/api/config")
    def api_config():
        from referee.registry import get_game

        data = read_json_body()
        if not isinstance(data, dict):
            raise BodyError("settings must be a JSON object such as {\"game\": \"...\"}")
        game_id = data.get("game")
        if game_id is not None and not isinstance(game_id, str):
            raise BodyError(f"game must be text, got {json.dumps(game_id)[:40]}")
        try:
            game = get_game(game_id.strip()) if game_id and game_id.strip() else engine.game
            texts = _option_texts(data, game, started_with)
            changed = engine.configure(game=game.id, options=texts)
        except ValueError as exc:  # RefcamError is a ValueError: one message either way
            return jsonify(error=one_line(str(exc))), 400
        return jsonify(config=engine.config_json(), changed=changed)


def _declare_routes(app: Flask, engine: LiveEngine) -> None:
    """Players declare what the camera cannot see ("boat-3 passes"): the game checks it
    against what it offers now. Like settings, a change: beyond loopback it needs the token."""
    @app.post("/api/declare")
    def api_declare():
        from referee.game import Declaration

        data = read_json_body()
        if isinstance(data, dict) and "t" in data:
            raise BodyError("a declaration takes no time: refcam stamps it with the newest frame's")
        try:
            declaration = Declaration.from_json(data)
            rulings = engine.declare(declaration)
        except ValueError as exc:  # RefcamError is a ValueError: one message either way
            return jsonify(error=one_line(str(exc))), 400
        return jsonify(rulings=[r.to_json() for r in rulings], state=engine.state_json())


def _settle_routes(app: Flask, engine: LiveEngine) -> None:
    settled: collections.OrderedDict[int, dict] = collections.OrderedDict()
    settle_ids = itertools.count(1)
    settle_lock = threading.Lock()

    @app.post("/api/settle")
    def api_settle():
        body = read_json_body(default={})
        if body not in ({}, None):
            raise BodyError("Settle it takes no settings: send an empty JSON object {}")
        try:
            result = engine.settle()
        except RefcamError as exc:
            return jsonify(error=one_line(str(exc))), 409
        with settle_lock:
            n = next(settle_ids)
            settled[n] = result
            while len(settled) > int(app.config["SETTLE_KEEP"]):
                settled.popitem(last=False)
        return jsonify(id=n, t=result["t"], title=result.get("title", ""), measures=result["measures"],
                       lines=result["lines"], png=f"/settle/{n}.png",
                       download=f"/settle/{n}.png?download=1")

    @app.get("/settle/<int:n>.png")
    def settle_png(n: int):
        with settle_lock:
            result = settled.get(n)
        if result is None:
            abort(404)
        headers = {"Cache-Control": "no-store"}
        if request.args.get("download"):
            headers["Content-Disposition"] = f'attachment; filename="refcam-settled-{n}.png"'
        return Response(result["png"], mimetype="image/png", headers=headers)


def _archive_routes(app: Flask, engine: LiveEngine) -> None:
    """Earlier games' rulings logs: a settings change or a new replay lap archives the log, never drops it."""
    @app.get("/api/archive")
    def api_archive():
        return jsonify(archives=engine.archive_summaries())

    @app.get("/api/archive/<int:n>")
    def api_archived_log(n: int):
        entry = engine.archived_log(n)
        if entry is None:
            abort(404)
        return jsonify(entry)
