"""One module per `refcam` subcommand of webui's own; each has register(subparsers) and run(args).

The games' own commands (e.g. `refcam rank`) come from each registered game's ``commands()``
(webui/cli.py mounts them). Modules import heavy libraries (cv2, flask) inside run(), so
`refcam --help` stays fast.
"""

COMMAND_MODULES = ("markers", "render", "calibrate", "observe", "serve", "record", "replay", "measure")
