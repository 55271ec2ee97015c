"""MCP declarations for tool inputs (operations in galaxy_mcp_analysis.operations.tool_inputs)."""

from typing import (
    Annotated,
    Any,
)

from pydantic import Field

from galaxy_mcp_analysis.core.tool_facts import Item
from galaxy_mcp_analysis.mcp.declaration import analysis_tool
from galaxy_mcp_analysis.mcp.params import HistoryId

ToolId = Annotated[str, Field(description="Tool id from search_tools, e.g. 'sort1'.")]
ToolVersion = Annotated[str | None, Field(description="A served version; default: the tool's default version.")]


@analysis_tool(title="Get a tool's input schema", read_only=True, idempotent=True,
               example={"tool_id": "cat1", "history_id": Item("history")})
def get_tool_input_schema(
    ops,
    tool_id: ToolId,
    tool_version: ToolVersion = None,
    history_id: Annotated[
        HistoryId | None, Field(description="Resolve options that depend on a history against this one.")
    ] = None,
) -> dict[str, Any]:
    """Get the exact inputs a tool takes, as JSON Schema, with a ready-to-edit template.

    From Galaxy's typed parameter model. Returns tool_id, tool_version, name, modelled, schema
    (selects as enum, defaults, min/max, conditionals as oneOf branches, repeats as arrays, data
    inputs naming accepted datatypes; unknown names refused), template (every parameter at its default,
    datasets as placeholders), data_inputs [{path, flat_name, datatypes, multiple, collection_types,
    optional, map_over}]. modelled=false (with reason): run_tool cannot check this tool's inputs.

    Example: get_tool_input_schema(tool_id="sort1") -> {"template": {"input": {"src": "hda",
    "id": "<dataset_id>"}, "column": 1, "style": "num", "order": "DESC", ...}, "schema": {...}}

    Errors: [NOT_FOUND] unknown tool or version (search_tools); [AUTHORIZATION_ERROR] history_id
    not yours. Next: get_tool_help(tool_id); fill the template, check_tool_inputs, run_tool.
    """
    return ops.get_tool_input_schema(tool_id, tool_version=tool_version, history_id=history_id)


@analysis_tool(title="Check tool inputs (dry run)", read_only=True, idempotent=True,
               example={"history_id": Item("history"), "tool_id": "cat1",
                        "inputs": {"input1": {"src": "hda", "id": Item("dataset")}}})
def check_tool_inputs(
    ops,
    history_id: HistoryId,
    tool_id: ToolId,
    inputs: Annotated[
        dict[str, Any], Field(description="What you would pass to run_tool: nested or flat 'cond|param' form.")
    ],
    tool_version: ToolVersion = None,
) -> dict[str, Any]:
    """Check run_tool inputs as a dry run: run_tool's own checks.

    Returns valid, errors [{path, rule, message, suggestion, valid_values?}], resolved_inputs (the
    state Galaxy would run, defaults applied), jobs_expected (1, or the map-over size),
    map_over [{input, collection_id, collection_type, jobs}], mapped_over (bare collections
    wrapped), modelled, unchecked [{path, reason}] (passed to Galaxy unjudged), decided_by_galaxy
    (values Galaxy runs as sent though its model refused). Rules: unknown_parameter, not_an_option,
    unselected_branch, missing_required, wrong_type, out_of_range, datatype_not_accepted,
    collection_type_not_accepted. Invalid inputs are a successful check (valid=false).

    Example: check_tool_inputs(history_id="f2db41e1fa331b3e", tool_id="sort1", inputs={"input":
    {"src": "hda", "id": "<id>"}, "colum": 2}) -> {"valid": false, "errors": [{"path":
    "inputs.colum", "rule": "unknown_parameter", "message": "... Did you mean 'column'?", ...}]}

    Errors: [NOT_FOUND] unknown tool or dataset; [AUTHORIZATION_ERROR] another user's history or
    dataset. Next: run_tool with the same inputs.
    """
    return ops.check_tool_inputs(history_id, tool_id, inputs, tool_version=tool_version)
