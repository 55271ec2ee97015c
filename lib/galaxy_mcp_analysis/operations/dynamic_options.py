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

    def dynamic_options(self, tool, names: tuple[str, ...], state: Any = None) -> list[tuple[str, str]] | None:
        """``[(value, label)]`` of a dynamic select for this request state (None: cannot be told)."""
        legacy = _legacy_parameter(tool.inputs, names)
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

    def _option_context(self, state: Mapping[str, Any], names: tuple[str, ...]) -> ExpressionContext:
        """The values a select at ``names`` sees: its level's, then each enclosing level's."""
        context = None
        level: Any = state
        for depth in range(len(names)):
            if not isinstance(level, Mapping):
                break
            context = ExpressionContext({key: self._option_value(value) for key, value in level.items()}, context)
            level = level.get(names[depth])
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
        problems = []
        for names in modelled.dynamic_selects:
            value = _value_at(state, names)
            if value is None:
                continue
            options = self.dynamic_options(tool, names, state)
            where = dotted(path, SEPARATOR.join(names))
            if options is None:
                if unchecked is not None:
                    unchecked.append({"path": where, "reason": _why_unchecked(tool, names)})
                continue
            valid = [value for value, _ in options]
            for item in value if isinstance(value, list) else [value]:
                if str(item) not in valid:
                    parameter = _model_at(modelled.parameters, names)
                    problems.append(not_an_option(parameter, where, item, valid))
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
            suggestion=f"Give a column number from 1 to {counts[0]} (get_dataset_details shows metadata_columns); "
            "check_tool_inputs judges a request against its data without running it.",
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


def _why_unchecked(tool, names: tuple[str, ...]) -> str:
    legacy = _legacy_parameter(tool.inputs, names)
    depends = sorted(legacy.get_dependencies()) if legacy is not None else []
    if depends:
        return (f"its options come from {', '.join(depends)} (a dataset's metadata or content, or another "
                "parameter), which Galaxy evaluates when it runs the tool; passed on unchanged")
    return "Galaxy could not list its options here; passed on unchanged"


def _looked_up(context: Any, name: str) -> Any:
    try:
        return context[name]
    except KeyError:
        return None


def _legacy_parameter(inputs: Mapping[str, Any], names: tuple[str, ...]):
    """Galaxy's legacy parameter object (``tool.inputs``) at a path of names."""
    current: Any = None
    level = inputs
    for name in names:
        current = level.get(name) if level is not None else None
        if current is None:
            for candidate in (level or {}).values():
                for case in getattr(candidate, "cases", []) or []:
                    if name in case.inputs:
                        current = case.inputs[name]
            if current is None:
                return None
        level = getattr(current, "inputs", None)
    return current


def _model_at(parameters: list, names: tuple[str, ...]):
    level = parameters
    current = None
    for name in names:
        current = next((p for p in level if p.name == name), None)
        if current is None:
            for candidate in level:
                if candidate.parameter_type == rules.CONDITIONAL:
                    for when in candidate.whens:
                        current = current or next((p for p in when.parameters if p.name == name), None)
        if current is None:
            return None
        level = rules.level_parameters(current) if current.parameter_type in rules.GROUPS else []
    return current


def _value_at(state: Any, names: tuple[str, ...]) -> Any:
    value = state
    for name in names:
        if isinstance(value, Mapping):
            value = value.get(name)
        else:
            return None
    return value


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
