"""Tool inputs as agents send them, made into the one form Galaxy's typed model checks.

Galaxy models a tool's parameters (``tool.parameters``: one pydantic-backed object per
parameter, ``galaxy.tool_util_models.parameters``) and validates a request against them
(``RelaxedRequestToolState``). Callers of ``run_tool`` send what Galaxy's legacy
``POST /api/tools`` accepts, which that model refuses although Galaxy runs it:

- flat keys: ``cond|param`` inside a conditional or section, ``rep_0|param`` in the first
  repeat block, freely mixed with nested dictionaries and lists;
- numbers as strings (``"column": "2"``), strings as numbers, ``"true"`` for booleans, a
  comma-separated string for a multiple select;
- the legacy batch wrapper ``{"batch": true, "values": [...]}``.

This module turns such a request into the nested form (keeping every unknown name, so
the model refuses it with its path) and back into Galaxy's flat form; the model's validation
errors are put in agent-facing words by ``core.tool_input_problems``. It reads Galaxy's
parameter objects by their attributes (``parameter_type``, ``name``, ``whens``, ...) and
imports nothing of Galaxy.
"""

import copy
import math
import re
from dataclasses import dataclass
from collections.abc import (
    Iterable,
    Mapping,
    Sequence,
)
from typing import Any

from galaxy_mcp_analysis.core.flat_names import (
    flat_name,
    repeat_block,
    REPEAT_KEY,
    SEPARATOR,
)
from galaxy_mcp_analysis.core.input_problems import (
    InputProblem,
    INVALID_VALUE,
)
from galaxy_mcp_analysis.core.scalars import boolean_word

CONDITIONAL = "gx_conditional"
SECTION = "gx_section"
REPEAT = "gx_repeat"
DATA = "gx_data"
COLLECTION = "gx_data_collection"
GROUPS = (CONDITIONAL, SECTION, REPEAT)

#: Request keys Galaxy's tool API reads beside the parameters; passed on, never checked.
PASS_THROUGH_KEYS = frozenset({"use_cached_job", "send_email_notification", "rerun_remap_job_id"})

_INTEGER = re.compile(r"\s*[+-]?\d+\s*")
#: A data column given as its label (``c2``), which Galaxy's own column parameter reads as the number.
_COLUMN_LABEL = re.compile(r"\s*c(\d+)\s*")


def is_pass_through(key: str) -> bool:
    return key in PASS_THROUGH_KEYS or key.startswith("__") or key.endswith("|__identifier__")


def has_flat_keys(inputs: Mapping[str, Any]) -> bool:
    """Whether a request names a parameter inside a group by a flat key (``cond|param``, ``rep_0|param``)."""
    return any(isinstance(key, str) and SEPARATOR in key and not is_pass_through(key) for key in inputs)


# ---- Where things are ------------------------------------------------------------------------


def join_path(path: str, step: str | int) -> str:
    if isinstance(step, int):
        return f"{path}[{step}]"
    return f"{path}.{step}" if path else step


def branch_parameters(parameter, state: Any) -> list:
    """The parameters one level below a group for this state of it: a conditional's selected branch (its
    test parameter and the branch's parameters), since sibling branches may give one name two types."""
    if parameter.parameter_type == CONDITIONAL and isinstance(state, Mapping):
        when = selected_when(parameter, state)
        if when is not None:
            return [parameter.test_parameter, *when.parameters]
    return level_parameters(parameter)


def level_parameters(parameter) -> list:
    """The parameters one level below a group: a conditional's are all its branches' and its test parameter."""
    if parameter.parameter_type == CONDITIONAL:
        seen: dict[str, Any] = {parameter.test_parameter.name: parameter.test_parameter}
        for when in parameter.whens:
            for inner in when.parameters:
                seen.setdefault(inner.name, inner)
        return list(seen.values())
    return list(parameter.parameters)


def by_name(parameters: Iterable) -> dict[str, Any]:
    return {parameter.name: parameter for parameter in parameters}


def selected_when(conditional, state: Mapping[str, Any] | None):
    """The branch Galaxy runs for this conditional state (its default branch when the test value is absent)."""
    test_name = conditional.test_parameter.name
    value = (state or {}).get(test_name) if isinstance(state, Mapping) else None
    for when in conditional.whens:
        if value is None and when.is_default_when:
            return when
        if value is not None and same_discriminator(when.discriminator, value):
            return when
    return None


def same_discriminator(discriminator: Any, value: Any) -> bool:
    if isinstance(discriminator, bool):
        return value is discriminator or str(value).lower() == str(discriminator).lower()
    return str(value) == str(discriminator)


# ---- Flat and nested ------------------------------------------------------------------------


def flat_to_nested(
    inputs: Mapping[str, Any], parameters: Sequence, path: str = "inputs"
) -> tuple[dict[str, Any], dict[str, Any], list[InputProblem]]:
    """``(nested, passed_through, problems)``: ``cond|param`` and ``rep_0|param`` keys made nested.

    Nested and flat forms may be mixed; a value given twice (once flat, once nested) with two
    different values is a problem. Names the tool does not have are kept where they were
    written, so that validation reports them with their path.
    """
    nested: dict[str, Any] = {}
    passed: dict[str, Any] = {}
    problems: list[InputProblem] = []
    # Outer keys first: a conditional's test value is placed before what its branch holds at any depth
    # (``cond|rep_0|x`` needs the branch ``cond|mode`` selects, whatever order the keys came in).
    for key, value in sorted(inputs.items(), key=lambda item: str(item[0]).count(SEPARATOR)):
        if not isinstance(key, str):
            continue
        if is_pass_through(key):
            passed[key] = value
            continue
        _place(nested, key.split(SEPARATOR), value, by_name(parameters), path, problems)
    return nested, passed, problems


def _place(target: dict, parts: list[str], value: Any, level: dict[str, Any], path: str, problems: list) -> None:
    head, rest = parts[0], parts[1:]
    parameter = level.get(head)
    if rest:
        repeat = REPEAT_KEY.fullmatch(head)
        if parameter is None and repeat and getattr(level.get(repeat.group(1)), "parameter_type", None) == REPEAT:
            name, index = repeat.group(1), int(repeat.group(2))
            blocks = target.setdefault(name, [])
            if not isinstance(blocks, list):
                problems.append(_given_twice(join_path(path, name)))
                return
            while len(blocks) <= index:
                blocks.append({})
            inner_level = by_name(level_parameters(level[name]))
            _place(blocks[index], rest, value, inner_level, join_path(join_path(path, name), index), problems)
            return
        inner = target.setdefault(head, {})
        if not isinstance(inner, dict):
            problems.append(_given_twice(join_path(path, head)))
            return
        grouped = parameter is not None and _is_group(parameter)
        inner_level = by_name(branch_parameters(parameter, inner)) if grouped else {}
        _place(inner, rest, value, inner_level, join_path(path, head), problems)
        return
    here = join_path(path, head)
    if parameter is not None and parameter.parameter_type in (CONDITIONAL, SECTION) and isinstance(value, Mapping):
        inner = target.setdefault(head, {})
        if not isinstance(inner, dict):
            problems.append(_given_twice(here))
            return
        for key, inner_value in value.items():
            if isinstance(key, str):
                _place(inner, key.split(SEPARATOR), inner_value, by_name(branch_parameters(parameter, value)), here, problems)
        return
    if parameter is not None and parameter.parameter_type == REPEAT and isinstance(value, list):
        blocks = target.setdefault(head, [])
        if not isinstance(blocks, list):
            problems.append(_given_twice(here))
            return
        while len(blocks) < len(value):
            blocks.append({})
        for index, block in enumerate(value):
            if isinstance(block, Mapping):
                for key, inner_value in block.items():
                    if isinstance(key, str):
                        _place(
                            blocks[index],
                            key.split(SEPARATOR),
                            inner_value,
                            by_name(level_parameters(parameter)),
                            join_path(here, index),
                            problems,
                        )
            else:
                blocks[index] = block
        return
    if head in target and target[head] != value:
        problems.append(_given_twice(here))
        return
    target[head] = copy.deepcopy(value)


def _is_group(parameter) -> bool:
    return parameter.parameter_type in GROUPS


def _given_twice(path: str) -> InputProblem:
    return InputProblem(
        path,
        INVALID_VALUE,
        "This parameter is given twice (flat 'a|b' key and nested form) with different values.",
        "Give each parameter once, either nested or as a flat key.",
    )


def nested_to_flat(state: Mapping[str, Any], parameters: Sequence, prefix: str = "") -> dict[str, Any]:
    """Galaxy's flat ``inputs`` (what the legacy tool API reads) for a nested state."""
    flat: dict[str, Any] = {}

    def collect(step: Step) -> Any:
        flat[step.flat] = step.value
        return step.value

    walk(state, parameters, collect, flat_prefix=prefix)
    return flat


# ---- The one walk over a nested state ----------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One value of a nested state the walk meets that is not a group: where it is, and its parameter."""

    #: The tool's parameter at this place (None: a name the tool lacks here).
    parameter: Any
    value: Any
    #: The path in the request's own terms (``inputs.cond.rep[0].param``) and Galaxy's flat name.
    path: str
    flat: str


def walk(state: Mapping[str, Any], parameters: Sequence, visit, path: str = "inputs", flat_prefix: str = "") -> dict:
    """A copy of a nested state, ``visit(Step)``'s answer in place of each value that is not a group.

    Conditionals (their selected branch: sibling branches may give one name two types), sections and the
    blocks of repeats are walked into; a name the tool lacks is visited with ``parameter`` None. Every reader
    of a request's values (the flat form, normalisation, the leaves, the datasets) is this walk."""
    result: dict[str, Any] = {}
    level = by_name(parameters)
    for name, value in state.items():
        parameter = level.get(name)
        kind = getattr(parameter, "parameter_type", None)
        here, flat = join_path(path, name), flat_name(flat_prefix, name)
        if kind in (CONDITIONAL, SECTION) and isinstance(value, Mapping):
            if kind == CONDITIONAL and parameter.test_parameter.name in value:  # the test value first, as Galaxy
                value = {parameter.test_parameter.name: value[parameter.test_parameter.name], **value}  # reads it
            value = walk(value, branch_parameters(parameter, value), visit, here, flat)
        elif kind == REPEAT and isinstance(value, list):
            value = [
                walk(block, level_parameters(parameter), visit, join_path(here, index), repeat_block(flat, index))
                if isinstance(block, Mapping) else block
                for index, block in enumerate(value)
            ]
        else:
            value = visit(Step(parameter, value, here, flat))
        result[name] = value
    return result


# ---- Values in the forms callers send ---------------------------------------------------------


def is_legacy_batch(value: Any) -> bool:
    return isinstance(value, Mapping) and "values" in value and "__class__" not in value and "src" not in value


def map_values(state: Mapping[str, Any], parameters: Sequence, change) -> dict[str, Any]:
    """A copy of a nested state, ``change(parameter, value)`` applied to the value of every parameter that is not a
    group (conditionals, sections and repeats are walked into); unknown names are kept as they are."""
    return walk(state, parameters, lambda step: step.value if step.parameter is None else change(step.parameter,
                                                                                                  step.value))


def normalise(state: Mapping[str, Any], parameters: Sequence) -> dict[str, Any]:
    """A copy of a nested state with the value forms Galaxy's legacy API accepts made typed.

    Integers, floats and data columns given as number strings become numbers (a data column's
    label ``c2`` too, as Galaxy reads it); text, select
    and hidden values given as numbers become strings; "true"/"false" become booleans; a
    comma-separated string for a multiple select becomes a list; "" for an optional number
    becomes null. Anything else is left for validation to judge.
    """
    return map_values(state, parameters, _normalised)


def _normalised(parameter, value: Any) -> Any:
    kind = parameter.parameter_type
    if kind in GROUPS or kind in (DATA, COLLECTION):
        return value
    multiple = bool(getattr(parameter, "multiple", False))
    if multiple and kind in ("gx_select", "gx_data_column", "gx_genomebuild", "gx_group_tag", "gx_drill_down"):
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",")] if value.strip() else None
        if isinstance(value, list):
            return [_scalar(kind, item, parameter) for item in value]
        return value
    return _scalar(kind, value, parameter)


def _scalar(kind: str, value: Any, parameter) -> Any:
    if kind in ("gx_integer", "gx_data_column"):
        if isinstance(value, str):
            if _INTEGER.fullmatch(value):
                return int(value)
            if kind == "gx_data_column" and (label := _COLUMN_LABEL.fullmatch(value)):
                return int(label.group(1))
            if not value.strip() and getattr(parameter, "optional", False):
                return None
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return value
    if kind == "gx_float":
        if isinstance(value, str):
            if not value.strip() and getattr(parameter, "optional", False):
                return None
            try:
                number = float(value)
            except ValueError:
                return value
            if math.isfinite(number):
                return int(value) if _INTEGER.fullmatch(value) else number
        return value
    if kind == "gx_boolean":
        # Only the words JSON itself writes; "yes", "off" and the like are Galaxy's request handling's to judge
        # (decided_by_galaxy), never normalised here.
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return boolean_word(value)
        return value
    if kind in ("gx_text", "gx_select", "gx_hidden", "gx_color", "gx_genomebuild", "gx_group_tag", "gx_drill_down"):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
    return value


#: For tools of a profile before this one, a non-optional boolean given as null means its default, as in
#: Galaxy's own tests of such tools; Galaxy's request model refuses the null, and Galaxy's legacy run
#: path would read it as false whatever the default (string_as_bool(None)).
NULL_BOOLEAN_MEANS_DEFAULT_BEFORE_PROFILE = 24.2


def _null_boolean(parameter, value: Any) -> bool:
    return (parameter.parameter_type == "gx_boolean" and value is None
            and not getattr(parameter, "optional", False))


def null_booleans_defaulted(
    state: Mapping[str, Any], parameters: Sequence, profile: Any, path: str = "inputs"
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """For a tool of ``profile`` before ``NULL_BOOLEAN_MEANS_DEFAULT_BEFORE_PROFILE`` (the one place that rule
    is decided; the served preflight and check-toolbox both ask here): a copy of a nested state with each
    non-optional boolean given as null set to its default, and ``[{path, given: None, sent: default}]`` for
    each (reported in ``normalised``, never silent). Later profiles: the state as given."""
    if float(profile or 0) >= NULL_BOOLEAN_MEANS_DEFAULT_BEFORE_PROFILE:
        return dict(state), []
    report = [{"path": here, "given": None, "sent": bool(getattr(parameter, "value", False))}
              for here, parameter, value in leaf_values(state, parameters, path) if _null_boolean(parameter, value)]
    if not report:
        return dict(state), []

    def defaulted(parameter, value):
        return bool(getattr(parameter, "value", False)) if _null_boolean(parameter, value) else value

    return map_values(state, parameters, defaulted), report


def column_labels(state: Mapping[str, Any], parameters: Sequence, path: str = "inputs") -> list[dict[str, Any]]:
    """``[{path, given, sent}]`` for every data column given as a label (``c2``): sent as its number."""
    read = []
    for here, parameter, value in leaf_values(state, parameters, path):
        if parameter.parameter_type != "gx_data_column":
            continue
        values = value if isinstance(value, list) else [value]
        if isinstance(value, str) and getattr(parameter, "multiple", False):
            values = value.split(",")
        labels = [item for item in values if isinstance(item, str) and _COLUMN_LABEL.fullmatch(item)]
        if labels:
            read.append({"path": here, "given": value, "sent": _normalised(parameter, value)})
    return read


def request_form(state: Mapping[str, Any], parameters: Sequence) -> dict[str, Any]:
    """The state as Galaxy's request model reads it: legacy batch wrappers in the model's ``__class__`` form."""

    def model_form(parameter, value):
        if parameter.parameter_type in (DATA, COLLECTION) and is_legacy_batch(value):
            return _model_batch(value, parameter)
        return value

    return map_values(state, parameters, model_form)


def _model_batch(value: Mapping[str, Any], parameter) -> Any:
    values = value.get("values")
    if not value.get("batch"):
        # {"values": [...]} without batch is one value (or the list of a multiple input).
        if isinstance(values, list) and (getattr(parameter, "multiple", False) or len(values) != 1):
            return values
        return values[0] if isinstance(values, list) and values else values
    batch: dict[str, Any] = {"__class__": "Batch", "values": values}
    if "linked" in value:
        batch["linked"] = value["linked"]
    return batch


def legacy_batches(state: Mapping[str, Any], parameters: Sequence) -> dict[str, Any]:
    """The reverse of ``request_form`` for batch values: ``{"batch": true, "values": [...]}`` as run_tool takes them."""

    def legacy_form(parameter, value):
        if isinstance(value, Mapping) and value.get("__class__") == "Batch":
            return {"batch": True, **{k: v for k, v in value.items() if k != "__class__"}}
        return value

    return map_values(state, parameters, legacy_form)


def leaf_values(state: Mapping[str, Any], parameters: Sequence, path: str = "inputs"):
    """``(path, parameter, value)`` of every parameter given that is not a group, in the selected branches only."""
    leaves: list[tuple[str, Any, Any]] = []

    def collect(step: Step) -> Any:
        if step.parameter is not None and step.parameter.parameter_type not in GROUPS:
            leaves.append((step.path, step.parameter, step.value))
        return step.value

    walk(state, parameters, collect, path)
    return iter(leaves)


def batch_values(state: Mapping[str, Any], parameters: Sequence, path: str = "inputs"):
    """``(path, parameter, batch value)`` of every data input given in batch (map-over) form."""
    for here, parameter, value in leaf_values(state, parameters, path):
        if parameter.parameter_type in (DATA, COLLECTION) and is_legacy_batch(value) and value.get("batch"):
            yield here, parameter, value


def data_values(state: Mapping[str, Any], parameters: Sequence, path: str = "inputs"):
    """``(path, parameter, reference)`` of every ``{src, id}`` given to a data input of the selected branches."""
    for here, parameter, value in leaf_values(state, parameters, path):
        if parameter.parameter_type in (DATA, COLLECTION):
            yield from _references(value, parameter, here)


def _references(value: Any, parameter, path: str):
    if isinstance(value, list):
        for index, item in enumerate(value):
            yield from _references(item, parameter, join_path(path, index))
    elif isinstance(value, Mapping):
        if isinstance(value.get("values"), list):
            for index, item in enumerate(value["values"]):
                yield from _references(item, parameter, join_path(join_path(path, "values"), index))
        elif isinstance(value.get("src"), str) and isinstance(value.get("id"), str):
            yield path, parameter, value
