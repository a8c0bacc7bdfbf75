"""The `refcam` command: thin wiring from arguments to the packages.

Bad input (any RefcamError, unreadable file) ends with one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from referee.errors import RefcamError
from webui.commands import COMMAND_MODULES

EXIT_BAD_INPUT = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own errors: one line, exit 2
        self.exit(EXIT_BAD_INPUT, f"refcam: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="refcam", description="A camera referee for Tornado Splash, Kayak Chaos and Kang.")
    parser.add_argument("--version", action="version", version=f"refcam {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"webui.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"webui.commands.{name}":
                continue  # command not built yet
            raise
        module.register(sub)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("refcam")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "(not installed)"


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _refuse_empty_values(parser, args)
    try:
        code = int(args.run(args) or 0)
        sys.stdout.flush()
        return code
    except BrokenPipeError:  # output piped into `head` and the reader left: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except RefcamError as exc:
        print(f"refcam: error: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (OSError, UnicodeDecodeError) as exc:
        print(f"refcam: error: {_one_line(_describe_os_error(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("refcam: interrupted", file=sys.stderr)
        return 130


def _refuse_empty_values(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """`--camera-file "$CAM"` with CAM unset must not quietly run without the camera file
    (nor `--out ""` write into the current folder): an empty value is refused."""
    commands = next(a for a in parser._actions if a.dest == "command").choices
    for action in commands[args.command]._actions:
        value = getattr(args, action.dest, None)
        if value == "" or (isinstance(value, list) and "" in value):
            name = action.option_strings[0] if action.option_strings else (action.metavar or action.dest)
            parser.error(f"argument {name}: empty value '' (an unset shell variable?)")


def _one_line(message: str) -> str:
    """A file name may hold a line break; the error stays one line (written as \\n)."""
    return message.replace("\r", "\\r").replace("\n", "\\n")


def _describe_os_error(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.filename:
        return f"{exc.strerror or exc}: {exc.filename}"
    return str(exc)


if __name__ == "__main__":
    sys.exit(main())
