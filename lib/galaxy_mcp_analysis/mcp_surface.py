"""What every tool at /api/mcp shares, Galaxy's 37 and ours: one FastMCP piece per concern.

- ``CodedToolErrors`` (middleware): whatever a tool raises leaves as a coded tool
  error (errors.coded_text), including Galaxy's stock tools' uncoded errors.
- ``HeaderApiKey`` (middleware) + ``OptionalApiKey`` (transform): the API key may come
  from the HTTP request (``x-api-key`` or ``Authorization: Bearer``) instead of the
  ``api_key`` argument, so it need not sit in the model's context.
- ``ToolSurface`` (transform): annotations and corrected descriptions for Galaxy's
  stock tools (tables in galaxy_mcp_analysis.tools), and no output schema where it
  would only say "an object" (every tool returns a JSON object; 64 bytes per tool saved).

Transforms change what ``tools/list`` advertises and what ``get_tool`` resolves; the
tool functions and their argument validation stay Galaxy's (or ours).
"""

import logging
from collections.abc import Sequence
from typing import Any

from fastmcp.server.middleware import Middleware
from fastmcp.server.transforms import Transform
from fastmcp.tools.base import Tool
from mcp.types import ToolAnnotations

from galaxy_mcp_analysis.errors import (
    AnalysisError,
    coded_text,
    ErrorCode,
)

log = logging.getLogger(__name__)

API_KEY_ARGUMENT = "api_key"
API_KEY_DESCRIPTION = "Galaxy API key; omit if the MCP client sends the x-api-key header."


class CodedToolErrors(Middleware):
    """Every failure of a tools/call leaves as ``[CODE] message`` + ``Suggestion:`` (never twice)."""

    async def on_call_tool(self, context, call_next):
        try:
            return await call_next(context)
        except Exception as exc:
            from fastmcp.exceptions import ToolError

            message = context.message
            raise ToolError(coded_text(exc, message.name, message.arguments)) from None


def api_key_from_request() -> str | None:
    """The key an MCP client sends with every HTTP request, if any (x-api-key or a Bearer token)."""
    from fastmcp.server.dependencies import get_http_request

    try:
        headers = get_http_request().headers
    except RuntimeError:  # no HTTP request (in-process calls)
        return None
    header_key = headers.get("x-api-key", "").strip() or None
    scheme, _, token = headers.get("authorization", "").strip().partition(" ")
    bearer_key = token.strip() if scheme.lower() == "bearer" and token.strip() else None
    if header_key and bearer_key and header_key != bearer_key:
        raise AnalysisError(
            ErrorCode.AUTHENTICATION_ERROR,
            "The request carries two different API keys (x-api-key and Authorization: Bearer).",
            "Configure one of the two headers in the MCP client.",
        )
    return header_key or bearer_key


class HeaderApiKey(Middleware):
    """Fill a tool's ``api_key`` argument from the request's headers; refuse a mismatch."""

    async def on_call_tool(self, context, call_next):
        message = context.message
        arguments = dict(message.arguments or {})
        given = arguments.get(API_KEY_ARGUMENT) or None
        from_request = api_key_from_request()
        if from_request and given and given != from_request:
            raise AnalysisError(
                ErrorCode.AUTHENTICATION_ERROR,
                "The api_key argument differs from the API key sent in the HTTP request header.",
                "Drop the api_key argument (the header already identifies you) or send the same key in both.",
            )
        if from_request and not given:
            arguments[API_KEY_ARGUMENT] = from_request
            context = context.copy(message=message.model_copy(update={"arguments": arguments}))
        elif not given and await self._takes_api_key(context):
            raise AnalysisError(
                ErrorCode.AUTHENTICATION_ERROR,
                "No API key: the call has no api_key argument and the request no x-api-key header.",
                "Configure the MCP client to send the header x-api-key: <key> (or Authorization: Bearer <key>), "
                "or pass api_key. Keys are under User -> Preferences -> Manage API Key in Galaxy.",
            )
        return await call_next(context)

    @staticmethod
    async def _takes_api_key(context) -> bool:
        tool = await context.fastmcp_context.fastmcp.get_tool(context.message.name)
        return tool is not None and API_KEY_ARGUMENT in tool.parameters.get("properties", {})


class _ToolRewrite(Transform):
    """A transform that rewrites each tool it passes with ``rewrite(tool)``."""

    def rewrite(self, tool: Tool) -> Tool:
        raise NotImplementedError

    async def list_tools(self, tools: Sequence[Tool]) -> Sequence[Tool]:
        return [self.rewrite(tool) for tool in tools]

    async def get_tool(self, name, call_next, *, version=None):
        tool = await call_next(name, version=version)
        return None if tool is None else self.rewrite(tool)


class OptionalApiKey(_ToolRewrite):
    """Advertise ``api_key`` as optional (HeaderApiKey fills it in before the tool validates)."""

    def rewrite(self, tool: Tool) -> Tool:
        properties = tool.parameters.get("properties", {})
        if API_KEY_ARGUMENT not in properties:
            return tool
        parameters = dict(tool.parameters)
        parameters["properties"] = {
            **properties,
            API_KEY_ARGUMENT: {"type": "string", "description": API_KEY_DESCRIPTION},
        }
        required = [name for name in parameters.get("required", []) if name != API_KEY_ARGUMENT]
        if required:
            parameters["required"] = required
        else:
            parameters.pop("required", None)
        return tool.model_copy(update={"parameters": parameters})


#: The output schema FastMCP derives from ``-> dict[str, Any]``: it tells a client nothing.
_ANY_OBJECT = {"type": "object", "additionalProperties": True}


class ToolSurface(_ToolRewrite):
    """Annotations and (where they mislead) descriptions of Galaxy's stock tools; no empty output schemas."""

    def __init__(self, annotations: dict[str, ToolAnnotations], descriptions: dict[str, str]):
        self.annotations = annotations
        self.descriptions = descriptions

    def __repr__(self) -> str:
        return f"ToolSurface({len(self.annotations)} annotated, {len(self.descriptions)} described)"

    def rewrite(self, tool: Tool) -> Tool:
        update: dict[str, Any] = {}
        if tool.name in self.annotations:
            annotations = self.annotations[tool.name]
            update.update(annotations=annotations, title=annotations.title)
        if tool.name in self.descriptions:
            update["description"] = self.descriptions[tool.name]
        if tool.output_schema == _ANY_OBJECT:
            # Without a schema FastMCP still returns a dict result as structured content.
            update["output_schema"] = None
        return tool.model_copy(update=update) if update else tool
