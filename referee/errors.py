"""Errors that the command line turns into a one-line message and exit code 2.

One subclass per kind of failure, in the manner of python-chess: the message
quotes the offending input so the user can find it.
"""


class RefcamError(ValueError):
    """Base of every user-facing error: bad input, not a bug."""


class CatalogError(RefcamError):
    """The catalog data file is malformed or names something unknown."""


class InvalidInputError(RefcamError):
    """An input file or argument is malformed (not an image, not JSON, wrong shape)."""


class UnknownNameError(RefcamError):
    """A game, course, piece or boat name that refcam does not know."""
