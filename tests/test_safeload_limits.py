"""referee.safeload at its boundaries: a file of exactly the size limit is read and one byte more is
refused; an output path that is a symlink to nowhere is refused; a full disk during a write names
the file and leaves the older file (or none); the depth scan is right on escaped quotes."""

from __future__ import annotations

import errno
import os

import pytest

from referee import safeload
from referee.errors import InvalidInputError
from tests.conftest import run_cli


def test_a_file_of_exactly_the_limit_is_read_and_one_byte_more_is_refused(tmp_path):
    limit = 1000
    at_limit, over = tmp_path / "at.json", tmp_path / "over.json"
    at_limit.write_bytes(b"[" + b" " * (limit - 2) + b"]")
    over.write_bytes(b"[" + b" " * (limit - 1) + b"]")
    assert safeload.load_json(at_limit, "file", max_bytes=limit) == []
    assert len(safeload.read_bytes(at_limit, "file", max_bytes=limit)) == limit
    with pytest.raises(InvalidInputError, match="refcam reads at most 1000 bytes"):
        safeload.load_json(over, "file", max_bytes=limit)
    with pytest.raises(InvalidInputError, match="larger than 1000 bytes"):
        safeload.parse_json(b"[" + b" " * (limit - 1) + b"]", "text", max_bytes=limit)
    assert safeload.parse_json(b"[" + b" " * (limit - 2) + b"]", "text", max_bytes=limit) == []


def test_an_output_that_is_a_symlink_to_nowhere_is_refused(tmp_path):
    link = tmp_path / "out.jpg"
    link.symlink_to(tmp_path / "missing" / "target.jpg")
    with pytest.raises(InvalidInputError, match="symlink to nowhere"):
        safeload.output_path(link, "OUT")
    with pytest.raises(InvalidInputError, match="symlink to nowhere"):
        safeload.write_bytes(link, b"data", "OUT")
    assert link.is_symlink() and not (tmp_path / "missing").exists()


@pytest.mark.parametrize("text, depth, deeper", [
    ('[[["]]]]]"]]]', 3, False),  # brackets inside a string do not count
    ('["\\\\"' + "[" * 5 + '"]', 1, True),  # an escaped backslash leaves the quote after it closing: brackets count
    ('["\\"[[[[["]', 1, False),  # an escaped quote does not end the string
    ("[" * 9 + "]" * 9, 8, True),
    ("[" * 8 + "]" * 8, 8, False),
    ('{"a": [{"b": []}]}', 4, False),
    ('{"a": [{"b": []}]}', 3, True),
])
def test_the_depth_scan_reads_strings_and_escapes_as_json_does(text, depth, deeper):
    assert safeload.json_depth_exceeds(text, depth) is deeper


def test_a_string_of_escaped_quotes_is_one_line_not_a_hang(tmp_path):
    path = tmp_path / "camera.json"
    path.write_text('"' + '\\"' * 300_000)  # unterminated: the old scan took minutes on this
    with pytest.raises(InvalidInputError, match="is not JSON"):
        safeload.load_json(path, "camera file")


def _disk_full(monkeypatch):
    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(safeload.os, "fsync", full)


def test_a_full_disk_during_markers_names_the_file_and_keeps_the_old_one(tmp_path, capsys, monkeypatch):
    out = tmp_path / "sheets"
    code, _, err = run_cli(capsys, ["markers", "--game", "kang", "--out", out])
    assert code == 0, err
    sheet = out / "refcam-stickers-kang-a4.pdf"
    before = sheet.read_bytes()
    _disk_full(monkeypatch)
    code, _, err = run_cli(capsys, ["markers", "--game", "kang", "--out", out])
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert "No space left on device" in err and str(sheet) in err, err
    assert sheet.read_bytes() == before  # the old sheet, whole
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


def test_a_full_disk_during_markers_leaves_no_file_when_there_was_none(tmp_path, capsys, monkeypatch):
    _disk_full(monkeypatch)
    out = tmp_path / "sheets"
    code, _, err = run_cli(capsys, ["markers", "--game", "kang", "--out", out])
    assert code == 2 and "No space left on device" in err and "refcam-stickers-kang-a4.pdf" in err, err
    assert [p.name for p in out.iterdir()] == []


def test_markers_views_says_why_it_cannot_write(tmp_path, capsys, monkeypatch):
    _disk_full(monkeypatch)
    code, _, err = run_cli(capsys, ["markers", "--charuco", "--views", "2", "--out", tmp_path / "views"])
    assert code == 2 and "No space left on device" in err and "view-001" in err, err


def test_control_characters_in_an_error_line_are_written_out(capsys):
    code, _, err = run_cli(capsys, ["observe", "photo\x1b[2J\x07.jpg"])
    assert code == 2 and "\x1b" not in err and "\x07" not in err, repr(err)
    assert "photo\\x1b[2J\\x07.jpg" in err and err.count("\n") == 1
    assert safeload.printable("a\nb\tc\x9b") == "a\\nb\\tc\\x9b"


class _Terminal:
    """stderr as a terminal (isatty), keeping what was written."""

    def __init__(self):
        self.text = ""

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass


def test_an_error_before_the_replay_bar_is_not_led_by_a_blank_line():
    from webui.commands.replay import Progress

    terminal = _Terminal()
    progress = Progress(10, stream=terminal)
    progress.close()  # the error path: nothing drawn yet
    assert terminal.text == ""
    progress.update(5)
    progress.end_line()  # a warning or an error after the bar: the bar's line ends once
    progress.close()
    assert terminal.text.count("\n") == 1 and terminal.text.endswith("(5/10 frames)\n")
