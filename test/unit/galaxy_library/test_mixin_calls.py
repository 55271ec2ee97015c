"""The mixins of operations/ reach each other only through public methods (doc/architecture.md): no
``self._name`` call of a method another of our classes defines. Galaxy's AgentOperationsManager's own
methods are the base class's interface (``_encode_id``; ``_encode_ids_in_response``, which
``result_ids.ResultIds`` overrides under Galaxy's name so the stock tools use it too)."""

import ast
import importlib.util
from pathlib import Path

from galaxy.agents.operations import AgentOperationsManager

OPERATIONS = Path(importlib.util.find_spec("galaxy_mcp_analysis.operations").submodule_search_locations[0])


def private_calls_across_classes(sources: dict[str, str], galaxy_names: set[str]) -> list[str]:
    """``file:line Class -> _name (defined in ...)`` of each private call of a method another class defines."""
    defined: dict[str, set[str]] = {}
    calls = []
    for name, source in sources.items():
        for cls in (node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ClassDef)):
            for item in cls.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    defined.setdefault(item.name, set()).add(f"{name}:{cls.name}")
            for node in ast.walk(cls):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and isinstance(node.func.value, ast.Name) and node.func.value.id == "self"
                        and node.func.attr.startswith("_") and not node.func.attr.startswith("__")):
                    calls.append((f"{name}:{cls.name}", node.func.attr, node.lineno))
    return [
        f"{where}:{line} -> {method} (defined in {sorted(defined[method])})"
        for where, method, line in calls
        if method in defined and where not in defined[method] and method not in galaxy_names
    ]


def test_no_mixin_calls_another_mixins_private_method():
    sources = {str(path.relative_to(OPERATIONS)): path.read_text() for path in OPERATIONS.rglob("*.py")}
    assert len(sources) > 20
    assert private_calls_across_classes(sources, set(dir(AgentOperationsManager))) == []


def test_the_check_sees_a_private_call_across_mixins():
    sources = {
        "a.py": "class A:\n    def _helper(self):\n        pass\n",
        "b.py": "class B:\n    def run(self):\n        return self._helper() + self._own() + self._encode_id(1)\n"
                "    def _own(self):\n        pass\n",
    }
    assert private_calls_across_classes(sources, {"_encode_id"}) == ["b.py:B:3 -> _helper (defined in ['a.py:A'])"]
