"""A tool's inputs as JSON Schema, a template and a list of data inputs: renderings of Galaxy's model.

Pure functions of Galaxy's typed parameter model (``tool.parameters``, one object per
parameter, ``galaxy.tool_util_models.parameters``), read by their attributes only
(``parameter_type``, ``name``, ``options``, ``whens``, ...); nothing of Galaxy is imported.
``operations.tool_inputs`` renders each loaded tool once and caches the result; a select whose
options Galaxy computes per request is filled in there (``dynamic_selects``, ``at``, ``enum_schema``).
"""

from collections.abc import Sequence
from typing import Any

from galaxy_mcp_analysis.core import tool_inputs as rules
from galaxy_mcp_analysis.core.declared_parameters import declared_parameters
from galaxy_mcp_analysis.core.map_over import (
    DataInput,
    map_over_hint,
)
from galaxy_mcp_analysis.core.tool_input_problems import option_values

#: Data request kinds a dataset input takes; a collection input takes hdca (or dce).
#: The `src` values a tool request takes for a data and a collection input (a workflow invocation's differ).
TOOL_DATA_SOURCES = ["hda", "ldda", "dce"]
TOOL_COLLECTION_SOURCES = ["hdca", "dce"]


def _labelled(schema: dict[str, Any], parameter) -> dict[str, Any]:
    label = getattr(parameter, "label", None)
    if label and label.strip().lower() != parameter.name.lower():
        schema["title"] = label.strip()[:80]
    return schema


def enum_schema(options: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """Option values as an enum; their labels where they say more than the value."""
    values = [value for value, _ in options]
    schema: dict[str, Any] = {"enum": values}
    labels = {value: label for value, label in options if label and label.strip() != value}
    if labels:
        schema["x-labels"] = labels
    return schema


#: What a URI parameter takes (Galaxy's model types them as URLs).
_URI_KINDS = {
    "gx_baseurl": "an http(s) URL",
    "gx_directory_uri": "a directory URI of one of this Galaxy's file sources",
}


def _nullable(schema: dict[str, Any], parameter) -> dict[str, Any]:
    if getattr(parameter, "optional", False) and "type" in schema:
        schema["type"] = [schema["type"], "null"]
    return schema


def _parameter_schema(parameter) -> dict[str, Any] | None:
    kind = parameter.parameter_type
    if kind == "gx_hidden" or getattr(parameter, "hidden", False):
        return None
    render = _RENDERERS.get(kind)
    return _labelled(render(parameter) if render else {}, parameter)


def _uri_schema(parameter) -> dict[str, Any]:
    schema = {"type": "string", "format": "uri", "description": _URI_KINDS[parameter.parameter_type]}
    return _nullable(schema, parameter)


def _text_schema(parameter) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    text = parameter.parameter_type == "gx_text"
    default = getattr(parameter, "default_value", None) if text else getattr(parameter, "value", None)
    if default is not None:
        schema["default"] = default
    for validator in getattr(parameter, "validators", []) or []:
        if getattr(validator, "negate", False):
            continue
        if getattr(validator, "type", None) == "regex":
            schema["pattern"] = validator.expression
        elif getattr(validator, "type", None) == "length":
            if validator.min is not None:
                schema["minLength"] = validator.min
            if validator.max is not None:
                schema["maxLength"] = validator.max
    if getattr(parameter, "multiple", False):
        schema = {"type": "array", "items": schema}
    return _nullable(schema, parameter)


def _number_schema(parameter) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer" if parameter.parameter_type == "gx_integer" else "number"}
    for key in ("min", "max"):
        if getattr(parameter, key, None) is not None:
            schema["minimum" if key == "min" else "maximum"] = getattr(parameter, key)
    if parameter.value is not None:
        schema["default"] = parameter.value
    return _nullable(schema, parameter)


def _select_schema(parameter) -> dict[str, Any]:
    values = option_values(parameter)
    schema: dict[str, Any]
    if values is None:
        schema = {"type": "string", "description": "options depend on the server or history"}
    elif parameter.parameter_type == "gx_select":
        schema = enum_schema([(option.value, option.label) for option in parameter.options])
    else:
        schema = {"enum": values}
    default = _select_default(parameter)
    if getattr(parameter, "multiple", False):
        schema = {"type": "array", "items": schema}
    if default is not None:
        schema["default"] = default
    return schema


def _column_schema(parameter) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer", "description": "1-based column number of the input dataset"}
    if getattr(parameter, "multiple", False):
        schema = {"type": "array", "items": schema}
    if parameter.value not in (None, 0):
        schema["default"] = parameter.value
    return schema


def _data_schema(parameter) -> dict[str, Any]:
    schema = _reference_schema(TOOL_DATA_SOURCES, f"dataset of type {', '.join(parameter.extensions)}")
    if parameter.multiple:
        schema = {"type": "array", "items": schema, "description": schema.pop("description")}
    return schema


def _collection_schema(parameter) -> dict[str, Any]:
    types = collection_types(parameter)
    return _reference_schema(TOOL_COLLECTION_SOURCES, f"collection of type {', '.join(types) if types else 'any'}")


def _repeat_schema(parameter) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "array", "items": object_schema(list(parameter.parameters))}
    if parameter.min:
        schema["minItems"] = parameter.min
    if parameter.max is not None:
        schema["maxItems"] = parameter.max
    return schema


#: Galaxy's parameter kinds -> the renderer of each (any other kind: an empty schema, anything goes).
_RENDERERS: dict[str, Any] = {
    **dict.fromkeys(("gx_baseurl", "gx_directory_uri"), _uri_schema),
    **dict.fromkeys(("gx_text", "gx_genomebuild", "gx_group_tag", "gx_color"), _text_schema),
    **dict.fromkeys(("gx_integer", "gx_float"), _number_schema),
    "gx_boolean": lambda parameter: {"type": "boolean", "default": bool(parameter.value)},
    **dict.fromkeys(("gx_select", "gx_drill_down"), _select_schema),
    "gx_data_column": _column_schema,
    rules.DATA: _data_schema,
    rules.COLLECTION: _collection_schema,
    "gx_rules": lambda parameter: {
        "type": "object",
        "description": "rule builder rules",
        "properties": {"rules": {"type": "array"}, "mapping": {"type": "array"}},
        "required": ["rules", "mapping"],
    },
    rules.CONDITIONAL: lambda parameter: _conditional_schema(parameter),
    rules.SECTION: lambda parameter: object_schema(list(parameter.parameters)),
    rules.REPEAT: _repeat_schema,
}


def _reference_schema(sources: list[str], description: str) -> dict[str, Any]:
    return {
        "type": "object",
        "description": description,
        "properties": {"src": {"enum": sources}, "id": {"type": "string"}},
        "required": ["src", "id"],
        "additionalProperties": False,
    }


def _select_default(parameter) -> Any:
    if parameter.parameter_type == "gx_select":
        if parameter.options is None:
            return None
        return parameter.default_values if parameter.multiple else parameter.default_value
    return parameter.default_options if parameter.multiple else parameter.default_option


def object_schema(parameters: list, top: bool = False) -> dict[str, Any]:
    properties = {}
    required = []
    for parameter in parameters:
        schema = _parameter_schema(parameter)
        if schema is None:
            continue
        properties[parameter.name] = schema
        if parameter.request_requires_value:
            required.append(parameter.name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if top:
        schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def _conditional_schema(conditional) -> dict[str, Any]:
    test = conditional.test_parameter
    labels = {}
    if test.parameter_type == "gx_select" and test.options:
        labels = {option.value: option.label for option in test.options}
    branches = []
    default = None
    for when in conditional.whens:
        branch = object_schema(list(when.parameters))
        test_schema: dict[str, Any] = {"const": when.discriminator}
        label = labels.get(str(when.discriminator))
        if label and label != str(when.discriminator):
            test_schema["title"] = label[:80]
        branch["properties"] = {test.name: test_schema, **branch["properties"]}
        if when.is_default_when:
            default = when.discriminator
        else:
            branch["required"] = [test.name, *branch.get("required", [])]
        branch.pop("type", None)
        branches.append(branch)
    schema: dict[str, Any] = {"type": "object", "oneOf": branches}
    if default is not None:
        schema["description"] = f"branch chosen by {test.name!r}; without it: {default!r}"
    return schema


def template(parameters: list) -> dict[str, Any]:
    filled: dict[str, Any] = {}
    for parameter in parameters:
        kind = parameter.parameter_type
        if kind == "gx_hidden" or getattr(parameter, "hidden", False):
            continue
        if kind == rules.DATA:
            reference = {"src": "hda", "id": "<dataset_id>"}
            filled[parameter.name] = [reference] if parameter.multiple else reference
        elif kind == rules.COLLECTION:
            filled[parameter.name] = {"src": "hdca", "id": "<collection_id>"}
        elif kind == rules.CONDITIONAL:
            when = next((w for w in parameter.whens if w.is_default_when), parameter.whens[0])
            filled[parameter.name] = {parameter.test_parameter.name: when.discriminator} | template(
                list(when.parameters)
            )
        elif kind == rules.SECTION:
            filled[parameter.name] = template(list(parameter.parameters))
        elif kind == rules.REPEAT:
            filled[parameter.name] = [template(list(parameter.parameters)) for _ in range(parameter.min or 0)]
        else:
            schema = _parameter_schema(parameter) or {}
            filled[parameter.name] = schema.get("default")
    return filled


def data_inputs(parameters: list):
    """Each data and collection input of the tool, in every branch, with its flat name and map-over hint."""
    for declared in declared_parameters(parameters):
        parameter, kind = declared.parameter, declared.parameter.parameter_type
        if kind not in (rules.DATA, rules.COLLECTION):
            continue
        data_input = DataInput(
            path=declared.names,
            repeats=declared.repeats,
            collection=kind == rules.COLLECTION,
            multiple=bool(getattr(parameter, "multiple", False)),
        )
        entry: dict[str, Any] = {
            "path": declared.path,
            "flat_name": data_input.name,
            "datatypes": list(parameter.extensions),
            "multiple": data_input.multiple,
            "collection_types": collection_types(parameter) if kind == rules.COLLECTION else None,
            "optional": bool(parameter.optional),
        }
        if declared.when:
            entry["when"] = declared.when
        hint = map_over_hint(data_input)
        hint.pop("note", None)
        entry.update(hint)
        yield entry


def dynamic_selects(parameters: list):
    """The names (from the top) of each select whose options Galaxy computes per request, in every branch."""
    for declared in declared_parameters(parameters):
        if declared.parameter.parameter_type == "gx_select" and declared.parameter.options is None:
            yield declared.names


def collection_types(parameter) -> list[str]:
    return [part.strip() for part in (parameter.collection_type or "").split(",") if part.strip()]


def at(schema: dict[str, Any], names: Sequence[str]) -> dict[str, Any]:
    for name in names:
        if "properties" in schema and name in schema["properties"]:
            schema = schema["properties"][name]
        elif "items" in schema:
            schema = schema["items"]["properties"][name]
        elif "oneOf" in schema:
            schema = next(b["properties"][name] for b in schema["oneOf"] if name in b["properties"])
    return schema
