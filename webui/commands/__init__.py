"""One module per `refcam` subcommand; each has register(subparsers) and run(args).

Modules import heavy libraries (cv2, flask) inside run(), so `refcam --help` stays fast.
"""

COMMAND_MODULES = (
    "markers", "render", "calibrate", "observe", "rank", "serve", "record", "replay", "kang", "kayak",
)
