"""How the tests run `refcam tornado check BEFORE AFTER` on two observation files."""

from __future__ import annotations

import argparse
import contextlib
import io
import json

from referee.observation import Observation


class FileTools:
    """The part of the command line's Tools the check needs, for observation files."""

    def observe_path(self, path, camera_file, game):
        return Observation.from_json(json.loads(open(path).read()))


def check_files(before: str, after: str) -> dict:
    from referee.tornado.check_command import CHECK

    parser = argparse.ArgumentParser()
    CHECK.add_arguments(parser)
    args = parser.parse_args([before, after, "--json"])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert CHECK.run(args, FileTools()) == 0
    return json.loads(out.getvalue())
