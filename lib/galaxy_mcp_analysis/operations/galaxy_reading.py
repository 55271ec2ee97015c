"""A flat request (``cond|param``, ``rep_0|param``) read by Galaxy's own request handling.

Galaxy's legacy tool API reads a flat request with ``populate_state(..., input_format="legacy")``: it
walks the tool's inputs and takes the keys that walk names (the selected branch of each conditional,
repeat blocks from 0 up to the first one skipped, at any depth). The preflight asks that very reading,
with ``check=False`` (values are taken as sent, nothing is validated, nothing is created), and
``core.galaxy_reading`` follows each sent value through it. What Galaxy read is the nested request the
typed model checks; what it left is either a name the tool does not declare anywhere (kept, so the
model refuses it with its path, as a misspelling must be) or a declared parameter Galaxy does not read
in this request (another branch's, a repeat block it does not make): named in ``ignored``, never silent.
"""

import re
from collections.abc import Mapping
from typing import Any

from galaxy.tools.parameters import populate_state
from galaxy.tools.parameters.wrapped import nested_key_to_path
from galaxy.work.context import proxy_work_context_for_history

from galaxy_mcp_analysis.core.flat_names import ANY_BLOCK
from galaxy_mcp_analysis.core.galaxy_reading import (
    kept_and_dropped,
    traceable,
)
from galaxy_mcp_analysis.operations.declared_inputs import declared_inputs


def read_as_galaxy(trans, tool, history, flat: Mapping[str, Any]):
    """``(nested request Galaxy read, undeclared flat keys, ignored entries)``, or None when Galaxy's reading
    itself failed (the request is then read as before, by name)."""
    traced = traceable(flat)
    populated: dict[str, Any] = {}
    errors: dict[str, Any] = {}
    try:
        context = proxy_work_context_for_history(trans, history=history)
        populate_state(context, tool.inputs, traced, populated, errors, check=False, input_format="legacy")
    except Exception:  # Galaxy's reading refused the request's shape; its run will say why
        return None
    if errors:
        # Unchecked, Galaxy's reading records an error only where populating a branch failed outright ("The
        # selected case is unavailable/invalid."): its state then says nothing of what the run reads.
        return None
    nested, dropped = kept_and_dropped(traced, populated, nested_key_to_path)
    declared, names = _declared_names(tool.inputs)
    undeclared = {key: flat[key] for key in dropped
                  if not declared.fullmatch(key) and key.split("|")[-1] not in names}
    ignored = [
        {"path": _dotted(key), "given": flat[key], "reason": _why_dropped(tool.inputs, populated, key)}
        for key in dropped if key not in undeclared
    ]
    return nested, undeclared, ignored


def _declared_names(inputs) -> tuple[re.Pattern, set[str]]:
    """Every flat name the tool declares, in any branch, a repeat's block number as any number; and every
    parameter's own name (a dropped key ending in one is another branch's or block's, never a misspelling)."""
    declared = list(declared_inputs(inputs))
    flat = {re.escape(item.flat_name).replace(re.escape(ANY_BLOCK), r"\d+") for item in declared}
    return re.compile("|".join(sorted(flat)) or r"(?!)"), {item.path[-1] for item in declared}


def _why_dropped(inputs, populated: Mapping[str, Any], key: str) -> str:
    level, state, owner = inputs, populated, None
    for step in nested_key_to_path(key):
        if isinstance(step, int):
            blocks = state if isinstance(state, list) else []
            if step >= len(blocks):
                limit = getattr(owner, "max", None)
                beyond = f" (at most {limit})" if isinstance(limit, int) and step >= limit else ""
                return (f"Galaxy makes {len(blocks)} block(s) of repeat {owner.name!r} here{beyond}: it reads blocks "
                        f"from 0 up to the first one the request skips, so block {step} is not read")
            state = blocks[step]
            continue
        parameter = level.get(step) if isinstance(level, Mapping) else None
        if parameter is None:
            if getattr(owner, "type", None) == "conditional":
                test = owner.test_param.name
                selected = state.get(test) if isinstance(state, Mapping) else None
                return (f"the request selects {selected!r} for {owner.name}|{test}, whose branch has no {step!r}; "
                        "Galaxy reads only the selected branch")
            break
        owner, state = parameter, state.get(step) if isinstance(state, Mapping) else None
        level = _inner(parameter, state)
    return "Galaxy's reading of the request does not read this key"


def _inner(parameter, state: Any):
    kind = getattr(parameter, "type", None)
    if kind in ("repeat", "section"):
        return parameter.inputs
    if kind == "conditional":
        case = state.get("__current_case__") if isinstance(state, Mapping) else None
        return parameter.cases[case].inputs if isinstance(case, int) and case < len(parameter.cases) else {}
    return None


def _dotted(key: str) -> str:
    path = "inputs"
    for step in nested_key_to_path(key):
        path = f"{path}[{step}]" if isinstance(step, int) else f"{path}.{step}"
    return path
