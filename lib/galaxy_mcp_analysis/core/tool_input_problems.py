"""Galaxy's judgement of a tool request in an agent's words: one ``InputProblem`` per offending path.

The typed-model stage of the preflight (``model_problems``) validates the nested, normalised
state (``core.tool_inputs``) with Galaxy's relaxed request model and turns pydantic's
validation errors into problems whose messages are written here, never pydantic's. Beside
them: the wording of a dataset or collection of a type an input does not take, and of
Galaxy's refusals when it populates a request against the data. It reads Galaxy's parameter
objects by their attributes and imports nothing of Galaxy.
"""

from collections.abc import (
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
from galaxy_mcp_analysis.core.tool_inputs import (
    by_name,
    COLLECTION,
    CONDITIONAL,
    DATA,
    flat_to_nested,
    join_path,
    normalise,
    REPEAT,
    request_form,
    SECTION,
)

_SCHEMA_HINT = " get_tool_input_schema shows every parameter, its type and its valid values."


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


def not_an_option(
    parameter, path: str, offending: Any, valid: Sequence[Any], source: str | None = None, data_ref: str | None = None
) -> InputProblem:
    """``source``: what of the server's the options come from (``this server's data table 'x'``), if they do;
    ``data_ref``: the data input whose content or metadata they are read from, if they are."""
    if not valid and source:  # reference data this server lists nothing in for this request
        return InputProblem(
            path,
            NOT_AN_OPTION,
            f"{_shown(offending)} is not an option of {parameter.name!r}: its options come from {source}, "
            "which offers none here.",
            "This server cannot run this choice: pick another branch of the conditional holding it, if it has one "
            "(get_tool_input_schema(tool_id=...) shows them), or ask the server's admin to install the reference data.",
            (),
        )
    if not valid:  # options computed from the request's data, and none were found
        return InputProblem(
            path,
            NOT_AN_OPTION,
            f"{_shown(offending)} is not an option of {parameter.name!r}: it has none for this request "
            "(its options come from the input data, and they offer none).",
            "Give an input whose metadata or content offers values (get_dataset_details(dataset_id=...) shows them), "
            "or leave the parameter out if it is optional.",
            (),
        )
    close = closest_names(str(offending), [str(v) for v in valid]) if isinstance(offending, str) else []
    return InputProblem(
        path,
        NOT_AN_OPTION,
        f"{_shown(offending)} is not an option of {parameter.name!r}; valid values: {listed(list(valid))}"
        + (f" (read from the data given as {data_ref!r})." if data_ref else ".")
        + (f" Did you mean {close[0]!r}?" if close else ""),
        f"Use one of the valid values{' (a list of them: it takes several)' if getattr(parameter, 'multiple', False) else ''}"
        + (f", or give {data_ref!r} a dataset that holds the value." if data_ref else "."),
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
    "gx_baseurl": "an http(s) URL",
    "gx_directory_uri": "a directory URI of one of this Galaxy's file sources (such as 'gxftp://')",
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
        "Use a dataset of an accepted type, or change this dataset's type with "
        "update_dataset(dataset_id=..., file_type=...) if it was mislabelled.",
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
            problems.append(InputProblem(here, INVALID_VALUE, str(error), _population_fix(str(error))))
    return problems


def _population_fix(message: str) -> str:
    """The fix for one of Galaxy's refusals when it populates a request (a data column has its own, added
    where the dataset's columns are known: ``operations.dynamic_options.column_rule``)."""
    check = ("check_tool_inputs(history_id=..., tool_id=..., inputs=...) judges the corrected request without "
             "running it.")
    if "no legal values" in message:
        return ("This server offers no value for it (its options come from reference data or input data it lacks): "
                "pick another branch or option that does not need it (get_tool_input_schema(tool_id=...) shows "
                "them), or give inputs that offer values. " + check)
    return "Give one of the values Galaxy's message lists. " + check
