"""Shared test helpers: where the repo, samples and ../shared are."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples"
SHARED = REPO.parent / "shared"


def require_shared(sub: str = "") -> Path:
    """Path inside ../shared, or skip: a user's clone has no ../shared (CI has it)."""
    path = SHARED / sub
    if not path.exists():
        pytest.skip(f"../shared is absent ({path} not found): this test runs in CI beside the checkout")
    return path


@pytest.fixture
def repo() -> Path:
    return REPO


def run_cli(capsys, argv: list) -> tuple[int, str, str]:
    """`refcam ARGV` in this process: (exit code, stdout, stderr); argparse's own errors exit
    through SystemExit."""
    from webui.cli import main

    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err
