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
the model refuses it with its path), back into Galaxy's flat form, and turns the model's
validation errors into ``InputProblem``s in agent-facing words. It reads Galaxy's parameter
objects by their attributes (``parameter_type``, ``name``, ``whens``, ...) and imports
nothing of Galaxy.
"""

import copy
import math
import re
from collections.abc import (
    Iterable,
    Mapping,
    Sequence,
)
from typing import Any

from pydantic import ValidationError

from galaxy_mcp_analysis.core.input_problems import (
    closest_names,
    COLLECTION_TYPE_NOT_ACCEPTED,
    DATATYPE_NOT_ACCEPTED,
    InputProblem,
    INVALID_VALUE,
    listed,
    MISSING_REQUIRED,
    NOT_AN_OPTION,
    OUT_OF_RANGE,
    unknown_name_problem,
    UNSELECTED_BRANCH,
    WRONG_TYPE,
)

CONDITIONAL = "gx_conditional"
SECTION = "gx_section"
REPEAT = "gx_repeat"
DATA = "gx_data"
COLLECTION = "gx_data_collection"
GROUPS = (CONDITIONAL, SECTION, REPEAT)

#: Request keys Galaxy's tool API reads beside the parameters; passed on, never checked.
PASS_THROUGH_KEYS = frozenset({"use_cached_job", "send_email_notification", "rerun_remap_job_id"})

REPEAT_KEY = re.compile(r"(.+)_(\d+)")
_INTEGER = re.compile(r"\s*[+-]?\d+\s*")
#: A data column given as its label (``c2``), which Galaxy's own column parameter reads as the number.
_COLUMN_LABEL = re.compile(r"\s*c(\d+)\s*")
_SCHEMA_HINT = " get_tool_input_schema shows every parameter, its type and its valid values."


def is_pass_through(key: str) -> bool:
    return key in PASS_THROUGH_KEYS or key.startswith("__") or key.endswith("|__identifier__")


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
        if value is not None and _same_discriminator(when.discriminator, value):
            return when
    return None


def _same_discriminator(discriminator: Any, value: Any) -> bool:
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
    for key, value in inputs.items():
        if not isinstance(key, str):
            continue
        if is_pass_through(key):
            passed[key] = value
            continue
        _place(nested, key.split("|"), value, by_name(parameters), path, problems)
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
                _place(inner, key.split("|"), inner_value, by_name(branch_parameters(parameter, value)), here, problems)
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
                            key.split("|"),
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
    level = by_name(parameters)
    for name, value in state.items():
        parameter = level.get(name)
        kind = getattr(parameter, "parameter_type", None)
        if kind in (CONDITIONAL, SECTION) and isinstance(value, Mapping):
            flat.update(nested_to_flat(value, branch_parameters(parameter, value), f"{prefix}{name}|"))
        elif kind == REPEAT and isinstance(value, list):
            for index, block in enumerate(value):
                if isinstance(block, Mapping):
                    flat.update(nested_to_flat(block, level_parameters(parameter), f"{prefix}{name}_{index}|"))
        else:
            flat[f"{prefix}{name}"] = value
    return flat


# ---- Values in the forms callers send ---------------------------------------------------------


def is_legacy_batch(value: Any) -> bool:
    return isinstance(value, Mapping) and "values" in value and "__class__" not in value and "src" not in value


def map_values(state: Mapping[str, Any], parameters: Sequence, change) -> dict[str, Any]:
    """A copy of a nested state, ``change(parameter, value)`` applied to the value of every parameter that is not a
    group (conditionals, sections and repeats are walked into); unknown names are kept as they are."""
    result: dict[str, Any] = {}
    level = by_name(parameters)
    for name, value in state.items():
        parameter = level.get(name)
        kind = getattr(parameter, "parameter_type", None)
        if kind in (CONDITIONAL, SECTION) and isinstance(value, Mapping):
            value = map_values(value, branch_parameters(parameter, value), change)
        elif kind == REPEAT and isinstance(value, list):
            value = [map_values(b, level_parameters(parameter), change) if isinstance(b, Mapping) else b for b in value]
        elif parameter is not None:
            value = change(parameter, value)
        result[name] = value
    return result


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
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        return value
    if kind in ("gx_text", "gx_select", "gx_hidden", "gx_color", "gx_genomebuild", "gx_group_tag", "gx_drill_down"):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
    return value


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
    level = by_name(parameters)
    for name, value in state.items():
        parameter = level.get(name)
        kind = getattr(parameter, "parameter_type", None)
        here = join_path(path, name)
        if kind == CONDITIONAL and isinstance(value, Mapping):
            when = selected_when(parameter, value)
            if when is not None:
                yield from leaf_values(value, [parameter.test_parameter, *when.parameters], here)
        elif kind == SECTION and isinstance(value, Mapping):
            yield from leaf_values(value, level_parameters(parameter), here)
        elif kind == REPEAT and isinstance(value, list):
            for index, block in enumerate(value):
                if isinstance(block, Mapping):
                    yield from leaf_values(block, level_parameters(parameter), join_path(here, index))
        elif parameter is not None and kind not in GROUPS:
            yield here, parameter, value


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


# ---- Galaxy's validation errors in an agent's words -------------------------------------------


def model_problems(
    inputs: Mapping[str, Any], parameters: Sequence, relaxed_model, path: str, subject: str
) -> tuple[dict[str, Any], dict[str, Any], list[InputProblem]]:
    """The typed-model stage of the preflight: ``(normalised nested state, passed-through keys, problems)``.

    ``relaxed_model`` is Galaxy's relaxed request model of the tool (``create_field_model(...,
    "relaxed_request")``); what depends on datasets is judged later, by the caller, with Galaxy.
    """
    nested, passed, problems = flat_to_nested(inputs, parameters, path)
    state = normalise(nested, parameters)
    try:
        relaxed_model(**request_form(state, parameters))
    except ValidationError as error:
        problems += problems_from_validation(error.errors(), parameters, state, path, subject)
    except (TypeError, ValueError) as error:  # e.g. a key that is not a string
        problems.append(InputProblem(path, INVALID_VALUE, f"inputs cannot be read: {type(error).__name__}.",
                                     "Start from get_tool_input_schema's template."))
    return state, passed, problems


def problems_from_validation(
    errors: Sequence[Mapping[str, Any]], parameters: Sequence, state: Mapping[str, Any], path: str, subject: str
) -> list[InputProblem]:
    """One problem per offending path, from pydantic's ``ValidationError.errors()`` on Galaxy's request model.

    The error locations are walked through Galaxy's parameter objects, so the union
    tags pydantic inserts (conditional branches, data request kinds) become parameter
    paths again; the messages are written here, never pydantic's.
    """
    by_path: dict[str, InputProblem] = {}
    for error in errors:
        problem = _problem_for(error, parameters, state, path, subject)
        if problem is not None and problem.path not in by_path:
            by_path[problem.path] = problem
    return list(by_path.values())


def _problem_for(error: Mapping[str, Any], parameters: Sequence, state: Any, path: str, subject: str):
    loc = list(error.get("loc", ()))
    kind = error.get("type", "")
    level = list(parameters)
    where = subject
    while loc:
        step = loc.pop(0)
        names = by_name(level)
        parameter = names.get(step) if isinstance(step, str) else None
        if parameter is None:
            if kind == "extra_forbidden" and isinstance(step, str):
                return unknown_name_problem(join_path(path, step), step, list(names), where)
            return InputProblem(path, INVALID_VALUE, f"{where} cannot take this value.", _SCHEMA_HINT.strip())
        here = join_path(path, step)
        value = state.get(step) if isinstance(state, Mapping) else None
        if parameter.parameter_type == CONDITIONAL:
            if not loc:
                return _conditional_problem(parameter, here, value, kind)
            tag = loc.pop(0)
            when = _when_for_tag(parameter, tag)
            if when is None:
                return _conditional_problem(parameter, here, value, kind)
            if kind == "extra_forbidden" and len(loc) == 1 and loc[0] not in by_name(when.parameters):
                return _branch_problem(parameter, when, loc[0], join_path(here, loc[0]), value)
            level = [parameter.test_parameter, *when.parameters]
            path, state, where = here, value, f"conditional {step!r}"
        elif parameter.parameter_type == SECTION:
            if not loc:
                return _group_problem(parameter, here, kind, error)
            level, path, state, where = list(parameter.parameters), here, value, f"section {step!r}"
        elif parameter.parameter_type == REPEAT:
            if not loc or not isinstance(loc[0], int):
                return _group_problem(parameter, here, kind, error)
            index = loc.pop(0)
            block = value[index] if isinstance(value, list) and index < len(value) else None
            level, path, state, where = (
                list(parameter.parameters),
                join_path(here, index),
                block,
                f"block {index} of repeat {step!r}",
            )
        else:
            return leaf_problem(parameter, here, value, kind, error)
    return InputProblem(path or "inputs", INVALID_VALUE, f"{where} cannot take this value.", _SCHEMA_HINT.strip())


def _when_for_tag(conditional, tag: Any):
    if tag == "__absent__":
        return next((when for when in conditional.whens if when.is_default_when), None)
    return next((when for when in conditional.whens if str(when.discriminator).lower() == str(tag).lower()), None)


def discriminators(conditional) -> list[Any]:
    return [when.discriminator for when in conditional.whens]


def _conditional_problem(conditional, path: str, value: Any, kind: str) -> InputProblem:
    test = conditional.test_parameter
    valid = discriminators(conditional)
    if not isinstance(value, Mapping):
        return InputProblem(
            path,
            WRONG_TYPE,
            f"Conditional {conditional.name!r} takes an object such as {{{test.name!r}: {valid[0]!r}, ...}}, "
            f"not {_shown(value)}.",
            f"Give {{{test.name!r}: <one of {listed(valid)}>, ...that branch's parameters}}, or the flat form "
            f"'{conditional.name}|{test.name}'.",
            tuple(valid),
        )
    given = value.get(test.name)
    return InputProblem(
        join_path(path, test.name),
        NOT_AN_OPTION,
        f"{_shown(given)} is not a branch of conditional {conditional.name!r}; its branches are {listed(valid)}.",
        f"Set {test.name!r} to one of {listed(valid)}.",
        tuple(valid),
    )


def _branch_problem(conditional, when, name: str, path: str, state: Any) -> InputProblem:
    test = conditional.test_parameter
    owners = [other.discriminator for other in conditional.whens if name in by_name(other.parameters)]
    selected = f"{test.name}={when.discriminator!r}"
    if not (isinstance(state, Mapping) and test.name in state):
        selected += " (the default, as it is not given)"
    if owners:
        return InputProblem(
            path,
            UNSELECTED_BRANCH,
            f"{name!r} belongs to the branch {test.name}={owners[0]!r} of conditional {conditional.name!r}, "
            f"but the selected branch is {selected}; Galaxy would ignore it.",
            f"Set {test.name!r} to {owners[0]!r} to use {name!r}, or remove it.",
            tuple(owners),
        )
    valid = [test.name, *by_name(when.parameters)]
    problem = unknown_name_problem(path, name, valid, f"The branch {selected} of conditional {conditional.name!r}")
    return problem


def _group_problem(parameter, path: str, kind: str, error: Mapping[str, Any]) -> InputProblem:
    if kind == "missing":
        return _missing(parameter, path)
    if parameter.parameter_type == REPEAT and kind in ("too_short", "too_long"):
        low, high = parameter.min, parameter.max
        bounds = f"at least {low}" if kind == "too_short" else f"at most {high}"
        return InputProblem(
            path,
            OUT_OF_RANGE,
            f"Repeat {parameter.name!r} needs {bounds} blocks; {len(error.get('input') or [])} given.",
            f"Give between {low or 0} and {high if high is not None else 'any number of'} blocks.",
        )
    shape = "a list of blocks (objects)" if parameter.parameter_type == REPEAT else "an object"
    return InputProblem(
        path,
        WRONG_TYPE,
        f"{parameter.name!r} takes {shape}, not {_shown(error.get('input'))}.",
        "Use the nested form shown by get_tool_input_schema, or the flat form "
        + (f"'{parameter.name}_0|<param>'." if parameter.parameter_type == REPEAT else f"'{parameter.name}|<param>'."),
    )


def _missing(parameter, path: str) -> InputProblem:
    what = {DATA: "dataset", COLLECTION: "collection"}.get(parameter.parameter_type, "value")
    example = {DATA: '{"src": "hda", "id": "<dataset_id>"}', COLLECTION: '{"src": "hdca", "id": "<collection_id>"}'}
    return InputProblem(
        path,
        MISSING_REQUIRED,
        f"{parameter.name!r} is required and has no default; no {what} was given.",
        f"Give {parameter.name!r}" + (f" as {example[parameter.parameter_type]}." if what != "value" else " a value.")
        + _SCHEMA_HINT,
    )


def option_values(parameter) -> list[Any] | None:
    options = getattr(parameter, "options", None)
    if options is None:
        return None
    if parameter.parameter_type == "gx_drill_down":
        return _drill_down_values(options)
    return [option.value for option in options]


def _drill_down_values(options) -> list[str]:
    values: list[str] = []
    for option in options:
        values.append(option["value"])
        values.extend(_drill_down_values(option.get("options") or []))
    return values


def leaf_problem(parameter, path: str, value: Any, kind: str, error: Mapping[str, Any]) -> InputProblem:
    """The problem with one parameter's value, from the kind of error Galaxy's model raised for it."""
    gx_type = parameter.parameter_type
    if kind == "missing":
        return _missing(parameter, path)
    if kind == "extra_forbidden" and gx_type not in (DATA, COLLECTION):
        return _wrong_type(parameter, path, value)
    if gx_type in ("gx_select", "gx_drill_down") and kind in ("literal_error", "union_tag_invalid"):
        valid = option_values(parameter) or []
        offending = error.get("input", value)
        return not_an_option(parameter, path, offending, valid)
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal") or (
        kind == "value_error" and gx_type in ("gx_integer", "gx_float")
    ):
        return InputProblem(
            path,
            OUT_OF_RANGE,
            f"{_shown(value)} is outside the range of {parameter.name!r} ({_range(parameter)}).",
            f"Give a number {_range(parameter)}.",
        )
    if kind == "value_error" and value is not None:
        detail = str(error.get("msg", "")).removeprefix("Value error, ").removeprefix("Assertion failed, ")
        if "null is an invalid value" not in detail:
            return InputProblem(
                path,
                INVALID_VALUE,
                f"{_shown(value)} is not a valid value for {parameter.name!r}: {detail}",
                "Change the value to satisfy the rule above." + _SCHEMA_HINT,
            )
    return _wrong_type(parameter, path, value)


def not_an_option(parameter, path: str, offending: Any, valid: Sequence[Any]) -> InputProblem:
    close = closest_names(str(offending), [str(v) for v in valid]) if isinstance(offending, str) else []
    return InputProblem(
        path,
        NOT_AN_OPTION,
        f"{_shown(offending)} is not an option of {parameter.name!r}; valid values: {listed(list(valid))}."
        + (f" Did you mean {close[0]!r}?" if close else ""),
        f"Use one of the valid values{' (a list of them: it takes several)' if getattr(parameter, 'multiple', False) else ''}.",
        tuple(valid),
    )


_EXPECTED = {
    "gx_integer": "an integer",
    "gx_float": "a number",
    "gx_boolean": "true or false",
    "gx_text": "a string",
    "gx_hidden": "a string",
    "gx_color": "a color string such as '#ff0000'",
    "gx_data_column": "a column number (integer, 1-based)",
    "gx_genomebuild": "a genome build string such as 'hg38'",
    "gx_group_tag": "a group tag string",
    "gx_rules": "a rules object",
    "gx_select": "one of its option values (a string)",
    "gx_drill_down": "one of its option values (a string)",
}


def _wrong_type(parameter, path: str, value: Any) -> InputProblem:
    gx_type = parameter.parameter_type
    multiple = bool(getattr(parameter, "multiple", False))
    if gx_type == DATA:
        expected = '{"src": "hda"|"ldda"|"dce", "id": "<id>"}' + (", or a list of them" if multiple else "")
        suggestion = (
            f'Give {{"src": "hda", "id": "<dataset_id>"}}; to map over a collection use '
            f'{{"batch": true, "values": [{{"src": "hdca", "id": "<collection_id>"}}]}}.'
        )
    elif gx_type == COLLECTION:
        expected = '{"src": "hdca", "id": "<collection_id>"}'
        suggestion = 'Give {"src": "hdca", "id": "<collection_id>"} (ids from get_history_contents).'
    else:
        expected = _EXPECTED.get(gx_type, "a value of its type")
        if multiple:
            expected = f"a list of {expected}"
        if getattr(parameter, "optional", False):
            expected += ", or null"
        suggestion = f"Give {parameter.name!r} {expected}."
    return InputProblem(path, WRONG_TYPE, f"{parameter.name!r} takes {expected}, not {_shown(value)}.", suggestion)


def _range(parameter) -> str:
    low, high = getattr(parameter, "min", None), getattr(parameter, "max", None)
    if low is not None and high is not None:
        return f"from {low} to {high}"
    if low is not None:
        return f">= {low}"
    if high is not None:
        return f"<= {high}"
    return "as its validator states"


def _shown(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---- Datatypes --------------------------------------------------------------------------------


def datatype_problem(path: str, parameter, extension: str, accepted: Sequence[str]) -> InputProblem:
    return InputProblem(
        path,
        DATATYPE_NOT_ACCEPTED,
        f"{parameter.name!r} accepts datasets of type {listed(list(accepted))} (or types Galaxy converts to them); "
        f"this dataset is {extension!r}, which is none of them and which Galaxy cannot convert to any of them.",
        "Use a dataset of an accepted type, or change this dataset's type with update_dataset(file_type=...) if it "
        "was mislabelled.",
        tuple(accepted),
    )


def collection_type_problem(path: str, parameter, actual: str, accepted: Sequence[str]) -> InputProblem:
    return InputProblem(
        path,
        COLLECTION_TYPE_NOT_ACCEPTED,
        f"{parameter.name!r} takes collections of type {listed(list(accepted))}; this collection is {actual!r}.",
        "Give a collection of an accepted type (create_collection builds one), or one whose elements are of it "
        "(Galaxy then maps over them).",
        tuple(accepted),
    )


# ---- What only Galaxy's run-time population sees -----------------------------------------------


def population_problems(errors: Mapping[str, Any], path: str = "inputs") -> list[InputProblem]:
    """Galaxy's refusals when it populates a request against the data (its nested ``{name: message}``
    errors, a dict per section or conditional, a list of dicts per repeat) as problems with our paths.

    The typed model judges values by the tool alone; some rules depend on the data: a column number
    beyond the dataset's columns, options computed from a dataset's metadata or content."""
    problems: list[InputProblem] = []
    for name, error in errors.items():
        here = join_path(path, name)
        if isinstance(error, Mapping):
            problems += population_problems(error, here)
        elif isinstance(error, list):
            for index, item in enumerate(error):
                if isinstance(item, Mapping):
                    problems += population_problems(item, join_path(here, index))
        elif error:
            problems.append(
                InputProblem(
                    here,
                    INVALID_VALUE,
                    str(error),
                    "Galaxy judged this value against the data it names (e.g. its columns or metadata): use one of "
                    "the values it lists, or get_dataset_details to see the dataset's columns.",
                )
            )
    return problems
