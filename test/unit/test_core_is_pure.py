"""core/ is the pure layer: no module in it imports Galaxy (doc/architecture.md), so its rules run in
unit tests without a Galaxy and cannot reach Galaxy's state by accident."""

import ast
import importlib.util
from pathlib import Path

import pytest

CORE = Path(importlib.util.find_spec("galaxy_mcp_analysis.core").submodule_search_locations[0])
MODULES = sorted(path.stem for path in CORE.glob("*.py"))


def imported_modules(source: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module or "")
    return names


def test_core_has_its_modules():
    assert len(MODULES) >= 20 and "tool_inputs" in MODULES


@pytest.mark.parametrize("module", MODULES)
def test_a_core_module_imports_nothing_of_galaxy(module):
    imported = imported_modules((CORE / f"{module}.py").read_text())
    assert not {name for name in imported if name == "galaxy" or name.startswith("galaxy.")}, imported


def test_the_check_sees_a_galaxy_import():
    assert "galaxy.managers" in imported_modules("try:\n    from galaxy.managers import markdown_parse\nexcept ImportError:\n    pass\n")
