"""The vision side stays layered and readable: no import cycle between vision/, calibration/
and synth/ (the renderer and sheets are tools built on the pipeline's packages, never the other
way round), and no function there over 80 lines."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("vision", "calibration", "synth")
MAX_FUNCTION_LINES = 80


def _modules() -> dict[str, Path]:
    mods = {}
    for pkg in PACKAGES:
        for f in (REPO / pkg).rglob("*.py"):
            mods[".".join(f.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")] = f
    return mods


def _imported_packages(module: str, path: Path) -> set[str]:
    """Top-level packages a module imports (at any depth of its code, lazy imports included)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            out.add(module.split(".")[0] if node.level else (node.module or "").split(".")[0])
    return out


def test_no_import_cycle_between_vision_calibration_and_synth():
    edges = {pkg: set() for pkg in PACKAGES}
    for module, path in _modules().items():
        edges[module.split(".")[0]] |= _imported_packages(module, path) & set(PACKAGES)
    for pkg in PACKAGES:
        edges[pkg].discard(pkg)
    # a cycle exists when some package reaches itself
    for start in PACKAGES:
        reached, todo = set(), list(edges[start])
        while todo:
            pkg = todo.pop()
            if pkg not in reached:
                reached.add(pkg)
                todo.extend(edges[pkg])
        assert start not in reached, f"import cycle through {start}: {edges}"
    assert "synth" not in edges["vision"] and "synth" not in edges["calibration"], edges


def test_no_function_over_80_lines():
    long = []
    for module, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{module}.{node.name}: {lines} lines")
    assert not long, long
