"""The `refcam` command: thin wiring from arguments to the packages.

Commands: webui's own (webui/commands) and each registered game's ``commands()``,
mounted as `refcam <game> <name>`, or `refcam <name>` when the game marks one top level.
Bad input (any RefcamError, unreadable file) ends with one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from referee.errors import RefcamError
from referee.game import Command
from referee.registry import games
from webui.catalog_option import add_catalog_option
from webui.commands import COMMAND_MODULES

EXIT_BAD_INPUT = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own errors: one line, exit 2
        self.exit(EXIT_BAD_INPUT, f"refcam: error: {_one_line(message)}\n")


def _mount(sub, command: Command) -> None:
    p = sub.add_parser(command.name, help=command.help, description=command.help)
    command.add_arguments(p)
    if "--catalog" not in p._option_string_actions:  # every game command reads the catalog
        add_catalog_option(p)

    def run(args: argparse.Namespace) -> int:
        from webui.tools import CliTools

        return command.run(args, CliTools())

    p.set_defaults(run=run)


def build_parser() -> argparse.ArgumentParser:
    titles = [g.title for g in games()]
    titles = ", ".join(titles[:-1]) + " and " + titles[-1] if len(titles) > 1 else titles[0]
    parser = _Parser(prog="refcam", description=f"A camera referee for {titles}.")
    parser.add_argument("--version", action="version", version=f"refcam {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(f"webui.commands.{name}").register(sub)
    for game in games():
        own = [c for c in game.commands() if not c.top_level]
        for command in game.commands():
            if command.top_level:
                _mount(sub, command)
        if own:
            gp = sub.add_parser(game.id, help=f"{game.title}'s own commands")
            gsub = gp.add_subparsers(dest="game_command", metavar="COMMAND", parser_class=_Parser)
            gsub.required = True
            for command in own:
                _mount(gsub, command)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("refcam")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "(not installed)"


def main(argv: list[str] | None = None) -> int:
    try:
        use_catalog_from_environment()  # before the parser: building it reads the catalog
    except RefcamError as exc:
        print(f"refcam: error: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT
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


def use_catalog_from_environment() -> None:
    """REFCAM_CATALOG=FILE is `--catalog FILE` for every command: the same check (referee.catalog.use_catalog),
    the same one-line error; a --catalog on the command line, parsed later, wins over it."""
    from referee.catalog import CATALOG_ENV, use_catalog

    path = os.environ.get(CATALOG_ENV)
    if path:
        try:
            use_catalog(path)
        except RefcamError as exc:
            raise type(exc)(f"{CATALOG_ENV}: {exc}") from None


def _leaf_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the command that was given (`refcam <game> <name>` goes two levels down)."""
    command = next(a for a in parser._actions if a.dest == "command").choices[args.command]
    nested = [a for a in command._actions if a.dest == "game_command"]
    return nested[0].choices[args.game_command] if nested else command


def _refuse_empty_values(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """`--camera-file "$CAM"` with CAM unset must not quietly run without the camera file
    (nor `--out ""` write into the current folder): an empty value is refused."""
    for action in _leaf_parser(parser, args)._actions:
        value = getattr(args, action.dest, None)
        if value == "" or (isinstance(value, list) and "" in value):
            name = action.option_strings[0] if action.option_strings else (action.metavar or action.dest)
            parser.error(f"argument {name}: empty value '' (an unset shell variable?)")


MAX_MESSAGE_CHARS = 400  # an error quoting a 100 MB input is still one short line


def _one_line(message: str) -> str:
    """A file name or a piece name may hold a line break or a terminal escape; the error stays
    one plain line (safeload.printable), at most MAX_MESSAGE_CHARS long."""
    from referee.safeload import printable

    message = printable(message.strip())
    if len(message) > MAX_MESSAGE_CHARS:
        message = message[:MAX_MESSAGE_CHARS - 30] + f"... ({len(message)} characters in all)"
    return message


def _describe_os_error(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.filename:
        return f"{exc.strerror or exc}: {exc.filename}"
    return str(exc)


if __name__ == "__main__":
    sys.exit(main())
