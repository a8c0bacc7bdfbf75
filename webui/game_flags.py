"""Command-line flags generated from the games' declared options (referee.game.Option).

`refcam serve` and `refcam replay` offer every registered game's options (``--course``,
``--weights``, ...); the chosen game takes the ones it declares, and a flag for an option
the chosen game lacks is refused.
"""

from __future__ import annotations

import argparse
from typing import Any

from referee.errors import InvalidInputError
from referee.game import Game, Option, parse_settings
from referee.registry import game_ids, games


def all_options() -> dict[str, Option]:
    """Every game's options by name (the first game declaring a name gives its help)."""
    out: dict[str, Option] = {}
    for game in games():
        for option in game.options:
            out.setdefault(option.name, option)
    return out


def add_game_arguments(p: argparse.ArgumentParser, game_help: str) -> None:
    p.add_argument("--game", choices=game_ids(), help=game_help)
    for option in all_options().values():
        owners = [g.title for g in games() if any(o.name == option.name for o in g.options)]
        p.add_argument(option.flag, dest=f"option_{option.name}", metavar=option.metavar,
                       help=f"{', '.join(owners)}: {option.help}")


def option_texts(args: argparse.Namespace) -> dict[str, str]:
    """The option flags given on the command line, by option name."""
    return {name: getattr(args, f"option_{name}") for name in all_options()
            if getattr(args, f"option_{name}", None) is not None}


def settings_for(game: Game, texts: dict[str, str]) -> dict[str, Any]:
    """The game's parsed settings. Each flag's text is checked by the option that declares
    it first (a wrong value is named as such), then a flag the game does not declare is refused."""
    options = all_options()
    for name, text in texts.items():
        options[name].parse(text)
    declared = {o.name for o in game.options}
    for name, text in texts.items():
        if name not in declared:
            raise InvalidInputError(f"{game.title} has no {options[name].flag} setting ({options[name].flag} {text!r})")
    return parse_settings(game, texts)
