"""The live page: a Flask app factory (``create_app(config)``) around a LiveEngine.

Config keys (all optional except a source or an engine):
  ENGINE      a ready LiveEngine (tests)
  SOURCE      a vision.sources.FrameSource; OBSERVE: observe(image, camera, game) -> Observation
              (default vision.pipeline.observe); GAME, OPTIONS (the game's option texts by name),
              CAMERA, TRACKER, RECORDER, THOROUGH (default True: the detector's second look at small stickers)
  START_ENGINE  start the engine thread at once (default True)
  KEEPALIVE_S   seconds between keep-alive comments on idle streams (default 5)

Routes: /  (the page), /stream.mjpg (MJPEG), /frame.jpg, /events (server-sent events),
/api/state, POST /api/config, POST /api/settle, /settle/<n>.png, /api/phone, /phone-qr.svg.
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
from webui.live import LiveEngine, LiveSettings, jpeg_part, sse_message


def default_observe(thorough: bool = True):
    """The vision pipeline's observe (with its detections kept for the overlay)."""
    from functools import partial

    from webui.live import pipeline_observe

    return partial(pipeline_observe, thorough=thorough)


def _make_engine(app: Flask) -> LiveEngine:
    engine: LiveEngine | None = app.config.get("ENGINE")
    if engine is not None:
        return engine
    source = app.config.get("SOURCE")
    if source is None:
        raise RefcamError("the live page needs a frame source (SOURCE) or an engine (ENGINE)")
    settings = LiveSettings(game=app.config.get("GAME") or source.info.game,
                            options=dict(app.config.get("OPTIONS") or {}), camera=app.config.get("CAMERA"))
    if app.config.get("TRACKER") is not None:
        settings.tracker = app.config["TRACKER"]
    observe = app.config.get("OBSERVE") or default_observe(bool(app.config.get("THOROUGH", True)))
    return LiveEngine(source, observe, settings, recorder=app.config.get("RECORDER"))


def create_app(test_config: dict | None = None) -> Flask:
    app = Flask(__name__)
    app.config.update(START_ENGINE=True, KEEPALIVE_S=5.0, SETTLE_KEEP=8)
    if test_config:
        app.config.update(test_config)
    engine = _make_engine(app)
    app.extensions["refcam_engine"] = engine
    # the option texts given when refcam started: the page may set them back, but no other file paths
    started_with = dict(engine.live.options)
    _page_routes(app, engine)
    _stream_routes(app, engine)
    _config_routes(app, engine, started_with)
    _settle_routes(app, engine)
    from webui.phone import add_phone_routes

    add_phone_routes(app)  # phones at the table: /api/phone, /phone-qr.svg

    @app.errorhandler(404)
    def not_found(_exc):
        return jsonify(error="not found"), 404

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
                       log=list(engine.log))


def _stream_routes(app: Flask, engine: LiveEngine) -> None:
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

        return Response(parts(), mimetype="multipart/x-mixed-replace; boundary=frame",
                        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

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

        return Response(stream_events(), mimetype="text/event-stream",
                        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


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

        data = request.get_json(silent=True) or request.form.to_dict()
        if not isinstance(data, dict):
            return jsonify(error="settings must be a JSON object such as {\"game\": \"...\"}"), 400
        game_id = data.get("game")
        if game_id is not None and not isinstance(game_id, str):
            return jsonify(error=f"game must be text, got {json.dumps(game_id)[:40]}"), 400
        try:
            game = get_game(game_id.strip()) if game_id and game_id.strip() else engine.game
            texts = _option_texts(data, game, started_with)
            engine.configure(game=game.id, options=texts)
        except ValueError as exc:  # RefcamError is a ValueError: one message either way
            return jsonify(error=str(exc)), 400
        return jsonify(config=engine.config_json())


def _settle_routes(app: Flask, engine: LiveEngine) -> None:
    settled: collections.OrderedDict[int, dict] = collections.OrderedDict()
    settle_ids = itertools.count(1)
    settle_lock = threading.Lock()

    @app.post("/api/settle")
    def api_settle():
        try:
            result = engine.settle()
        except RefcamError as exc:
            return jsonify(error=str(exc)), 409
        with settle_lock:
            n = next(settle_ids)
            settled[n] = result
            while len(settled) > int(app.config["SETTLE_KEEP"]):
                settled.popitem(last=False)
        return jsonify(id=n, t=result["t"], measures=result["measures"], lines=result["lines"], png=f"/settle/{n}.png",
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
