"""MCP declarations for what a tool is (operations in galaxy_mcp_analysis.operations.tool_information)."""

from typing import (
    Annotated,
    Any,
)

from pydantic import Field

from galaxy_mcp_analysis.core.tool_facts import Item
from galaxy_mcp_analysis.mcp.declaration import analysis_tool
from galaxy_mcp_analysis.tools.tool_inputs import (
    ToolId,
    ToolVersion,
)


@analysis_tool(title="Read a tool's help", read_only=True, idempotent=True,
               example={"tool_id": "Grep1"})
def get_tool_help(
    ops,
    tool_id: ToolId,
    tool_version: ToolVersion = None,
    offset: Annotated[int, Field(description="Byte offset; pass next_offset to go on.")] = 0,
    max_bytes: Annotated[int, Field(description="Bytes per call (capped).")] = 8192,
) -> dict[str, Any]:
    """Read a tool's help as plain text: what it does, syntax, examples (as its help gives them).

    Returns tool_id, tool_version (also version, for one release), name, description, panel_section,
    help_text (a byte range: offset, next_offset, eof, help_bytes), citations,
    requirements [{name, version, type}], input_formats {path: {formats, ...}}, output_formats.
    Example: get_tool_help(tool_id="Grep1") -> {"help_text": "... \\d matches a digit ...", ...}
    Errors: [NOT_FOUND] unknown tool or version; [VALIDATION_ERROR] offset < 0, max_bytes < 1.
    Next: get_tool_input_schema(tool_id), check_tool_inputs, run_tool.
    """
    return ops.get_tool_help(tool_id, tool_version=tool_version, offset=offset, max_bytes=max_bytes)


@analysis_tool(title="Tool details and inputs", read_only=True, idempotent=True, toolsets=("core",),
               example={"tool_id": "cat1", "io_details": True})
def get_tool_details(ops, tool_id: str, io_details: bool = False, tool_version: ToolVersion = None) -> dict[str, Any]:
    """Describe a tool: id, name, version; with io_details=True its inputs and outputs.

    With io_details=True each dataset input says how to give it a collection: takes_collection=false
    inputs carry map_over, the exact batch value that runs the tool once per element; true means the
    collection itself is the input (data_collection or multiple="true"). Dataset inputs inside
    conditionals, sections and repeats are listed in nested_data_inputs by flat run_tool name.
    Select options, conditional branches, defaults and a template: get_tool_input_schema(tool_id).
    Errors: [NOT_FOUND] unknown tool id (search_tools finds ids) or version (get_tool_versions).
    Next: get_tool_help(tool_id); get_tool_input_schema(tool_id); check_tool_inputs; run_tool.
    """
    return ops.get_tool_details(tool_id, io_details, tool_version=tool_version)


@analysis_tool(title="List a tool's versions", read_only=True, idempotent=True,
               example={"tool_id": "Grep1"})
def get_tool_versions(ops, tool_id: ToolId) -> dict[str, Any]:
    """List every version of a tool this server serves, oldest first, to pin the one an analysis used.

    tool_id: a short id or a ToolShed guid (any version's). Returns tool_id, name, default_version,
    versions [{version, id, default, tool_shed_repository?}], count. id: the tool_id to pass (a
    ToolShed tool's guid); default marks what run_tool runs for this tool_id without tool_version.
    Example: get_tool_versions(tool_id="Grep1") -> versions [{"version": "1.0.1", "id": "Grep1", ...}, ...]
    Errors: [NOT_FOUND] unknown tool (search_tools).
    Next: run_tool, get_tool_input_schema, check_tool_inputs with tool_version.
    """
    return ops.get_tool_versions(tool_id)
