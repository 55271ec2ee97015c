"""The helper that turns an operation into an MCP tool, checked on a plain FastMCP server."""

import asyncio
import inspect
from typing import Annotated

from fastmcp import FastMCP
from pydantic import Field

from galaxy_mcp_analysis.core.tool_facts import ToolFacts
from galaxy_mcp_analysis.mcp.declaration import (
    _as_mcp_function,
    ToolSpec,
)
from mcp.types import ToolAnnotations


def read_things(ops, thing_id: Annotated[str, Field(description="The thing.")], limit: int = 5) -> dict:
    """Read things."""
    return {"ops": ops, "thing_id": thing_id, "limit": limit}


SPEC = ToolSpec(read_things, ToolFacts("read_things", "Read things", read_only=True))


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


# ---- mcp/: the pieces every tool shares (errors, api_key, surface), on a plain FastMCP server ----


def surfaced_server():
    from galaxy import exceptions

    from galaxy_mcp_analysis.mcp.api_key import (
        HeaderApiKey,
        OptionalApiKey,
    )
    from galaxy_mcp_analysis.mcp.errors import CodedToolErrors
    from galaxy_mcp_analysis.mcp.surface import ToolSurface

    server = FastMCP("test")

    @server.tool
    def lookup(history_id: str, api_key: str) -> dict:
        """Stock text."""
        if history_id == "missing":
            raise ValueError("lookup failed: History not found") from exceptions.ObjectNotFound("History not found")
        return {"history_id": history_id, "api_key": api_key}

    server.add_middleware(CodedToolErrors())
    server.add_middleware(HeaderApiKey())
    server.add_transform(ToolSurface({"lookup": ToolAnnotations(title="Look up", readOnlyHint=True)},
                                     {"lookup": "Better text.", "lookup.history_id": "The history to look up."}))
    server.add_transform(OptionalApiKey())
    return server


def call(server, name, arguments):
    from fastmcp import Client

    async def run():
        async with Client(server) as client:
            return await client.call_tool(name, arguments, raise_on_error=False)

    return asyncio.run(run())


def test_stock_tools_are_annotated_described_and_take_an_optional_key():
    (tool,) = asyncio.run(surfaced_server().list_tools())
    assert tool.description == "Better text." and tool.title == "Look up"
    assert tool.annotations.read_only_hint is True
    assert tool.parameters["required"] == ["history_id"]
    assert "x-api-key" in tool.parameters["properties"]["api_key"]["description"]
    assert tool.parameters["properties"]["history_id"]["description"] == "The history to look up."


def test_the_argument_still_works_and_errors_are_coded():
    server = surfaced_server()
    assert call(server, "lookup", {"history_id": "h1", "api_key": "k"}).structured_content["api_key"] == "k"
    missing = call(server, "lookup", {"history_id": "missing", "api_key": "k"})
    assert missing.is_error and missing.content[0].text.startswith("[NOT_FOUND] lookup: History not found\n")


def test_no_key_anywhere_is_an_authentication_error():
    result = call(surfaced_server(), "lookup", {"history_id": "h1"})
    assert result.is_error and result.content[0].text.startswith("[AUTHENTICATION_ERROR] No API key")
    assert "x-api-key" in result.content[0].text.split("Suggestion:")[1]


def test_unknown_tools_and_bad_arguments_are_coded():
    server = surfaced_server()
    assert call(server, "lookdown", {"api_key": "k"}).content[0].text.startswith("[NOT_FOUND] There is no tool")
    bad = call(server, "lookup", {"history_id": ["not", "a", "string"], "api_key": "k"})
    assert bad.content[0].text.startswith("[VALIDATION_ERROR] lookup: history_id")


def test_an_output_schema_that_only_says_object_is_dropped_and_results_stay_structured():
    server = surfaced_server()
    (tool,) = asyncio.run(server.list_tools())
    assert tool.output_schema is None
    assert call(server, "lookup", {"history_id": "h1", "api_key": "k"}).structured_content == {"history_id": "h1", "api_key": "k"}
