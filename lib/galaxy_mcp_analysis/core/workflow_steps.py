"""Labels for the steps and outputs of a workflow made from a history, and the values its steps keep.

Galaxy's extraction labels input steps (after the items' names) but leaves tool steps unlabelled
and marks no workflow outputs, so an invocation of the saved workflow reports no ``outputs`` and
``invoke_workflow``'s step parameters have no labels to name. These rules are pure: the Galaxy
adapter (``operations.workflows``) gives them the steps as plain data and writes the result back
through Galaxy's model.
"""

import copy
from collections.abc import (
    Mapping,
    Sequence,
)
from dataclasses import (
    dataclass,
    field,
)
from typing import Any

from galaxy_mcp_analysis.core.workflows import unique_labels


@dataclass
class ToolStepShape:
    """What labelling needs of one tool step: its tool's name, its outputs, what it reads."""

    order_index: int
    tool_name: str
    #: The tool's declared outputs, in the tool's order.
    outputs: Sequence[str]
    #: Indices of the steps feeding its inputs, in the order of its inputs.
    sources: Sequence[int] = field(default_factory=list)


def step_labels(steps: Sequence[ToolStepShape], known: Mapping[int, str]) -> dict[int, str]:
    """A unique label for every unlabelled tool step: the tool's name and, where several steps run
    the same tool, what each reads (``Sort on samples``). ``known``: the labels steps already have
    (input steps' included), by step index; they stay as they are."""
    labels = dict(known)
    runs: dict[str, int] = {}
    for step in steps:
        runs[step.tool_name] = runs.get(step.tool_name, 0) + 1
    wanted: list[tuple[int, str]] = []
    for step in sorted(steps, key=lambda step: step.order_index):
        if step.order_index in known:
            continue
        name = step.tool_name.strip() or "step"
        source = next((labels[index] for index in step.sources if index in labels), None)
        if runs[step.tool_name] > 1 and source:
            name = f"{name} on {source}"
        wanted.append((step.order_index, name))
        labels[step.order_index] = name  # so a later step can say what it reads
    taken = list(known.values())
    made = unique_labels(taken + [name for _, name in wanted])[len(taken) :]
    return {index: label for (index, _), label in zip(wanted, made)}


def terminal_outputs(steps: Sequence[ToolStepShape], consumed: set[tuple[int, str]]) -> list[tuple[int, str]]:
    """(step index, output name) of every tool-step output no other step reads: the workflow's results."""
    return [
        (step.order_index, output)
        for step in sorted(steps, key=lambda step: step.order_index)
        for output in step.outputs
        if (step.order_index, output) not in consumed
    ]


def output_labels(outputs: Sequence[tuple[int, str]], step_label: Mapping[int, str]) -> dict[tuple[int, str], str]:
    """A unique label per workflow output: the step's label, with the output's name when the step
    has several results (``Sort on samples`` / ``Cut columns: out_file1``)."""
    per_step: dict[int, int] = {}
    for index, _ in outputs:
        per_step[index] = per_step.get(index, 0) + 1
    wanted = [
        step_label[index] if per_step[index] == 1 else f"{step_label[index]}: {name}" for index, name in outputs
    ]
    return dict(zip(outputs, unique_labels(wanted)))


def schema_with_saved_defaults(schema: Mapping[str, Any], saved: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a tool's input schema whose ``default`` at each parameter the step saves is the saved
    value, so nobody reads a tool default the workflow overrides. Conditionals follow the saved branch;
    repeats are left as they are (their saved blocks are in ``saved``)."""
    result = copy.deepcopy(dict(schema))
    _apply_saved(result, saved)
    return result


def _apply_saved(schema: dict[str, Any], saved: Mapping[str, Any]) -> None:
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return
    for name, value in saved.items():
        target = properties.get(name)
        if not isinstance(target, dict) or _is_reference(target):
            continue  # data inputs are connected, not saved
        if "oneOf" in target:
            branch = _saved_branch(target["oneOf"], value) if isinstance(value, dict) else None
            if branch is not None:
                _apply_saved(branch, value)
        elif "properties" in target:
            if isinstance(value, dict):
                _apply_saved(target, value)
        elif target.get("type") != "array" or _is_value_list(target, value):
            target["default"] = value


def _saved_branch(branches: Sequence[Any], value: Mapping[str, Any]) -> dict[str, Any] | None:
    for branch in branches:
        properties = branch.get("properties", {}) if isinstance(branch, dict) else {}
        for name, test in properties.items():
            if isinstance(test, dict) and "const" in test and name in value:
                if str(test["const"]) == str(value[name]):
                    return branch
    return None


def _is_reference(target: Mapping[str, Any]) -> bool:
    """A dataset or collection reference (``{src, id}``), alone or as a list."""
    items = target.get("items")
    properties = target.get("properties") or (items.get("properties") if isinstance(items, dict) else None) or {}
    return "src" in properties and "id" in properties


def _is_value_list(target: Mapping[str, Any], value: Any) -> bool:
    """A multiple select or column list (an array of plain values), not a repeat (an array of objects)."""
    items = target.get("items")
    return isinstance(value, list) and isinstance(items, dict) and items.get("type") != "object"
