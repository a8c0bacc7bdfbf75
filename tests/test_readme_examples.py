"""README examples are a run's output (docs/readme_examples.py): each generated block matches what
refcam prints now. A change that moves a figure fails here until the block is regenerated
(`python docs/readme_examples.py`), so the README never shows a number refcam did not print."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _examples():
    spec = importlib.util.spec_from_file_location("readme_examples", REPO / "docs" / "readme_examples.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


EXAMPLES = _examples()


@pytest.mark.parametrize("example", EXAMPLES.EXAMPLES, ids=lambda e: e.name)
def test_the_readme_example_is_what_refcam_prints(example):
    for arg in example.args:
        if arg.startswith("samples/") and not (REPO / arg).is_file():
            pytest.skip(f"{arg} is not generated (make samples)")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert EXAMPLES.in_readme(readme, example.name) == EXAMPLES.run(example), \
        "regenerate with: python docs/readme_examples.py"


def test_the_check_catches_a_typed_in_figure(tmp_path, monkeypatch):
    """The check fails on the README's old typed-in band (1.59 where refcam prints 1.58)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = EXAMPLES.in_readme(readme, "rank")
    found = re.search(r"band (\d+\.\d\d):", block)
    if found is None:
        pytest.skip("the rank example has no band figure")
    figure = found.group(1)
    typed = readme.replace(f"band {figure}:", f"band {float(figure) + 0.01:.2f}:", 1)
    (tmp_path / "README.md").write_text(typed, encoding="utf-8")
    monkeypatch.setattr(EXAMPLES, "README", tmp_path / "README.md")
    assert EXAMPLES.main(["--check"]) == 1
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == typed  # --check changes nothing
