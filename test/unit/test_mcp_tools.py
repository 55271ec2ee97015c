"""The helper that turns an operation into an MCP tool, checked on a plain FastMCP server."""

import asyncio
import inspect
from typing import Annotated

from fastmcp import FastMCP
from pydantic import Field

from galaxy_mcp_analysis.mcp_tools import (
    _as_mcp_function,
    ToolSpec,
)
from mcp.types import ToolAnnotations


def read_things(ops, thing_id: Annotated[str, Field(description="The thing.")], limit: int = 5) -> dict:
    """Read things."""
    return {"ops": ops, "thing_id": thing_id, "limit": limit}


SPEC = ToolSpec(read_things, ToolAnnotations(title="Read things", readOnlyHint=True))


def test_ops_is_replaced_by_a_required_api_key():
    tool = _as_mcp_function(SPEC, gx_app=None)
    parameters = inspect.signature(tool).parameters
    assert list(parameters) == ["thing_id", "api_key", "limit"]
    assert parameters["limit"].default == 5


def test_fastmcp_builds_the_schema_from_the_rewritten_signature():
    server = FastMCP("test")
    server.tool(_as_mcp_function(SPEC, gx_app=None), name="read_things", annotations=SPEC.annotations)
    (tool,) = asyncio.run(server.list_tools())
    schema = tool.parameters
    assert set(schema["required"]) == {"thing_id", "api_key"}
    assert schema["properties"]["thing_id"]["description"] == "The thing."
    assert "ops" not in schema["properties"]
    assert "Galaxy API key" in schema["properties"]["api_key"]["description"]
