"""`--catalog FILE` for any command that reads the catalog (SPEC section 4).

``add_catalog_option(parser)`` is the one call a subcommand's register() makes. The
file is checked and made the catalog of the whole process while the arguments are
parsed, before run() opens any source or writes any file; a bad file ends in argparse's
one-line error and exit 2.
"""

from __future__ import annotations

import argparse

CATALOG_HELP = ("your edited copy of the catalog (referee/data/catalog.json) with your own measurements: "
                "sizes, placements, heights, footprints, Kayak layouts, card kinds")


class _UseCatalog(argparse.Action):
    def __call__(self, parser, namespace, value, option_string=None):
        from referee.catalog import use_catalog
        from referee.errors import RefcamError

        if not value:
            raise argparse.ArgumentError(self, "empty value '' (an unset shell variable?)")
        try:
            use_catalog(value)
        except RefcamError as exc:
            raise argparse.ArgumentError(self, str(exc).replace("\n", "\\n")) from None
        setattr(namespace, self.dest, value)


def add_catalog_option(parser: argparse.ArgumentParser) -> None:
    """Give a subcommand's parser `--catalog FILE`; the file takes effect as it is parsed."""
    parser.add_argument("--catalog", metavar="FILE", action=_UseCatalog, help=CATALOG_HELP)
