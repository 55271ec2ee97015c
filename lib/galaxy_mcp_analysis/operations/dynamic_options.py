"""A dynamic select's legal values, as Galaxy's own parameter computes them for the request's inputs.

Options that come from the input's metadata (``<filter type="data_meta" ref=...>``), its content,
or another parameter are computed by Galaxy's ``SelectToolParameter.get_options`` with the values
the request gives (datasets as Galaxy's objects, inner levels looking up through outer ones, as
the tool form does). Where those values are not in the request, or Galaxy cannot compute the
options, the value is left to Galaxy and named in ``unchecked``: never a refusal on a guess.
"""

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from galaxy.tools.parameters.basic import ColumnListParameter
from galaxy.util.expressions import ExpressionContext

from galaxy_mcp_analysis.core import tool_inputs as rules
from galaxy_mcp_analysis.core.flat_names import (
    flat_name,
    repeat_block,
    REPEAT_KEY,
    SEPARATOR,
)
from galaxy_mcp_analysis.core.input_problems import InputProblem
from galaxy_mcp_analysis.core.tool_input_problems import not_an_option


class DynamicOptions:
    """Operations mixin of AnalysisOperationsManager (needs ``trans`` and ``referenced_item``)."""

    def dynamic_options(self, tool, names: tuple[str | int, ...], state: Any = None) -> list[tuple[str, str]] | None:
        """``[(value, label)]`` of a dynamic select for this request state (None: cannot be told).

        ``names``: the steps to the select, names and, inside repeats, block numbers (then ``state`` is the
        request, whose selected branches pick the select among sibling branches' parameters of its name)."""
        legacy = _legacy_parameter(tool.inputs, names, state)
        if legacy is None:
            return None
        context: Any = {}
        if legacy.get_dependencies():
            if state is None:
                return None
            context = self._option_context(state, names)
            if any(_looked_up(context, name) is None for name in legacy.get_dependencies()):
                return None
        try:
            options = legacy.get_options(self.trans, context)
        except Exception:  # Galaxy's own computation failed: leave the value to Galaxy
            return None
        return [(str(option[1]), str(option[0])) for option in options]

    def _option_context(self, state: Mapping[str, Any], names: tuple[str | int, ...]) -> ExpressionContext:
        """The values a select at ``names`` sees: its level's, then each enclosing level's."""
        context = None
        level: Any = state
        for step in names:
            if isinstance(step, int):
                level = level[step] if isinstance(level, list) and step < len(level) else None
                continue
            if not isinstance(level, Mapping):
                break
            context = ExpressionContext({key: self._option_value(value) for key, value in level.items()}, context)
            level = level.get(step)
        return context if context is not None else ExpressionContext({})

    def _option_value(self, value: Any) -> Any:
        """A request value as Galaxy's options see it: a dataset or collection reference as its object."""
        if isinstance(value, Mapping) and value.get("batch") and isinstance(value.get("values"), list):
            return [self._option_value(item) for item in value["values"]]
        if isinstance(value, Mapping) and {"src", "id"} <= set(value):
            return self.referenced_item(value)
        if isinstance(value, list) and value and all(isinstance(item, Mapping) and "src" in item for item in value):
            return [self._option_value(item) for item in value]
        return value

    def dynamic_select_problems(
        self, tool, modelled, state, path: str, unchecked: list[dict[str, str]] | None = None
    ) -> list[InputProblem]:
        """The values of the dynamic selects the request's selected branches hold, judged against the options
        Galaxy computes for them; a value whose options cannot be computed here goes to ``unchecked``."""
        problems = []
        for where, parameter, value in rules.leaf_values(state, modelled.parameters, path):
            if parameter.parameter_type != "gx_select" or parameter.options is not None or value is None:
                continue
            steps = _steps(where.removeprefix(path).lstrip("."))
            options = self.dynamic_options(tool, steps, state)
            if options is None:
                if unchecked is not None:
                    unchecked.append({"path": where, "reason": _why_unchecked(tool, steps, state)})
                continue
            valid = [value for value, _ in options]
            legacy = _legacy_parameter(tool.inputs, steps, state)
            data_ref = getattr(getattr(legacy, "options", None), "dataset_ref_name", None)
            for item in value if isinstance(value, list) else [value]:
                if str(item) not in valid:
                    problems.append(not_an_option(parameter, where, item, valid, _server_source(legacy), data_ref))
        return problems

    def column_rule(self, tool, problem: InputProblem, flat: Mapping[str, Any]) -> InputProblem:
        """A data column Galaxy refused against its dataset, with the rule: how many columns that dataset has."""
        parts = _PATH_PART.findall(problem.path.removeprefix("inputs."))
        legacy = _legacy_parameter(tool.inputs, tuple(name for name, _ in parts))
        if not isinstance(legacy, ColumnListParameter) or not legacy.data_ref:
            return problem
        prefix = ""
        for name, index in parts[:-1]:
            prefix = flat_name(prefix, repeat_block(name, index) if index else name)
        counts = self._column_counts(flat.get(flat_name(prefix, legacy.data_ref), flat.get(legacy.data_ref)))
        if not counts:
            return problem
        columns = f"{counts[0]} columns" if len(counts) == 1 else f"{counts[0]} to {counts[-1]} columns"
        numeric = ", and only its numeric columns are offered" if legacy.numerical else ""
        return dataclasses.replace(
            problem,
            message=f"{problem.message}. The data given as {legacy.data_ref!r} has {columns}{numeric}",
            suggestion=f"Give a column number from 1 to {counts[0]} (get_dataset_details(dataset_id=...) shows "
            "metadata_columns); check_tool_inputs(history_id=..., tool_id=..., inputs=...) judges a request against "
            "its data without running it.",
        )

    def _column_counts(self, value: Any) -> list[int]:
        """The column counts of the datasets a data input's value names (a collection's elements too)."""
        batch = isinstance(value, Mapping) and value.get("batch")
        references = value.get("values") if batch else value if isinstance(value, list) else [value]
        counts = set()
        for reference in references or []:
            item = self.referenced_item(reference) if isinstance(reference, Mapping) and "id" in reference else None
            datasets = item.collection.dataset_instances if hasattr(item, "collection") else [item] if item else []
            counts.update(column for dataset in datasets if (column := getattr(dataset.metadata, "columns", None)))
        return sorted(counts)


#: ``queries[1]`` -> ("queries", "1"); ``column`` -> ("column", "")
_PATH_PART = re.compile(r"([^.\[\]]+)(?:\[(\d+)\])?")


def _why_unchecked(tool, steps: tuple[str | int, ...], state: Any) -> str:
    legacy = _legacy_parameter(tool.inputs, steps, state)
    depends = sorted(legacy.get_dependencies()) if legacy is not None else []
    if depends:
        return (f"its options come from {', '.join(depends)} (a dataset's metadata or content, or another "
                "parameter), which Galaxy evaluates when it runs the tool; passed on unchanged")
    table = _data_table(legacy)
    if table:
        return (f"its options come from the server's data table {table!r}, which Galaxy could not read here; "
                "Galaxy judges the value when it runs the tool; passed on unchanged")
    return "Galaxy's computation of its options (from a file or the tool's code) failed here; passed on unchanged"


def _data_table(legacy) -> str | None:
    """The server data table a select's options come from, if they do."""
    return getattr(getattr(legacy, "options", None), "tool_data_table_name", None) or None


def _server_source(legacy) -> str | None:
    """What of the server's a select's options come from (a data table, a .loc file), in words; None when they
    come from the request's data or the tool itself."""
    options = getattr(legacy, "options", None)
    if table := _data_table(legacy):
        return f"this server's data table {table!r}"
    if file := (getattr(options, "index_file", None) or getattr(options, "missing_index_file", None)):
        return f"this server's reference file {file!r}"
    return None


def _steps(path: str) -> tuple[str | int, ...]:
    """``a.rep[1].b`` -> ("a", "rep", 1, "b")."""
    steps: list[str | int] = []
    for name, index in _PATH_PART.findall(path):
        steps.append(name)
        if index:
            steps.append(int(index))
    return tuple(steps)


def _looked_up(context: Any, name: str) -> Any:
    try:
        return context[name]
    except KeyError:
        return None


def _legacy_parameter(inputs: Mapping[str, Any], names: tuple[str | int, ...], state: Any = None):
    """Galaxy's legacy parameter object (``tool.inputs``) at a path of names (block numbers are skipped).

    Inside a conditional, the branch the request state selects is looked in (sibling branches may give
    one name to a select and to a data input); without a state, the first branch having the name."""
    current: Any = None
    level = inputs
    for step in names:
        if isinstance(step, int):
            state = state[step] if isinstance(state, list) and step < len(state) else None
            continue
        current = level.get(step) if level is not None else None
        if current is None:
            return None
        state = state.get(step) if isinstance(state, Mapping) else None
        if getattr(current, "type", None) == "conditional":
            level = _selected_case_inputs(current, state)
        else:
            level = getattr(current, "inputs", None)
    return current


def _selected_case_inputs(conditional, state: Any) -> dict[str, Any]:
    """The inputs of the branch ``state`` selects (the default's when it selects none), with the test parameter;
    without a state, every branch's, the first of a name winning."""
    merged = {conditional.test_param.name: conditional.test_param}
    if isinstance(state, Mapping):
        value = state.get(conditional.test_param.name)
        try:
            test_value = value if value is not None else conditional.test_param.get_initial_value(None, {})
            case = conditional.get_current_case(test_value)
            return merged | dict(conditional.cases[case].inputs)
        except Exception:
            pass
    for case in conditional.cases:
        for name, parameter in case.inputs.items():
            merged.setdefault(name, parameter)
    return merged


def dotted(prefix: str, name: str) -> str:
    """``a|rep_0|b`` or ``a.rep[0].b`` as a problem path under ``prefix``."""
    path = prefix
    for part in name.replace(SEPARATOR, ".").split("."):
        repeat = REPEAT_KEY.fullmatch(part)
        if repeat and "[" not in part:
            path = rules.join_path(rules.join_path(path, repeat.group(1)), int(repeat.group(2)))
        else:
            path = f"{path}.{part}" if path else part
    return path
