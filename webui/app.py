"""The live page: a Flask app factory (``create_app(config)``) around a LiveEngine.

Config keys (all optional except a source or an engine):
  ENGINE      a ready LiveEngine (tests)
  SOURCE      a vision.sources.FrameSource; OBSERVE: observe(image, camera, game) -> Observation
              (default vision.pipeline.observe); GAME, COURSE, WEIGHTS, CAMERA, TRACKER, RECORDER,
              THOROUGH (default True: the detector's second look at small stickers)
  START_ENGINE  start the engine thread at once (default True)
  KEEPALIVE_S   seconds between keep-alive comments on idle streams (default 5)

Routes: /  (the page), /stream.mjpg (MJPEG), /frame.jpg, /events (server-sent events),
/api/state, POST /api/config, POST /api/settle, /settle/<n>.png.
Nothing is written to disk here: settle pictures live in memory.
"""

from __future__ import annotations

import collections
import json
import itertools
import threading

from flask import Flask, Response, abort, jsonify, render_template, request

from referee.catalog import GAMES
from referee.errors import RefcamError
from referee.registry import GAME_TITLES, parse_weights
from referee.tornado.course import course_ids
from webui.live import LiveEngine, LiveSettings, jpeg_part, sse_message


def default_observe(thorough: bool = True):
    """The vision pipeline's observe (with its detections kept for the overlay)."""
    from functools import partial

    from webui.live import pipeline_observe

    return partial(pipeline_observe, thorough=thorough)


def create_app(test_config: dict | None = None) -> Flask:
    app = Flask(__name__)
    app.config.update(START_ENGINE=True, KEEPALIVE_S=5.0, SETTLE_KEEP=8)
    if test_config:
        app.config.update(test_config)
    engine: LiveEngine | None = app.config.get("ENGINE")
    if engine is None:
        source = app.config.get("SOURCE")
        if source is None:
            raise RefcamError("the live page needs a frame source (SOURCE) or an engine (ENGINE)")
        settings = LiveSettings(game=app.config.get("GAME") or source.info.game or "tornado",
                                course=app.config.get("COURSE"), weights=dict(app.config.get("WEIGHTS") or {}),
                                camera=app.config.get("CAMERA"))
        if app.config.get("TRACKER") is not None:
            settings.tracker = app.config["TRACKER"]
        observe = app.config.get("OBSERVE") or default_observe(bool(app.config.get("THOROUGH", True)))
        engine = LiveEngine(source, observe, settings, recorder=app.config.get("RECORDER"))
    app.extensions["refcam_engine"] = engine
    settled: collections.OrderedDict[int, dict] = collections.OrderedDict()
    settle_ids = itertools.count(1)
    settle_lock = threading.Lock()
    if app.config["START_ENGINE"]:
        engine.start()

    @app.get("/")
    def index():
        return render_template("index.html", config=engine.config_json(), games=GAMES, titles=GAME_TITLES,
                               courses=course_ids())

    @app.get("/healthz")
    def healthz():
        return jsonify(ok=True, frames=engine.frames_in, clients=engine.frames.clients + engine.events.clients)

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

    @app.get("/api/state")
    def api_state():
        return jsonify(config=engine.config_json(), state=engine.state_json(), status=engine.status_event(),
                       log=list(engine.log))

    @app.post("/api/config")
    def api_config():
        data = request.get_json(silent=True) or request.form.to_dict()
        if not isinstance(data, dict):
            return jsonify(error="settings must be a JSON object such as {\"game\": \"kang\"}"), 400
        weights_text = data.get("weights")
        if isinstance(weights_text, dict):  # {"boat-1": 3} from a script, as well as the form's "boat-1=3"
            weights_text = ",".join(f"{k}={v}" for k, v in weights_text.items())
        for key, value in (("game", data.get("game")), ("course", data.get("course")), ("weights", weights_text)):
            if value is not None and not isinstance(value, str):
                return jsonify(error=f"{key} must be text, got {json.dumps(value)[:40]}"), 400
        game = (data.get("game") or "").strip() or None
        course = (data.get("course") or "").strip() or None
        if course is not None and course not in course_ids() and course != app.config.get("COURSE"):
            # a path typed into the page would let anyone who reaches it probe the server's files
            return jsonify(error=f"unknown course {course!r}: the page takes {', '.join(course_ids())}; "
                                 "give your own course file with --course when starting refcam serve"), 400
        try:
            weights = parse_weights(weights_text) if "weights" in data else None
            engine.configure(game=game, course=course, weights=weights)
        except RefcamError as exc:
            return jsonify(error=str(exc)), 400
        return jsonify(config=engine.config_json())

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
        return jsonify(id=n, t=result["t"], measures=result["measures"], png=f"/settle/{n}.png",
                       download=f"/settle/{n}.png?download=1")

    @app.get("/settle/<int:n>.png")
    def settle_png(n: int):
        with settle_lock:
            result = settled.get(n)
        if result is None:
            abort(404)
        headers = {"Cache-Control": "no-store"}
        if request.args.get("download"):
            headers["Content-Disposition"] = f'attachment; filename="refcam-photo-finish-{n}.png"'
        return Response(result["png"], mimetype="image/png", headers=headers)

    @app.errorhandler(404)
    def not_found(_exc):
        return jsonify(error="not found"), 404

    app.json.sort_keys = False
    return app
